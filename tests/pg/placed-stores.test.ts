/**
 * The storage facade with its shared owners in PostgreSQL (a real server): a linked checkout's
 * CWD owner and a shared Global owner seen from two "machines" (agent directories and
 * checkouts at different paths), transitions over files, Session and the database committed
 * as one (the database's COMMIT is the commit point, the local journal written right before
 * it), crashes at every fault point of that path leaving each transition whole or absent, and
 * an owner that cannot be reached reported as unavailable while the others keep working.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import pg from "pg";
import { isStateError } from "../../lib/core/errors.js";
import type { CanonicalPatch, Owner } from "../../lib/core/types.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import type { StateFlowConfig } from "../../lib/storage/placement/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { storePaths } from "../../lib/storage/project/paths.js";
import type { Stores } from "../../lib/storage/stores.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { hostSessionLog } from "../helpers/session-log.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild } from "../storage/children/spawn.js";

const server = serverForFile(testDatabase);

/** One "machine": its own agent directory and a checkout at its own path. */
interface Machine {
	agentDir: string;
	cwd: string;
}

function machine(t: { after(fn: () => void): void }): Machine {
	const root = tempDir(t);
	const m = { agentDir: join(root, "agent"), cwd: join(root, "checkout") };
	mkdirSync(m.agentDir, { recursive: true });
	mkdirSync(m.cwd, { recursive: true });
	return m;
}

function configFor(m: Machine, schema: string, extra: StateFlowConfig = {}): StateFlowConfig {
	return { database: server.url, databaseSchema: schema, links: { [realOrSelf(m.cwd)]: "acme/api" }, ...extra };
}

function storesOn(m: Machine, config: StateFlowConfig, sm?: SessionManager): Stores {
	return openStoresAt({ agentDir: m.agentDir, cwd: m.cwd, placement: placementFor(config, m.cwd, {}), ...(sm ? { session: hostSessionLog(sm) } : {}) });
}

const by = { kind: "system", reason: "placed-test" } as const;
let n = 0;
function commit(stores: Stores, patch: CanonicalPatch, id = `t-${++n}`) {
	return stores.commit(patch, { id, at: "2026-12-01T00:00:00.000Z", by });
}

async function intents(stores: Stores, owner: Owner): Promise<Record<string, unknown>> {
	return (await stores.load(owner)).state.intents as Record<string, unknown>;
}

