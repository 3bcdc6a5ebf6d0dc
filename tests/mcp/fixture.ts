/**
 * The real `state-flow mcp` for tests: spawned from the built CLI (or through the same loader
 * from source) and driven by the official MCP client over stdio or Streamable HTTP. Every wait
 * is on the event it means (a line on stderr, a process exit) with a deadline that names it.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CLI } from "../cli/run.js";
import { within } from "../helpers/soon.js";

/** Loader flags (tsx) without the test runner's own. */
const EXEC_ARGV = process.execArgv.filter((a) => !a.startsWith("--test"));

export interface ServeDirs {
	cwd: string;
	agentDir: string;
	/** `--owners` (default: the server's). */
	owners?: string;
	env?: Record<string, string>;
}

/** The environment of a server: this one's, without a fault or database unless asked. */
export function envOf(extra: Record<string, string> = {}): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "STATE_FLOW_FAULT" && k !== "STATE_FLOW_MCP_TOKEN") env[k] = v;
	return { ...env, ...extra };
}

export function argsOf(d: ServeDirs, more: string[] = []): string[] {
	return [...EXEC_ARGV, CLI, "mcp", "--cwd", d.cwd, "--agent-dir", d.agentDir, ...(d.owners ? ["--owners", d.owners] : []), ...more];
}

/** One tool call's answer, as a client's model would get it. */
export interface Called {
	isError: boolean;
	text: string;
	structured: Record<string, unknown> | undefined;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Called> {
	const r = await within(client.callTool({ name, arguments: args }), `the ${name} call to answer`, 60_000);
	const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
	return {
		isError: r.isError === true,
		text: content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join(""),
		structured: r.structuredContent as Record<string, unknown> | undefined,
	};
}

/** A call that must succeed. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Called> {
	const r = await call(client, name, args);
	assert.equal(r.isError, false, `${name} ${JSON.stringify(args)} was refused: ${r.text}`);
	return r;
}

export interface StdioServer {
	client: Client;
	transport: StdioClientTransport;
	stderr(): string;
	close(): Promise<void>;
}

/** A client connected to a freshly spawned `state-flow mcp` on stdio. */
export async function stdioServer(d: ServeDirs, options?: ConstructorParameters<typeof Client>[1]): Promise<StdioServer> {
	const transport = new StdioClientTransport({ command: process.execPath, args: argsOf(d), env: envOf(d.env), stderr: "pipe" });
	let err = "";
	transport.stderr?.on("data", (b: Buffer) => (err += b.toString()));
	const client = new Client({ name: "sf-test", version: "0" }, options);
	await within(client.connect(transport), "the stdio server to connect", 60_000);
	return { client, transport, stderr: () => err, close: () => client.close() };
}

export interface HttpServer {
	url: URL;
	proc: ChildProcess;
	stderr(): string;
	/** A client with this token (default: the server's; "": none). */
	connect(token?: string, options?: ConstructorParameters<typeof Client>[1]): Promise<Client>;
	stop(): Promise<void>;
}

/** Spawn `state-flow mcp --http --port 0` and wait for the line naming its address. */
export async function httpServer(d: ServeDirs & { token?: string }): Promise<HttpServer> {
	const env = envOf({ ...(d.token !== undefined ? { STATE_FLOW_MCP_TOKEN: d.token } : {}), ...d.env });
	const proc = spawn(process.execPath, argsOf(d, ["--http", "--port", "0"]), { env, stdio: ["ignore", "pipe", "pipe"] });
	let err = "";
	const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
	const url = await within(
		new Promise<URL>((resolve, reject) => {
			proc.stderr.on("data", (b: Buffer) => {
				err += b.toString();
				const m = /serving (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
				if (m) resolve(new URL(m[1] as string));
			});
			void exited.then((code) => reject(new Error(`the HTTP server exited (${code}) before listening: ${err}`)));
		}),
		"the HTTP server to say where it listens",
		60_000,
	);
	const token = d.token ?? /token (\S+)/.exec(err)?.[1];
	return {
		url,
		proc,
		stderr: () => err,
		async connect(t = token, options) {
			const client = new Client({ name: "sf-http-test", version: "0" }, options);
			const headers: Record<string, string> = t === undefined || t === "" ? {} : { authorization: `Bearer ${t}` };
			await within(client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } })), "the HTTP client to connect", 60_000);
			return client;
		},
		async stop() {
			if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
			await within(exited, "the HTTP server to stop on SIGTERM", 30_000);
		},
	};
}
