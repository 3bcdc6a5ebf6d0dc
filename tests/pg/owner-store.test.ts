/**
 * The PostgreSQL owner store against a real server: the owner-store port's contract (the one
 * suite every backend runs, tests/helpers/port-contract.ts), history and retention through the
 * core, the exact JSON text, first-use migration, several owners in one SQL transaction, and
 * who made each transition. Damage, timeouts and the password are in owner-store-faults.test.ts.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { historyOf, patchAt, valueAt } from "../../lib/core/history.js";
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory, TransitionRecord } from "../../lib/core/types.js";
import { recordLine } from "../../lib/storage/format.js";
import { SCHEMA_VERSION } from "../../lib/storage/pg/schema.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { closeDatabases } from "../../lib/storage/pg/placed.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { whoAmI } from "../../lib/storage/placement/who.js";
import { portContract } from "../helpers/port-contract.js";
import { tempDir } from "../helpers/temp-dir.js";
import { by, connect, ownerStoreServer, rejectsWith, sql, write } from "./owner-store-fixture.js";

const server = ownerStoreServer();

portContract({
	name: "PostgreSQL store (cwd)",
	dir: () => server.schema(),
	open(schema) {
		const make = () => connect(schema).store("cwd", "acme/port", 20);
		return {
			store: make(),
			reader: make,
			bytes: async () =>
				JSON.stringify(
					await sql(
						`SELECT o.seq, o.checkpoint, t.seq AS t, t.id, t.body FROM "${schema}".owners o LEFT JOIN "${schema}".transitions t USING (owner_id) ORDER BY t.seq`,
					),
				),
		};
	},
});

describe("PostgreSQL owner store: commits and reads", () => {
	it("a never-written owner reads as empty at seq 0 and creates nothing", async () => {
		const schema = server.schema();
		const store = connect(schema).store("cwd", "acme/api");
		const h = await store.load();
		assert.equal(h.seq, 0);
		assert.deepEqual(h.state, { intents: {}, strategy: {}, tactics: {}, artifacts: {}, lazy: {} });
		assert.deepEqual(await sql(`SELECT * FROM "${schema}".owners`), []);
		assert.equal((await store.status()).exists, false);
	});

	it("commits at the expected seq; another connection reads it; history works through the core", async () => {
		const schema = server.schema();
		const a = connect(schema);
		const sa = a.store("cwd", "acme/api");
		await write(a, sa, { tactics: { step: "one" } }, "t1");
		await write(a, sa, { tactics: { step: "two" }, intents: { ship: { title: "ship it" } } }, "t2");
		const sb = connect(schema).store("cwd", "acme/api");
		const h = await sb.load();
		assert.equal(h.seq, 2);
		assert.deepEqual(h.state.tactics, { step: "two" });
		assert.equal(valueAt(h, 1, ["tactics", "step"]), "one");
		assert.equal(patchAt(h, 0).id, "t2");
		assert.deepEqual(
			historyOf(h, ["tactics", "step"]).map((e) => e.id),
			["t2", "t1"],
		);
		// Warm reader sees a later commit made through the other connection.
		await write(a, sa, { tactics: { step: "three" } }, "t3");
		assert.equal((await sb.load()).state.tactics.step, "three");
		// Same key in another project is another owner.
		assert.equal((await connect(schema).store("cwd", "acme/web").load()).seq, 0);
	});

	it("a re-commit of a stored id is `already` also after it was folded out of the retained tail (the table keeps every id)", async () => {
		const schema = server.schema();
		const a = connect(schema);
		const b = connect(schema);
		const sa = a.store("global", "alice", 0);
		const sb = b.store("global", "alice", 0);
		await sb.load();
		const r1 = (await write(a, sa, { lazy: { n: 1 } }, "g1")) as TransitionRecord;
		for (let i = 2; i <= 70; i++) await write(a, sa, { lazy: { n: i } }, `g${i}`);
		// Retention 0: g1 is long folded into the checkpoint, and its row has no text any more.
		const folded = await sql<{ body: string | null }>(`SELECT body FROM "${schema}".transitions WHERE id = 'g1'`);
		assert.deepEqual(folded, [{ body: null }]);
		assert.deepEqual(await sb.commit(r1, 0), { kind: "already", seq: 1 });
		assert.equal(await sb.committedSeq("g1"), 1);
		assert.equal(await sb.committedSeq("never"), undefined);
		assert.equal((await sb.load()).seq, 70);
	});

	it("commitTogether re-stages on the current state: a writer holding an old snapshot loses nothing", async () => {
		const schema = server.schema();
		const a = connect(schema);
		const b = connect(schema);
		const sa = a.store("cwd", "p");
		const sb = b.store("cwd", "p");
		await sb.load();
		await write(a, sa, { tactics: { a: 1 } }, "x1");
		await write(b, sb, { tactics: { b: 2 } }, "x2");
		const h = await connect(schema).store("cwd", "p").load();
		assert.deepEqual(h.state.tactics, { a: 1, b: 2 });
		assert.equal(h.seq, 2);
	});

	it("retention: rows beyond R + slack are folded into the checkpoint; a fresh reader gets the same state and tail", async () => {
		const schema = server.schema();
		const a = connect(schema);
		const sa = a.store("cwd", "r", 2);
		for (let i = 1; i <= 80; i++) await write(a, sa, { tactics: { [`k${i % 7}`]: i } }, `r${i}`);
		const [own] = await sql<{ checkpoint_seq: string }>(`SELECT checkpoint_seq FROM "${schema}".owners`);
		assert.ok(Number(own?.checkpoint_seq) > 0, "the checkpoint moved");
		const mine = await sa.load();
		const theirs = await connect(schema).store("cwd", "r", 2).load();
		assert.equal(theirs.seq, 80);
		assert.equal(JSON.stringify(theirs.state), JSON.stringify(mine.state));
		assert.deepEqual(
			theirs.tail.map((r) => r.id),
			["r79", "r80"],
		);
		await rejectsWith(
			Promise.resolve().then(() => valueAt(theirs, 3, ["tactics"])),
			"folded",
			/retention is 2/,
		);
	});

	it("stores the exact JSON text: key order, unicode and numbers round-trip byte for byte", async () => {
		const schema = server.schema();
		const a = connect(schema);
		const sa = a.store("cwd", "text");
		const value = { zeta: 1, alpha: { "b-key": [3, 2, 1], "a-key": '\u2028 é 😀 \u0000 "q"' }, "10": 0.1, "2": 1e21, mid: -5e-7, "": { "": "" } };
		const record = (await write(a, sa, { strategy: { plan: value } }, "j1")) as TransitionRecord;
		const [row] = await sql<{ body: string }>(`SELECT body FROM "${schema}".transitions WHERE id = 'j1'`);
		assert.equal(row?.body, recordLine(record));
		const fresh = await connect(schema).store("cwd", "text").load();
		assert.equal(JSON.stringify(fresh.state), JSON.stringify((await sa.load()).state));
		assert.equal(JSON.stringify(fresh.state.strategy.plan), JSON.stringify(value));
	});

	it("first use by several processes at once creates the schema once, under the advisory lock", async () => {
		const schema = server.schema();
		const dbs = Array.from({ length: 4 }, () => connect(schema));
		const hs = await Promise.all(dbs.map((db) => db.store("cwd", "m").load()));
		assert.deepEqual(
			hs.map((h) => h.seq),
			[0, 0, 0, 0],
		);
		assert.deepEqual(await sql(`SELECT version FROM "${schema}".schema_version`), [{ version: SCHEMA_VERSION }]);
	});

	it("refuses a schema of a newer version and leaves it unchanged", async () => {
		const schema = server.schema();
		await connect(schema).store("cwd", "v").load();
		await sql(`INSERT INTO "${schema}".schema_version (version) VALUES ($1)`, [SCHEMA_VERSION + 1]);
		await rejectsWith(connect(schema).store("cwd", "v").load(), "corrupt", /newer than this State Flow.*Update the State Flow package/);
	});
});

describe("PostgreSQL owner store: several owners in one transaction", () => {
	it("commits Global and CWD together, in one SQL transaction", async () => {
		const schema = server.schema();
		const db = connect(schema);
		const g = db.store("global", "alice");
		const c = db.store("cwd", "acme/api");
		await db.commitTogether([c, g], ([hc, hg]) => {
			const r = stage(
				{ cwd: hc as OwnerHistory, global: hg as OwnerHistory },
				{ global: { lazy: { g: 1 } }, cwd: { lazy: { c: 1 } } },
				{ id: "both", at: "2026", by },
			);
			assert.equal(r.noop, false);
			return { records: r.noop ? [] : [r.records.cwd, r.records.global], value: undefined };
		});
		const ids = await sql<{ kind: string; id: string; xmin: string }>(
			`SELECT o.kind, t.id, t.xmin::text AS xmin FROM "${schema}".transitions t JOIN "${schema}".owners o USING (owner_id) ORDER BY o.kind`,
		);
		assert.deepEqual(
			ids.map((r) => [r.kind, r.id]),
			[
				["cwd", "both"],
				["global", "both"],
			],
		);
		assert.equal(ids[0]?.xmin, ids[1]?.xmin, "both rows were written by the same SQL transaction");
		const fresh = connect(schema);
		assert.equal((await fresh.store("global", "alice").load()).state.lazy.g, 1);
		assert.equal((await fresh.store("cwd", "acme/api").load()).state.lazy.c, 1);
	});

	it("writes neither owner when one of them fails (a row written outside State Flow beyond the head)", async () => {
		const schema = server.schema();
		const db = connect(schema);
		const g = db.store("global", "bob");
		const c = db.store("cwd", "acme/api");
		await write(db, c, { lazy: { c: 0 } }, "c0");
		await sql(
			`INSERT INTO "${schema}".transitions (owner_id, seq, id, body, sum) SELECT owner_id, 2, 'intruder', '{}', 'x' FROM "${schema}".owners WHERE kind = 'cwd'`,
		);
		const both = db.commitTogether([g, c], ([hg, hc]) => {
			const r = stage(
				{ global: hg as OwnerHistory, cwd: hc as OwnerHistory },
				{ global: { lazy: { g: 1 } }, cwd: { lazy: { c: 1 } } },
				{ id: "pair", at: "2026", by },
			);
			return { records: r.noop ? [] : [r.records.global, r.records.cwd], value: undefined };
		});
		await rejectsWith(both, "corrupt", /transition row with seq 2 exists beyond its head seq 1.*nothing was written/);
		assert.deepEqual(await sql(`SELECT id FROM "${schema}".transitions WHERE id = 'pair'`), []);
		assert.equal((await connect(schema).store("global", "bob").load()).seq, 0);
	});
});

describe("PostgreSQL owner store: who made each transition", () => {
	const alice = { user: "alice", host: "laptop.example.com" };
	after(closeDatabases);

	it("a shared CWD owner's history says which teammate made each change; a transition over a Global file and the database carries one who", async (t) => {
		const schema = server.schema();
		const machine = (user: string) => {
			const root = tempDir(t);
			const m = { agentDir: join(root, "agent"), cwd: join(root, "checkout") };
			mkdirSync(m.cwd, { recursive: true });
			const config = { database: server.url, databaseSchema: schema, links: { [realOrSelf(m.cwd)]: "acme/who" }, user };
			return openStoresAt({ agentDir: m.agentDir, cwd: m.cwd, placement: placementFor(config, m.cwd, {}), who: whoAmI(config.user) });
		};
		const onA = machine("alice");
		const onB = machine("bob");
		const at = "2026-12-01T00:00:00.000Z";
		await onA.commit({ cwd: { intents: { ship: "2.0" } } }, { id: "a1", at, by });
		await onB.commit({ cwd: { intents: { docs: "guide" } } }, { id: "b1", at, by });
		await onA.commit({ global: { strategy: { s: 1 } }, cwd: { tactics: { t: 1 } } }, { id: "a2", at, by });
		assert.equal(onA.location("cwd").backend, "postgres");
		const users = (await onB.load("cwd")).tail.map((r) => [r.id, r.who]);
		assert.deepEqual(users, [
			["a1", whoAmI("alice")],
			["b1", whoAmI("bob")],
			["a2", whoAmI("alice")],
		]);
		assert.deepEqual((await onA.load("global")).tail[0]?.who, whoAmI("alice"), "the Global file's record of a2 has the same who");
	});

	it("round-trips who in the stored record, sealed by both checksums and validated on read", async () => {
		const schema = server.schema();
		const db = connect(schema);
		const s = db.store("cwd", "who");
		const committed = await db.commitTogether([s], ([h]) => {
			const r = stage({ cwd: h as OwnerHistory }, { cwd: { tactics: { a: 1 } } }, { id: "w1", at: "2026-12-01T00:00:00.000Z", by, who: alice });
			const record = r.noop ? undefined : r.records.cwd;
			return { records: [record], value: record };
		});
		assert.deepEqual(committed?.who, alice);
		const [row] = await sql<{ body: string }>(`SELECT body FROM "${schema}".transitions WHERE id = 'w1'`);
		assert.equal(row?.body, recordLine(committed as TransitionRecord), "the stored text is the record line");
		assert.deepEqual((await connect(schema).store("cwd", "who").load()).tail[0]?.who, alice, "another connection reads it back");

		// A who changed by hand: the row's checksum catches it.
		await sql(`UPDATE "${schema}".transitions SET body = replace(body, '"alice"', '"mallo"') WHERE id = 'w1'`);
		await rejectsWith(connect(schema).store("cwd", "who").load(), "corrupt", /does not match its checksum/);
		// Both checksums recomputed: the record is still refused for what it holds.
		const { createHash } = await import("node:crypto");
		const forged = recordLine({ ...(committed as TransitionRecord), who: { user: "a\u001b]0;pwned\u0007", host: "h" } });
		const sum = createHash("sha256").update(`cwd\nwho\n1\n${forged}`).digest("hex");
		await sql(`UPDATE "${schema}".transitions SET body = $1, sum = $2 WHERE id = 'w1'`, [forged, sum]);
		await rejectsWith(connect(schema).store("cwd", "who").load(), "corrupt", /`\/who\/user` holds a control or invisible character/);
	});
});
