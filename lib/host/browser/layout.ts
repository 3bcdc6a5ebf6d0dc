/**
 * How the browser fills the screen (issue 27): a body sized from the terminal's height so the
 * title, project line, tabs and owner row are always drawn and the height never changes as the
 * selection moves or the view switches; the keys each view lists under it.
 */
import { columns } from "../commands/status.js";

/** Lines an unreadable owner's reason may take in the browser. */
export const FAILURE_ROWS = 8;
/** Rows of a list shown at once; the view scrolls to keep the selection visible. */
export const LIST_ROWS = 12;
/** Diff lines shown under the timeline. */
export const DIFF_ROWS = 8;
/**
 * Rows of the body (between the two rules) at most: the list, the selected transition's line, its
 * diff and the `… more` line. On a shorter screen the body shrinks to fit (`bodyRows`).
 */
export const MAX_BODY = LIST_ROWS + 1 + DIFF_ROWS + 1;
/** Rows pi keeps below a custom component (its footer and the State Flow status), left free. */
export const PI_ROWS = 4;
/** The fewest body rows drawn, however short the screen (a list of three and a one-line diff). */
const MIN_BODY = 6;

/** Rows of the body for a screen of `rows` (unknown: the largest), the header and the bottom taken out. */
export function bodyRows(rows: number | undefined, chrome: number): number {
	if (rows === undefined || !Number.isFinite(rows) || rows <= 0) return MAX_BODY;
	return Math.max(MIN_BODY, Math.min(MAX_BODY, rows - PI_ROWS - chrome));
}

/** The keys each view lists under it. */
export const KEYS = {
	detail: ["↑↓ scroll", "pgup/pgdn page", "home/end", "v/esc back"],
	typing: ["type a key or text", "enter find", "esc cancel"],
	state: ["↑↓ move", "enter open/close", "v view", "e edit", "d delete", "/ search", "←→ owner", "w wanted", "m mode", "tab history", "esc close"],
	history: ["↑↓ move", "v view", "u undo", "r redo", "/ search", "f full ids", "←→ owner", "w wanted", "m mode", "tab state", "esc close"],
};

/** Keys joined by ` · ` on as many lines of `width` as they need. */
export function keyLines(keys: readonly string[], width: number): string[] {
	const lines: string[] = [];
	for (const key of keys) {
		const last = lines.at(-1);
		if (last !== undefined && columns(last) + 3 + columns(key) <= width) lines[lines.length - 1] = `${last} · ${key}`;
		else lines.push(key);
	}
	return lines;
}

/** Lines the keys take at `width` in the view that needs most, so switching views keeps the height. */
export function helpRows(width: number): number {
	return Math.max(...Object.values(KEYS).map((k) => keyLines(k, width).length));
}

/** Rows of the history list for a body of `body` rows; the rest is the selected transition's line, its diff and `… more`. */
export function listRowsOf(body: number): number {
	return Math.max(3, Math.round((body * LIST_ROWS) / MAX_BODY));
}
