/**
 * Capture what pi-ai's real provider adapters put on the wire for our tool declarations,
 * with no network: `globalThis.fetch` is replaced by an interceptor that records the request
 * body and answers HTTP 400, and the API key is a dummy. Bedrock's AWS SDK does not use
 * fetch, so its capture stops at the `onPayload` hook (the SDK command input) by throwing
 * there, before the client sends anything.
 */
import { type Api, type Context, getModel, type Model, streamSimple, type Tool } from "@mariozechner/pi-ai";

/** One provider adapter under test and how to find tool schemas in its request body. */
export interface Target {
	api: Api;
	provider: string;
	model: string;
	/** Where the adapter puts each tool's name, description and parameter schema. */
	tools(body: unknown): WireTool[];
	/** True when the body is captured at `onPayload` (no HTTP request is made at all). */
	payloadOnly?: boolean;
}

/** A tool as found in the captured body. */
export interface WireTool {
	name: string;
	description: unknown;
	schema: unknown;
}

/** What one request produced. */
export interface Capture {
	url?: string;
	/** The HTTP body (or, for payloadOnly targets, the onPayload value) as JSON. */
	body: unknown;
	/** The value handed to `onPayload`, serialized to JSON. */
	payload: unknown;
	stopReason: string;
	errorMessage?: string;
}

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (typeof v === "object" && v !== null ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** The Chat Completions tool shape (`{ type: "function", function: {...} }`), used by OpenAI Completions and Mistral. */
const chatCompletionsTools = (b: unknown) =>
	arr(rec(b).tools).map((t) => {
		const f = rec(rec(t).function);
		return { name: String(f.name), description: f.description, schema: f.parameters };
	});

export const TARGETS: Target[] = [
	{
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		tools: (b) => arr(rec(b).tools).map((t) => ({ name: String(rec(t).name), description: rec(t).description, schema: rec(t).input_schema })),
	},
	{
		api: "openai-responses",
		provider: "openai",
		model: "gpt-5",
		tools: (b) => arr(rec(b).tools).map((t) => ({ name: String(rec(t).name), description: rec(t).description, schema: rec(t).parameters })),
	},
	{
		api: "openai-completions",
		provider: "cerebras",
		model: "gpt-oss-120b",
		tools: chatCompletionsTools,
	},
	{
		api: "google-generative-ai",
		provider: "google",
		model: "gemini-2.5-flash",
		tools: (b) =>
			arr(rec(b).tools)
				.flatMap((t) => arr(rec(t).functionDeclarations))
				.map((f) => ({ name: String(rec(f).name), description: rec(f).description, schema: rec(f).parametersJsonSchema })),
	},
	{
		api: "mistral-conversations",
		provider: "mistral",
		model: "mistral-large-latest",
		tools: chatCompletionsTools,
	},
	{
		api: "bedrock-converse-stream",
		provider: "amazon-bedrock",
		model: "anthropic.claude-sonnet-4-5-20250929-v1:0",
		payloadOnly: true,
		tools: (b) =>
			arr(rec(rec(b).toolConfig).tools).map((t) => {
				const s = rec(rec(t).toolSpec);
				return { name: String(s.name), description: s.description, schema: rec(s.inputSchema).json };
			}),
	},
];

/** Thrown from `onPayload` to stop payload-only adapters before they touch the network. */
export const STOP = "state-flow capture: stopped before sending";

/**
 * Run one request through the real adapter with `tools`, capturing the body. The fetch
 * interceptor is installed only for the duration of the call and always restored.
 */
export async function capture(target: Target, tools: Tool[], apiKey = "dummy-key"): Promise<Capture> {
	const model = (getModel as (p: string, id: string) => Model<Api> | undefined)(target.provider, target.model);
	if (model === undefined) throw new Error(`pi-ai has no model ${target.provider}/${target.model}`);
	if (model.api !== target.api) throw new Error(`${target.provider}/${target.model} uses ${model.api}, expected ${target.api}`);
	const context: Context = { systemPrompt: "sys", messages: [{ role: "user", content: "hi", timestamp: 0 }], tools };
	const requests: Array<{ url: string; body: unknown }> = [];
	const realFetch = globalThis.fetch;
	globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
		const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
		let body: unknown = init?.body;
		if (body === undefined && input instanceof Request) body = await input.clone().text();
		requests.push({ url, body: typeof body === "string" ? JSON.parse(body) : body });
		return new Response(JSON.stringify({ error: { message: "intercepted (no network)" } }), {
			status: 400,
			headers: { "content-type": "application/json" },
		});
	}) as typeof fetch;
	let payload: unknown;
	try {
		const s = streamSimple(model, context, {
			apiKey,
			maxRetries: 0,
			onPayload: (p) => {
				payload = JSON.parse(JSON.stringify(p));
				if (target.payloadOnly) throw new Error(STOP);
				return undefined;
			},
		});
		const result = await s.result();
		const http = requests.at(-1);
		return {
			url: http?.url,
			body: target.payloadOnly ? payload : http?.body,
			payload,
			stopReason: result.stopReason,
			errorMessage: result.errorMessage,
		};
	} finally {
		globalThis.fetch = realFetch;
	}
}

/**
 * JSON pointers of every schema member of `sent` that is missing from `wire` or differs
 * there, descending into objects so a dropped nested keyword is named exactly.
 */
export function dropped(sent: unknown, wire: unknown, ptr = ""): string[] {
	if (JSON.stringify(sent) === JSON.stringify(wire)) return [];
	const s = rec(sent);
	const w = rec(wire);
	if (typeof sent !== "object" || sent === null || Array.isArray(sent) || typeof wire !== "object" || wire === null) return [ptr || "/"];
	const out: string[] = [];
	for (const key of Object.keys(s)) {
		const p = `${ptr}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
		if (!Object.hasOwn(w, key)) out.push(p);
		else out.push(...dropped(s[key], w[key], p));
	}
	return out;
}

/** JSON pointers of members the adapter added that the declaration did not have. */
export function added(sent: unknown, wire: unknown, ptr = ""): string[] {
	return dropped(wire, sent, ptr);
}