describe("shared owners in PostgreSQL", () => {
	it("a linked checkout's CWD owner lives in the database: another machine sees each write, and no store folder appears in the checkout", async (t) => {
		const schema = server.schema();
		const a = machine(t);
		const b = machine(t);
		const onA = storesOn(a, configFor(a, schema));
		const onB = storesOn(b, configFor(b, schema));
		await commit(onA, { cwd: { intents: { ship: "release 2.0" } } });
		assert.deepEqual(await intents(onB, "cwd"), { ship: "release 2.0" });
		await commit(onB, { cwd: { intents: { docs: "write the guide" } } });
		assert.deepEqual(await intents(onA, "cwd"), { ship: "release 2.0", docs: "write the guide" });
		assert.equal(existsSync(storePaths(a.agentDir, a.cwd).cwdRoot), false);
		const where = onA.location("cwd");
		assert.equal(where.backend, "postgres");
		assert.ok(where.backend === "postgres" && where.key === "acme/api" && where.schema === schema);
		// Global stays in this machine's files unless shared.
		assert.equal(onA.location("global").backend, "file");
	});

	it("a shared Global owner is keyed by the user: the same personal memory on every machine, another user's stays apart", async (t) => {
		const schema = server.schema();
		const a = machine(t);
		const b = machine(t);
		const onA = storesOn(a, configFor(a, schema, { shareGlobal: true, user: "alice" }));
		const onB = storesOn(b, configFor(b, schema, { shareGlobal: true, user: "alice" }));
		const bob = storesOn(b, configFor(b, schema, { shareGlobal: true, user: "bob" }));
		await commit(onA, { global: { strategy: { tabs: "indent with tabs" } } });
		assert.deepEqual((await onB.load("global")).state.strategy, { tabs: "indent with tabs" });
		assert.deepEqual((await bob.load("global")).state.strategy, {});
	});

	it("one transition over a Global file, the database's CWD owner and the Session is committed whole, and its journal is gone", async (t) => {
		const schema = server.schema();
		const a = machine(t);
		const sm = SessionManager.create(a.cwd, join(a.agentDir, "sessions"));
		sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
		const stores = storesOn(a, configFor(a, schema), sm);
		const r = await commit(stores, { global: { intents: { g: 1 } }, cwd: { intents: { c: 2 } }, session: { intents: { s: 3 } } }, "mixed-1");
		assert.equal(r.noop, false);
		for (const [owner, want] of [
			["global", { g: 1 }],
			["cwd", { c: 2 }],
			["session", { s: 3 }],
		] as const) {
			assert.deepEqual(await intents(stores, owner), want);
			assert.equal((await stores.load(owner)).tail.at(-1)?.id, "mixed-1");
		}
		const journalDir = storePaths(a.agentDir, a.cwd).journalDir;
		assert.deepEqual(existsSync(journalDir) ? readdirSync(journalDir) : [], []);
		// A second machine sees the database part.
		const b = machine(t);
		assert.deepEqual(await intents(storesOn(b, configFor(b, schema)), "cwd"), { c: 2 });
	});

	const WORKER = fileURLToPath(new URL(`mixed-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));
	// Where a writer may die on the mixed path, and whether the transition is then committed.
	const points: Array<[string, boolean]> = [
		["after-lock", false],
		["pg-after-lock", false],
		["mid-journal", false],
		["after-journal", false],
		["pg-before-commit", false],
		["pg-after-commit", true],
		["after-append-global", true],
		["before-journal-delete", true],
	];
	for (const [point, committed] of points) {
		it(`a writer killed at ${point} leaves the mixed transition ${committed ? "whole" : "absent"} in both owners`, async (t) => {
			const schema = server.schema();
			const a = machine(t);
			const id = `crash-${point}`;
			const run = spawnSync(process.execPath, [...process.execArgv, WORKER, a.agentDir, a.cwd, server.url, schema, "acme/api", id], {
				env: { ...process.env, STATE_FLOW_FAULT: point },
				encoding: "utf8",
			});
			assert.equal(run.signal, "SIGKILL", `the writer should die at ${point}: ${run.stderr}`);
			// A fresh process's view: reading Global completes or drops the journal by asking the database.
			const stores = storesOn(a, configFor(a, schema));
			const g = await intents(stores, "global");
			const c = await intents(stores, "cwd");
			assert.equal(id in g, committed, `global at ${point}`);
			assert.equal(id in c, committed, `cwd at ${point}`);
			const journalDir = storePaths(a.agentDir, a.cwd).journalDir;
			assert.deepEqual(existsSync(journalDir) ? readdirSync(journalDir).filter((f) => f.endsWith(".json")) : [], []);
			// And the owners keep working.
			await commit(stores, { global: { intents: { after: 1 } }, cwd: { intents: { after: 1 } } });
			assert.equal((await intents(stores, "cwd")).after, 1);
		});
	}

	it("a statement the server refuses (a table changed by hand) is an `io` error that says so, not an outage", async (t) => {
		const schema = server.schema();
		const a = machine(t);
		const stores = storesOn(a, configFor(a, schema));
		await commit(stores, { cwd: { intents: { first: 1 } } });
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		try {
			await c.query(`ALTER TABLE "${schema}".transitions ADD CONSTRAINT hand_made CHECK (seq < 2) NOT VALID`);
		} finally {
			await c.end();
		}
		await assert.rejects(commit(stores, { cwd: { intents: { second: 1 } } }), (e: unknown) => {
			assert.ok(isStateError(e));
			assert.equal(e.code, "io");
			assert.match(e.message, /refused a State Flow statement .*hand_made.*state-flow doctor/);
			return true;
		});
		assert.deepEqual(await intents(stores, "cwd"), { first: 1 });
	});

	it("a link without a configured database makes the CWD owner unavailable, never files; Global keeps working", async (t) => {
		const a = machine(t);
		const stores = storesOn(a, { links: { [realOrSelf(a.cwd)]: "acme/api" } });
		await assert.rejects(stores.load("cwd"), (e: unknown) => {
			assert.ok(isStateError(e));
			assert.equal(e.code, "unavailable");
			assert.match(e.message, /project `acme\/api`/);
			assert.match(e.message, /state-flow unlink/);
			return true;
		});
		await assert.rejects(commit(stores, { cwd: { intents: { x: 1 } } }), (e: unknown) => isStateError(e) && e.code === "unavailable");
		await commit(stores, { global: { intents: { still: "works" } } });
		assert.deepEqual(await intents(stores, "global"), { still: "works" });
		assert.equal(existsSync(storePaths(a.agentDir, a.cwd).cwdRoot), false);
	});

	it("Global and CWD in one database are read together: a damaged row is that owner's answer only, an outage both owners'", async (t) => {
		const schema = server.schema();
		const a = machine(t);
		const config = configFor(a, schema, { shareGlobal: true, user: "alice" });
		const writer = storesOn(a, config);
		await commit(writer, { global: { intents: { g: 1 } }, cwd: { intents: { c: 1 } } });
		await commit(writer, { cwd: { intents: { c: 2 } } });
		const answers = async (stores: Stores) =>
			(await stores.loadEach(["global", "cwd", "session"])).map((x) => ("history" in x ? x.history.state.intents : `${(x.error as { code?: string }).code}`));
		assert.deepEqual(await answers(storesOn(a, config, SessionManager.inMemory(a.cwd))), [{ g: 1 }, { c: 2 }, {}]);
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		try {
			const r = await c.query(`UPDATE "${schema}".transitions SET body = replace(body, '"c":2', '"c":3') WHERE seq = 2`);
			assert.equal(r.rowCount, 1);
		} finally {
			await c.end();
		}
		// A fresh reader (a connection and caches of its own) reads every row: CWD's second row no longer matches its checksum.
		const fresh = { ...config, database: `${server.url}${server.url.includes("?") ? "&" : "?"}application_name=fresh-reader` };
		assert.deepEqual(await answers(storesOn(a, fresh, SessionManager.inMemory(a.cwd))), [{ g: 1 }, "corrupt", {}]);
		const down = { ...config, database: "postgres://sf:s3cr3t-pw@127.0.0.1:1/none" };
		assert.deepEqual(await answers(storesOn(a, down, SessionManager.inMemory(a.cwd))), ["unavailable", "unavailable", {}]);
	});

	it("a reader never sees half of another process's transitions over Global and CWD in the database", async (t) => {
		const a = machine(t);
		const config = configFor(a, server.schema(), { shareGlobal: true, user: "alice" });
		const reader = storesOn(a, config);
		const child = runChild("pair-child", [a.agentDir, a.cwd, "200", JSON.stringify(config)]);
		await child.ready;
		let ended = false;
		// Ends with the child, also when it fails or runs late (`await child.done` below reports it).
		void child.done.finally(() => (ended = true)).catch(() => undefined);
		const seen = new Set<unknown>();
		let reads = 0;
		while (!ended) {
			const [g, c] = await reader.loadEach(["global", "cwd"]);
			assert.ok(g !== undefined && "history" in g && c !== undefined && "history" in c, "both owners read");
			const pair = [g.history.state.tactics.n, c.history.state.tactics.n];
			assert.equal(pair[0], pair[1], `read ${++reads}: Global at ${String(pair[0])}, CWD at ${String(pair[1])}`);
			seen.add(pair[0]);
		}
		const res = await child.done;
		assert.equal(res.code, 0, res.stderr);
		assert.ok(seen.size >= 2, `the reads overlapped the commits (${seen.size} distinct in ${reads} reads)`);
	});

	it("an unreachable database: the CWD owner is unavailable with a message that never holds the password; Global keeps working", async (t) => {
		const a = machine(t);
		const url = "postgres://sf:s3cr3t-pw@127.0.0.1:1/none";
		const stores = storesOn(a, { database: url, links: { [realOrSelf(a.cwd)]: "acme/api" } });
		await assert.rejects(stores.load("cwd"), (e: unknown) => {
			assert.ok(isStateError(e));
			assert.equal(e.code, "unavailable");
			assert.doesNotMatch(`${e.message} ${String(e.cause ?? "")}`, /s3cr3t-pw/);
			return true;
		});
		const status = await stores.status("cwd");
		assert.ok(status.error !== undefined && !status.error.includes("s3cr3t-pw"));
		assert.doesNotMatch(JSON.stringify(status.location), /s3cr3t-pw/);
		await commit(stores, { global: { intents: { still: "works" } } });
		// A transition that needs the unreachable owner writes nothing anywhere.
		await assert.rejects(
			commit(stores, { global: { intents: { both: 1 } }, cwd: { intents: { both: 1 } } }),
			(e: unknown) => isStateError(e) && e.code === "unavailable",
		);
		assert.equal("both" in (await intents(stores, "global")), false);
	});
});
