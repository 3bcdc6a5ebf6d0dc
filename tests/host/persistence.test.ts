/**
 * Real SDK with a file-backed session: the session's `/state` choice and its Session state
 * survive reload (reopen the file), resume (continue the most recent session) and fork, and
 * `/tree` navigation shows the state of the branch it lands on.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { type Flow, type FlowDirs, flowDirs, withFlow } from "./fixture.js";

/** A first session that chooses `passive session` and writes one Session value. */
async function firstSession(d: FlowDirs): Promise<string> {
	const sm = SessionManager.create(d.cwd, d.sessionDir);
	return await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: sm }, async (flow) => {
		await flow.command("/state passive");
		await flow.command("/state owners session");
		await flow.prompt("remember", [{ calls: [{ id: "w", name: "patch_state", args: { tactics: { next: "kept" } } }] }, { text: "saved" }]);
		assert.equal(flow.results().w?.isError, false, flow.results().w?.text);
		const file = sm.getSessionFile();
		assert.ok(file);
		return file;
	});
}

/** In a restored session: the selection is back and the Session value reads back. */
async function assertRestored(flow: Flow): Promise<void> {
	const status = await flow.command("/state");
	assert.match(status.join("\n"), /^passive session — flat interface, from this session's \/state choice$/m);
	await flow.prompt("what next", [{ calls: [{ id: "r", name: "read_state", args: { path: "tactics.next" } }] }, { text: "ok" }]);
	assert.equal(flow.results().r?.text, '"kept"');
	const tool = flow.seen[0]?.tools.find((t) => t.name === "patch_state");
	assert.deepEqual(Object.keys((tool?.parameters as { properties: object } | undefined)?.properties ?? {}), [
		"intents",
		"strategy",
		"tactics",
		"artifacts",
		"lazy",
	]);
}

describe("file-backed sessions", () => {
	it("restore the selection and Session state on reload", async (t) => {
		const d = flowDirs(t, "state-flow-persist-");
		const file = await firstSession(d);
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.open(file, d.sessionDir) }, async (flow) => {
			await assertRestored(flow);
		});
	});

	it("restore them on resume of the most recent session", async (t) => {
		const d = flowDirs(t, "state-flow-persist-");
		await firstSession(d);
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.continueRecent(d.cwd, d.sessionDir) }, async (flow) => {
			await assertRestored(flow);
		});
	});

	it("restore them in a fork, whose later writes stay in the fork", async (t) => {
		const d = flowDirs(t, "state-flow-persist-");
		const file = await firstSession(d);
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.forkFrom(file, d.cwd, d.sessionDir) }, async (fork) => {
			await assertRestored(fork);
			await fork.prompt("change", [{ calls: [{ id: "w2", name: "patch_state", args: { tactics: { next: "forked" } } }] }, { text: "ok" }]);
			assert.equal(fork.results().w2?.isError, false);
		});
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.open(file, d.sessionDir) }, async (original) => {
			await assertRestored(original);
		});
	});

	it("declare both tools again when a session that ran Off is resumed and set Active", async (t) => {
		const d = flowDirs(t, "state-flow-persist-");
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.create(d.cwd, d.sessionDir) }, async (first) => {
			await first.command("/state off");
			await first.prompt("quiet", [{ text: "ok" }]);
			assert.deepEqual(
				first.seen[0]?.tools.map((x) => x.name),
				[],
			);
		});
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.continueRecent(d.cwd, d.sessionDir) }, async (resumed) => {
			await resumed.prompt("still off", [{ text: "ok" }]);
			assert.deepEqual(
				resumed.seen[0]?.tools.map((x) => x.name),
				[],
			);
			await resumed.command("/state active");
			await resumed.prompt("write", [{ calls: [{ id: "w", name: "patch_state", args: { session: { tactics: { back: true } } } }] }, { text: "ok" }]);
			assert.deepEqual(resumed.seen[1]?.tools.map((x) => x.name).sort(), ["patch_state", "read_state"]);
			assert.equal(resumed.results().w?.isError, false, resumed.results().w?.text);
		});
	});

	it("follow /tree navigation to the state of the branch", async (t) => {
		const d = flowDirs(t, "state-flow-persist-");
		const sm = SessionManager.create(d.cwd, d.sessionDir);
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: sm }, async (flow) => {
			await flow.prompt("one", [{ calls: [{ id: "w1", name: "patch_state", args: { session: { tactics: { v: 1 } } } }] }, { text: "ok" }]);
			const fork = sm.getLeafId();
			assert.ok(fork);
			await flow.command("/state passive");
			await flow.prompt("two", [{ calls: [{ id: "w2", name: "patch_state", args: { session: { tactics: { v: 2 } } } }] }, { text: "ok" }]);
			await flow.harness.session.navigateTree(fork, { summarize: false });
			const status = await flow.command("/state");
			assert.match(status.join("\n"), /^active cwd\+session — /m);
			await flow.prompt("read", [{ calls: [{ id: "r", name: "read_state", args: { path: "session.tactics.v" } }] }, { text: "ok" }]);
			assert.equal(flow.results().r?.text, "1");
		});
	});
});

describe("damaged Session entries", () => {
	it("are reported, never rewritten, and leave the other owners working", async () => {
		const sm = SessionManager.inMemory();
		sm.appendCustomEntry("state-flow/transition", { not: "a transition" });
		await withFlow({ sessionManager: sm }, async (flow) => {
			assert.ok(
				flow.notes.some((n) => /cannot open Session state/.test(n)),
				flow.notes.join("\n"),
			);
			await flow.prompt("go", [
				{
					calls: [
						{ id: "c", name: "patch_state", args: { cwd: { tactics: { ok: true } } } },
						{ id: "s", name: "patch_state", args: { session: { tactics: { lost: true } } } },
					],
				},
				{ text: "ok" },
			]);
			assert.equal(flow.results().c?.isError, false, flow.results().c?.text);
			assert.equal(flow.results().s?.isError, true);
			assert.match(flow.results().s?.text ?? "", /damaged/);
			assert.match(flow.results().s?.text ?? "", /\/tree/);
			const damaged = sm.getEntries().filter((e) => e.type === "custom" && e.customType === "state-flow/transition");
			assert.deepEqual(
				damaged.map((e) => (e as { data?: unknown }).data),
				[{ not: "a transition" }],
			);
		});
	});
});
