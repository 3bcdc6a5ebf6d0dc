/**
 * pi's file-backed SessionManager writes its file only once an assistant message exists:
 * tests that need the session on disk add a user prompt and a faux assistant reply first.
 */
import type { SessionManager } from "@mariozechner/pi-coding-agent";

export function withAssistant(sm: SessionManager): void {
	sm.appendMessage({ role: "user", content: "hi", timestamp: 1 });
	sm.appendMessage({
		role: "assistant",
		content: [{ type: "text", text: "hello" }],
		api: "faux",
		provider: "faux",
		model: "faux",
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: "stop",
		timestamp: 2,
	});
}
