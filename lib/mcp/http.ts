/**
 * `state-flow mcp --http`: Streamable HTTP on 127.0.0.1 only, at `/mcp`, stateless (a server
 * per request, as the SDK's `createMcpHandler` serves both protocol eras). A local port is
 * reachable by every local process and, through DNS rebinding, by web pages: every request
 * passes, before its body is read, a Host check (loopback names only: 403), an Origin check
 * (absent or loopback: 403), the path (404) and the bearer token (401); the SDK's Node adapter
 * then caps the body (413) as it reads it. The gates are the SDK's own (`@modelcontextprotocol/
 * node` guards, `requireBearerAuth`); the token is compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from "@modelcontextprotocol/node";
import { type AuthInfo, createMcpHandler, OAuthError, OAuthErrorCode, requireBearerAuth } from "@modelcontextprotocol/server";
import { fail } from "../core/errors.js";
import type { McpTools } from "./server.js";

/** Where the token comes from when the user sets it. */
export const TOKEN_ENV = "STATE_FLOW_MCP_TOKEN";
/** The one path served. */
export const MCP_PATH = "/mcp";
/** Shortest token accepted from the environment: a guessable token is no gate. */
const MIN_TOKEN_CHARS = 16;

export interface HttpOptions {
	port: number;
	/** Largest request body, in bytes (a patch never exceeds an owner's limit). */
	maxBody: number;
	/** Said on stderr: the address, and the token when it was generated. */
	say: (line: string) => void;
}

/** The token: the environment's when set, else 32 random bytes, said once on stderr. */
export function tokenOf(env: NodeJS.ProcessEnv, say: (line: string) => void): string {
	const given = env[TOKEN_ENV];
	if (given !== undefined && given !== "") {
		if (given.length < MIN_TOKEN_CHARS)
			fail(
				"invalid_input",
				`${TOKEN_ENV} is shorter than ${MIN_TOKEN_CHARS} characters; set a long random token (e.g. \`openssl rand -hex 32\`) or unset it to have one generated.`,
			);
		return given;
	}
	const token = randomBytes(32).toString("base64url");
	say(`state-flow mcp: token ${token} (send it as "Authorization: Bearer <token>"; set ${TOKEN_ENV} to choose it)`);
	return token;
}

/** Serve until closed; resolves with the listening server once it listens. */
export async function serveHttp(tools: McpTools, token: string, opts: HttpOptions): Promise<Server> {
	const expected = createHash("sha256").update(token).digest();
	const gate = requireBearerAuth({
		verifier: {
			async verifyAccessToken(presented): Promise<AuthInfo> {
				if (!timingSafeEqual(createHash("sha256").update(presented).digest(), expected)) throw new OAuthError(OAuthErrorCode.InvalidToken, "invalid token");
				// The SDK refuses an AuthInfo without an expiry: a static token gets a far one.
				return { token: presented, clientId: "local", scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 86_400 };
			},
		},
	});
	const handler = createMcpHandler(() => tools.create(), {
		maxRequestBodySize: opts.maxBody,
		onerror: (e) => opts.say(`state-flow mcp: ${e.message}`),
	});
	const validHost = localhostHostValidation();
	const validOrigin = localhostOriginValidation();
	// The adapter reads the whole body before its handler runs: every gate answers first.
	const node = toNodeHandler(handler, { maxRequestBodySize: opts.maxBody });
	const server = createServer((req, res) => {
		// Both guards answer 403 themselves.
		if (!validHost(req, res) || !validOrigin(req, res)) return;
		admit(req)
			.then(async (admitted) => {
				if (admitted instanceof Response) {
					res.writeHead(admitted.status, Object.fromEntries(admitted.headers));
					res.end(await admitted.text());
					return;
				}
				// The adapter hands `req.auth` to the handler as the request's authInfo.
				Object.assign(req, { auth: admitted });
				await node(req, res);
			})
			.catch((e: unknown) => {
				opts.say(`state-flow mcp: ${e instanceof Error ? e.message : String(e)}`);
				if (!res.headersSent) res.writeHead(500);
				res.end();
			});
	});
	/** The path (404) and the token (401, the SDK's challenge), from the request line and headers alone. */
	const admit = async (req: IncomingMessage): Promise<AuthInfo | Response> => {
		const url = new URL(req.url ?? "/", "http://127.0.0.1");
		if (url.pathname !== MCP_PATH) return new Response("not found: the endpoint is /mcp\n", { status: 404 });
		const headers = new Headers();
		const auth = req.headers.authorization;
		if (auth !== undefined) headers.set("authorization", auth);
		return gate(new Request(url, { method: req.method ?? "POST", headers }));
	};
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(opts.port, "127.0.0.1", () => {
			server.off("error", reject);
			resolve();
		});
	});
	const addr = server.address();
	const port = typeof addr === "object" && addr !== null ? addr.port : opts.port;
	opts.say(`state-flow mcp: serving http://127.0.0.1:${port}${MCP_PATH}`);
	server.on("close", () => void handler.close());
	return server;
}
