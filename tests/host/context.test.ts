/**
 * Real SDK: what State Flow puts in front of the model. The protocol rides on the system
 * prompt; one head per run is frozen, inserted next to the run's prompt on every request and
 * never persisted; the final answer lands in Session `response`; Active reconciliation sends
 * exactly one follow-up after file changes without a state update, and never in Passive.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { RECONCILE_TEXT, RECONCILE_TYPE } from "../../lib/host/events.js";
import { agentDirWithConfig, type Flow, startFlow, withFlow, type Step, userTexts } from "./fixture.js";
import { within } from "../helpers/soon.js";

const HEAD = /<state_flow_head>[\s\S]*<\/state_flow_head>/;

function heads(flow: Flow, request: number): string[] {
	const c = flow.seen[request];
	assert.ok(c);
	return userTexts(c).filter((t) => HEAD.test(t));
}

/** Drop the inserted head so requests can be compared as the transcript stores them. */
function withoutHead(flow: Flow, request: number): string {
	const c = flow.seen[request];
	assert.ok(c);
	return JSON.stringify(c.messages.filter((m) => !(m.role === "user" && JSON.stringify(m.content).includes("<state_flow_head>"))));
}

/**
 * Prompt, then follow the runs pi starts on its own (a retry, the reconciliation follow-up)
 * until the run that used the last scripted response has ended and no follow-up came of it.
 * State Flow sends its follow-up from a zero-delay timer set in its own `agent_end` handler,
 * which pi runs before session listeners: one timer turn after a session listener hears
 * `agent_end`, the follow-up's run is streaming, or none was sent.
 */
async function promptAndSettle(flow: Flow, text: string, steps: Step[]): Promise<void> {
	const { session, faux } = flow.harness;
	const settled = new Promise<void>((resolve) => {
		const off = session.subscribe((event) => {
			if (event.type !== "agent_end" || faux.getPendingResponseCount() > 0) return;
			setTimeout(() => {
				if (session.isStreaming) return;
				off();
				resolve();
			}, 0);
		});
	});
	await flow.prompt(text, steps);
	await within(settled, "the run and any follow-up it started to end");
	await session.agent.waitForIdle();
}

/**
 * An extension whose `agent_end` handler runs after State Flow's (it is loaded later) and resolves
 * `settled` one timer turn later. State Flow decides on the follow-up inside its own `agent_end`
 * handler and sends it from a zero-delay timer set there; timers of equal delay fire in the order
 * they were set, so once `settled` resolves a follow-up that was scheduled has been sent.
 */
function runEndProbe(onEnd: () => void = () => {}): { factory: (pi: ExtensionAPI) => void; settled: Promise<void> } {
	let settle: () => void = () => {};
	const settled = new Promise<void>((resolve) => (settle = resolve));
	const factory = (pi: ExtensionAPI) =>
		pi.on("agent_end", () => {
			onEnd();
			setTimeout(settle, 0);
		});
	return { factory, settled };
}

function reconcileMessages(flow: Flow): number {
	return flow.harness.session.messages.filter((m) => m.role === "custom" && m.customType === RECONCILE_TYPE).length;
}

