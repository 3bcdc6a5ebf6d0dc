/**
 * Team and fleet memory from pi's side, through the real SDK, the faux model and a real
 * PostgreSQL server: `/state link` asks and records the user's consent, a running session
 * follows a link or database change at its next prompt, a repository's suggested project is
 * only ever offered (a hostile one never pulls another project's memory in without a yes),
 * `/state` says where each owner lives, an unavailable owner leaves the others working, and a
 * change made on another "machine" reaches the run as the concurrent-change notice.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { HEAD_OPEN } from "../../lib/model/head.js";
import { completeStateArgs } from "../../lib/host/commands.js";
import { MAX_SUGGESTION_BYTES, readSuggestion } from "../../lib/host/link.js";
import { readConfig, updateConfig } from "../../lib/storage/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { expectSoon } from "../helpers/soon.js";
import { tempDir } from "../helpers/temp-dir.js";
import { startFlow, userTexts } from "./fixture.js";
import type { RootChange } from "../../lib/api.js";
import { createTodoExtension } from "../../examples/todo/index.js";
import { commitOn, linkedMachines, links, machine, otherMachine, piOn } from "./shared-fixture.js";

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
		assert.match(question, /database: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(schema sf_test_/);
		assert.match(question, /shared with everyone linked to `acme\/api`/);
		assert.match(question, /stay but are no longer used/);
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
			/^ {2}cwd {6}wanted {6}.*\n {11}postgres postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\n {11}schema sf_test_\w+, project acme\/api$/m,
		);
		assert.match(status, /^database: postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres \(from config\)$/m);
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

describe("/state with a shared Global owner", () => {
	it("says the Global owner lives in the database under the user, and the CWD owner in its folder", async (t) => {
		const schema = server.schema();
		const a = machine(t, { database: server.url, databaseSchema: schema, shareGlobal: true, user: "alice", owners: ["global", "cwd", "session"] });
		const pi = await piOn(t, a);
		await pi.prompt("work", [{ calls: [{ id: "p1", name: "patch_state", args: { global: { strategy: { tabs: "indent with tabs" } } } }] }, { text: "ok" }]);
		await pi.command("/state");
		const status = pi.output("status");
		assert.match(
			status,
			/^ {2}global {3}wanted {6}\d+ B, 1 transition, 1 retained\n {11}postgres postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\n {11}schema \w+, user alice$/m,
		);
		assert.match(status, new RegExp(`^ {2}cwd {6}wanted {6}empty\\n {11}${realOrSelf(a.cwd).replace(/[/.]/g, "\\$&")}/\\.pi/state-flow$`, "m"));
		// Another machine of the same user sees the same personal memory.
		const b = machine(t, { database: server.url, databaseSchema: schema, shareGlobal: true, user: "alice", owners: ["global", "cwd", "session"] });
		const onB = await piOn(t, b);
		await onB.prompt("hi", [{ text: "ok" }]);
		assert.match(onB.head(), /indent with tabs/);
	});
});

describe("a running session follows the user's config", () => {
	it("picks up a link made in another terminal at its next prompt, says so once, and follows a changed database URL", async (t) => {
		const schema = server.schema();
		const a = machine(t, { database: "postgres://sf:s3cr3t-pw@127.0.0.1:1/none", databaseSchema: schema });
		const b = otherMachine(t, server.url, schema, "acme/api");
		await commitOn(b, { cwd: { intents: { shared: "team goal" } } });
		const pi = await piOn(t, a);
		await pi.prompt("first", [{ text: "ok" }]);
		assert.doesNotMatch(pi.head(), /unavailable/);
		// `state-flow link acme/api --cwd …` in another terminal.
		await updateConfig(a.agentDir, { links: { [realOrSelf(a.cwd)]: "acme/api" } });
		const before = pi.notes.length;
		await pi.prompt("second", [{ text: "ok" }]);
		const moved = pi.notes.slice(before).filter((m) => m.includes("changed where the state lives"));
		assert.equal(moved.length, 1);
		assert.match(moved[0] as string, /cwd now lives in PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none \(schema \w+\), project acme\/api/);
		assert.ok(!pi.notes.join("\n").includes("s3cr3t-pw"));
		// The database cannot be reached: the head says so in one line, without the password.
		assert.match(
			pi.head(),
			/^# cwd unavailable, not shown \(calls on it are refused until it is back\): PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none cannot be reached/m,
		);
		assert.ok(!pi.head().includes("s3cr3t-pw"));
		// The URL is fixed: the same session reconnects, no restart.
		await updateConfig(a.agentDir, { database: server.url });
		await pi.prompt("third", [{ text: "ok" }]);
		assert.match(pi.head(), /team goal/);
		await pi.prompt("fourth", [{ text: "ok" }]);
		assert.equal(pi.notes.filter((m) => m.includes("changed where the state lives")).length, 2, "each change said once");
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

describe("an unavailable shared owner", () => {
	it("leaves the head, read_state and patch_state working for the other owners; touching it is refused as unavailable; /state says so", async (t) => {
		const a = machine(t, { database: "postgres://sf:s3cr3t-pw@127.0.0.1:1/none" });
		await updateConfig(a.agentDir, { links: { [realOrSelf(a.cwd)]: "acme/api" } });
		const pi = await piOn(t, a);
		await pi.prompt("work", [
			{
				calls: [
					{ id: "p1", name: "patch_state", args: { session: { tactics: { t: "still works" } } } },
					{ id: "p2", name: "patch_state", args: { cwd: { tactics: { t: "lost?" } } } },
				],
			},
			{
				calls: [
					{ id: "r1", name: "read_state", args: { path: "session.tactics" } },
					{ id: "r2", name: "read_state", args: { path: "cwd.tactics" } },
				],
			},
			{ text: "ok" },
		]);
		const head = pi.head();
		assert.match(
			head,
			/^# cwd unavailable, not shown \(calls on it are refused until it is back\): PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none cannot be reached \(.*\)$/m,
		);
		assert.match(head, /^# session seq 0 \(empty\)$/m);
		const r = pi.results();
		assert.equal(r.p1?.isError, false);
		assert.equal(r.p2?.isError, true);
		assert.match(r.p2?.text ?? "", /unavailable: PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none cannot be reached.*Nothing was written/);
		assert.equal(r.r1?.isError, false);
		assert.match(r.r1?.text ?? "", /still works/);
		assert.equal(r.r2?.isError, true);
		assert.match(r.r2?.text ?? "", /unavailable/);
		assert.ok(!JSON.stringify(pi.session.messages).includes("s3cr3t-pw"));
		await pi.command("/state");
		const status = pi.output("status");
		assert.match(
			status,
			/^ {2}cwd {6}wanted {6}unavailable\n {11}postgres postgres:\/\/sf@127\.0\.0\.1:1\/none\n {11}schema state_flow, project acme\/api\n {11}/m,
		);
		assert.ok(!status.includes("s3cr3t-pw"));
		for (const line of status.split("\n")) assert.ok(line.length <= 80, `fits 80 columns: ${line}`);
		await pi.command("/state show");
		await pi.command("/state history");
		for (const title of ["show", "history"]) {
			const text = pi.output(title);
			assert.match(text, /^cwd: unavailable: `cwd` owner \(project `acme\/api`\) unavailable: PostgreSQL at/m);
			for (const line of text.split("\n")) assert.ok(line.length <= 80, `${title} fits 80 columns: ${line}`);
		}
		// The next prompt's head of a run is byte-identical on every request of that run.
		await pi.prompt("again", [{ calls: [{ id: "r3", name: "read_state", args: { path: "session.tactics" } }] }, { text: "ok" }]);
		const heads = pi.seen.slice(-2).map((c) => userTexts(c).find((x) => x.startsWith(HEAD_OPEN)));
		assert.equal(heads[0], heads[1]);
	});

	it("a link without a database says the problem in the head and in /state, and the other owners keep working", async (t) => {
		const a = machine(t, {});
		await updateConfig(a.agentDir, { links: { [realOrSelf(a.cwd)]: "acme/api" } });
		const pi = await piOn(t, a);
		assert.deepEqual(
			pi.notes.filter((m) => m.includes("shared memory is unavailable")),
			[
				"State Flow: shared memory is unavailable: no database is configured: set `STATE_FLOW_DATABASE_URL` or `database` in the State Flow config.json, or run `state-flow unlink` to keep this checkout's memory in files.",
			],
		);
		await pi.prompt("work", [{ calls: [{ id: "p1", name: "patch_state", args: { session: { tactics: { t: "ok" } } } }] }, { text: "ok" }]);
		assert.match(
			pi.head(),
			/^# cwd unavailable, not shown .*: The `cwd` owner \(project `acme\/api`\) is shared through PostgreSQL, but no database is configured/m,
		);
		assert.equal(pi.results().p1?.isError, false);
		await pi.command("/state");
		assert.match(pi.output("status"), /^problem: no database is configured/m);
	});
});

describe("a change made on another machine during a run", () => {
	it("shows up as the concurrent-change notice in the next tool result, and in the next prompt's head", async (t) => {
		const { a, b } = await linkedMachines(t, server.url, server.schema());
		await commitOn(b, { cwd: { intents: { first: "before the run" } } });
		const pi = await piOn(t, a);
		await pi.prompt("work", [
			{
				before: async () => void (await commitOn(b, { cwd: { intents: { fromB: "written on machine B" } } })),
				calls: [{ id: "r1", name: "read_state", args: { path: "session.tactics" } }],
			},
			{ calls: [{ id: "p1", name: "patch_state", args: { cwd: { tactics: { mine: "from A" } } } }] },
			{ text: "ok" },
		]);
		const r = pi.results();
		assert.match(r.r1?.text ?? "", /Note: cwd was changed by another process since this run's head \(1 transition, now seq 2\): cwd\.intents\.fromB\./);
		// A's own commit is not reported as concurrent; B's is still listed.
		assert.doesNotMatch(r.p1?.text ?? "", /cwd\.tactics\.mine/);
		assert.doesNotMatch(pi.head(), /written on machine B/);
		await pi.prompt("next", [{ text: "ok" }]);
		assert.match(pi.head(), /written on machine B/);
		assert.match(pi.head(), /from A/);
	});
});

describe("registered roots on a shared database", () => {
	it("hear another machine's commit as it lands (LISTEN/NOTIFY), without waiting for a prompt", async (t) => {
		const { a, b } = await linkedMachines(t, server.url, server.schema());
		const heard: RootChange[] = [];
		// Without a notification the change would only come with the next prompt.
		const expected = expectSoon("the change was not heard without a prompt");
		const todo = createTodoExtension({
			onChange: (c) => {
				heard.push(c);
				expected.arrive();
			},
		});
		const pi = await piOn(t, a, undefined, [todo]);
		await b.commit(
			{ cwd: { roots: { todos: { far: { text: "from machine B" } } } } },
			{ id: "b-todo", at: "2026-11-30T08:00:00.000Z", by: { kind: "extension", extension: "todo" }, roots: () => undefined },
		);
		await expected.arrived;
		assert.deepEqual(heard, [
			{ owner: "cwd", value: { far: { text: "from machine B" } }, by: { kind: "extension", extension: "todo" }, transitionId: "b-todo" },
		]);
		assert.equal(pi.seen.length, 0, "no model request was made for it");
	});
});

describe("an idle database connection", () => {
	it("does not keep the process alive (pi's print mode exits)", async (t) => {
		const schema = server.schema();
		const a = machine(t, {});
		const worker = fileURLToPath(new URL(`idle-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));
		const run = spawnSync(process.execPath, [...process.execArgv, worker, a.agentDir, a.cwd, server.url, schema], { encoding: "utf8", timeout: 60_000 });
		assert.equal(run.signal, null, `the worker should exit by itself: ${run.stderr}`);
		assert.equal(run.status, 0, run.stderr);
		assert.equal(run.stdout.trim(), "loaded seq 1");
	});

	it("is closed to the end when a process closes it last (nothing else keeps the process alive meanwhile)", async (t) => {
		const worker = fileURLToPath(new URL(`idle-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));
		// Whether the server's goodbye arrives before node looks for live handles is a race: try it a few times.
		for (let i = 0; i < 5; i++) {
			const a = machine(t, {});
			const run = spawnSync(process.execPath, [...process.execArgv, worker, a.agentDir, a.cwd, server.url, server.schema(), "close"], {
				encoding: "utf8",
				timeout: 60_000,
			});
			assert.equal(run.status, 0, `exit ${run.status} (13: the closing await was abandoned): ${run.stderr}`);
			assert.equal(run.stdout.trim(), "loaded seq 1\nclosed");
		}
	});
});
