/**
 * Team and fleet memory from pi's side, through the real SDK, the faux model and a real
 * PostgreSQL server: a running session follows a link or database change at its next prompt,
 * `/state` says where each owner lives (a shared Global under the user), an unavailable owner
 * leaves the others working, a change made on another "machine" reaches the run as the
 * concurrent-change notice and registered roots as it lands, and an idle connection never
 * keeps the process alive. Linking (`/state link`, a repository's suggested project) is in
 * shared-link.test.ts.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { HEAD_OPEN } from "../../lib/model/head.js";
import { updateConfig } from "../../lib/storage/placement/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { expectSoon } from "../helpers/soon.js";
import { userTexts } from "./fixture.js";
import type { RootChange } from "../../lib/api.js";
import { createTodoExtension } from "../../examples/todo/index.js";
import { commitOn, linkedMachines, machine, otherMachine, piOn } from "./shared-fixture.js";

const server = serverForFile(testDatabase);

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
			/^ {2}global {3}wanted {6}\d+ B, 1 transition, 1 retained\n {11}PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\n {11}schema \w+, user alice$/m,
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
		assert.match(moved[0] as string, /cwd now lives in PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none, schema \w+, project acme\/api/);
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
			/^ {2}cwd {6}wanted {6}unavailable\n {11}PostgreSQL at postgres:\/\/sf@127\.0\.0\.1:1\/none\n {11}schema state_flow, project acme\/api\n {11}/m,
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
