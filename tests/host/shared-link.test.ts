/**
 * Linking a checkout to a team project from pi's side, through the real SDK, the faux model
 * and a real PostgreSQL server: `/state link` and `/state unlink` ask and record the user's
 * consent (refused without an interactive UI, with the command to run instead), and a
 * repository's suggested project is only ever offered: a hostile or malformed one never pulls
 * another project's memory in without a yes. The rest of team memory in a session is in
 * shared-memory.test.ts.
 */
import assert from "node:assert/strict";
import { chownSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { completeStateArgs } from "../../lib/host/commands/index.js";
import { MAX_SUGGESTION_BYTES, readSuggestion } from "../../lib/storage/project/suggestion.js";
import { linkPathProblem } from "../../lib/storage/placement/placement.js";
import { readConfig, updateConfig } from "../../lib/storage/placement/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { tempDir } from "../helpers/temp-dir.js";
import { projectOf } from "../../lib/storage/project/project.js";
import { runCli } from "../cli/run.js";
import { startFlow } from "./fixture.js";
import { commitOn, links, machine, otherMachine, piOn } from "./shared-fixture.js";

const server = serverForFile(testDatabase);

const password = (): string => new URL(server.url).password;

describe("/state link and unlink", () => {
	it("asks naming the project and the database without its password; on yes records the link and the session's CWD moves to the project", async (t) => {
		const schema = server.schema();
		const a = machine(t, { database: server.url, databaseSchema: schema });
		const b = otherMachine(t, server.url, schema, "acme/api");
		await commitOn(b, { cwd: { intents: { shared: "team goal" } } });
		a.inputAnswer = "alice";
		const pi = await piOn(t, a, true);
		await pi.prompt("local first", [{ calls: [{ id: "c1", name: "patch_state", args: { cwd: { intents: { local: "mine" } } } }] }, { text: "ok" }]);
		const said = await pi.command("/state link acme/api");
		assert.equal(pi.asked.length, 1);
		const question = pi.asked[0] as string;
		assert.match(question, /project `acme\/api`/);
		assert.match(question, new RegExp(`checkout: ${realOrSelf(a.cwd).replace(/[/.]/g, "\\$&")}`));
		assert.match(question, /database: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres, schema sf_test_/);
		assert.match(question, /shared with everyone linked to `acme\/api`/);
		// The local memory a link stops reading is named, as `state-flow link` refuses it without `--force`.
		assert.match(question, /Its local store \S+\/\.pi\/state-flow holds 1 transition\(s\): it is NOT read while linked/);
		assert.ok(!question.includes(password()), "the question never shows the password");
		assert.deepEqual(links(a), { [realOrSelf(a.cwd)]: "acme/api" });
		assert.match(said.join("\n"), /linked this checkout to project `acme\/api`/);
		// No `user` in the config: asked once at the first link, and saved.
		assert.equal(pi.inputs.length, 1);
		assert.match(pi.inputs[0] as string, /^State Flow: your name for teammates/);
		assert.equal(readConfig(a.agentDir).config.user, "alice");
		assert.match(said.join("\n"), /Teammates see you as alice \(`"user"` in /);
		// The session moved at once (pi was idle): the next head shows the project's memory, not the old files.
		await pi.prompt("next", [{ text: "ok" }]);
		assert.match(pi.head(), /team goal/);
		assert.doesNotMatch(pi.head(), /mine/);
		await pi.command("/state");
		const status = pi.output("status");
		assert.match(
			status,
			/^ {2}cwd {6}wanted {6}.*\n {11}PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\n {11}schema sf_test_\w+, project acme\/api$/m,
		);
		assert.match(status, /^database: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\n {10}schema sf_test_\w+, from config\.json$/m);
		assert.ok(!status.includes(password()));
		for (const line of status.split("\n")) assert.ok(line.length <= 80, `fits 80 columns: ${line}`);
		// Unlink asks too, and the checkout's own files are back.
		await pi.command("/state unlink");
		assert.equal(pi.asked.length, 2);
		assert.match(pi.asked[1] as string, /Unlink this checkout from project `acme\/api`/);
		assert.deepEqual(links(a), {});
		await pi.prompt("after", [{ text: "ok" }]);
		assert.match(pi.head(), /mine/);
		assert.doesNotMatch(pi.head(), /team goal/);
		// Linked again: the name is known, nothing more is asked.
		await pi.command("/state link acme/api");
		assert.equal(pi.inputs.length, 1);
	});

	it("a no changes nothing; without an interactive UI linking is refused with the `state-flow link` command to run, unlinking is not", async (t) => {
		const schema = server.schema();
		const a = machine(t, { database: server.url, databaseSchema: schema });
		const pi = await piOn(t, a, false);
		const said = await pi.command("/state link acme/api");
		assert.equal(pi.asked.length, 1);
		assert.match(said.join("\n"), /not linked; nothing changed/);
		assert.equal(links(a), undefined);
		const flow = await startFlow({ cwd: a.cwd, agentDir: a.agentDir });
		t.after(() => flow.dispose());
		const refused = await flow.command("/state link acme/api");
		assert.match(refused.join("\n"), /needs your confirmation.*nothing changed\. To link, run: state-flow link acme\/api --cwd \//);
		assert.equal(links(a), undefined);
		// Unlinking brings no one else's memory in: without a UI the typed command is enough.
		await updateConfig(a.agentDir, { links: { [realOrSelf(a.cwd)]: "acme/api", "/elsewhere": "other/project" } });
		const unlinked = await flow.command("/state unlink");
		assert.match(unlinked.join("\n"), /unlinked from project `acme\/api`/);
		assert.deepEqual(links(a), { "/elsewhere": "other/project" });
	});

	it("/state unlink clears the `moved-to` marker a migration left, as `state-flow unlink` does, so /state no longer says to run it", async (t) => {
		const schema = server.schema();
		const a = machine(t, { databaseSchema: schema });
		const cli = (...args: string[]) => runCli([...args, "--agent-dir", a.agentDir], { cwd: a.cwd, env: { STATE_FLOW_DATABASE_URL: server.url } });
		assert.equal(cli("set", "cwd.tactics.before", "1").code, 0);
		const migrated = cli("migrate", "acme/moved");
		assert.equal(migrated.code, 0, migrated.stderr);
		const marker = join(projectOf(a.cwd).store, "moved-to");
		assert.equal(existsSync(marker), true, "the migration left its marker");
		await updateConfig(a.agentDir, { database: server.url });
		const pi = await piOn(t, a, true);
		const said = await pi.command("/state unlink");
		assert.match(said.join("\n"), /unlinked from project `acme\/moved`/);
		assert.equal(existsSync(marker), false, "the files are in use again: no marker");
		await pi.command("/state");
		assert.doesNotMatch(pi.output("status"), /state-flow unlink/);
		assert.doesNotMatch(pi.output("status"), /was moved to project/);
	});

	it("refuses to link a folder of another user, and /state names a path link there that is not followed", async (t) => {
		// Only root can give a folder away; elsewhere a system folder owned by root stands in.
		if (process.getuid?.() !== 0) {
			assert.match(linkPathProblem("/usr") ?? "", /^the folder \/usr belongs to another user/);
			return;
		}
		const a = machine(t, { database: server.url, databaseSchema: server.schema() });
		chownSync(a.cwd, 54_321, 54_321);
		const pi = await piOn(t, a, true);
		const said = await pi.command("/state link acme/api");
		assert.equal(pi.asked.length, 0, "nothing is asked");
		assert.match(said.join("\n"), /cannot link: the folder .* belongs to another user, and State Flow follows a link only in a folder of yours/);
		assert.equal(links(a), undefined);
		await updateConfig(a.agentDir, { links: { [realOrSelf(a.cwd)]: "acme/api" } });
		await pi.command("/state");
		const status = pi.output("status");
		assert.match(
			status.replace(/\s+/g, " "),
			/linked to project `acme\/api` in your config, but the folder .* belongs to another user, so the link is not followed/,
		);
		assert.doesNotMatch(status, /project acme\/api$/m, "the CWD owner is not the project's");
	});

	it("refuses a bad project id with the usage, and a link with no database configured; completion offers both", async (t) => {
		assert.deepEqual(
			completeStateArgs("li")?.map((i) => i.value),
			["link "],
		);
		assert.deepEqual(
			completeStateArgs("unl")?.map((i) => i.value),
			["unlink"],
		);
		const a = machine(t, {});
		const pi = await piOn(t, a, true);
		await pi.command("/state unlink now");
		assert.match(
			pi.output("usage"),
			/^`unlink` takes no argument\.\nUsage:\n {2}\/state unlink {2,}keep this checkout's CWD memory in files again\n\(\/state help lists every command\)$/,
		);
		await pi.command("/state link a b");
		assert.match(pi.output("usage"), /`link` takes at most one project id/);
		await pi.command("/state link a\u0007b");
		assert.match(pi.output("usage"), /the project id must not contain control characters/);
		const said = await pi.command("/state link acme/api");
		assert.match(said.join("\n"), /nothing to link to: no database is configured/);
		// This checkout is not linked: `unlink` is no way out here.
		assert.doesNotMatch(said.join("\n"), /unlink/);
		assert.equal(pi.asked.length, 0);
		assert.equal(links(a), undefined);
	});
});

describe("a repository's suggested project", () => {
	it("is offered once at session start and never bound; a hostile suggestion pulls nothing in unless the user says yes", async (t) => {
		const schema = server.schema();
		const victim = otherMachine(t, server.url, schema, "victim/secret");
		await commitOn(victim, { cwd: { intents: { plan: "SECRET-PLAN" } } });
		const a = machine(t, { database: server.url, databaseSchema: schema });
		mkdirSync(join(a.cwd, ".pi"));
		writeFileSync(join(a.cwd, ".pi", "state-flow.json"), JSON.stringify({ project: "victim/secret" }));
		const pi = await piOn(t, a, false);
		const offers = pi.notes.filter((m) => m.includes("suggests sharing"));
		assert.equal(offers.length, 1);
		assert.match(offers[0] as string, /suggests sharing its CWD memory as project `victim\/secret`.*`\/state link` links it after confirmation/);
		await pi.prompt("hi", [{ calls: [{ id: "r1", name: "read_state", args: { path: "cwd.intents" } }] }, { text: "ok" }]);
		assert.doesNotMatch(JSON.stringify(pi.seen), /SECRET-PLAN/);
		await pi.command("/state");
		assert.match(pi.output("status"), /the repository suggests project victim\/secret: \/state link shares it/);
		// `/state link` without an id asks about the suggestion, naming where it comes from; no keeps everything as it was.
		await pi.command("/state link");
		assert.equal(pi.asked.length, 1);
		assert.match(pi.asked[0] as string, /project `victim\/secret` \(suggested by the repository's \.pi\/state-flow\.json\)/);
		assert.equal(links(a), undefined);
		await pi.prompt("again", [{ calls: [{ id: "r2", name: "read_state", args: { path: "cwd.intents" } }] }, { text: "ok" }]);
		assert.doesNotMatch(JSON.stringify(pi.seen), /SECRET-PLAN/);
		assert.equal(pi.notes.filter((m) => m.includes("suggests sharing")).length, 1, "offered once");
	});

	it("is ignored with a warning when it is not a small regular JSON file inside the checkout naming a valid id", async (t) => {
		const root = tempDir(t, "state-flow-suggest-");
		const checkout = (name: string, write: (pi: string) => void): string => {
			const cwd = join(root, name);
			mkdirSync(join(cwd, ".pi"), { recursive: true });
			write(join(cwd, ".pi"));
			return cwd;
		};
		const outside = join(root, "outside.json");
		writeFileSync(outside, JSON.stringify({ project: "victim/secret" }));
		const cases: Array<[string, string, RegExp]> = [
			[checkout("link", (d) => symlinkSync(outside, join(d, "state-flow.json"))), "a symbolic link", /symbolic link|is a link/],
			[
				checkout("big", (d) => writeFileSync(join(d, "state-flow.json"), `{"project":"a","pad":"${"x".repeat(MAX_SUGGESTION_BYTES)}"}`)),
				"too large",
				/more than the 4096/,
			],
			[checkout("json", (d) => writeFileSync(join(d, "state-flow.json"), "{project: acme}")), "not JSON", /not valid JSON/],
			[checkout("array", (d) => writeFileSync(join(d, "state-flow.json"), '["acme/api"]')), "not an object", /must be a JSON object/],
			[
				checkout("ctl", (d) => writeFileSync(join(d, "state-flow.json"), JSON.stringify({ project: "acme\napi" }))),
				"a control character",
				/must not contain control characters/,
			],
			[checkout("dir", (d) => mkdirSync(join(d, "state-flow.json"))), "a folder", /a folder/],
		];
		const linkedPi = join(root, "linked-pi");
		mkdirSync(linkedPi);
		writeFileSync(join(linkedPi, "state-flow.json"), JSON.stringify({ project: "victim/secret" }));
		const escaping = join(root, "escaping");
		mkdirSync(escaping);
		symlinkSync(linkedPi, join(escaping, ".pi"));
		cases.push([escaping, "a .pi folder that leads outside", /outside/]);
		for (const [cwd, what, why] of cases) {
			const got = readSuggestion(cwd);
			assert.ok(got !== undefined && "problem" in got, `${what}: ignored`);
			assert.match(got.problem, /\.pi\/state-flow\.json is ignored/, what);
			assert.match(got.problem, why, what);
		}
		assert.deepEqual(readSuggestion(checkout("ok", (d) => writeFileSync(join(d, "state-flow.json"), '{"project":"acme/api","note":1}'))), {
			project: "acme/api",
		});
		assert.equal(readSuggestion(join(root, "none")), undefined);
		// In a session: one warning, no crash, nothing linked.
		const a = machine(t, { database: server.url, databaseSchema: server.schema() });
		mkdirSync(join(a.cwd, ".pi"));
		writeFileSync(join(a.cwd, ".pi", "state-flow.json"), "garbage");
		const pi = await piOn(t, a, true);
		assert.equal(pi.notes.filter((m) => /state-flow\.json is ignored: it is not valid JSON/.test(m)).length, 1);
		await pi.prompt("hi", [{ text: "ok" }]);
		assert.equal(links(a), undefined);
	});
});
