/**
 * The real `state-flow` binary with shared owners on a real PostgreSQL server: link and unlink
 * in the user's config, show/history/export/import/doctor on the database backend, an
 * unreachable database, and the password never printed by any command. Migrating a store
 * into or out of the database is in shared-migrate.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import pg from "pg";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { NO_DB, setup, sharedServer, write } from "./shared-fixture.js";
import { unwrapped } from "./run.js";

const server = sharedServer();

describe("state-flow link and unlink", () => {
	it("records the link in config.json (other keys kept) with a consent message, and unlink removes it", (t) => {
		const e = setup(t);
		const linked = e.run(["link", "acme/api", "--cwd", e.cwd]);
		assert.equal(linked.code, 0, linked.stderr);
		const real = realOrSelf(e.cwd);
		assert.match(unwrapped(linked.stdout), new RegExp(`Linked ${real.replace(/[/.]/g, "\\$&")} to project \`acme/api\``));
		assert.match(unwrapped(linked.stdout), /shared with every checkout linked to `acme\/api`/);
		assert.match(unwrapped(linked.stdout), /Database: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres, schema sf_test_/);
		assert.match(unwrapped(linked.stdout), /The project holds nothing yet/);
		// No `user` in the config: the link says what teammates will see and how to choose the name.
		assert.match(unwrapped(linked.stdout), /^Teammates see your changes as [^\s;]+@[^\s;]+; to choose the name, set "user" in \S+config\.json\.$/m);
		const c = e.config();
		assert.deepEqual(c.links, { [real]: "acme/api" });
		assert.deepEqual([c.mode, c.custom, c.databaseSchema], ["passive", { kept: true }, e.schema]);

		const again = e.run(["link", "acme/api"]);
		assert.match(unwrapped(again.stdout), /already linked to project `acme\/api`; nothing changed/);
		const other = e.run(["link", "acme/web"]);
		assert.match(unwrapped(other.stdout), /to project `acme\/web` \(was `acme\/api`\)/);
		assert.deepEqual(e.config().links, { [real]: "acme/web" });

		const un = e.run(["unlink"]);
		assert.equal(un.code, 0, un.stderr);
		assert.match(unwrapped(un.stdout), /Unlinked .* from project `acme\/web`.*The project's rows in the database are untouched/s);
		const after = e.config();
		assert.deepEqual(after.links, {});
		assert.deepEqual([after.mode, after.custom], ["passive", { kept: true }]);
		assert.match(unwrapped(e.run(["unlink"]).stdout), /is not linked to a project; nothing changed/);
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
			assert.match(unwrapped(r.stderr), why);
			assert.match(unwrapped(r.stderr), /nothing was written/);
		}
		assert.equal(readFileSync(join(e.agent, "state-flow", "config.json"), "utf8"), before);
	});

	it("links without a database only with a warning that the CWD owner is unavailable until one is configured", (t) => {
		const e = setup(t);
		const r = e.run(["link", "acme/api"], { url: NO_DB });
		assert.equal(r.code, 0, r.stderr);
		assert.match(unwrapped(r.stdout), /warning: no database is configured.*unavailable/);
		const show = e.run(["show"], { url: NO_DB });
		assert.equal(show.code, 1);
		assert.match(unwrapped(show.stdout), /^CWD {2}PostgreSQL at \(not configured\).*project acme\/api +\(unavailable\)/m);
		assert.match(unwrapped(show.stdout), /Problem: no database is configured/);
		assert.match(unwrapped(show.stderr), /`cwd` owner \(project `acme\/api`\) is shared through PostgreSQL, but no database is configured/);
	});

	it("refuses to link over a local CWD store that holds state, unless --force, which leaves the files untouched", async (t) => {
		const e = setup(t);
		await write(e.stores(), { cwd: { intents: { local: "kept" } } });
		const log = join(e.cwd, ".pi", "state-flow", "log.jsonl");
		const bytes = readFileSync(log, "utf8");
		const r = e.run(["link", "acme/api"]);
		assert.equal(r.code, 1);
		assert.match(unwrapped(r.stderr), /holds 1 transition\(s\).*Nothing was changed.*`state-flow migrate acme\/api`.*`state-flow link acme\/api --force`/s);
		assert.equal(e.config().links, undefined);
		const forced = e.run(["link", "acme/api", "--force"]);
		assert.equal(forced.code, 0, forced.stderr);
		assert.match(unwrapped(forced.stdout), /left untouched and unused while linked/);
		assert.equal(readFileSync(log, "utf8"), bytes);
		// Unlinked again, the local memory is back.
		e.run(["unlink"]);
		assert.deepEqual((await e.stores().load("cwd")).state.intents, { local: "kept" });
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
		assert.match(unwrapped(imported.stdout), /Imported .* into global and cwd as transition/);
		assert.equal(existsSync(join(e.cwd, ".pi", "state-flow")), false, "no local CWD store appears in a linked checkout");

		const doc = JSON.parse(e.run(["export"]).stdout) as { owners: Record<string, { seq: number; state: unknown }> };
		assert.deepEqual(doc.owners.cwd, { seq: 1, state });
		assert.deepEqual(doc.owners.global?.state, { ...state, intents: { g: 1 } });

		const show = e.run(["show"]);
		assert.equal(show.code, 0, show.stderr);
		assert.match(unwrapped(show.stdout), /^Global {2}\/.*\/state-flow\/global +\(seq 1,/m);
		assert.match(
			unwrapped(show.stdout),
			/^CWD {2}PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres, schema sf_test_\w+, project acme\/api +\(seq 1,/m,
		);
		assert.match(unwrapped(show.stdout), /^Database: PostgreSQL at .*, schema sf_test_\w+, from STATE_FLOW_DATABASE_URL$/m);
		assert.match(unwrapped(show.stdout), /^User: /m);

		// History on the database says who made the change (the importer: this user on this host).
		const history = e.run(["history", "cwd"]);
		assert.match(
			unwrapped(history.stdout),
			/^CWD {2}PostgreSQL at .*project acme\/api +\(seq 1; 1 retained\)\n {2}#1 \S+ \d\d:\d\d:\d\d import doc\.json \S+@\S+ /m,
		);
		const doctor = e.run(["doctor"]);
		assert.equal(doctor.code, 0, doctor.stdout);
		assert.match(unwrapped(doctor.stdout), /cwd: ok, PostgreSQL at .* project acme\/api, seq 1, 1 retained transition\(s\), every row verified\./);
		assert.match(unwrapped(doctor.stdout), /global: ok, seq 1/);
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
		assert.match(unwrapped(doctor.stdout), /cwd: DAMAGED: .*transition row seq 1 does not match its checksum/);
	});

	it("an unreachable database: exit 1 with a clear message, the other owners still shown, nothing exported partially", async (t) => {
		const e = setup(t);
		await write(e.stores(), { global: { intents: { here: "yes" } } });
		e.run(["link", "acme/api"]);
		const url = "postgres://sf:s3cr3t-pw@127.0.0.1:1/none";
		for (const cmd of ["show", "history"]) {
			const r = e.run([cmd], { url });
			assert.equal(r.code, 1, cmd);
			assert.match(unwrapped(r.stdout), /^Global {2}\/.* +\(seq 1/m, cmd);
			assert.match(unwrapped(r.stdout), /^CWD {2}PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none, .*project acme\/api +\(unavailable\)/m, cmd);
			assert.match(
				unwrapped(r.stderr),
				/`cwd` owner \(project `acme\/api`\) unavailable: PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none cannot be reached/,
				cmd,
			);
		}
		const exported = e.run(["export"], { url });
		assert.equal(exported.code, 1);
		assert.equal(exported.stdout, "");
		assert.match(unwrapped(exported.stderr), /Nothing was exported/);
		assert.equal(JSON.parse(e.run(["export", "global"], { url }).stdout).owners.global.seq, 1);
		const doctor = e.run(["doctor"], { url });
		assert.equal(doctor.code, 1);
		assert.match(unwrapped(doctor.stdout), /cwd: UNAVAILABLE: .*cannot be reached/);
		assert.match(unwrapped(doctor.stdout), /global: ok, seq 1/);
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
			if (committed) assert.match(unwrapped(dry.stdout), /cwd in postgres:.*acme\/api \(committed there at seq 1\).*would roll forward/);
			else assert.match(unwrapped(dry.stdout), /was never committed \(.*cwd in postgres:.*acme\/api \(NOT committed there.*would drop its journal/);
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
