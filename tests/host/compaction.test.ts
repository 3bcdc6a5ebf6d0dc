/**
 * Real SDK, file-backed session (issue 5): pi's compaction and `/tree` branch summaries neither
 * lose nor duplicate State Flow state or heads. Session state rebuilt from the branch is the
 * same before and after (and after reopening the file), CWD and Global bytes are untouched,
 * the summariser never sees a head, and the next request carries exactly one head.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type AssistantMessage, type Context, fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import type { OwnerHistory } from "../../lib/core/types.js";
import { SessionStore } from "../../lib/storage/session/store.js";
import { hostSessionLog } from "../helpers/session-log.js";
import { type Captured, snapshot } from "../helpers/pi-harness.js";
import { bytesUnder, type Flow, type FlowDirs, flowDirs, withFlow, userTexts } from "./fixture.js";
import { within } from "../helpers/soon.js";

const HEAD_TAG = "<state_flow_head>";

/** Session state as rebuilt from the session manager's current branch (what a reload sees). */
function sessionFromBranch(sm: SessionManager): Pick<OwnerHistory, "state" | "seq"> & { ids: string[] } {
	const h = new SessionStore(hostSessionLog(sm), 20).history();
	return { state: h.state, seq: h.seq, ids: h.tail.map((r) => r.id) };
}

/** CWD and Global store bytes, to prove a summary never writes them. */
function sharedBytes(d: FlowDirs): string {
	return `${bytesUnder(join(d.cwd, ".pi", "state-flow"))}\n--\n${bytesUnder(join(d.agentDir, "state-flow"))}`;
}

/** Heads in the user-side messages of one captured request. */
function headsIn(c: Captured | undefined): string[] {
	assert.ok(c, "no such request");
	return userTexts(c).filter((t) => t.includes(HEAD_TAG));
}

/** Queue summary replies for pi's summariser and record what it was sent. */
function scriptSummaries(flow: Flow, sink: Captured[], summary: string, count: number): void {
	flow.harness.faux.setResponses(
		Array.from({ length: count }, () => (context: Context, _o: unknown, state: { callCount: number }) => {
			sink.push(snapshot(context, state.callCount));
			return fauxAssistantMessage(fauxText(summary));
		}),
	);
}

/** One prompt that only reads Session state, so its head can be compared across compaction. */
async function readSession(flow: Flow, id: string): Promise<unknown> {
	await flow.prompt(`read ${id}`, [{ calls: [{ id, name: "read_state", args: { path: "session" } }] }, { text: "ok" }]);
	const r = flow.results()[id];
	assert.equal(r?.isError, false, r?.text);
	return JSON.parse(r?.text.split("\n")[0] ?? "null");
}

async function writeThreePrompts(flow: Flow): Promise<void> {
	await flow.prompt("one", [
		{
			calls: [{ id: "w1", name: "patch_state", args: { session: { tactics: { step1: "parse" } }, cwd: { intents: { ship: { goal: "ship v1" } } } } }],
		},
		{ text: "recorded step one" },
	]);
	await flow.prompt("two", [
		{ calls: [{ id: "w2", name: "patch_state", args: { session: { lazy: { notes: "a long research note ".repeat(20) }, tactics: { step2: "emit" } } } }] },
		{ text: "recorded step two" },
	]);
	await flow.prompt("three", [
		{ calls: [{ id: "w3", name: "patch_state", args: { session: { tactics: { step1: null, step3: "ship" } } } }] },
		{ text: "recorded step three" },
	]);
	for (const id of ["w1", "w2", "w3"]) assert.equal(flow.results()[id]?.isError, false, flow.results()[id]?.text);
}

