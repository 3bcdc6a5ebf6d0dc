/**
 * Structured references (SPEC §3.3, §4.3): `{ "$ref": "<locator>" }` with exactly that one
 * key. Flat input is anchored to the captured owner by prefixing `<owner>.`; flat
 * presentation strips that prefix again, so anchoring then presenting is the identity.
 * Everything that is not a relative current locator stays byte-identical.
 */
import { fail, formatPath } from "./errors.js";
import { setOwn } from "./json.js";
import { type Locator, tryParseLocator } from "./locator.js";
import { OWNERS, type Json, type JsonObject, type Owner } from "./types.js";

/** A structured reference: an object with exactly one own key `$ref` holding a string. */
export function isRef(v: unknown): v is { $ref: string } {
	if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
	const keys = Object.keys(v);
	return keys.length === 1 && keys[0] === "$ref" && typeof (v as JsonObject)["$ref"] === "string";
}

/** Every reference string inside `value`, in document order. */
export function refsIn(value: Json): string[] {
	const out: string[] = [];
	visit(value, (ref) => void out.push(ref));
	return out;
}

function visit(value: Json, onRef: (ref: string) => void): void {
	if (typeof value !== "object" || value === null) return;
	if (Array.isArray(value)) {
		for (const item of value) visit(item, onRef);
	} else if (isRef(value)) {
		onRef(value.$ref);
	} else {
		for (const key of Object.keys(value)) visit(value[key] as Json, onRef);
	}
}

/** Rebuild `value` with each reference string passed through `rewrite` (copies; input untouched). */
function mapRefs(value: Json, rewrite: (ref: string, path: (string | number)[]) => string, path: (string | number)[] = []): Json {
	if (typeof value !== "object" || value === null) return value;
	if (Array.isArray(value)) return value.map((item, i) => mapRefs(item, rewrite, [...path, i]));
	if (isRef(value)) return { $ref: rewrite(value.$ref, [...path, "$ref"]) };
	const out: JsonObject = {};
	for (const key of Object.keys(value)) {
		setOwn(out, key, mapRefs(value[key] as Json, rewrite, [...path, key]));
	}
	return out;
}

/** A flat-form locator that is current and unqualified with a plane root (`lazy.plan`). */
function relativeCurrent(text: string): Locator | undefined {
	const loc = tryParseLocator(text, "flat");
	return loc?.kind === "state" && loc.scope === null && loc.offset === 0 && loc.plane !== null ? loc : undefined;
}

/** Flat input → canonical: `lazy.plan` becomes `<owner>.lazy.plan`; all else stays as sent. */
export function anchorRefs(value: Json, owner: Owner): Json {
	return mapRefs(value, (ref) => (relativeCurrent(ref) ? `${owner}.${ref}` : ref));
}

/** Canonical → flat presentation: same-owner current refs lose their `<owner>.` prefix. */
export function presentRefs(value: Json, soleOwner: Owner): Json {
	const prefix = `${soleOwner}.`;
	return mapRefs(value, (ref) => {
		if (!ref.startsWith(prefix)) return ref;
		const loc = tryParseLocator(ref, "canonical");
		const current = loc?.kind === "state" && loc.scope === soleOwner && loc.offset === 0 && loc.plane !== null;
		return current ? ref.slice(prefix.length) : ref;
	});
}

/**
 * Scoped input: every semantic reference must name its owner. A relative locator
 * (`lazy.plan`, `patches[0]`, `response`) is refused, showing the qualified forms.
 */
export function checkScopedRefs(value: Json, path: (string | number)[] = [], wanted: readonly Owner[] = OWNERS): void {
	mapRefs(
		value,
		(ref, at) => {
			const loc = tryParseLocator(ref, "flat");
			const relative =
				loc !== undefined &&
				((loc.kind === "state" && loc.scope === null) || (loc.kind === "patches" && loc.owner === null) || (loc.kind === "response" && loc.owner === null));
			if (!relative) return ref;
			const options = loc.kind === "response" ? ["session"] : wanted;
			const qualified = options.map((o) => `${o}.${ref}`);
			fail(
				"invalid_input",
				`\`${formatPath(at)}\` is \`${ref}\`; in scoped mode write ${qualified.map((q) => `\`${q}\``).join(" or ")}`,
				at,
			);
		},
		path,
	);
}
