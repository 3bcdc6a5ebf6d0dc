/**
 * Rendering bounded by the screen, not the value (docs/security.md, issue 24). pi-tui's word
 * wrap takes time worse than quadratic in the length of a run without a space (a 60 KB value took
 * 1.3 s, 1 MB minutes, with pi's event loop blocked), and linear time in all the text it is given.
 * So nothing State Flow hands it is more than the screen can show: `fitScreen` keeps at most
 * `rows` rows of `width` columns, breaks every run longer than the width (as the wrap would, a
 * character at a time), and says what it left out. Its cost is bounded by `rows × width` plus one
 * pass counting what is left. Every `Text` State Flow gives pi-tui is a `ScreenText`.
 */
import { type Component, Text } from "@mariozechner/pi-tui";

/** What `fitScreen` kept, and what it left out (absent when nothing was). */
export interface Fitted {
	text: string;
	left?: { lines: number; chars: number };
}

/** `ESC [ … final`: a colour of pi's theme (stored text never holds a raw ESC: `printable`). */
function csiEnd(text: string, at: number): number {
	let i = at + 2;
	while (i < text.length) {
		const c = text.charCodeAt(i);
		if (c >= 0x40 && c <= 0x7e) return i + 1;
		i++;
	}
	return i;
}

/**
 * Columns a code unit is counted as: printable ASCII one; anything else two (a wide character's
 * width; a combining mark or a zero-width character is counted as two too, so hostile text of
 * invisible characters is bounded like any other). A surrogate pair counts two in all.
 */
function cost(c: number): number {
	if (c >= 0x20 && c <= 0x7e) return 1;
	if (c >= 0xdc00 && c <= 0xdfff) return 0;
	return 2;
}

/**
 * At most `rows` rows of `width` columns of `text` (rows counted as a hard wrap at the width;
 * word wrap may use up to twice as many), with a line break put into each run without a space
 * when it reaches the width. Theme colours (CSI sequences) pass whole and count nothing.
 */
export function fitScreen(text: string, width: number, rows: number): Fitted {
	const w = Math.max(1, Math.floor(width));
	const budget = Math.max(1, Math.floor(rows));
	let out = "";
	let from = 0;
	let row = 1;
	let col = 0;
	let run = 0;
	let i = 0;
	for (; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c === 0x1b && text.charCodeAt(i + 1) === 0x5b) {
			i = csiEnd(text, i) - 1;
			continue;
		}
		if (c === 0x0a) {
			if (row === budget) break;
			row++;
			col = run = 0;
			continue;
		}
		const n = c === 0x09 ? 3 : cost(c);
		if (c === 0x20 || c === 0x09) run = 0;
		else if (run + n > w && run > 0) {
			// The wrap would break this run a character at a time anyway; a line break here keeps its input short.
			if (row === budget) break;
			out += `${text.slice(from, i)}\n`;
			from = i;
			row++;
			col = run = 0;
		}
		if (col + n > w && col > 0) {
			if (row === budget) break;
			row++;
			col = 0;
		}
		col += n;
		if (c !== 0x20 && c !== 0x09) run += n;
	}
	// Never end between the two halves of a pair.
	if (i < text.length && i > from && isLow(text.charCodeAt(i))) i--;
	out += text.slice(from, i);
	if (i >= text.length) return { text: out };
	return { text: out, left: leftOut(text, i) };
}

/**
 * Lines begun and characters in `text` from `at` on: line ends found with `indexOf` and colours
 * subtracted by their sequences, never a pass per character (the rest can be megabytes).
 */
function leftOut(text: string, at: number): { lines: number; chars: number } {
	let lines = text.charCodeAt(at) === 0x0a ? 0 : 1;
	let newlines = 0;
	for (let i = text.indexOf("\n", at); i >= 0; i = text.indexOf("\n", i + 1)) newlines++;
	lines += newlines;
	let chars = text.length - at - newlines;
	for (let i = text.indexOf("\x1b[", at); i >= 0; i = text.indexOf("\x1b[", i + 1)) chars -= csiEnd(text, i) - i;
	return { lines, chars };
}

/** Lines and characters of a pre-cut text's tail (`cutText`), to add to a view's marker. */
export type Left = NonNullable<Fitted["left"]>;

/**
 * `text` cut to `max` code units before the work that is linear in it (`printable`, colouring):
 * the cut and what it left out, for the view's marker.
 */
