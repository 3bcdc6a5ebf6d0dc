/**
 * Text search over state (issue 26): a project that lived for months cannot be scanned into the
 * context to find "everything about GraphQL". `searchState` walks the values the evaluator
 * returns for some start locators and lists where a key or a string value holds the text,
 * case-insensitively, each as the locator that reads it and a short snippet. Several terms
 * (`graphql|apollo`) find any of them in one call, so a model need not search again with a
 * synonym to be sure. Bounded: at most
 * `max` matches are kept, the rest only counted. Pure; spelling is the caller's (`present`).
 */
import { evaluate, type QueryView } from "./query.js";
import type { Locator, Segment } from "./locator.js";
import { isPlainObject } from "./json.js";
import { isPlane, ROOTS, type Json, type Section } from "./types.js";

/** One place the text was found. */
export interface SearchMatch {
	/** Where it is, as the model reads it. */
	locator: string;
	/** `key` when the member's name holds the text (its value is previewed), `value` for a string. */
	in: "key" | "value";
	/** A short excerpt as JSON text (a string in quotes, or the start of a value's compact JSON): never a raw line break. */
	snippet: string;
}

export interface SearchAnswer {
	matches: SearchMatch[];
	/** Matches found beyond `max`, counted, not shown. */
	omitted: number;
}

/** Characters of context shown before and after the text in a string value. */
const BEFORE = 24;
const AFTER = 40;
/** Characters of a matching key's value shown. */
const PREVIEW = 60;

/** The bounds `[from, to)` clamped to `text`, widened so no surrogate pair is split. */
function bounds(text: string, from: number, to: number): [number, number] {
	let a = Math.max(0, from);
	let b = Math.min(text.length, to);
	if (a > 0 && isLowSurrogate(text.charCodeAt(a))) a--;
	if (b < text.length && isLowSurrogate(text.charCodeAt(b))) b++;
	return [a, b];
}

function isLowSurrogate(c: number): boolean {
	return c >= 0xdc00 && c <= 0xdfff;
}

/** The excerpt of a string around its first match (`at`, in units of `text`). */
function excerpt(text: string, at: number, length: number): string {
	const [a, b] = bounds(text, at - BEFORE, at + length + AFTER);
	return JSON.stringify(`${a > 0 ? "…" : ""}${text.slice(a, b)}${b < text.length ? "…" : ""}`);
}

/** A matching key's value, short: a string's start (as JSON), or the start of its compact JSON. */
function preview(v: Json): string {
	if (typeof v === "string") return JSON.stringify(v.length <= PREVIEW ? v : `${v.slice(0, bounds(v, 0, PREVIEW)[1])}…`);
	const text = JSON.stringify(v);
	return text.length <= PREVIEW ? text : `${text.slice(0, bounds(text, 0, PREVIEW)[1])}…`;
}

/** What separates the terms of one search: any of them is a match (`graphql|apollo`). */
export const TERM_SEPARATOR = "|";

/**
 * The terms of a query, lower case: split at `|`, each trimmed, empty ones dropped (a query of
 * only separators and spaces is searched as it is). A term may hold spaces: it is a phrase.
 */
export function searchTerms(query: string): string[] {
	const terms = query
		.split(TERM_SEPARATOR)
		.map((t) => t.trim().toLowerCase())
		.filter((t) => t !== "");
	return terms.length > 0 ? [...new Set(terms)] : [query.toLowerCase()];
}

/** Where the first of `needles` (lower case) first occurs in `text`, case-insensitively, and its length; undefined when none does. */
function find(text: string, needles: readonly string[]): { at: number; length: number } | undefined {
	const lower = text.toLowerCase();
	let best: { at: number; length: number } | undefined;
	for (const needle of needles) {
		const i = lower.indexOf(needle);
		if (i >= 0 && (best === undefined || i < best.at)) best = { at: i, length: needle.length };
	}
	if (best === undefined) return undefined;
	// Lower-casing may change a string's length (e.g. "İ"); the excerpt then starts at the beginning.
	return lower.length === text.length ? best : { at: 0, length: 0 };
}

/**
 * The locator below `base` at `sub`. A whole owner state (`plane` null) holds the planes and the
 * registered roots by name, so its first step names the section.
 */
export function descend(base: Locator, sub: readonly Segment[]): Locator {
	if (sub.length === 0) return base;
	if (base.kind === "state" && base.plane === null) {
		const [first, ...rest] = sub;
		if (typeof first === "string" && isPlane(first)) return { ...base, plane: first as Section, path: rest };
		return { ...base, plane: ROOTS, path: [...sub] };
	}
	return { ...base, path: [...base.path, ...sub] };
}

/**
 * Search under each start locator, in order, for any of `query`'s terms (`searchTerms`,
 * case-insensitive) in member names and string values. A member whose name matches is one match
 * (its value previewed); a string value that matches is another, unless its own member's name
 * already matched.
 */
export function searchState(view: QueryView, starts: readonly Locator[], query: string, present: (loc: Locator) => string, max: number): SearchAnswer {
	const needles = searchTerms(query);
	const matches: SearchMatch[] = [];
	let omitted = 0;
	const add = (loc: Locator, m: Omit<SearchMatch, "locator">): void => {
		if (matches.length < max) matches.push({ locator: present(loc), ...m });
		else omitted++;
	};
	const walk = (base: Locator, v: Json, sub: Segment[], keyMatched: boolean): void => {
		if (typeof v === "string") {
			if (keyMatched) return;
			const found = find(v, needles);
			if (found !== undefined) add(descend(base, sub), { in: "value", snippet: excerpt(v, found.at, found.length) });
			return;
		}
		if (Array.isArray(v)) {
			v.forEach((item, i) => walk(base, item as Json, [...sub, i], false));
			return;
		}
		if (!isPlainObject(v)) return;
		for (const key of Object.keys(v)) {
			const child = v[key] as Json;
			const hit = find(key, needles) !== undefined;
			if (hit) add(descend(base, [...sub, key]), { in: "key", snippet: preview(child) });
			walk(base, child, [...sub, key], hit);
		}
	};
	for (const start of starts) {
		const [result] = evaluate(view, [start], "value");
		walk(start, (result?.value ?? null) as Json, [], false);
	}
	return { matches, omitted };
}
