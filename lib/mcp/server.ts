/**
 * The MCP server's factory: three tools (`read_state` and `patch_state` with pi's grammar and
 * results, `state_head` for the head an MCP client cannot inject), the head also as a prompt
 * (user-invoked), and the protocol as the server's `instructions`. Every call runs through the
 * one engine (`surface/`): the same admission, results, head and credential refusals as pi.
 * Schemas are compiled once per process: HTTP builds a server per request (docs/mcp.md).
 */
import { randomUUID } from "node:crypto";
import { fromJsonSchema, type JsonSchemaValidator, type jsonSchemaValidator, McpServer } from "@modelcontextprotocol/server";
import { messageOf } from "../core/errors.js";
import { isPlainObject } from "../core/json.js";
import type { Json, JsonObject } from "../core/types.js";
import { DEFAULT_HEAD_BUDGET } from "../model/head.js";
import { renderProtocol } from "../model/protocol.js";
import { buildHead } from "../surface/head.js";
import { patchCall } from "../surface/patch.js";
import { parseSeen } from "../surface/precondition.js";
import { readCall } from "../surface/read.js";
import type { Seqs } from "../surface/surface.js";
import type { McpContext } from "./context.js";
import { HEAD_WORDS, headOutput, patchInput, patchOutput, patchWords, readInput, readOutput, readWords, SEEN_KEY, type Shape } from "./schemas.js";

/** Accepts every argument: State Flow's own admission refuses in its words, naming the field. */
const ownAdmission: jsonSchemaValidator = {
	getValidator<T>(): JsonSchemaValidator<T> {
		return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
	},
};

type Text = { type: "text"; text: string };
type Answer = { content: Text[]; structuredContent?: Record<string, unknown>; isError?: boolean };

/** A refusal the model reads: State Flow's message, never a stack. */
function refusal(e: unknown): Answer {
	return { content: [{ type: "text", text: messageOf(e) }], isError: true };
}

/** The line that hands the model its `seen`. */
function seenLine(seen: Seqs): string {
	return `seen: ${JSON.stringify(seen)}`;
}

/** What every server of one process shares: the context, the schemas (compiled once), the protocol. */
export class McpTools {
	readonly shape: Shape;
	readonly instructions: string;
	readonly #schemas;
	/** Writes of one process commit in the order they arrived, as pi runs `patch_state` sequentially. */
	#writes: Promise<unknown> = Promise.resolve();

	constructor(
		readonly ctx: McpContext,
		readonly version: string,
	) {
		this.shape = ctx.wanted.length === 1 ? "flat" : "scoped";
		this.instructions = renderProtocol({ mode: this.mode, wanted: ctx.wanted, bootstrap: false, front: "mcp" });
		this.#schemas = {
			readIn: fromJsonSchema<JsonObject>(readInput(), ownAdmission),
			readOut: fromJsonSchema<JsonObject>(readOutput()),
			patchIn: fromJsonSchema<JsonObject>(patchInput(this.shape), ownAdmission),
			patchOut: fromJsonSchema<JsonObject>(patchOutput()),
			headOut: fromJsonSchema<JsonObject>(headOutput()),
		};
	}

	/** Resolves when the writes that arrived so far have committed or failed. */
	idle(): Promise<unknown> {
		return this.#writes;
	}

	/** Passive when the user's config says so; otherwise Active (the user started the server to be used). */
	get mode(): "active" | "passive" {
		return this.ctx.config.mode === "passive" ? "passive" : "active";
	}

	/** The head now; on stdio it starts the client's run (courtesy lines are relative to it). */
	async head(): Promise<{ head: string; seen: Seqs }> {
		const s = this.ctx.surface();
		const built = await buildHead(s, { mode: this.mode, wanted: this.ctx.wanted, budget: this.ctx.config.headBudget ?? DEFAULT_HEAD_BUDGET });
		this.ctx.runs?.startRun(built.head, built.seqAtHead, built.shown);
		return { head: built.head, seen: built.seqAtHead };
	}

	async read(args: unknown, signal: AbortSignal): Promise<Answer> {
		try {
			const { result, seqs } = await readCall(this.ctx.surface(), args, this.ctx.wanted);
			if (signal.aborted) return refusal("The call was cancelled.");
			const text = result.content.map((c) => c.text).join("\n");
			return { content: [{ type: "text", text: `${text}\n${seenLine(seqs)}` }], structuredContent: { result: text, seen: seqs } };
		} catch (e) {
			return refusal(e);
		}
	}

	async patch(args: unknown, signal: AbortSignal, client: string | undefined): Promise<Answer> {
		const run = this.#writes.then(() => this.#patch(args, signal, client));
		this.#writes = run.catch(() => undefined);
		return run;
	}

	async #patch(args: unknown, signal: AbortSignal, client: string | undefined): Promise<Answer> {
		try {
			const wanted = this.ctx.wanted;
			let patch: unknown = args;
			let seen: Seqs | undefined;
			if (isPlainObject(args as Json) && Object.hasOwn(args as JsonObject, SEEN_KEY)) {
				const { [SEEN_KEY]: given, ...rest } = args as JsonObject;
				seen = parseSeen(given, wanted);
				patch = rest;
			}
			// Who wrote it, in history: the client's own name (bounded; history shows stored text as data).
			const by = { kind: "tool" as const, sessionId: `mcp:${process.pid}`, toolCallId: `mcp:${(client ?? "client").slice(0, 40)}:${randomUUID()}` };
			const { result, seqs } = await patchCall(this.ctx.surface(), patch, { wanted: [...wanted], by, signal, ...(seen !== undefined ? { seen } : {}) });
			const text = result.content.map((c) => c.text).join("\n");
			return {
				content: [{ type: "text", text: `${text}\n${seenLine(seqs)}` }],
				structuredContent: { result: text, transitionId: result.details.transitionId, seen: seqs },
			};
		} catch (e) {
			return refusal(e);
		}
	}

	/** A server for one connection (stdio) or one request (HTTP): cheap, everything heavy is above. */
	create(): McpServer {
		const server = new McpServer({ name: "state-flow", version: this.version }, { instructions: this.instructions });
		const sc = this.#schemas;
		const client = () => server.server.getClientVersion()?.name;
		server.registerTool(
			"read_state",
			{ description: readWords(this.shape), inputSchema: sc.readIn, outputSchema: sc.readOut, annotations: { readOnlyHint: true } },
			(args, extra) => this.read(args, extra.mcpReq.signal),
		);
		server.registerTool(
			"patch_state",
			{
				description: patchWords(this.shape),
				inputSchema: sc.patchIn,
				outputSchema: sc.patchOut,
				annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
			},
			(args, extra) => this.patch(args, extra.mcpReq.signal, client()),
		);
		server.registerTool("state_head", { description: HEAD_WORDS, outputSchema: sc.headOut, annotations: { readOnlyHint: true } }, async () => {
			try {
				const { head, seen } = await this.head();
				return { content: [{ type: "text", text: `${head}\n${seenLine(seen)}` }], structuredContent: { head, seen } };
			} catch (e) {
				return refusal(e);
			}
		});
		server.registerPrompt("head", { title: "State Flow head", description: "Your State Flow state now, as pi shows it before each prompt." }, async () => {
			const { head } = await this.head();
			return { messages: [{ role: "user", content: { type: "text", text: head } }] };
		});
		return server;
	}
}