describe("compaction (issue 5)", () => {
	it("keeps Session state, leaves CWD/Global alone, never summarises a head, and sends one head after", async (t) => {
		const d = flowDirs(t, "state-flow-compact-");
		const sm = SessionManager.create(d.cwd, d.sessionDir);
		let file: string | undefined;
		let headBefore: string | undefined;
		let valueBefore: unknown;
		const before = { session: undefined as ReturnType<typeof sessionFromBranch> | undefined, shared: "" };
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: sm }, async (flow) => {
			await writeThreePrompts(flow);
			valueBefore = await readSession(flow, "pre");
			[headBefore] = headsIn(flow.seen.at(-1));
			assert.ok(headBefore?.includes("step3"));
			before.session = sessionFromBranch(sm);
			before.shared = sharedBytes(d);
			assert.equal(before.session.seq, 3);

			// Summarise everything but the last turn: pi's real summariser, the faux model answers.
			flow.harness.session.settingsManager.applyOverrides({ compaction: { keepRecentTokens: 20 } });
			const summariser: Captured[] = [];
			scriptSummaries(flow, summariser, "## Goal\nShip v1 (summary by the test).", 3);
			const result = await flow.harness.session.compact();
			assert.match(result.summary, /Ship v1/);
			assert.ok(summariser.length >= 1, "pi called the summariser");
			const sent = JSON.stringify(summariser);
			assert.match(sent, /recorded step one/, "the summariser saw the conversation");
			assert.ok(!sent.includes(HEAD_TAG), "no head reached the summariser");
			assert.ok(!sent.includes("<state_flow_protocol>"), "nor the protocol");
			assert.ok(sm.getEntries().some((e) => e.type === "compaction"));

			assert.deepEqual(sessionFromBranch(sm), before.session, "Session state rebuilt from the compacted branch");
			assert.equal(sharedBytes(d), before.shared, "CWD and Global untouched by compaction");

			const valueAfter = await readSession(flow, "post");
			assert.deepEqual(valueAfter, valueBefore);
			const last = flow.seen.at(-2);
			assert.deepEqual(headsIn(last), [headBefore], "exactly one head, the same as before compaction");
			assert.ok(last && JSON.stringify(last.messages).includes("summary by the test"), "the request starts from the compaction summary");
			const fileText = readFileSync(sm.getSessionFile() ?? "", "utf8");
			assert.ok(!fileText.includes(HEAD_TAG), "the session file holds no head");
			assert.deepEqual(flow.harness.extensionErrors, []);
			file = sm.getSessionFile();
		});

		// Reopen the compacted file in a new pi session: same Session state, one head, no duplicates.
		assert.ok(file);
		const sm2 = SessionManager.open(file, d.sessionDir);
		assert.deepEqual(sessionFromBranch(sm2), before.session);
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: sm2 }, async (again) => {
			assert.deepEqual(await readSession(again, "reloaded"), valueBefore);
			assert.deepEqual(headsIn(again.seen[0]), [headBefore]);
			assert.equal(sharedBytes(d), before.shared);
			assert.deepEqual(
				again.notes.filter((n) => /cannot|error/i.test(n)),
				[],
			);
		});
	});
});

/** True for a request from pi's summariser (compaction or branch summary), not from the agent loop. */
function isSummariser(context: Context): boolean {
	return (context.systemPrompt ?? "").startsWith("You are a context summarization assistant");
}

describe("overflow compaction inside a run (issue 5)", () => {
	it("keeps the run's head on the retried request, exactly once", async (t) => {
		const d = flowDirs(t, "state-flow-compact-");
		const sm = SessionManager.create(d.cwd, d.sessionDir);
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: sm }, async (flow) => {
			await writeThreePrompts(flow);
			flow.harness.session.settingsManager.applyOverrides({ compaction: { enabled: true, keepRecentTokens: 20 } });
			const before = sessionFromBranch(sm);
			// The agent loop's replies in order; summariser requests are answered on the side.
			const agent: Array<(c: Context) => AssistantMessage> = [
				// Two large reads: the cut lands inside this run, so the retry no longer holds its prompt.
				() => fauxAssistantMessage([fauxToolCall("read_state", { path: "session.lazy.notes" }, { id: "big1" })], { stopReason: "toolUse" }),
				() => fauxAssistantMessage([fauxToolCall("read_state", { path: "session.lazy.notes" }, { id: "big2" })], { stopReason: "toolUse" }),
				() => fauxAssistantMessage("", { stopReason: "error", errorMessage: "prompt is too long: 250000 tokens > 200000 maximum" }),
				() => fauxAssistantMessage(fauxText("recovered")),
			];
			const requests: Captured[] = [];
			const summariser: Captured[] = [];
			const dispatch = (context: Context, _o: unknown, state: { callCount: number }): AssistantMessage => {
				if (isSummariser(context)) {
					summariser.push(snapshot(context, state.callCount));
					return fauxAssistantMessage(fauxText("## Goal\nShip v1 (overflow summary)."));
				}
				requests.push(snapshot(context, state.callCount));
				const next = agent.shift();
				assert.ok(next, "unexpected extra agent request");
				return next(context);
			};
			flow.harness.faux.setResponses(Array.from({ length: 8 }, () => dispatch));
			const ended = new Promise<void>((resolve) => {
				const off = flow.harness.session.subscribe((e) => {
					if (e.type === "agent_end" && agent.length === 0) {
						off();
						resolve();
					}
				});
			});
			await flow.harness.session.prompt("a big task");
			await within(ended, "the run to end after its last scripted response");
			await flow.harness.session.agent.waitForIdle();

			assert.ok(
				sm.getBranch().some((e) => e.type === "compaction"),
				"pi compacted on overflow",
			);
			assert.ok(summariser.length >= 1 && !JSON.stringify(summariser).includes(HEAD_TAG), "no head reached the summariser");
			assert.equal(requests.length, 4);
			const retry = requests[3];
			assert.ok(retry && !JSON.stringify(retry.messages).includes("a big task"), "the prompt itself was summarised away");
			const [first] = headsIn(requests[0]);
			assert.ok(first);
			for (const r of requests) assert.deepEqual(headsIn(r), [first], `request ${r.call} carries the run's head once`);
			assert.ok(JSON.stringify(retry.messages).includes("overflow summary"), "the retry starts from the summary");
			assert.deepEqual(sessionFromBranch(sm), before);
			assert.ok(!readFileSync(sm.getSessionFile() ?? "", "utf8").includes(HEAD_TAG));
			assert.deepEqual(flow.harness.extensionErrors, []);
		});
	});
});

