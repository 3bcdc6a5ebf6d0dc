/**
 * What a root registration must be before State Flow keeps it (docs/spec.md §12, issue 24): a
 * name that means nothing else, one line of description, owners, and a schema small and shallow
 * enough to send on every request, with patterns in RE2 (linear time). A co-installed extension
 * is not trusted to be small or fast; each refusal names the field and what to do.
 */
import { jsonTextBytes } from "../../core/size.js";
import type { Options } from "ajv";
import { RE2JS } from "re2js";
import type { RootSpec } from "../../api.js";
import { fail, messageOf } from "../../core/errors.js";
import { detach, isPlainObject } from "../../core/json.js";
import { OWNERS, PLANES, ROOTS, isOwner, type Json } from "../../core/types.js";

/** Words a root name can never be: they already mean something in the grammar. */
const RESERVED: readonly string[] = [...PLANES, ...OWNERS, "response", ROOTS, "patches", "effective"];
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_DESCRIPTION = 300;
/** Roots registered at once, at most: each is declared on every request. */
export const MAX_ROOTS = 16;
/** UTF-8 bytes of one root's schema as JSON, at most (it is sent on every request). */
export const MAX_SCHEMA_BYTES = 4096;
/** Nesting of a root's schema, at most (pi's own validator walks it recursively). */
export const MAX_SCHEMA_DEPTH = 32;
/** UTF-8 bytes all registered roots add to the declarations (descriptions and schemas), at most. */
export const MAX_ROOTS_BYTES = 16384;

/** Names a plain object already answers (`constructor`, `toString`, `__proto__`, …): a root of that name would be one. */
const INHERITED: readonly string[] = Object.getOwnPropertyNames(Object.prototype);

/**
 * The pattern engine of root schemas (`pattern`, `patternProperties`, `propertyNames`): RE2,
 * linear in the text whatever the pattern, so no schema can make a commit backtrack for ever
 * under a store's lock. A pattern RE2 cannot run (lookaround, backreferences) is refused at
 * registration, naming it.
 */
export const re2: NonNullable<NonNullable<Options["code"]>["regExp"]> = Object.assign(
	(pattern: string, flags: string) => {
		let re: RE2JS;
		try {
			re = RE2JS.compile(pattern);
		} catch (e) {
			throw new Error(
				`pattern ${JSON.stringify(pattern)} cannot be used: State Flow runs schema patterns in linear time (RE2 syntax: no lookahead, lookbehind or backreferences); ${messageOf(e)}`,
			);
		}
		// `toString` is ajv's cache key of a compiled pattern.
		return { test: (s: string) => re.test(s), toString: () => `/${pattern}/${flags}` };
	},
	{ code: "re2" },
);

/** Nesting depth of a JSON value (objects and arrays), stopping once past `max`. */
function depthOf(v: unknown, max: number, at = 0): number {
	if (at > max || v === null || typeof v !== "object") return at;
	let deepest = at + 1;
	for (const x of Object.values(v)) deepest = Math.max(deepest, depthOf(x, max, at + 1));
	return deepest;
}

/** The spec as State Flow keeps it (a detached copy), or a refusal naming the field; `registered` are the roots already kept. */
export function checkRootSpec(raw: RootSpec, registered: readonly RootSpec[]): RootSpec {
	const spec = detach(raw, ["spec"]) as unknown as RootSpec;
	if (!isPlainObject(spec as unknown as Json)) fail("invalid_input", "the root spec must be an object { name, extension, description, schema, owners }");
	const { name, extension, description, schema, owners } = spec;
	if (typeof extension !== "string" || extension.trim() === "") fail("invalid_input", "`extension` must name the registering extension", ["extension"]);
	if (typeof name !== "string" || !NAME.test(name))
		fail("invalid_input", `\`name\` must be an identifier of letters, digits and _ (at most 64), got ${JSON.stringify(name)}`, ["name"]);
	if (RESERVED.includes(name)) fail("invalid_input", `root name \`${name}\` collides with State Flow's own \`${name}\`; choose another name`, ["name"]);
	if (INHERITED.includes(name))
		fail("invalid_input", `root name \`${name}\` is a member every JavaScript object has (Object.prototype); choose another name`, ["name"]);
	if (registered.length >= MAX_ROOTS)
		fail("invalid_input", `${MAX_ROOTS} roots are registered already, the most State Flow declares (each is sent on every request); dispose one first`, [
			"name",
		]);
	const other = registered.find((r) => r.name === name);
	if (other !== undefined) fail("invalid_input", `root name \`${name}\` is already registered by extension ${other.extension}; choose another name`, ["name"]);
	if (typeof description !== "string" || description.trim() === "" || /[\r\n]/.test(description) || description.length > MAX_DESCRIPTION) {
		fail("invalid_input", `\`description\` must be one non-empty line of at most ${MAX_DESCRIPTION} characters`, ["description"]);
	}
	if (!Array.isArray(owners) || owners.length === 0 || owners.some((o) => !isOwner(o)) || new Set(owners).size !== owners.length) {
		fail("invalid_input", `\`owners\` must be a non-empty list of distinct owners of ${OWNERS.join(", ")}`, ["owners"]);
	}
	if (!isPlainObject(schema as Json) || schema.type !== "object")
		fail("invalid_input", '`schema` must be a JSON Schema object with `"type": "object"` (a root holds an object, merged like a plane)', ["schema"]);
	const schemaBytes = jsonTextBytes(schema);
	if (schemaBytes > MAX_SCHEMA_BYTES)
		fail("invalid_input", `\`schema\` is ${schemaBytes} B as JSON; at most ${MAX_SCHEMA_BYTES} B (it is sent on every request): describe less in it`, [
			"schema",
		]);
	if (depthOf(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH)
		fail("invalid_input", `\`schema\` nests deeper than ${MAX_SCHEMA_DEPTH} levels; flatten it`, ["schema"]);
	const added = schemaBytes + jsonTextBytes(description);
	const declared = registered.reduce((n, r) => n + jsonTextBytes(r.schema) + jsonTextBytes(r.description), 0);
	if (declared + added > MAX_ROOTS_BYTES)
		fail(
			"invalid_input",
			`the registered roots would add ${declared + added} B to every request; at most ${MAX_ROOTS_BYTES} B for all roots together (${declared} B taken): make the schema or description shorter`,
			["schema"],
		);
	return spec;
}
