/**
 * Text State Flow shows on a terminal (pi's TUI, the CLI's output) comes from stores, model
 * arguments and imported files — a repository may plant any of them. A control character in
 * it could move the cursor, rewrite the screen, set the window title or the clipboard (OSC 52),
 * and bidirectional overrides can make text read otherwise than it is. Each such character is
 * shown as its JSON escape (`\u001b`); inside a JSON string that escape is the same character,
 * so JSON output keeps its meaning. Line feeds, tabs and CRLF line ends stay (a lone carriage
 * return, which rewrites a line, does not).
 */

import { setOwn } from "./json.js";
import type { Json, JsonObject } from "./types.js";

/** Bidirectional marks, embeddings, overrides and isolates: text that holds them may read otherwise than it is. */
const BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069";

const BIDI_TEST = new RegExp(`[${BIDI}]`);

/** Whether `text` holds a bidi control (`printable` spells them out; a project id refuses them). */
export function hasBidiControl(text: string): boolean {
	return BIDI_TEST.test(text);
}

// C0 controls but tab and line feed, DEL, C1, the bidi controls, and a carriage return that ends no line.
const UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${BIDI}]|\\r(?!\\n)`, "g");

/** `text` with every terminal control and bidi override spelled as its `\uXXXX` escape. */
export function printable(text: string): string {
	return text.replace(UNSAFE, (c) => `\\u${(c.charCodeAt(0) as number).toString(16).padStart(4, "0")}`);
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