describe("branch summaries (issue 5)", () => {
	it("follow the branch they land on, never summarise a head, and send one head on the new branch", async (t) => {
		const d = flowDirs(t, "state-flow-compact-");
		const sm = SessionManager.create(d.cwd, d.sessionDir);
		let file: string | undefined;
		let atFork: ReturnType<typeof sessionFromBranch> | undefined;
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: sm }, async (flow) => {
			await flow.prompt("one", [
				{ calls: [{ id: "w1", name: "patch_state", args: { session: { tactics: { kept: "on both branches" } } } }] },
				{ text: "one done" },
			]);
			atFork = sessionFromBranch(sm);
			const fork = await readSession(flow, "fork");
			await flow.prompt("two", [
				{ calls: [{ id: "w2", name: "patch_state", args: { session: { tactics: { abandoned: "only on the old branch" } } } }] },
				{ text: "two done" },
			]);
			assert.equal(sessionFromBranch(sm).seq, 2);
			const shared = sharedBytes(d);

			// `/tree` back to the prompt "two" with a summary of the abandoned branch.
			const target = sm.getEntries().find((e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes('"two"'));
			assert.ok(target);
			const summariser: Captured[] = [];
			scriptSummaries(flow, summariser, "## Goal\nAbandoned branch (summary by the test).", 1);
			const nav = await flow.harness.session.navigateTree(target.id, { summarize: true });
			assert.equal(nav.cancelled, false);
			assert.equal(summariser.length, 1, "pi called the branch summariser once");
			const sent = JSON.stringify(summariser);
			assert.match(sent, /two done/);
			assert.ok(!sent.includes(HEAD_TAG), "no head reached the branch summariser");
			assert.ok(sm.getBranch().some((e) => e.type === "branch_summary"));

			assert.deepEqual(sessionFromBranch(sm), atFork, "Session state of the branch landed on");
			assert.equal(sharedBytes(d), shared, "CWD and Global untouched by navigation");
			assert.deepEqual(await readSession(flow, "after"), fork);
			const req = flow.seen.at(-2);
			const heads = headsIn(req);
			assert.equal(heads.length, 1, "exactly one head on the new branch");
			assert.match(heads[0] ?? "", /kept/);
			assert.doesNotMatch(heads[0] ?? "", /abandoned/);
			assert.ok(req && JSON.stringify(req.messages).includes("summary by the test"), "the branch summary is in context");
			assert.ok(!readFileSync(sm.getSessionFile() ?? "", "utf8").includes(HEAD_TAG));
			assert.deepEqual(flow.harness.extensionErrors, []);
			file = sm.getSessionFile();
		});
		assert.ok(file);
		const sm2 = SessionManager.open(file, d.sessionDir);
		assert.deepEqual(sessionFromBranch(sm2), atFork, "reopening keeps the branch's Session state");
	});
});
