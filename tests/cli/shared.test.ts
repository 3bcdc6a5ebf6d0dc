/**
 * The real `state-flow` binary with shared owners on a real PostgreSQL server: link and unlink
 * in the user's config, migrate (a file store with its retained history into the database in
 * one step, refusing a non-empty target), show/history/export/import/doctor on the database
 * backend, an unreachable database, and the password never printed by any command.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { patchAt, stateAt } from "../../lib/core/history.js";
import type { CanonicalPatch, Owner, OwnerHistory } from "../../lib/core/types.js";
import { closeDatabases, placementFor } from "../../lib/storage/backend.js";
import { readConfig } from "../../lib/storage/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { Stores } from "../../lib/storage/stores.js";
import { testDatabase } from "../helpers/pg-server.js";
import type { TestDatabase } from "../helpers/pg-server.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli } from "./run.js";

let server: TestDatabase;
let password: string;
before(async () => {
	server = await testDatabase();
	password = decodeURIComponent(new URL(server.url).password);
	assert.ok(password.length >= 8, "the test server's URL must carry a password for the no-leak checks");
});
after(async () => {
	await closeDatabases();
	await server.stop();
});

interface Env {
	root: string;
	cwd: string;
	agent: string;
	schema: string;
	/** The real binary, `--agent-dir` set, the database URL (with its password) in the environment unless `url` says otherwise. */
	run(args: string[], opts?: { url?: string; env?: Record<string, string> }): ReturnType<typeof runCli>;
	config(): Record<string, unknown>;
	/** The stores as pi would open them in this checkout (placement from the config file and the URL). */
	stores(url?: string): Stores;
}

/** One "machine": an agent directory with a config naming its own schema, and a checkout. */
function setup(t: { after(fn: () => void): void }, schema = server.schema(), extra: Record<string, unknown> = {}): Env {
	const root = tempDir(t, "state-flow-shared-");
	const cwd = join(root, "checkout");
	const agent = join(root, "agent");
	mkdirSync(cwd);
	mkdirSync(join(agent, "state-flow"), { recursive: true });
	const file = join(agent, "state-flow", "config.json");
	writeFileSync(file, `${JSON.stringify({ databaseSchema: schema, mode: "passive", custom: { kept: true }, ...extra }, null, 2)}\n`);
	return {
		root,
		cwd,
		agent,
		schema,
		run(args, opts = {}) {
			const url = opts.url ?? server.url;
			const r = runCli([...args, "--agent-dir", agent], { cwd, env: { STATE_FLOW_DATABASE_URL: url, ...opts.env } });
			// No command ever prints a password, whatever it does.
			for (const secret of [password, url === "" ? "" : decodeURIComponent(new URL(url).password)].filter((s) => s !== "")) {
				assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), `\`state-flow ${args.join(" ")}\` printed the password:\n${r.stdout}\n${r.stderr}`);
			}
			return r;
		},
		config: () => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>,
		stores(url = server.url) {
			const { config } = readConfig(agent);
			return new Stores({
				agentDir: agent,
				cwd,
				placement: placementFor(config, cwd, { STATE_FLOW_DATABASE_URL: url }),
				...(config.retention !== undefined ? { retention: config.retention } : {}),
			});
		},
	};
}

let n = 0;
async function write(stores: Stores, patch: CanonicalPatch): Promise<void> {
	const r = await stores.commit(patch, { id: `t-${++n}`, at: "2026-12-01T00:00:00.000Z", by: { kind: "system", reason: "cli-test" } });
	assert.equal(r.noop, false);
}

/** Five transitions on one owner (retention 3 in these configs: a checkpoint at seq 2 and three retained). */
async function fiveWrites(stores: Stores, owner: Owner): Promise<void> {
	for (let i = 1; i <= 5; i++) await write(stores, { [owner]: { intents: { [`i${i}`]: `step ${i}` }, strategy: { last: i } } });
}

/** Everything a history says: head, fold point, checkpoint, retained records and state. */
function text(h: OwnerHistory): string {
	return JSON.stringify([h.seq, h.checkpointSeq, h.checkpoint, h.tail, h.state]);
}

const NO_DB = "";

