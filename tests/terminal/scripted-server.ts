/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 (port 0): what a real
 * provider looks like to pi over HTTP, with no keys and no network. It streams (SSE) one reply
 * per request, decided by the request itself:
 *
 * - the last message is a tool result → the final text `Saved <word>.`;
 * - the newest user turn says `remember <word>` and `patch_state` is declared → one
 *   `patch_state` call writing `tactics.<word> = "noted"` (scoped to cwd when the declaration
 *   is scoped);
 * - otherwise → `No state tools: <word>.` or `ok.`
 *
 * Every request is kept (tool names, the last user text) so tests assert what pi sent.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
	tools: string[];
	/** The newest user turn's text (the prompt and, when present, the State Flow head). */
	userText: string;
	lastRole: string;
}

interface ChatMessage {
	role: string;
	content?: string | Array<{ type: string; text?: string }> | null;
}

interface ChatTool {
	type: string;
	function: { name: string; parameters?: { properties?: Record<string, unknown> } };
}

function textOf(m: ChatMessage): string {
	if (typeof m.content === "string") return m.content;
	return (m.content ?? []).map((c) => c.text ?? "").join("");
}

function chunk(delta: Record<string, unknown>, finish: string | null): string {
	return `data: ${JSON.stringify({ id: "chatcmpl-scripted", object: "chat.completion.chunk", created: 0, model: "scripted-1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

async function body(req: IncomingMessage): Promise<string> {
	const parts: Buffer[] = [];
	for await (const p of req) parts.push(p as Buffer);
	return Buffer.concat(parts).toString("utf8");
}

export interface ScriptedServer {
	port: number;
	baseUrl: string;
	requests: SeenRequest[];
	close(): Promise<void>;
}

export async function startScriptedServer(): Promise<ScriptedServer> {
	const requests: SeenRequest[] = [];
	let calls = 0;
	const server: Server = createServer(async (req, res) => {
		if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
			res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
			return;
		}
		const request = JSON.parse(await body(req)) as { messages: ChatMessage[]; tools?: ChatTool[] };
		const messages = request.messages;
		const tools = (request.tools ?? []).map((t) => t.function.name);
		const last = messages[messages.length - 1];
		let i = messages.length - 1;
		while (i > 0 && messages[i - 1]?.role === "user") i--;
		const userText = messages
			.slice(i)
			.filter((m) => m.role === "user")
			.map(textOf)
			.join("\n");
		requests.push({ tools, userText, lastRole: last?.role ?? "" });
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
		const word = /remember (\w+)/.exec(userText)?.[1];
		if (last?.role === "tool") {
			const saved = [...messages].reverse().find((m) => m.role === "user" && /remember (\w+)/.test(textOf(m)));
			res.write(chunk({ role: "assistant", content: `Saved ${/remember (\w+)/.exec(saved ? textOf(saved) : "")?.[1] ?? "it"}.` }, null));
			res.write(chunk({}, "stop"));
		} else if (word !== undefined && tools.includes("patch_state")) {
			const decl = request.tools?.find((t) => t.function.name === "patch_state");
			const scoped = decl?.function.parameters?.properties?.cwd !== undefined;
			const patch = { tactics: { [word]: "noted" } };
			const args = JSON.stringify(scoped ? { cwd: patch } : patch);
			const id = `call_${String(++calls).padStart(2, "0")}scripted${word}`;
			res.write(
				chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id, type: "function", function: { name: "patch_state", arguments: "" } }] }, null),
			);
			res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }, null));
			res.write(chunk({}, "tool_calls"));
		} else {
			res.write(chunk({ role: "assistant", content: word !== undefined ? `No state tools: ${word}.` : "ok." }, null));
			res.write(chunk({}, "stop"));
		}
		res.write(
			`data: ${JSON.stringify({ id: "chatcmpl-scripted", object: "chat.completion.chunk", created: 0, model: "scripted-1", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`,
		);
		res.end("data: [DONE]\n\n");
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const port = (server.address() as AddressInfo).port;
	return {
		port,
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
