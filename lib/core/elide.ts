/**
 * Long spelled text shown by its start and its end (issue 33): a locator is built from stored
 * keys, and keys can be any length — 60 keys of 1,000 characters make a 60,000-character
 * locator that one search line, a head notice or a refusal would otherwise carry whole. Where a
 * locator (or a snippet) is shown, it is cut in the middle to a bound, with a marker saying how
 * much was left out, so it still reads where it starts (owner, plane, first keys) and where it
 * ends (the member itself). Pure, and safe for JSON text: a cut never splits a surrogate pair or
 * an escape (`\u001b`, `\"`), so the two parts still read as what they are.
 */

/** Characters a locator takes where it is shown: search lines, the head, tool results, refusals. */
export const MAX_SHOWN_LOCATOR = 160;

/** Share of the kept characters given to the start (the rest to the end). */
const START_SHARE = 0.6;

/** What stands for the left-out middle: `…(58,012 characters left out)…`. */
function marker(n: number): string {
	return `…(${n.toLocaleString("en-US")} characters left out)…`;
}

function isLowSurrogate(c: number): boolean {
	return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * The escape (`\uXXXX` or `\x`) that `pos` falls strictly inside, as [start, end), or undefined.
 * A backslash starts an escape when the run of backslashes before it has even length.
 */
function escapeAround(text: string, pos: number): [number, number] | undefined {
	for (let i = pos - 1; i >= 0 && i >= pos - 5; i--) {
		if (text.charCodeAt(i) !== 92) continue;
		let run = i;
		while (run > 0 && text.charCodeAt(run - 1) === 92) run--;
		if ((i - run) % 2 !== 0) continue;
		const end = i + (text.charCodeAt(i + 1) === 117 ? 6 : 2);
		return pos < end ? [i, end] : undefined;
	}
	return undefined;
}

/**
 * `text` whole when it has at most `max` characters, else its start and end around a marker;
 * never longer than `max` when `max` leaves room for the marker (any bound of 64 or more does).
 */
export function elideMiddle(text: string, max: number): string {
	if (text.length <= max) return text;
	const room = Math.max(0, max - marker(text.length).length);
	let a = Math.ceil(room * START_SHARE);
	let b = text.length - (room - a);
	if (a > 0 && isLowSurrogate(text.charCodeAt(a))) a--;
	a = escapeAround(text, a)?.[0] ?? a;
	if (b < text.length && isLowSurrogate(text.charCodeAt(b))) b++;
	b = Math.min(text.length, escapeAround(text, b)?.[1] ?? b);
	return `${text.slice(0, a)}${marker(b - a)}${text.slice(b)}`;
}

/** A locator's text as it is shown (`elideMiddle` to `MAX_SHOWN_LOCATOR`). */
export function shownLocator(text: string): string {
	return elideMiddle(text, MAX_SHOWN_LOCATOR);
}