describe("head and protocol", () => {
	it("freezes one head per run, sends only the newest, and never persists it", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("first", [
				{ calls: [{ id: "w", name: "patch_state", args: { cwd: { intents: { ship: { goal: "ship it" } } } } }] },
				{ calls: [{ id: "r", name: "read_state", args: { path: "cwd.intents" } }] },
				{ text: "ok" },
			]);
			const [h0] = heads(flow, 0);
			assert.ok(h0);
			for (const i of [1, 2]) assert.deepEqual(heads(flow, i), [h0], `request ${i} repeats the frozen head`);
			assert.doesNotMatch(h0, /ship it/);
			// The head sits right after the run's prompt.
			const first = flow.seen[0]?.messages ?? [];
			assert.equal(first.length, 2);
			assert.match(JSON.stringify(first[0]), /first/);

			await flow.prompt("second", [{ text: "ok" }]);
			const next = heads(flow, 3);
			assert.equal(next.length, 1);
			assert.match(next[0] as string, /ship/);
			// Earlier messages are byte-stable: the previous request (without its head) is a prefix.
			const before = withoutHead(flow, 2);
			assert.ok(withoutHead(flow, 3).startsWith(before.slice(0, -1)));
			assert.doesNotMatch(JSON.stringify(flow.harness.session.sessionManager.getEntries()), /state_flow_head/);
		});
	});

	it("appends the protocol to the system prompt once, with the bootstrap variant only while empty", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("empty", [{ calls: [{ id: "w", name: "patch_state", args: { cwd: { tactics: { a: 1 } } } }] }, { text: "ok" }]);
			await flow.prompt("filled", [{ text: "ok" }]);
			const p0 = flow.seen[0]?.systemPrompt ?? "";
			const p2 = flow.seen[2]?.systemPrompt ?? "";
			for (const p of [p0, p2]) {
				assert.equal(p.split("<state_flow_protocol>").length, 2);
				assert.match(p, /read_state/);
				assert.match(p, /patch_state/);
			}
			assert.notEqual(p0, p2);
		});
	});

	it("publishes the final answer of a prompt run to Session response", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("answer me", [{ text: "The answer is 42." }]);
			await flow.prompt("what did you say", [{ calls: [{ id: "r", name: "read_state", args: { path: "session.response" } }] }, { text: "ok" }]);
			const value = JSON.parse(flow.results().r?.text ?? "null") as { last: { text: string; at: string } };
			assert.equal(value.last.text, "The answer is 42.");
			assert.match(value.last.at, /^2026-11-30T09:00:/);
		});
	});
});

describe("Session response follows Session participation", () => {
	it("is never written while Session is not wanted, and is written in Passive when it is", async () => {
		await withFlow({}, async (flow) => {
			await flow.command("/state owners cwd");
			await flow.prompt("answer without session", [{ text: "Not for the session." }]);
			await flow.command("/state owners cwd,session");
			await flow.prompt("check", [{ calls: [{ id: "r1", name: "read_state", args: { path: "session.response" } }] }, { text: "ok" }]);
			assert.equal(flow.results().r1?.text, "{}", "nothing was published while Session was not wanted");
			await flow.command("/state passive");
			await flow.prompt("answer passively", [{ text: "Passive answer." }]);
			await flow.prompt("check again", [{ calls: [{ id: "r2", name: "read_state", args: { path: "session.response.last.text" } }] }, { text: "ok" }]);
			assert.equal(flow.results().r2?.text, '"Passive answer."');
		});
	});
});

describe("Session response after pi retried the run", () => {
	it("publishes the answer of a prompt run that pi continued after a transient provider error", async () => {
		await withFlow({}, async (flow) => {
			flow.harness.session.settingsManager.applyOverrides({ retry: { enabled: true, maxRetries: 2, baseDelayMs: 1 } });
			await promptAndSettle(flow, "answer me", [{ error: "503 service unavailable" }, { text: "The answer after a retry." }]);
			await flow.prompt("what did you say", [{ calls: [{ id: "r", name: "read_state", args: { path: "session.response.last.text" } }] }, { text: "ok" }]);
			assert.equal(flow.results().r?.text, '"The answer after a retry."');
		});
	});
});

