/**
 * The PostgreSQL owner store against a real server: the owner-store port's contract (the one
 * suite every backend runs, tests/helpers/port-contract.ts), history and retention through the core, the exact JSON text, several owners in
 * one SQL transaction, damage in hand-edited rows, first-use migration, and messages that
 * never hold the password.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import fc from "fast-check";
import pg from "pg";
import { isStateError } from "../../lib/core/errors.js";
import { historyOf, patchAt, valueAt } from "../../lib/core/history.js";
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory, PlanePatch, TransitionRecord } from "../../lib/core/types.js";
import { recordLine } from "../../lib/storage/format.js";
import { SCHEMA_VERSION } from "../../lib/storage/pg/schema.js";
import { PgDatabase } from "../../lib/storage/pg/store.js";
import type { PgOwnerStore } from "../../lib/storage/pg/store.js";
import { redactUrl, scrubber } from "../../lib/storage/pg/url.js";
import { closeDatabases, placementFor } from "../../lib/storage/backend.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { Stores } from "../../lib/storage/stores.js";
import { whoAmI } from "../../lib/storage/who.js";
import { testDatabase } from "../helpers/pg-server.js";
import { portContract } from "../helpers/port-contract.js";
import { tempDir } from "../helpers/temp-dir.js";
import type { TestDatabase } from "../helpers/pg-server.js";

let server: TestDatabase;
const open: PgDatabase[] = [];

before(async () => {
	server = await testDatabase();
});
after(async () => {
	for (const db of open) await db.close();
	await server.stop();
});

/** A database object as one process would hold it (its own connection and caches). */
function connect(schema: string, url = server.url): PgDatabase {
	const db = new PgDatabase({ url, schema, connectTimeoutMs: 3_000 });
	open.push(db);
	return db;
}

const by = { kind: "system", reason: "pg-test" } as const;

/** Stage `patch` on the store's current state under its lock and commit it (the path Stores will take). */
async function write(db: PgDatabase, store: PgOwnerStore, patch: PlanePatch, id: string): Promise<TransitionRecord | undefined> {
	return db.commitTogether([store], ([h]) => {
		const r = stage({ [store.owner]: h as OwnerHistory }, { [store.owner]: patch }, { id, at: "2026-12-01T00:00:00.000Z", by });
		const record = r.noop ? undefined : r.records[store.owner];
		return { records: [record], value: record };
	});
}

/** Raw SQL on the test server (hand edits and inspection). */
async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
	const c = new pg.Client({ connectionString: server.url });
	await c.connect();
	try {
		return (await c.query(text, values)).rows as T[];
	} finally {
		await c.end();
	}
}

async function rejectsWith(p: Promise<unknown>, code: string, pattern: RegExp): Promise<Error> {
	let caught: unknown;
	try {
		await p;
	} catch (e) {
		caught = e;
	}
	assert.ok(isStateError(caught), `expected a StateError, got ${inspect(caught)}`);
	assert.equal(caught.code, code, caught.message);
	assert.match(caught.message, pattern);
	return caught;
}

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

describe("PostgreSQL owner store: damage in hand-edited rows", () => {
	/** An owner with three transitions, then `edit` applied by hand; returns the rows before and after a refused read and commit. */
	async function damagedBy(edit: (schema: string) => Promise<unknown>, pattern: RegExp): Promise<void> {
		const schema = server.schema();
		const db = connect(schema);
		const s = db.store("cwd", "d");
		for (let i = 1; i <= 3; i++) await write(db, s, { tactics: { [`k${i}`]: i } }, `d${i}`);
		await edit(schema);
		const snapshot = async (): Promise<unknown> => [
			await sql(`SELECT seq, id, body, sum FROM "${schema}".transitions ORDER BY seq`),
			await sql(`SELECT seq, checkpoint_seq, checkpoint, checkpoint_sum FROM "${schema}".owners`),
		];
		const beforeRows = await snapshot();
		const reader = connect(schema);
		await rejectsWith(reader.store("cwd", "d").load(), "corrupt", pattern);
		await rejectsWith(write(reader, reader.store("cwd", "d"), { tactics: { k9: 9 } }, "d9"), "corrupt", pattern);
		assert.deepEqual(await snapshot(), beforeRows, "the damaged rows were left unchanged and nothing was written");
	}

	it("a body edited by hand fails its checksum", async () => {
		await damagedBy(
			(s) => sql(`UPDATE "${s}".transitions SET body = replace(body, '"k2":2', '"k2":3') WHERE seq = 2`),
			/seq 2 does not match its checksum.*left unchanged/,
		);
	});

	it("bad JSON is reported even when its checksum was recomputed", async () => {
		const { createHash } = await import("node:crypto");
		const sum = createHash("sha256").update("cwd\nd\n2\n{not json").digest("hex");
		await damagedBy((s) => sql(`UPDATE "${s}".transitions SET body = '{not json', sum = $1 WHERE seq = 2`, [sum]), /seq 2 is not valid JSON/);
	});

	it("a seq gap (a row deleted) is damage", async () => {
		await damagedBy((s) => sql(`DELETE FROM "${s}".transitions WHERE seq = 2`), /transition seq 2 is missing/);
	});

	it("a head moved by hand is damage", async () => {
		await damagedBy((s) => sql(`UPDATE "${s}".owners SET seq = 5`), /head says seq 5 but the stored transitions end at seq 3/);
	});

	it("a checkpoint edited by hand fails its checksum", async () => {
		await damagedBy(
			(s) => sql(`UPDATE "${s}".owners SET checkpoint = replace(checkpoint, '"lazy":{}', '"lazy":{"x":1}')`),
			/checkpoint .* does not match its checksum/,
		);
	});
});

