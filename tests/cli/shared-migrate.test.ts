/**
 * The real `state-flow` binary moving memory between files and a real PostgreSQL server:
 * migrate (a file store with its retained history into the database in one step, refusing a
 * non-empty target, a damaged source or an unreachable database) and migrate --to-files (the
 * linked project or the shared Global back into empty local files, and a crash part-way),
 * undo working on the result, and the password never printed by any command.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import pg from "pg";
import { patchAt, stateAt } from "../../lib/core/history.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { fiveWrites, setup, sharedServer, text, write } from "./shared-fixture.js";
import { unwrapped } from "./run.js";

const server = sharedServer();

describe("state-flow migrate", () => {
	it("moves the CWD store with its retained history in one step, links, and undo keeps working on the database", async (t) => {
		const e = setup(t, server.schema(), { retention: 3 });
		await fiveWrites(e.stores(), "cwd");
		const source = await e.stores().load("cwd");
		assert.deepEqual([source.seq, source.checkpointSeq, source.tail.length], [5, 2, 3]);
		const log = join(e.cwd, ".pi", "state-flow", "log.jsonl");
		const bytes = readFileSync(log, "utf8");

		const r = e.run(["migrate", "acme/api"]);
		assert.equal(r.code, 0, r.stderr);
		assert.match(
			unwrapped(r.stdout),
			/Moved the local cwd store .* \(seq 5: 3 retained transition\(s\), checkpoint at seq 2\) into PostgreSQL at .*project acme\/api in one transaction; read back and verified/,
		);
		assert.match(unwrapped(r.stdout), /left in place and are no longer used/);
		assert.deepEqual(e.config().links, { [realOrSelf(e.cwd)]: "acme/api" });
		assert.equal(readFileSync(log, "utf8"), bytes, "the local files are left as they were");

		const stores = e.stores();
		assert.equal(stores.location("cwd").backend, "postgres");
		const moved = await stores.load("cwd");
		assert.equal(text(moved), text(source));
		for (let k = 0; k <= 3; k++) assert.deepEqual(stateAt(moved, k), stateAt(source, k), `cwd[${k}]`);
		for (let k = 0; k < 3; k++) assert.deepEqual(patchAt(moved, k), patchAt(source, k), `patches[${k}]`);
		// Undo the latest transition as the host does: its exact undo patch, committed as a new transition.
		const undo = await stores.commit(
			{ cwd: patchAt(moved, 0).undo },
			{ id: "undo-1", at: "2026-12-01T00:00:01.000Z", by: { kind: "system", reason: "undo" }, exact: true },
		);
		assert.equal(undo.noop, false);
		assert.deepEqual((await e.stores().load("cwd")).state, stateAt(source, 1));

		const history = e.run(["history", "cwd"]);
		assert.equal(history.code, 0, history.stderr);
		assert.match(unwrapped(history.stdout), /^CWD {2}PostgreSQL at postgres:\/\/postgres@.* project acme\/api +\(seq 6; 3 retained, transitions 1-3 folded/);
		assert.match(unwrapped(history.stdout), /#6 .*system undo/);
	});

	it("refuses a non-empty target with nothing written anywhere", async (t) => {
		const schema = server.schema();
		const a = setup(t, schema, { retention: 3 });
		await fiveWrites(a.stores(), "cwd");
		assert.equal(a.run(["migrate", "acme/api"]).code, 0);
		const b = setup(t, schema, { retention: 3 });
		await write(b.stores(), { cwd: { intents: { mine: "b" } } });
		const r = b.run(["migrate", "acme/api"]);
		assert.equal(r.code, 1);
		assert.match(
			unwrapped(r.stderr),
			/project `acme\/api`\) in PostgreSQL .* already holds 5 transition\(s\); a migration only fills an empty owner, so nothing was written/,
		);
		assert.equal(b.config().links, undefined);
		assert.equal((await b.stores().load("cwd")).seq, 1);
		assert.equal((await a.stores().load("cwd")).seq, 5);
		assert.equal((await a.stores().load("cwd")).state.intents.mine, undefined);
	});

	it("moves the Global store into the user's shared Global and sets shareGlobal", async (t) => {
		const e = setup(t, server.schema(), { retention: 3, user: "alice" });
		await fiveWrites(e.stores(), "global");
		const source = await e.stores().load("global");
		const r = e.run(["migrate", "--global"]);
		assert.equal(r.code, 0, r.stderr);
		assert.match(unwrapped(r.stdout), /into PostgreSQL at .*user alice in one transaction/);
		assert.match(unwrapped(r.stdout), /Global is now shared under user `alice`/);
		assert.equal(e.config().shareGlobal, true);
		const stores = e.stores();
		assert.equal(stores.location("global").backend, "postgres");
		assert.equal(text(await stores.load("global")), text(source));
		const show = e.run(["show", "global"]);
		assert.match(unwrapped(show.stdout), /^Global {2}PostgreSQL at .* user alice +\(seq 5,/);
		assert.match(unwrapped(show.stdout), /User: alice \(Global is shared under this name\)/);
		// A second run refuses: Global is already shared.
		const again = e.run(["migrate", "--global"]);
		assert.equal(again.code, 1);
		assert.match(unwrapped(again.stderr), /Global is already shared/);
	});

	it("refuses a damaged source store and an unreachable database, changing nothing", async (t) => {
		const e = setup(t);
		await write(e.stores(), { cwd: { intents: { x: 1 } } });
		const log = join(e.cwd, ".pi", "state-flow", "log.jsonl");
		const good = readFileSync(log, "utf8");
		const down = e.run(["migrate", "acme/api"], { url: "postgres://sf:s3cr3t-pw@127.0.0.1:1/none" });
		assert.equal(down.code, 1);
		assert.match(unwrapped(down.stderr), /unavailable: PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none cannot be reached/);
		assert.equal(e.config().links, undefined);
		writeFileSync(log, good.replace('"x":1', '"x":2'));
		const damaged = e.run(["migrate", "acme/api"]);
		assert.equal(damaged.code, 1);
		assert.match(unwrapped(damaged.stderr), /The local cwd store cannot be migrated: .*Nothing was changed; run `state-flow doctor` first/s);
		assert.equal(e.config().links, undefined);
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		try {
			// No schema or table yet means nothing was written there; any other error fails.
			const rows = await c.query(`SELECT count(*)::int AS n FROM "${e.schema}".owners WHERE key = 'acme/api' AND seq > 0`).catch((err: { code?: string }) => {
				if (err.code === "3F000" || err.code === "42P01") return { rows: [{ n: 0 }] };
				throw err;
			});
			assert.equal(rows.rows[0]?.n, 0);
		} finally {
			await c.end();
		}
	});
});

describe("state-flow migrate --to-files", () => {
	it("moves the linked project back into the empty local store with its history, unlinks, and leaves the database's rows", async (t) => {
		const schema = server.schema();
		const e = setup(t, schema, { retention: 3 });
		assert.equal(e.run(["link", "acme/api"]).code, 0);
		await fiveWrites(e.stores(), "cwd");
		const source = await e.stores().load("cwd");
		assert.equal(e.stores().location("cwd").backend, "postgres");

		const r = e.run(["migrate", "--to-files"]);
		assert.equal(r.code, 0, r.stderr);
		assert.match(
			unwrapped(r.stdout),
			/^Moved PostgreSQL at .*project acme\/api \(seq 5: 3 retained transition\(s\), checkpoint at seq 2\) into the local cwd store .*\/\.pi\/state-flow; read back and verified\.$/m,
		);
		assert.match(unwrapped(r.stdout), /^Unlinked .* from project `acme\/api`/m);
		assert.match(unwrapped(r.stdout), /The database's rows are untouched: checkouts still linked to `acme\/api` keep sharing them/);
		assert.deepEqual(e.config().links, {});

		const stores = e.stores();
		assert.equal(stores.location("cwd").backend, "file");
		const back = await stores.load("cwd");
		assert.equal(text(back), text(source));
		for (let k = 0; k <= 3; k++) assert.deepEqual(stateAt(back, k), stateAt(source, k), `cwd[${k}]`);
		// Undo works on the files as it did on the database.
		await stores.commit({ cwd: patchAt(back, 0).undo }, { id: "undo-1", at: "2026-12-01T00:00:01.000Z", by: { kind: "system", reason: "undo" }, exact: true });
		assert.deepEqual((await e.stores().load("cwd")).state, stateAt(source, 1));
		assert.match(unwrapped(e.run(["history", "cwd"]).stdout), /^CWD {2}\/.*\/\.pi\/state-flow +\(seq 6; 3 retained, transitions 1-3 folded/);

		// Another checkout linked to the project still shares the rows as they were.
		const other = setup(t, schema, { retention: 3 });
		assert.equal(other.run(["link", "acme/api"]).code, 0);
		assert.equal(text(await other.stores().load("cwd")), text(source));
	});

	it("moves the shared Global back, folded to this config's retention, and turns shareGlobal off", async (t) => {
		const e = setup(t, server.schema(), { retention: 3, user: "alice", shareGlobal: true });
		await fiveWrites(e.stores(), "global");
		const source = await e.stores().load("global");
		const file = join(e.agent, "state-flow", "config.json");
		writeFileSync(file, JSON.stringify({ ...e.config(), retention: 2 }));
		const r = e.run(["migrate", "--global", "--to-files"]);
		assert.equal(r.code, 0, r.stderr);
		assert.match(
			unwrapped(r.stdout),
			/^Moved PostgreSQL at .*user alice \(seq 5: 2 retained transition\(s\), checkpoint at seq 3\) into the local global store /m,
		);
		assert.match(unwrapped(r.stdout), /Global is in its local files again/);
		assert.equal(e.config().shareGlobal, false);
		const back = await e.stores().load("global");
		assert.equal(e.stores().location("global").backend, "file");
		assert.deepEqual([back.seq, back.checkpointSeq, back.tail.map((x) => x.id)], [5, 3, source.tail.slice(-2).map((x) => x.id)]);
		assert.deepEqual(back.state, source.state);
		assert.match(unwrapped(e.run(["show", "global"]).stdout), /^Global {2}\/.*\/state-flow\/global +\(seq 5,/);
	});

	it("refuses, changing nothing: not shared, a local store that holds state, an unreachable database, a project id", async (t) => {
		const e = setup(t);
		const notLinked = e.run(["migrate", "--to-files"]);
		assert.equal(notLinked.code, 1);
		assert.match(
			unwrapped(notLinked.stderr),
			/is not linked to a project: its memory is already in its local files \(.*\/\.pi\/state-flow\)\. Nothing was changed\./,
		);
		assert.match(unwrapped(e.run(["migrate", "--global", "--to-files"]).stderr), /Global is not shared \(`shareGlobal` is off\)/);
		const usage = e.run(["migrate", "acme/api", "--to-files"]);
		assert.equal(usage.code, 2);
		assert.match(unwrapped(usage.stderr), /`migrate --to-files` takes no project id/);

		await write(e.stores(), { cwd: { intents: { local: "kept" } } });
		assert.equal(e.run(["link", "acme/api", "--force"]).code, 0);
		await write(e.stores(), { cwd: { intents: { shared: "yes" } } });
		const log = join(e.cwd, ".pi", "state-flow", "log.jsonl");
		const bytes = readFileSync(log, "utf8");
		const full = e.run(["migrate", "--to-files"]);
		assert.equal(full.code, 1);
		assert.match(
			unwrapped(full.stderr),
			/The local cwd store .* holds 1 transition\(s\) from before it was shared; a migration only fills an empty store, so nothing was changed\. Move that folder aside/,
		);
		assert.equal(readFileSync(log, "utf8"), bytes);
		assert.deepEqual(e.config().links, { [realOrSelf(e.cwd)]: "acme/api" });

		const f = setup(t);
		assert.equal(f.run(["link", "acme/api"]).code, 0);
		const down = f.run(["migrate", "--to-files"], { url: "postgres://sf:s3cr3t-pw@127.0.0.1:1/none" });
		assert.equal(down.code, 1);
		assert.match(unwrapped(down.stderr), /The shared cwd owner cannot be read: .*cannot be reached.*Nothing was changed\./s);
		assert.deepEqual(f.config().links, { [realOrSelf(f.cwd)]: "acme/api" });
		assert.equal(existsSync(join(f.cwd, ".pi")), false, "no local folder is created");
	});

	it("a crash part-way leaves the checkout on the database and the partial copy reported as missing transitions", async (t) => {
		const e = setup(t, server.schema(), { retention: 3 });
		assert.equal(e.run(["link", "acme/api"]).code, 0);
		await fiveWrites(e.stores(), "cwd");
		// Killed after the checkpoint file, before the log.
		const crash = e.run(["migrate", "--to-files"], { env: { STATE_FLOW_FAULT: "mid-compaction" } });
		assert.equal(crash.signal, "SIGKILL", crash.stderr);
		assert.deepEqual(e.config().links, { [realOrSelf(e.cwd)]: "acme/api" });
		assert.equal((await e.stores().load("cwd")).seq, 5, "pi still reads the project from the database");
		const again = e.run(["migrate", "--to-files"]);
		assert.equal(again.code, 1);
		assert.match(
			unwrapped(again.stderr),
			/The local cwd store .* cannot be read \(.*a writer on this machine committed seq 5 \(transition `t-\d+`\).*\); .*Move that folder aside/s,
		);
		rmSync(join(e.cwd, ".pi", "state-flow"), { recursive: true });
		const done = e.run(["migrate", "--to-files"]);
		assert.equal(done.code, 0, done.stderr);
		assert.equal((await e.stores().load("cwd")).seq, 5);
	});
});