describe("active reconciliation", () => {
	const writeFile: Step = { calls: [{ id: "f", name: "write", args: { path: "notes.txt", content: "hello" } }] };

	it("sends exactly one follow-up after a file change without a state update", async () => {
		await withFlow({ builtinTools: true }, async (flow) => {
			await promptAndSettle(flow, "edit the file", [writeFile, { text: "edited" }, { text: "state is accurate" }]);
			assert.equal(reconcileMessages(flow), 1);
			const last = flow.seen.at(-1);
			assert.ok(last && userTexts(last).some((t) => t.includes(RECONCILE_TEXT)));
			assert.equal(flow.harness.faux.getPendingResponseCount(), 0);
			// The follow-up's answer does not replace the prompt run's answer in Session response.
			await flow.prompt("check", [{ calls: [{ id: "r", name: "read_state", args: { path: "session.response.last.text" } }] }, { text: "ok" }]);
			assert.equal(flow.results().r?.text, '"edited"');
		});
	});

	it("stays quiet when the run updated the state, and in passive mode", async () => {
		await withFlow({ builtinTools: true }, async (flow) => {
			await promptAndSettle(flow, "edit and record", [
				writeFile,
				{ calls: [{ id: "w", name: "patch_state", args: { cwd: { tactics: { notes: "written" } } } }] },
				{ text: "done" },
			]);
			assert.equal(reconcileMessages(flow), 0);
			await flow.command("/state passive");
			await promptAndSettle(flow, "edit again", [{ calls: [{ id: "f2", name: "write", args: { path: "b.txt", content: "x" } }] }, { text: "done" }]);
			assert.equal(reconcileMessages(flow), 0);
		});
	});

	it("stays quiet when the write was blocked by another extension or the edit failed: nothing changed", async () => {
		const guard = (pi: ExtensionAPI) => {
			pi.on("tool_call", (event) => (event.toolName === "write" ? { block: true, reason: "writes are not allowed here" } : undefined));
		};
		await withFlow({ builtinTools: true, extraFactories: [guard] }, async (flow) => {
			await promptAndSettle(flow, "try to write", [
				writeFile,
				{ calls: [{ id: "e", name: "edit", args: { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] } }] },
				{ text: "could not" },
			]);
			assert.equal(flow.results().f?.isError, true);
			assert.match(flow.results().f?.text ?? "", /writes are not allowed here/);
			assert.equal(flow.results().e?.isError, true);
			assert.equal(reconcileMessages(flow), 0);
		});
	});

	it("stays quiet when the user aborted the run: no new turn after Esc", async () => {
		const esc = (pi: ExtensionAPI) => {
			pi.on("tool_call", (event, ctx) => {
				if (event.toolCallId === "g") ctx.abort();
			});
		};
		const ended = runEndProbe();
		await withFlow({ builtinTools: true, extraFactories: [esc, ended.factory] }, async (flow) => {
			await flow.prompt("edit two files", [writeFile, { calls: [{ id: "g", name: "write", args: { path: "b.txt", content: "x" } }] }, { text: "unused" }]);
			// The follow-up would be sent from a timer set when the run ended: wait until it would have been.
			await within(ended.settled, "the run's end to reach a later extension");
			await flow.harness.session.agent.waitForIdle();
			assert.equal(flow.results().f?.isError, false);
			assert.equal(reconcileMessages(flow), 0);
			assert.ok(
				flow.seen.every((c) => !userTexts(c).some((t) => t.includes(RECONCILE_TEXT))),
				"no follow-up request",
			);
		});
	});

	it("never crashes pi when the session is gone before the follow-up is sent", async () => {
		const crashes: unknown[] = [];
		const onCrash = (e: unknown) => void crashes.push(e);
		process.on("uncaughtException", onCrash);
		// Another extension ends the session right after the run (as /new or /resume would): our ctx goes stale.
		const closer = runEndProbe(() => flow.harness.session.dispose());
		const flow: Flow = await startFlow({ builtinTools: true, extraFactories: [closer.factory] });
		try {
			await flow.prompt("edit", [writeFile, { text: "edited" }]);
			// The follow-up is attempted from a timer set when the run ended, before the probe's.
			await within(closer.settled, "the run's end to reach a later extension");
			assert.deepEqual(crashes, []);
			assert.ok(
				flow.notes.some((n) => /cannot send the reconciliation follow-up/.test(n)),
				flow.notes.join("\n"),
			);
		} finally {
			process.off("uncaughtException", onCrash);
			flow.dispose();
		}
	});

	it("stays quiet when the config turns reconciliation off", async (t) => {
		const agentDir = agentDirWithConfig(t, JSON.stringify({ reconcile: false }));
		await withFlow({ builtinTools: true, agentDir }, async (flow) => {
			await promptAndSettle(flow, "edit", [writeFile, { text: "edited" }]);
			assert.equal(reconcileMessages(flow), 0);
		});
	});
});