describe("state-flow link and unlink", () => {
	it("records the link in config.json (other keys kept) with a consent message, and unlink removes it", (t) => {
		const e = setup(t);
		const linked = e.run(["link", "acme/api", "--cwd", e.cwd]);
		assert.equal(linked.code, 0, linked.stderr);
		const real = realOrSelf(e.cwd);
		assert.match(linked.stdout, new RegExp(`Linked ${real.replace(/[/.]/g, "\\$&")} to project \`acme/api\``));
		assert.match(linked.stdout, /shared with every checkout linked to `acme\/api`/);
		assert.match(linked.stdout, /Database: postgres postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres schema sf_test_/);
		assert.match(linked.stdout, /The project holds nothing yet/);
		// No `user` in the config: the link says what teammates will see and how to choose the name.
		assert.match(linked.stdout, /^Teammates see your changes as [^\s;]+@[^\s;]+; to choose the name, set "user" in \S+config\.json\.$/m);
		const c = e.config();
		assert.deepEqual(c.links, { [real]: "acme/api" });
		assert.deepEqual([c.mode, c.custom, c.databaseSchema], ["passive", { kept: true }, e.schema]);

		const again = e.run(["link", "acme/api"]);
		assert.match(again.stdout, /already linked to project `acme\/api`; nothing changed/);
		const other = e.run(["link", "acme/web"]);
		assert.match(other.stdout, /to project `acme\/web` \(was `acme\/api`\)/);
		assert.deepEqual(e.config().links, { [real]: "acme/web" });

		const un = e.run(["unlink"]);
		assert.equal(un.code, 0, un.stderr);
		assert.match(un.stdout, /Unlinked .* from project `acme\/web`.*The project's rows in the database are untouched/s);
		const after = e.config();
		assert.deepEqual(after.links, {});
		assert.deepEqual([after.mode, after.custom], ["passive", { kept: true }]);
		assert.match(e.run(["unlink"]).stdout, /is not linked to a project; nothing changed/);
	});

	it("refuses a bad project id naming the field, writing nothing", (t) => {
		const e = setup(t);
		const before = readFileSync(join(e.agent, "state-flow", "config.json"), "utf8");
		for (const [id, why] of [
			["", /the project id must be a non-empty string/],
			["acme\napi", /the project id must not contain control characters/],
			["acme/\u202eipa", /the project id must not contain bidirectional overrides/],
			["x".repeat(201), /the project id must be at most 200 characters/],
		] as Array<[string, RegExp]>) {
			const r = e.run(["link", id]);
			assert.equal(r.code, 1, id);
			assert.match(r.stderr, why);
			assert.match(r.stderr, /nothing was written/);
		}
		assert.equal(readFileSync(join(e.agent, "state-flow", "config.json"), "utf8"), before);
	});

	it("links without a database only with a warning that the CWD owner is unavailable until one is configured", (t) => {
		const e = setup(t);
		const r = e.run(["link", "acme/api"], { url: NO_DB });
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stdout, /warning: no database is configured.*unavailable/);
		const show = e.run(["show"], { url: NO_DB });
		assert.equal(show.code, 1);
		assert.match(show.stdout, /^CWD {2}postgres \(not configured\).*project acme\/api {2}\(unavailable\)/m);
		assert.match(show.stdout, /Problem: no database is configured/);
		assert.match(show.stderr, /`cwd` owner \(project `acme\/api`\) is shared through PostgreSQL, but no database is configured/);
	});

	it("refuses to link over a local CWD store that holds state, unless --force, which leaves the files untouched", async (t) => {
		const e = setup(t);
		await write(e.stores(), { cwd: { intents: { local: "kept" } } });
		const log = join(e.cwd, ".pi", "state-flow", "log.jsonl");
		const bytes = readFileSync(log, "utf8");
		const r = e.run(["link", "acme/api"]);
		assert.equal(r.code, 1);
		assert.match(r.stderr, /holds 1 transition\(s\).*Nothing was changed.*`state-flow migrate acme\/api`.*`state-flow link acme\/api --force`/s);
		assert.equal(e.config().links, undefined);
		const forced = e.run(["link", "acme/api", "--force"]);
		assert.equal(forced.code, 0, forced.stderr);
		assert.match(forced.stdout, /left untouched and unused while linked/);
		assert.equal(readFileSync(log, "utf8"), bytes);
		// Unlinked again, the local memory is back.
		e.run(["unlink"]);
		assert.deepEqual((await e.stores().load("cwd")).state.intents, { local: "kept" });
	});
});

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
			r.stdout,
			/Moved the local cwd store .* \(seq 5: 3 retained transition\(s\), checkpoint at seq 2\) into postgres .*project acme\/api in one transaction; read back and verified/,
		);
		assert.match(r.stdout, /left in place and are no longer used/);
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
		assert.match(history.stdout, /^CWD {2}postgres postgres:\/\/postgres@.* project acme\/api {2}\(seq 6; 3 retained, transitions 1-3 folded/);
		assert.match(history.stdout, /#6 .*system undo/);
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
			r.stderr,
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
		assert.match(r.stdout, /into postgres .*user alice in one transaction/);
		assert.match(r.stdout, /Global is now shared under user `alice`/);
		assert.equal(e.config().shareGlobal, true);
		const stores = e.stores();
		assert.equal(stores.location("global").backend, "postgres");
		assert.equal(text(await stores.load("global")), text(source));
		const show = e.run(["show", "global"]);
		assert.match(show.stdout, /^Global {2}postgres .* user alice {2}\(seq 5,/);
		assert.match(show.stdout, /User: alice \(Global is shared under this name\)/);
		// A second run refuses: Global is already shared.
		const again = e.run(["migrate", "--global"]);
		assert.equal(again.code, 1);
		assert.match(again.stderr, /Global is already shared/);
	});

	it("refuses a damaged source store and an unreachable database, changing nothing", async (t) => {
		const e = setup(t);
		await write(e.stores(), { cwd: { intents: { x: 1 } } });
		const log = join(e.cwd, ".pi", "state-flow", "log.jsonl");
		const good = readFileSync(log, "utf8");
		const down = e.run(["migrate", "acme/api"], { url: "postgres://sf:s3cr3t-pw@127.0.0.1:1/none" });
		assert.equal(down.code, 1);
		assert.match(down.stderr, /unavailable: PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none cannot be reached/);
		assert.equal(e.config().links, undefined);
		writeFileSync(log, good.replace('"x":1', '"x":2'));
		const damaged = e.run(["migrate", "acme/api"]);
		assert.equal(damaged.code, 1);
		assert.match(damaged.stderr, /The local cwd store cannot be migrated: .*Nothing was changed; run `state-flow doctor` first/s);
		assert.equal(e.config().links, undefined);
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		try {
			const rows = await c.query(`SELECT count(*)::int AS n FROM "${e.schema}".owners WHERE key = 'acme/api' AND seq > 0`).catch(() => ({ rows: [{ n: 0 }] }));
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
			r.stdout,
			/^Moved postgres .*project acme\/api \(seq 5: 3 retained transition\(s\), checkpoint at seq 2\) into the local cwd store .*\/\.pi\/state-flow; read back and verified\.$/m,
		);
		assert.match(r.stdout, /^Unlinked .* from project `acme\/api`/m);
		assert.match(r.stdout, /The database's rows are untouched: checkouts still linked to `acme\/api` keep sharing them/);
		assert.deepEqual(e.config().links, {});

		const stores = e.stores();
		assert.equal(stores.location("cwd").backend, "file");
		const back = await stores.load("cwd");
		assert.equal(text(back), text(source));
		for (let k = 0; k <= 3; k++) assert.deepEqual(stateAt(back, k), stateAt(source, k), `cwd[${k}]`);
		// Undo works on the files as it did on the database.
		await stores.commit({ cwd: patchAt(back, 0).undo }, { id: "undo-1", at: "2026-12-01T00:00:01.000Z", by: { kind: "system", reason: "undo" }, exact: true });
		assert.deepEqual((await e.stores().load("cwd")).state, stateAt(source, 1));
		assert.match(e.run(["history", "cwd"]).stdout, /^CWD {2}\/.*\/\.pi\/state-flow {2}\(seq 6; 3 retained, transitions 1-3 folded/);

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
		assert.match(r.stdout, /^Moved postgres .*user alice \(seq 5: 2 retained transition\(s\), checkpoint at seq 3\) into the local global store /m);
		assert.match(r.stdout, /Global is in its local files again/);
		assert.equal(e.config().shareGlobal, false);
		const back = await e.stores().load("global");
		assert.equal(e.stores().location("global").backend, "file");
		assert.deepEqual([back.seq, back.checkpointSeq, back.tail.map((x) => x.id)], [5, 3, source.tail.slice(-2).map((x) => x.id)]);
		assert.deepEqual(back.state, source.state);
		assert.match(e.run(["show", "global"]).stdout, /^Global {2}\/.*\/state-flow\/global {2}\(seq 5,/);
	});

	it("refuses, changing nothing: not shared, a local store that holds state, an unreachable database, a project id", async (t) => {
		const e = setup(t);
		const notLinked = e.run(["migrate", "--to-files"]);
		assert.equal(notLinked.code, 1);
		assert.match(notLinked.stderr, /is not linked to a project: its memory is already in its local files \(.*\/\.pi\/state-flow\)\. Nothing was changed\./);
		assert.match(e.run(["migrate", "--global", "--to-files"]).stderr, /Global is not shared \(`shareGlobal` is off\)/);
		const usage = e.run(["migrate", "acme/api", "--to-files"]);
		assert.equal(usage.code, 2);
		assert.match(usage.stderr, /`migrate --to-files` takes no project id/);

		await write(e.stores(), { cwd: { intents: { local: "kept" } } });
		assert.equal(e.run(["link", "acme/api", "--force"]).code, 0);
		await write(e.stores(), { cwd: { intents: { shared: "yes" } } });
		const log = join(e.cwd, ".pi", "state-flow", "log.jsonl");
		const bytes = readFileSync(log, "utf8");
		const full = e.run(["migrate", "--to-files"]);
		assert.equal(full.code, 1);
		assert.match(
			full.stderr,
			/The local cwd store .* holds 1 transition\(s\) from before it was shared; a migration only fills an empty store, so nothing was changed\. Move that folder aside/,
		);
		assert.equal(readFileSync(log, "utf8"), bytes);
		assert.deepEqual(e.config().links, { [realOrSelf(e.cwd)]: "acme/api" });

		const f = setup(t);
		assert.equal(f.run(["link", "acme/api"]).code, 0);
		const down = f.run(["migrate", "--to-files"], { url: "postgres://sf:s3cr3t-pw@127.0.0.1:1/none" });
		assert.equal(down.code, 1);
		assert.match(down.stderr, /The shared cwd owner cannot be read: .*cannot be reached.*Nothing was changed\./s);
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
			again.stderr,
			/The local cwd store .* cannot be read \(.*a writer on this machine committed seq 5 \(transition `t-\d+`\).*\); .*Move that folder aside/s,
		);
		rmSync(join(e.cwd, ".pi", "state-flow"), { recursive: true });
		const done = e.run(["migrate", "--to-files"]);
		assert.equal(done.code, 0, done.stderr);
		assert.equal((await e.stores().load("cwd")).seq, 5);
	});
});

describe("show, history, export, import and doctor on the database", () => {
	it("import commits one transition over a Global file and the linked project; export, show and doctor read it back", (t) => {
		const e = setup(t);
		assert.equal(e.run(["link", "acme/api"]).code, 0);
		const file = join(e.root, "doc.json");
		const state = { intents: { ship: "2.0" }, strategy: {}, tactics: {}, artifacts: {}, lazy: {} };
		writeFileSync(
			file,
			JSON.stringify({ format: "state-flow/export", v: 1, owners: { cwd: { seq: 0, state }, global: { seq: 0, state: { ...state, intents: { g: 1 } } } } }),
		);
		const imported = e.run(["import", file]);
		assert.equal(imported.code, 0, imported.stderr);
		assert.match(imported.stdout, /Imported .* into global and cwd as transition/);
		assert.equal(existsSync(join(e.cwd, ".pi", "state-flow")), false, "no local CWD store appears in a linked checkout");

		const doc = JSON.parse(e.run(["export"]).stdout) as { owners: Record<string, { seq: number; state: unknown }> };
		assert.deepEqual(doc.owners.cwd, { seq: 1, state });
		assert.deepEqual(doc.owners.global?.state, { ...state, intents: { g: 1 } });

		const show = e.run(["show"]);
		assert.equal(show.code, 0, show.stderr);
		assert.match(show.stdout, /^Global {2}\/.*\/state-flow\/global {2}\(seq 1,/m);
		assert.match(show.stdout, /^CWD {2}postgres postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres schema sf_test_\w+, project acme\/api {2}\(seq 1,/m);
		assert.match(show.stdout, /^Database: postgres .* \(from STATE_FLOW_DATABASE_URL\)$/m);
		assert.match(show.stdout, /^User: /m);

		// History on the database says who made the change (the importer: this user on this host).
		const history = e.run(["history", "cwd"]);
		assert.match(history.stdout, /^CWD {2}postgres .*project acme\/api {2}\(seq 1; 1 retained\)\n {2}#1 \S+ \d\d:\d\d:\d\d import doc\.json \S+@\S+ /m);
		const doctor = e.run(["doctor"]);
		assert.equal(doctor.code, 0, doctor.stdout);
		assert.match(doctor.stdout, /cwd: ok, postgres .* project acme\/api, seq 1, 1 retained transition\(s\), every row verified\./);
		assert.match(doctor.stdout, /global: ok, seq 1/);
	});

	it("doctor reads the rows afresh: a row edited by hand is reported as damage", async (t) => {
		const e = setup(t);
		assert.equal(e.run(["link", "acme/api"]).code, 0);
		await write(e.stores(), { cwd: { intents: { a: "one" } } });
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		try {
			const r = await c.query(`UPDATE "${e.schema}".transitions SET body = replace(body, '"one"', '"two"') WHERE seq = 1`);
			assert.equal(r.rowCount, 1);
		} finally {
			await c.end();
		}
		const doctor = e.run(["doctor"]);
		assert.equal(doctor.code, 1);
		assert.match(doctor.stdout, /cwd: DAMAGED: .*transition row seq 1 does not match its checksum/);
	});

	it("an unreachable database: exit 1 with a clear message, the other owners still shown, nothing exported partially", async (t) => {
		const e = setup(t);
		await write(e.stores(), { global: { intents: { here: "yes" } } });
		e.run(["link", "acme/api"]);
		const url = "postgres://sf:s3cr3t-pw@127.0.0.1:1/none";
		for (const cmd of ["show", "history"]) {
			const r = e.run([cmd], { url });
			assert.equal(r.code, 1, cmd);
			assert.match(r.stdout, /^Global {2}\/.* {2}\(seq 1/m, cmd);
			assert.match(r.stdout, /^CWD {2}postgres postgres:\/\/sf@127\.0\.0\.1:1\/none .*project acme\/api {2}\(unavailable\)/m, cmd);
			assert.match(r.stderr, /`cwd` owner \(project `acme\/api`\) unavailable: PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none cannot be reached/, cmd);
		}
		const exported = e.run(["export"], { url });
		assert.equal(exported.code, 1);
		assert.equal(exported.stdout, "");
		assert.match(exported.stderr, /Nothing was exported/);
		assert.equal(JSON.parse(e.run(["export", "global"], { url }).stdout).owners.global.seq, 1);
		const doctor = e.run(["doctor"], { url });
		assert.equal(doctor.code, 1);
		assert.match(doctor.stdout, /cwd: UNAVAILABLE: .*cannot be reached/);
		assert.match(doctor.stdout, /global: ok, seq 1/);
	});

	for (const [point, committed] of [
		["pg-before-commit", false],
		["pg-after-commit", true],
	] as const) {
		it(`doctor settles a mixed transition whose writer died at ${point} by asking the database`, (t) => {
			const e = setup(t);
			assert.equal(e.run(["link", "acme/api"]).code, 0);
			const file = join(e.root, "doc.json");
			const state = { intents: { crash: point }, strategy: {}, tactics: {}, artifacts: {}, lazy: {} };
			writeFileSync(file, JSON.stringify({ format: "state-flow/export", v: 1, owners: { cwd: { seq: 0, state }, global: { seq: 0, state } } }));
			const crash = e.run(["import", file], { env: { STATE_FLOW_FAULT: point } });
			assert.equal(crash.signal, "SIGKILL", crash.stderr);
			const journal = join(e.agent, "state-flow", "journal");
			assert.equal(readdirSync(journal).filter((f) => f.endsWith(".json")).length, 1);
			const dry = e.run(["doctor", "--dry-run"]);
			if (committed) assert.match(dry.stdout, /cwd in postgres:.*acme\/api \(committed there at seq 1\).*would roll forward/);
			else assert.match(dry.stdout, /was never committed \(.*cwd in postgres:.*acme\/api \(NOT committed there.*would drop its journal/);
			const fix = e.run(["doctor"]);
			assert.equal(fix.code, 0, fix.stdout);
			assert.deepEqual(
				readdirSync(journal).filter((f) => f.endsWith(".json")),
				[],
			);
			const doc = JSON.parse(e.run(["export"]).stdout) as { owners: Record<string, { seq: number }> };
			assert.deepEqual([doc.owners.global?.seq ?? 0, doc.owners.cwd?.seq], committed ? [1, 1] : [0, 0]);
		});
	}
});
