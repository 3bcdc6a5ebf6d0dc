/**
 * Tool declarations of `patch_state` and `read_state`: TypeBox schemas, descriptions, labels.
 * Every schema is a plain top-level object (Anthropic keeps only top-level `properties` and
 * `required`); closure and non-emptiness are declared for providers that keep them and are
 * enforced again at runtime. Each call returns a fresh object: pi caches validators by identity.
 * What is declared is the schema's plain JSON (`declared`): pi validates every call against it,
 * and a TypeBox object also makes pi walk it to convert values first, which costs more than the
 * rest of a `read_state` call (docs/decisions.md, "Tool calls at the cost of their commit").
 */

import { StringEnum } from "@mariozechner/pi-ai";
import { type TSchema, Type } from "typebox";
import { PROJECTIONS } from "../core/query.js";
import { OWNERS, PLANES } from "../core/types.js";
import type { JsonObject, Owner } from "../core/types.js";

/** What the model is told about one registered root (docs/spec.md §12): only these bytes are added. */
export interface RootDeclaration {
	name: string;
	description: string;
	owners: readonly Owner[];
	/** The root value's JSON Schema as registered. */
	schema: JsonObject;
}

/** Short human labels shown by pi's UI for the two tools. */
export const PATCH_LABEL = "Patch state";
export const READ_LABEL = "Read state";

/** The same JSON Schema, as plain JSON: pi checks arguments against it without a conversion pass. */
function declared(schema: TSchema): TSchema {
	return Type.Unsafe<JsonObject>(JSON.parse(JSON.stringify(schema)) as JsonObject);
}

// An open object: any keys, any JSON values. `{ "type": "object" }` is the smallest schema
// that says so; nested property schemas reach every provider unchanged.
function openObject(): TSchema {
	return Type.Unsafe<JsonObject>({ type: "object" });
}

/** The five optional plane properties, each an open object (a merge patch for that plane). */
function planeProperties(): Record<string, TSchema> {
	const props: Record<string, TSchema> = {};
	for (const plane of PLANES) props[plane] = Type.Optional(openObject());
	return props;
}

/** Flat `patch_state` parameters (one wanted owner): top-level keys are planes and registered roots. */
export function flatPatchSchema(roots: readonly RootDeclaration[] = []): TSchema {
	const props = planeProperties();
	// The root's schema travels once, in the description; the property only admits the key.
	for (const r of roots) props[r.name] = Type.Optional(openObject());
	return declared(Type.Object(props, { additionalProperties: false, minProperties: 1 }));
}

/**
 * One sentence per registered root for the `patch_state` description: name (written like a
 * plane), owners, the extension's line and its value schema. Nothing else: every byte is paid
 * on every request (`npm run metrics` reports the framing).
 */
function rootLines(roots: readonly RootDeclaration[]): string {
	return roots.map((r) => ` Root ${r.name} (${r.owners.join(",")}): ${r.description} ${JSON.stringify(r.schema)}`).join("");
}

/**
 * Scoped `patch_state` parameters (two or three wanted owners): top-level keys are owners,
 * each an object of plane patches. Identical for every selection; the runtime refuses owners
 * that are not wanted. The planes inside an owner are named in the description, not in the
 * schema: spelling them out three times costs ~480 bytes on every request, and the runtime
 * refuses unknown planes with a precise message anyway.
 */
export function scopedPatchSchema(): TSchema {
	const props: Record<string, TSchema> = {};
	for (const owner of OWNERS) props[owner] = Type.Optional(openObject());
	return declared(Type.Object(props, { additionalProperties: false, minProperties: 1 }));
}

/** `read_state` parameters; the same grammar for both shapes. Exactly one of path/paths, or search (under path) (runtime). */
export function readSchema(): TSchema {
	return declared(
		Type.Object(
			{
				path: Type.Optional(Type.String()),
				paths: Type.Optional(Type.Array(Type.String())),
				projection: Type.Optional(StringEnum(PROJECTIONS)),
				search: Type.Optional(Type.String()),
			},
			{ additionalProperties: false },
		),
	);
}

/** Description of `patch_state` for the current shape. Sent on every request: keep it short. */
export function patchDescription(shape: "flat" | "scoped", roots: readonly RootDeclaration[] = []): string {
	return basePatchDescription(shape) + rootLines(roots);
}

function basePatchDescription(shape: "flat" | "scoped"): string {
	switch (shape) {
		case "flat":
			return (
				"Change your State Flow state with a JSON merge patch (RFC 7386): objects merge, null deletes a key, " +
				"arrays and scalars replace. Top-level keys are planes: intents, strategy, tactics, artifacts, lazy. " +
				'A ref is {"$ref":"<read_state locator>"} alone in its object; quote keys that are not plain names: {"$ref":"lazy[\\"a/b.md\\"]"}. ' +
				'Example: {"intents":{"login":{"goal":"fix login","owns":[{"$ref":"tactics.t1"}]}},"tactics":{"t1":"reproduce bug"}}'
			);
		case "scoped":
			return (
				"Change your State Flow state with a JSON merge patch (RFC 7386): objects merge, null deletes a key, " +
				"arrays and scalars replace. Top-level keys are owners (this session's only, see the protocol), each holding planes: " +
				"intents, strategy, tactics, artifacts, lazy. All owners in one call commit atomically. " +
				'A ref is {"$ref":"<read_state locator>"} alone in its object, owner-qualified; quote keys that are not plain names: {"$ref":"cwd.lazy[\\"a/b.md\\"]"}. ' +
				'Example: {"cwd":{"intents":{"login":{"goal":"fix login","owns":[{"$ref":"cwd.tactics.t1"}]}},"tactics":{"t1":"reproduce bug"}},"session":{"strategy":{"now":"login first"}}}'
			);
		default:
			throw new Error(`unknown shape ${String(shape)}`);
	}
}

/** Description of `read_state` for the current shape (parameters never change). */
export function readDescription(shape: "flat" | "scoped"): string {
	const tail = "Give `path`, `paths` (a batch) or `search` (keys, text, lazy bodies; a|b: any; under `path` if given). projection: value, keys, history.";
	switch (shape) {
		case "flat":
			return (
				'Read State Flow by locator: tactics, tactics.items[1], lazy["notes/a.md"] (a lazy body), ' +
				"effective[1].tactics (1 transition back), patches[0] (latest transition). " +
				tail
			);
		case "scoped":
			return (
				'Read State Flow by locator: cwd.tactics, cwd.lazy["notes/a.md"] (a lazy body), ' +
				"global[1].strategy (1 transition back), session.patches[0] (latest transition), " +
				"effective.tactics (session over cwd over global; current only, no [N]). " +
				tail
			);
		default:
			throw new Error(`unknown shape ${String(shape)}`);
	}
}
