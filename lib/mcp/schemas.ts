/**
 * What the MCP server declares: pi's own declarations of `read_state` and `patch_state`
 * (`model/schemas.ts`, the same grammar and words), `patch_state` with one more optional key,
 * `seen` (the precondition, issue 38), and the output schemas of the results' structured form.
 * The schemas are plain JSON, advertised unchanged; arguments are admitted by State Flow's own
 * refusals (`model/interface.ts`), never by a validator's wording.
 */
import type { JsonObject } from "../core/types.js";
import { flatPatchSchema, patchDescription, readDescription, readSchema, scopedPatchSchema } from "../model/schemas.js";

export type Shape = "flat" | "scoped";

/** The key of `patch_state`'s arguments that is not part of the patch. */
export const SEEN_KEY = "seen";

/** What `seen` means, said once in the declaration (the protocol says when to use it). */
const SEEN_WORDS =
	' Optional "seen": the `seen` of your last result ({"cwd":12}); the write is then refused, with the current values, if another agent changed these keys since.';

/** The JSON of a TypeBox declaration. */
function plain(schema: unknown): JsonObject {
	return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

export function readInput(): JsonObject {
	return plain(readSchema());
}

/** pi's patch declaration of the shape, plus `seen` ({owner: seq}). */
export function patchInput(shape: Shape): JsonObject {
	const schema = plain(shape === "flat" ? flatPatchSchema() : scopedPatchSchema());
	const properties = schema.properties as JsonObject;
	// Its shape is refused at run time in State Flow's words (`surface/precondition.ts`): the declaration stays short.
	properties[SEEN_KEY] = { type: "object" };
	return schema;
}

export function readWords(shape: Shape): string {
	return readDescription(shape);
}

export function patchWords(shape: Shape): string {
	return patchDescription(shape) + SEEN_WORDS;
}

export const HEAD_WORDS =
	"Show your State Flow state now (the head pi shows before each prompt: intents, strategy, tactics, artifacts, lazy catalog). Call it when you start a task.";

const SEEN_SCHEMA = { type: "object", additionalProperties: { type: "integer", minimum: 0 } };

/** `structuredContent` of `read_state`: the result text and the seqs it was read at. */
export function readOutput(): JsonObject {
	return { type: "object", properties: { result: { type: "string" }, seen: SEEN_SCHEMA }, required: ["result", "seen"] };
}

/** `structuredContent` of `patch_state`: the result text, the transition (null: nothing changed) and the seqs after it. */
export function patchOutput(): JsonObject {
	return {
		type: "object",
		properties: { result: { type: "string" }, transitionId: { type: ["string", "null"] }, seen: SEEN_SCHEMA },
		required: ["result", "transitionId", "seen"],
	};
}

/** `structuredContent` of `state_head`: the head and the seqs it shows. */
export function headOutput(): JsonObject {
	return { type: "object", properties: { head: { type: "string" }, seen: SEEN_SCHEMA }, required: ["head", "seen"] };
}
