/**
 * References as the head shows them (issue 36: no bytes on bookkeeping). Same-owner references
 * are relative in flat form, as everywhere the model reads them; an array of two or more
 * references — an intent's `owns` — is one string naming them compactly:
 * `"refs: tactics.pay-01…pay-25 (25), lazy[\"design/payments.md\"]"`. A run of three or more
 * references to keys of one plane, in natural key order, is spelled by its first and last key
 * and its count. Presentation only: storage and `read_state` keep the array of `{"$ref"}` objects.
 */
import { formatKeySegment, tryParseLocator } from "../core/locator.js";
import { naturalCompare } from "../core/order.js";
import { isRef, presentRef } from "../core/refs.js";
import { setOwn } from "../core/json.js";
import type { Json, JsonObject, Owner } from "../core/types.js";

/** How a compacted array of references starts: it reads as a list of references, never as a stored string. */
export const REFS_PREFIX = "refs: ";

/** References to consecutive keys of one plane that are spelled as a range (`a…c (3)`). */
const MIN_RUN = 3;

/** One reference's plane key, when it names a key directly under a plane (`cwd.tactics.a`). */
function planeKey(ref: string): { root: string; key: string } | undefined {
	const loc = tryParseLocator(ref, "canonical");
	if (loc === undefined || loc.kind !== "state" || loc.offset !== 0 || loc.plane === null || loc.path.length !== 1) return undefined;
	const key = loc.path[0];
	return typeof key === "string" ? { root: `${loc.scope}.${loc.plane}`, key } : undefined;
}

/** The string an array of references is shown as, each spelled as the model writes it (`sole`: flat form). */
export function refsText(refs: readonly string[], sole: Owner | undefined): string {
	const parts: string[] = [];
	let i = 0;
	while (i < refs.length) {
		const first = planeKey(refs[i] as string);
		let j = i + 1;
		if (first !== undefined) {
			let prev = first.key;
			for (; j < refs.length; j++) {
				const next = planeKey(refs[j] as string);
				if (next === undefined || next.root !== first.root || naturalCompare(prev, next.key) >= 0) break;
				prev = next.key;
			}
		}
		if (first !== undefined && j - i >= MIN_RUN) {
			parts.push(`${presentRef(refs[i] as string, sole)}…${formatKeySegment(planeKey(refs[j - 1] as string)?.key as string).replace(/^\./, "")} (${j - i})`);
			i = j;
		} else {
			parts.push(presentRef(refs[i] as string, sole));
			i++;
		}
	}
	return REFS_PREFIX + parts.join(", ");
}

/** Texts of arrays of references already spelled, per array and spelling (a render fits one value several times). */
const spelled = new WeakMap<Json[], Map<Owner | undefined, string | undefined>>();

/** The `refs:` string an array of two or more references is shown as; undefined for any other array. */
export function refsArrayText(value: Json[], sole: Owner | undefined): string | undefined {
	let bySole = spelled.get(value);
	if (bySole === undefined) spelled.set(value, (bySole = new Map()));
	if (bySole.has(sole)) return bySole.get(sole);
	const text =
		value.length >= 2 && value.every(isRef)
			? refsText(
					value.map((r) => (r as { $ref: string }).$ref),
					sole,
				)
			: undefined;
	bySole.set(sole, text);
	return text;
}

/**
 * `value` as the head shows its references: relative in flat form, arrays of two or more as one
 * `refs:` string. Returns `value` itself when nothing changes (no copy, so sizes measured once stay cached).
 */
export function headRefs(value: Json, sole: Owner | undefined): Json {
	if (typeof value !== "object" || value === null) return value;
	if (Array.isArray(value)) {
		const text = refsArrayText(value, sole);
		if (text !== undefined) return text;
		let out: Json[] | undefined;
		value.forEach((item, i) => {
			const shown = headRefs(item, sole);
			if (shown !== item) (out ??= value.slice())[i] = shown;
		});
		return out ?? value;
	}
	if (isRef(value)) {
		const ref = presentRef(value.$ref, sole);
		return ref === value.$ref ? value : { $ref: ref };
	}
	let out: JsonObject | undefined;
	for (const key of Object.keys(value)) {
		const item = value[key] as Json;
		const shown = headRefs(item, sole);
		if (shown === item) continue;
		if (out === undefined) {
			out = {};
			for (const k of Object.keys(value)) setOwn(out, k, value[k] as Json);
		}
		setOwn(out, key, shown);
	}
	return out ?? value;
}