describe("PostgreSQL owner store: waits that end", () => {
	/** Hold the owner's head row locked from another connection while `fn` runs. */
	async function whileLocked(schema: string, fn: () => Promise<void>): Promise<void> {
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		try {
			await c.query("BEGIN");
			await c.query(`SELECT seq FROM "${schema}".owners FOR UPDATE`);
			await fn();
		} finally {
			await c.query("ROLLBACK").catch(() => undefined);
			await c.end();
		}
	}

	it("another writer holding the row lock past the lock timeout: busy, nothing written, then the commit goes through", async () => {
		const schema = server.schema();
		const db = new PgDatabase({ url: server.url, schema, lockTimeoutMs: 200 });
		open.push(db);
		const s = db.store("cwd", "w");
		await write(db, s, { lazy: { a: 1 } }, "w1");
		await whileLocked(schema, async () => {
			await rejectsWith(
				write(db, s, { lazy: { b: 1 } }, "w2"),
				"busy",
				/being written by another process \(waited 200 ms for its row lock\); nothing was written; retry/,
			);
		});
		assert.equal(await s.committedSeq("w2"), undefined);
		await write(db, s, { lazy: { b: 1 } }, "w2");
		assert.equal((await s.load()).seq, 2);
	});

	it("a statement past the statement timeout: unavailable ('did not answer in time'), nothing written", async () => {
		const schema = server.schema();
		const db = new PgDatabase({ url: server.url, schema, statementTimeoutMs: 200, lockTimeoutMs: 10_000 });
		open.push(db);
		const s = db.store("cwd", "w");
		await write(db, s, { lazy: { a: 1 } }, "t1");
		await whileLocked(schema, async () => {
			await rejectsWith(
				write(db, s, { lazy: { b: 1 } }, "t2"),
				"unavailable",
				/unavailable: PostgreSQL at .* did not answer in time \(.*statement timeout.*\)\. Nothing was written/,
			);
		});
		assert.equal(await s.committedSeq("t2"), undefined);
		assert.equal((await s.load()).seq, 1);
	});
});

describe("PostgreSQL owner store: the password never shows", () => {
	it("a wrong password is reported unavailable, with the URL but never the password", async () => {
		const secret = "Sup3r-secret_pw";
		const bad = new URL(server.url);
		bad.password = secret;
		const db = connect(server.schema(), bad.toString());
		const e = await rejectsWith(
			db.store("cwd", "x").load(),
			"unavailable",
			/unavailable: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres refused the credentials .*the next call reconnects by itself/,
		);
		for (const text of [e.message, String(e), inspect(e, { depth: 5 }), JSON.stringify(e), e.stack ?? ""]) assert.ok(!text.includes(secret), text);
		const status = await db.store("cwd", "x").status();
		assert.ok(status.error !== undefined && !status.error.includes(secret));
		assert.ok(!JSON.stringify(status).includes(secret));
	});

	it("an unreachable server is reported unavailable without the password (also one given as a query parameter)", async () => {
		const secret = "another-Secret-77";
		const url = `postgres://app:${secret}@127.0.0.1:1/memory?password=${secret}&sslmode=disable`;
		const e = await rejectsWith(
			connect(server.schema(), url).store("cwd", "x").load(),
			"unavailable",
			/unavailable: PostgreSQL at postgres:\/\/app@127\.0\.0\.1:1\/memory\?password=\*\*\*&sslmode=disable cannot be reached/,
		);
		assert.ok(!inspect(e, { depth: 5 }).includes(secret));
	});

	it("redaction law: no password survives redactUrl or the scrubber", () => {
		fc.assert(
			fc.property(fc.stringMatching(/^[A-Za-z0-9_.~!$%@:/-]{1,24}$/), fc.string({ maxLength: 40 }), (password, around) => {
				const url = `postgres://user:${encodeURIComponent(password)}@db.example.com:5432/memory`;
				const shown = redactUrl(url);
				assert.ok(!shown.includes(`:${encodeURIComponent(password)}@`));
				assert.ok(shown.startsWith("postgres://user@db.example.com:5432/memory"));
				const scrubbed = scrubber(url)(`${around}${password}${around}${url}`);
				assert.ok(!scrubbed.includes(password), scrubbed);
			}),
		);
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
			return new Stores({ agentDir: m.agentDir, cwd: m.cwd, placement: placementFor(config, m.cwd, {}), who: whoAmI(config.user) });
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
