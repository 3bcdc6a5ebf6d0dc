/**
 * "Remember this for all my projects" in one step (issue 35), in a real SDK session on the faux
 * provider: the session works with cwd and session (the default), the model writes Global, the
 * write is refused, the user is asked once; a yes adds Global and the model's same patch lands in
 * the same run, a no writes nothing and keeps the owners, and without a UI nothing is asked.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import { createStateFlow } from "../../lib/index.js";
import { GLOBAL_OFFER } from "../../lib/host/session/global-offer.js";
import { openStoresAt } from "../../lib/storage/open.js";
import { theme } from "../helpers/render-theme.js";
import { tempDir } from "../helpers/temp-dir.js";
import { extensionSession } from "./fixture.js";

const REMEMBER = { global: { strategy: { tabs: "Indent with tabs in every project" } } };

/** A default session (cwd and session) whose model writes Global, retries once, and ends; `answer` is the user's (no UI: undefined). */
async function remembering(t: Parameters<typeof tempDir>[0], answer: boolean | undefined) {
	const cwd = tempDir(t, "state-flow-cwd-");
	const agentDir = tempDir(t, "state-flow-agent-");
	const asked: string[] = [];
	const partial: Partial<ExtensionUIContext> = {
		confirm: async (title, message) => {
			asked.push(`${title}\n${message}`);
			return answer === true;
		},
		notify: () => undefined,
		theme,
	};
	const uiContext = new Proxy(partial, {
		get: (target, prop) => (prop in target ? target[prop as keyof ExtensionUIContext] : () => undefined),
	}) as ExtensionUIContext;
	let ids = 0;
	const factories = [createStateFlow({ agentDir, notify: () => undefined, newId: () => `t-${String(++ids).padStart(4, "0")}` })];
	const { session, faux } = await extensionSession(t, { cwd, agentDir, factories, ...(answer === undefined ? {} : { uiContext }) });
	faux.setResponses([
		fauxAssistantMessage([fauxToolCall("patch_state", REMEMBER, { id: "first" })], { stopReason: "toolUse" }),
		fauxAssistantMessage([fauxToolCall("patch_state", REMEMBER, { id: "again" })], { stopReason: "toolUse" }),
		fauxAssistantMessage([fauxText("done")]),
	]);
	await session.prompt("Remember for all my projects: I indent with tabs.");
	await session.agent.waitForIdle();
	const results: Record<string, { isError: boolean; text: string }> = {};
	for (const m of session.messages) {
		if (m.role === "toolResult") results[m.toolCallId] = { isError: m.isError, text: m.content.map((c) => (c.type === "text" ? c.text : "")).join("") };
	}
	const global = await openStoresAt({ agentDir, cwd }).load("global");
	return { asked, results, global, session };
}

describe("remember this for all my projects: Global in one step", () => {
	it("refused, asked once; a yes adds Global and the model's same patch lands in the same run", async (t) => {
		const r = await remembering(t, true);
		assert.deepEqual(r.asked, [`${GLOBAL_OFFER.title}\n${GLOBAL_OFFER.text(["cwd", "session"])}`]);
		assert.equal(r.results.first?.isError, true);
		assert.match(r.results.first?.text ?? "", /owner `global` is not wanted in this session/);
		assert.match(r.results.first?.text ?? "", /The user has just added Global to this session's owners: send the same patch_state again, unchanged\./);
		assert.equal(r.results.again?.isError, false, r.results.again?.text);
		assert.equal(r.global.state.strategy.tabs, "Indent with tabs in every project");
		assert.equal(r.global.seq, 1);
	});

	it("a no writes nothing and keeps the owners; the model is told not to write it", async (t) => {
		const r = await remembering(t, false);
		assert.equal(r.asked.length, 1, "asked once");
		assert.match(r.results.first?.text ?? "", /The user chose not to add Global: do not write it/);
		assert.equal(r.results.again?.isError, true, "Global is still not wanted");
		assert.match(r.results.again?.text ?? "", /owner `global` is not wanted in this session/);
		assert.equal(r.global.seq, 0);
	});

	it("without a UI nothing is asked and the refusal is the usual one", async (t) => {
		const r = await remembering(t, undefined);
		assert.deepEqual(r.asked, []);
		assert.doesNotMatch(r.results.first?.text ?? "", /The user/);
		assert.equal(r.global.seq, 0);
	});
});
