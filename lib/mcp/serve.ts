/**
 * `state-flow mcp`: serve one project's State Flow over MCP until the client goes away (stdio:
 * stdin closes) or the process is told to stop (SIGTERM, SIGINT). The CLI verb imports this
 * module only when it runs, so pi and the other verbs never load the MCP SDK. A stop waits for
 * the writes already received: one in progress commits or fails whole, never half.
 */
import { inline } from "../core/printable.js";
import { limitsOf } from "../storage/placement/config.js";
import { McpContext, type ServeAt } from "./context.js";
import { serveHttp, tokenOf } from "./http.js";
import { McpTools } from "./server.js";

export interface ServeOptions extends ServeAt {
	version: string;
	/** Absent: stdio. */
	http?: { port: number };
	/** Where lines for the user go (stderr: stdout carries JSON-RPC on stdio). */
	say?: (line: string) => void;
}

/** Room for the JSON-RPC envelope around the largest patch an owner accepts. */
const ENVELOPE_BYTES = 64 * 1024;

/** Serve until stopped; resolves when every received write has settled and the stores are closed. */
export async function serveMcp(opts: ServeOptions): Promise<void> {
	// Every line stays one line of ours: an error's text may carry what a client sent.
	const say = opts.say ?? ((line: string) => void process.stderr.write(`${inline(line)}\n`));
	// stdio serves one client per process (its run is kept); HTTP is stateless.
	const ctx = new McpContext(opts, opts.http === undefined);
	for (const p of ctx.problems) say(`state-flow mcp: warning: ${p}`);
	const tools = new McpTools(ctx, opts.version);
	let stop: () => Promise<void>;
	const stopped = new Promise<void>((resolve) => {
		stop = async () => resolve();
	});
	if (opts.http === undefined) {
		const { serveStdio } = await import("@modelcontextprotocol/server/stdio");
		const handle = serveStdio(() => tools.create(), { onerror: (e) => say(`state-flow mcp: ${e.message}`) });
		// The client closed our stdin: it is gone (how every stdio host stops a server).
		process.stdin.once("end", () => void stop());
		process.stdin.once("close", () => void stop());
		await waitSignal(stopped, () => stop());
		await handle.close();
		// Stopped by a signal, stdin may still be open: nothing more is read from it.
		process.stdin.destroy();
	} else {
		const token = tokenOf(process.env, say);
		const server = await serveHttp(tools, token, { port: opts.http.port, maxBody: limitsOf(ctx.config).maxOwnerBytes + ENVELOPE_BYTES, say });
		await waitSignal(stopped, () => stop());
		const closed = new Promise<void>((resolve) => server.close(() => resolve()));
		server.closeIdleConnections();
		// Requests in flight are answered first; then nothing more is read.
		await tools.idle();
		server.closeAllConnections();
		await closed;
	}
	await tools.idle();
	await ctx.close();
}

/** Resolve when `stopped` does, or SIGTERM/SIGINT arrive (then `stop`). */
async function waitSignal(stopped: Promise<void>, stop: () => void): Promise<void> {
	const onSignal = () => stop();
	process.once("SIGTERM", onSignal);
	process.once("SIGINT", onSignal);
	try {
		await stopped;
	} finally {
		process.off("SIGTERM", onSignal);
		process.off("SIGINT", onSignal);
	}
}