export function cutText(text: string, max: number): { text: string; left?: Left } {
	if (text.length <= max) return { text };
	let end = max;
	if (isLow(text.charCodeAt(end))) end--;
	return { text: text.slice(0, end), left: leftOut(text, end) };
}

/**
 * Every string of a JSON-like value longer than `max` code units cut to `max`, marked inside it
 * with how much was left out (`… [12,345 more characters]`), so a view of a structure shows it
 * with its long values cut where they stand. Keys are cut likewise.
 */
export function clipDeep(v: unknown, max: number): unknown {
	if (typeof v === "string")
		return v.length <= max ? v : `${v.slice(0, isLow(v.charCodeAt(max)) ? max - 1 : max)}… [${counted(v.length - max, "more character")}]`;
	if (Array.isArray(v)) return v.map((x) => clipDeep(x, max));
	if (v !== null && typeof v === "object") {
		const out: Record<string, unknown> = {};
		for (const [k, x] of Object.entries(v))
			Object.defineProperty(out, clipDeep(k, max) as string, { value: clipDeep(x, max), enumerable: true, writable: true, configurable: true });
		return out;
	}
	return v;
}

function isLow(c: number): boolean {
	return c >= 0xdc00 && c <= 0xdfff;
}

const counted = (n: number, what: string) => `${n.toLocaleString("en-US")} ${what}${n === 1 ? "" : "s"}`;

/** `… 3,911,020 more characters in 1,204 lines not shown: <how>`. */
export function leftMarker(left: NonNullable<Fitted["left"]>, how: string): string {
	return `… ${counted(left.chars, "more character")} in ${counted(left.lines, "line")} not shown${how === "" ? "" : `: ${how}`}`;
}

/** Columns of the widest screen a view is cut for before its width is known (`clipDeep`, `cutText`). */
export const WIDEST = 500;

/** Where the rest of a cut view can be read. */
export const READ_WHOLE = "/state browse pages through any value (v)";

/** Rows of `NOTICE_WIDTH` columns a notification keeps (pi draws it at whatever width it has). */
export const NOTICE_ROWS = 20;
export const NOTICE_WIDTH = 120;

/**
 * A notification's text bounded like a view (pi wraps notifications itself, at its width):
 * cut first, then made `show`able (`printable`), then fitted; the marker counts both cuts.
 */
export function boundNotice(text: string, show: (s: string) => string = (s) => s): string {
	const cut = cutText(text, NOTICE_ROWS * NOTICE_WIDTH);
	const fitted = fitScreen(show(cut.text), NOTICE_WIDTH, NOTICE_ROWS);
	const left = addLeft(fitted.left, cut.left);
	return left === undefined ? fitted.text : `${fitted.text}\n${leftMarker(left, "")}`;
}

/** What a view left out and what was cut before it, together (a line cut in two is counted once). */
function addLeft(a: Left | undefined, b: Left | undefined): Left | undefined {
	if (a === undefined || b === undefined) return a ?? b;
	return { lines: a.lines + b.lines - 1, chars: a.chars + b.chars };
}

/** How a `ScreenText` says what it left out. */
export interface ScreenTextOptions {
	paddingX?: number;
	paddingY?: number;
	/** Colours the marker (a theme's dim). */
	mark?: (text: string) => string;
	/** Where to read the rest (default `READ_WHOLE`). */
	how?: string;
	/** What was cut off the text's end before it was given (`cutText`): counted in the marker. */
	more?: Left;
}

/**
 * pi-tui's `Text`, given at most `rows` rows of the width it is drawn at (a marker says what was
 * left out); drawn once per width.
 */
export class ScreenText implements Component {
	#cache: { width: number; lines: string[] } | undefined;

	constructor(
		readonly text: string,
		readonly rows: number,
		private readonly options: ScreenTextOptions = {},
	) {}

	render(width: number): string[] {
		if (this.#cache?.width === width) return this.#cache.lines;
		const { paddingX = 0, paddingY = 0, mark = (s: string) => s, how = READ_WHOLE, more } = this.options;
		const fitted = fitScreen(this.text, width - paddingX * 2, this.rows);
		const left = addLeft(fitted.left, more);
		// A reset first: a colour cut off in the middle does not run into the marker.
		const shown = left === undefined ? fitted.text : `${fitted.text}\x1b[0m\n${mark(leftMarker(left, how))}`;
		const lines = new Text(shown, paddingX, paddingY).render(width);
		this.#cache = { width, lines };
		return lines;
	}

	invalidate(): void {
		this.#cache = undefined;
	}
}
