/**
 * `state-flow mcp --http` with real sockets: the official client round-trips through the token,
 * and every request without it, with a wrong one, from a foreign Host or Origin (DNS
 * rebinding), to another path or with a body over the bound is refused before it is read, with
 * nothing written. Raw requests go through node:http so Host and Origin are exactly as sent.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { makeTempDir, removeTempDir } from "../helpers/temp-dir.js";
import { within } from "../helpers/soon.js";
import { call, type HttpServer, httpServer, ok } from "./fixture.js";

const TOKEN = "test-token-0123456789abcdef";
const INIT = JSON.stringify({
	jsonrpc: "2.0",
	id: 1,
	method: "initialize",
	params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

interface Raw {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	body: string;
}

/**
 * One request with exactly these headers (Host included) and body. With `partial`, the body's
 * length is declared but only its first 64 KiB are sent: the answer must come before the rest
 * is read (then the request is dropped).
 */
function raw(url: URL, opts: { headers?: Record<string, string>; body?: string; path?: string; method?: string; partial?: boolean }): Promise<Raw> {
	const body = opts.body ?? INIT;
	return within(
		new Promise<Raw>((resolve, reject) => {
			const req = request(
				{
					host: "127.0.0.1",
					port: url.port,
					path: opts.path ?? url.pathname,
					method: opts.method ?? "POST",
					headers: {
						"content-type": "application/json",
						accept: "application/json, text/event-stream",
						"content-length": String(Buffer.byteLength(body)),
						...opts.headers,
					},
				},
				(res) => {
					let text = "";
					res.on("data", (b: Buffer) => (text += b.toString()));
					res.on("end", () => {
						resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
						if (opts.partial) req.destroy();
					});
				},
			);
			req.on("error", reject);
			if (opts.partial) req.write(body.slice(0, 64 * 1024));
			else req.end(body);
		}),
		"a raw HTTP answer",
	);
}

describe("state-flow mcp --http", () => {
	let base: string;
	let server: HttpServer;
	let host: string;
	before(async () => {
		base = makeTempDir("sf-mcp-http-");
		mkdirSync(join(base, "p"));
		mkdirSync(join(base, "a"));
		server = await httpServer({ cwd: join(base, "p"), agentDir: join(base, "a"), token: TOKEN });
		host = `127.0.0.1:${server.url.port}`;
	});
	after(async () => {
		await server.stop();
		removeTempDir(base);
	});

	it("serves the tools to a client with the token, and never prints a token it was given", async () => {
		const client = await server.connect();
		try {
			const w = await ok(client, "patch_state", { tactics: { h: "over http" } });
			assert.deepEqual(w.structured?.seen, { cwd: 1 });
			const r = await ok(client, "read_state", { path: "tactics.h" });
			assert.match(r.text, /over http/);
			assert.deepEqual(
				(await client.listTools()).tools.map((x) => x.name),
				["read_state", "patch_state", "state_head"],
			);
			assert.match((await ok(client, "state_head")).text, /over http/);
		} finally {
			await client.close();
		}
		assert.ok(!server.stderr().includes(TOKEN), "a token from the environment is never printed");
		// A 2026-07-28 client (stateless, no session) is served the same tools.
		const modern = await server.connect(TOKEN, { versionNegotiation: { mode: "auto" } });
		try {
			assert.equal(modern.getProtocolEra(), "modern");
			assert.match((await ok(modern, "read_state", { path: "tactics.h" })).text, /over http/);
		} finally {
			await modern.close();
		}
	});

	it("refuses a client without the token or with a wrong one (401)", async () => {
		for (const token of ["", "wrong-token-0123456789abcdef"]) {
			await assert.rejects(server.connect(token), (e: unknown) => {
				assert.equal((e as { data?: { status?: number } }).data?.status, 401, String(e));
				return true;
			});
		}
		const none = await raw(server.url, { headers: { host } });
		assert.equal(none.status, 401);
		assert.match(String(none.headers["www-authenticate"]), /^Bearer/);
		const wrong = await raw(server.url, { headers: { host, authorization: "Bearer nope" } });
		assert.equal(wrong.status, 401);
		const right = await raw(server.url, { headers: { host, authorization: `Bearer ${TOKEN}` } });
		assert.equal(right.status, 200, right.body);
	});

	it("refuses a foreign Host or Origin (403) even with the token", async () => {
		const auth = { authorization: `Bearer ${TOKEN}` };
		for (const headers of <Array<Record<string, string>>>[
			{ host: "evil.example" },
			{ host: `127.0.0.1.nip.io:${server.url.port}` },
			{ host, origin: "http://evil.example" },
			{ host, origin: "null" },
		]) {
			const r = await raw(server.url, { headers: { ...auth, ...headers } });
			assert.equal(r.status, 403, JSON.stringify(headers));
		}
		const local = await raw(server.url, { headers: { ...auth, host: `localhost:${server.url.port}`, origin: `http://localhost:${server.url.port}` } });
		assert.equal(local.status, 200, local.body);
	});

	it("refuses another path (404) and a body over the bound (413), writing nothing", async () => {
		const auth = { host, authorization: `Bearer ${TOKEN}` };
		assert.equal((await raw(server.url, { headers: auth, path: "/other" })).status, 404);
		const big = JSON.stringify({
			jsonrpc: "2.0",
			id: 2,
			method: "tools/call",
			params: { name: "patch_state", arguments: { lazy: { big: "x".repeat(5 * 1024 * 1024) } } },
		});
		const r = await raw(server.url, { headers: auth, body: big, partial: true });
		assert.equal(r.status, 413, r.body.slice(0, 200));
		// Without the token, the same body is refused for the token, before it is read.
		assert.equal((await raw(server.url, { headers: { host }, body: big, partial: true })).status, 401);
		const client = await server.connect();
		try {
			const read = await call(client, "read_state", { path: "lazy" });
			assert.doesNotMatch(read.text, /big/, "nothing was written");
		} finally {
			await client.close();
		}
	});

	it("generates a token and says it on stderr when none is set; refuses to start with a short one", async (t) => {
		const d = { cwd: join(base, "p"), agentDir: join(base, "a") };
		const generated = await httpServer(d);
		t.after(() => generated.stop());
		const said = /token (\S+)/.exec(generated.stderr())?.[1];
		assert.ok(said !== undefined && said.length >= 32, generated.stderr());
		const client = await generated.connect(said);
		await ok(client, "read_state", { path: "tactics" });
		await client.close();
		await assert.rejects(httpServer({ ...d, token: "short" }), /shorter than 16 characters/);
	});
});
