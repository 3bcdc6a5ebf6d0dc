/**
 * Text that is not ours is data wherever it is shown (docs/security.md, "Stored text is data").
 * Keys, values, ids, file names, damage reasons and provenance come from stores, model
 * arguments, imported files and the disk — a repository or another database user may plant any
 * of them. One rule, in levels, each the one place its sink calls:
 * - `printable`: a block of data on a terminal (a value, JSON output). Controls a terminal acts
 *   on (cursor, screen, title, clipboard via OSC 52), C1, line/paragraph separators, a carriage
 *   return that ends no line and bidi controls are spelled as their JSON escape (`\u001b`);
 *   inside a JSON string that escape is the same character, so JSON output keeps its meaning.
 *   Line feeds, tabs and CRLF line ends stay: a multi-line value is shown as lines.
 * - `inline`: foreign text inside a line of ours (a message, a notice, a doctor line): line
 *   feeds, tabs and carriage returns are spelled too, so it never ends our line or starts one,
 *   and the `<` that would start the head's tag is `\u003c`, so no message, tool result or
 *   notice quoting it can be taken for the head's end.
 * - `spellId`: an identifier shown to the user (a key, a project id, user@host): invisible
 *   characters (zero-width, word joiners, fillers, tag characters) are spelled too, so two
 *   identifiers that read alike are never the same on the screen; `identifierProblem` refuses them.
 * - `modelLine` / `modelJson`: text in the head, which is one user-role message wrapped in
 *   `<state_flow_head>`: besides `inline`, every `<` is `\u003c`, so its tag cannot be spelled
 *   from inside (in JSON text that escape is the same character).
 */

import { setOwn } from "./json.js";
import type { Json, JsonObject } from "./types.js";

/** Bidirectional marks, embeddings, overrides and isolates: text that holds them may read otherwise than it is. */
const BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069";
/** Line and paragraph separators (NEL is C1): a model or an editor may start a line at them. */
const SEPARATORS = "\u2028\u2029";
/**
 * Characters that show nothing: soft hyphen, combining grapheme joiner, Hangul fillers, Mongolian
 * vowel separator, zero-width space/non-joiner/joiner, word joiner and invisible operators, BOM,
 * variation selectors, and (as surrogate pairs) tag characters and the supplementary variation selectors.
 */
const INVISIBLE = "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2064\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0";
const INVISIBLE_ASTRAL = "\\udb40[\\udc00-\\udfff]";

const BIDI_TEST = new RegExp(`[${BIDI}]`);
const INVISIBLE_TEST = new RegExp(`[${INVISIBLE}]|${INVISIBLE_ASTRAL}`);

/** Name of the head's wrapper tag (`model/head.ts` builds its delimiters from it). */
export const HEAD_TAG = "state_flow_head";
/** The start of the head's tag, opening or closing, in any case: foreign text in a line of ours never spells it. */
const TAG = new RegExp(`<(?=\\s*/?\\s*${HEAD_TAG})`, "gi");

/** Whether `text` holds a bidi control (`printable` spells them out; a project id refuses them). */
export function hasBidiControl(text: string): boolean {
	return BIDI_TEST.test(text);
}

/** Whether `text` holds a character that shows nothing (`spellId` spells them out; identifiers refuse them). */
export function hasInvisible(text: string): boolean {
	return INVISIBLE_TEST.test(text);
}

// C0 controls but tab and line feed, DEL, C1, separators, bidi controls, and a carriage return that ends no line.
const UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${SEPARATORS}${BIDI}]|\\r(?!\\n)`, "g");
// The same, with every line feed, tab and carriage return.
const UNSAFE_INLINE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${SEPARATORS}${BIDI}]`, "g");
// The same, with the characters that show nothing.
const UNSAFE_ID = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${SEPARATORS}${BIDI}${INVISIBLE}]|${INVISIBLE_ASTRAL}`, "g");
// For the head: the same as inline, with `<`.
const UNSAFE_MODEL = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${SEPARATORS}${BIDI}<]`, "g");
// What JSON.stringify leaves raw that still matters in the head: `<`, C1 (NEL), separators.
const UNSAFE_MODEL_JSON = new RegExp(`[\\u007f-\\u009f${SEPARATORS}<]`, "g");

/** A UTF-16 unit (or a surrogate pair, as its two units) as `\uXXXX` escapes. */
function spell(c: string): string {
	let out = "";
	for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
	return out;
}

/** `text` with every terminal control, separator and bidi override spelled as its `\uXXXX` escape; line feeds and tabs stay. */
export function printable(text: string): string {
	return text.replace(UNSAFE, spell);
}

/** `text` for a place inside a line of ours: like `printable`, and line feeds, tabs and carriage returns spelled too. */
export function inline(text: string): string {
	return text.replace(UNSAFE_INLINE, spell).replace(TAG, "\\u003c");
}

/** An identifier as shown to the user: like `inline`, and characters that show nothing spelled too. */
export function spellId(text: string): string {
	return text.replace(UNSAFE_ID, spell).replace(TAG, "\\u003c");
}

/** A string as a JSON literal that reads as it is: `spellId`'s characters as escapes (the same string to a JSON parser); keys in locators. */
export function jsonId(text: string): string {
	return spellId(JSON.stringify(text));
}

/** Why `text` cannot be an identifier a user is shown and asked about, or undefined: no control, separator, bidi or invisible character. */
export function identifierProblem(text: string): string | undefined {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
	if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text)) return "must not contain control characters or line breaks";
	if (hasBidiControl(text)) return "must not contain bidirectional overrides (they make text read otherwise)";
	if (hasInvisible(text))
		return `must not contain invisible characters (found ${spell((text.match(INVISIBLE_TEST) as RegExpMatchArray)[0])}): it would read as another id`;
	return undefined;
}

/** Foreign text for one line of the head: like `inline`, and `<` spelled, so it cannot close the block. */
export function modelLine(text: string): string {
	return text.replace(UNSAFE_MODEL, spell);
}

/** JSON text for the head: `<`, C1 and separators (which `JSON.stringify` leaves raw) as escapes; the same JSON value. */
export function modelJson(json: string): string {
	return json.replace(UNSAFE_MODEL_JSON, spell);
}

/** `printable` over every string (and object key) of a JSON-like value, for renderers fed by a model or a store. */
export function printableDeep(v: unknown): unknown {
	if (typeof v === "string") return printable(v);
	if (Array.isArray(v)) return v.map(printableDeep);
	if (v !== null && typeof v === "object") {
		const out: JsonObject = {};
		for (const [k, x] of Object.entries(v)) setOwn(out, printable(k), printableDeep(x) as Json);
		return out;
	}
	return v;
}

/** Characters a POSIX shell takes literally in a word: anything else gets the word single-quoted. */
const SHELL_SAFE = /^[\w@%+=:,./-]+$/;

/**
 * `text` as one word of a command we print for the user to paste (`state-flow link <id>`): a
 * project id may hold spaces, `;`, `$(…)` or backticks, and one from a repository's file is
 * untrusted, so anything but plain characters is single-quoted and never runs as shell code.
 */
export function shellWord(text: string): string {
	return SHELL_SAFE.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
