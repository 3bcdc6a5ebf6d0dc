/**
 * The browser's detail pane (`v`) pages through a value of any size up to the owner's limit.
 * Wrapping a whole value once per width cost seconds to minutes (pi-tui's wrap is worse than
 * quadratic in a run without a space), so only what a page shows is wrapped: each source line is
 * cut into slices of `SLICE` code units (a line longer than that breaks at each slice's end), a
 * slice is wrapped when a page reaches it (its runs broken by `fitScreen` first, so the wrap is
 * linear) and kept for that width. A slice is made `printable` (and its tabs two spaces: the pane
 * counts columns, a terminal's tab stops would not) when it is wrapped. Opening, scrolling and
 * drawing cost a page, not the value.
 */
import { wrapTextWithAnsi } from "@mariozechner/pi-tui";
import { printable } from "../../core/printable.js";
import { fitScreen } from "../screen-text.js";

/** Code units of a source line wrapped at once. */
export const SLICE = 2048;
/** Slices kept wrapped (for the width last drawn); more clears them. */
const KEPT = 512;

interface Slice {
	/** Index of the source line it is part of. */
	line: number;
	/** Code units before it in the whole text (line ends counted). */
	offset: number;
	text: string;
}

/** One row of a page: the source line it belongs to (for its colour) and its text. */
export interface PageRow {
	line: number;
	text: string;
	/** The first row of its source line (a wrapped line's later rows are not: the pane marks them with the line's sign). */
	lead: boolean;
}

/** A page: its rows, the source lines it spans (1-based), and how far into the text it ends. */
export interface Page {
	rows: PageRow[];
	first: number;
	last: number;
	lines: number;
	/** Everything fits on this page. */
	whole: boolean;
	/** Per cent of the text up to the page's end. */
	percent: number;
}

export class DetailPager {
	readonly #slices: Slice[] = [];
	readonly #lines: number;
	readonly #length: number;
	#top = { slice: 0, row: 0 };
	#width = 80;
	#wrapped = new Map<number, string[]>();

	constructor(lines: readonly string[]) {
		let offset = 0;
		(lines.length === 0 ? [""] : lines).forEach((text, line) => {
			let at = 0;
			do {
				let end = Math.min(text.length, at + SLICE);
				// Never between the halves of a pair.
				if (end < text.length && end > at + 1 && isLowSurrogate(text.charCodeAt(end))) end--;
				this.#slices.push({ line, offset: offset + at, text: text.slice(at, end) });
				at = end;
			} while (at < text.length);
			offset += text.length + 1;
		});
		this.#lines = Math.max(1, lines.length);
		this.#length = Math.max(1, offset - 1);
	}

	/** The rows of slice `i` at the present width. */
	#rowsOf(i: number): string[] {
		let rows = this.#wrapped.get(i);
		if (rows === undefined) {
			const text = printable(this.#slices[i]?.text ?? "").replace(/\t/g, "  ");
			rows = wrapTextWithAnsi(fitScreen(text, this.#width, SLICE * 12).text, this.#width);
			if (this.#wrapped.size >= KEPT) this.#wrapped.clear();
			this.#wrapped.set(i, rows);
		}
		return rows;
	}

	#setWidth(width: number): void {
		const w = Math.max(1, width);
		if (w === this.#width) return;
		this.#width = w;
		this.#wrapped.clear();
		this.#top.row = 0;
	}

	/** Move the top `n` rows down (up when negative), within the text. */
	scroll(n: number): void {
		for (; n > 0; n--) {
			if (this.#top.row + 1 < this.#rowsOf(this.#top.slice).length) this.#top.row++;
			else if (this.#top.slice + 1 < this.#slices.length) this.#top = { slice: this.#top.slice + 1, row: 0 };
			else break;
		}
		for (; n < 0; n++) {
			if (this.#top.row > 0) this.#top.row--;
			else if (this.#top.slice > 0) this.#top = { slice: this.#top.slice - 1, row: this.#rowsOf(this.#top.slice - 1).length - 1 };
			else break;
		}
	}

	home(): void {
		this.#top = { slice: 0, row: 0 };
	}

	/** To the end: the last page is filled when the page is drawn. */
	end(): void {
		const last = this.#slices.length - 1;
		this.#top = { slice: last, row: Math.max(0, this.#rowsOf(last).length - 1) };
	}

	/** At most `count` rows of `width` columns from the top; near the end the top moves back to fill the page. */
	page(width: number, count: number): Page {
		this.#setWidth(width);
		let rows = this.#collect(count);
		if (rows.length < count && (this.#top.slice > 0 || this.#top.row > 0)) {
			this.scroll(rows.length - count);
			rows = this.#collect(count);
		}
		const lastSlice = rows.at(-1)?.slice ?? 0;
		const s = this.#slices[lastSlice] as Slice;
		const atEnd = lastSlice === this.#slices.length - 1 && rows.at(-1)?.row === this.#rowsOf(lastSlice).length - 1;
		const whole = atEnd && this.#top.slice === 0 && this.#top.row === 0;
		return {
			rows: rows.map((r) => ({
				line: this.#slices[r.slice]?.line ?? 0,
				text: r.text,
				lead: r.row === 0 && this.#slices[r.slice - 1]?.line !== this.#slices[r.slice]?.line,
			})),
			first: (this.#slices[this.#top.slice]?.line ?? 0) + 1,
			last: s.line + 1,
			lines: this.#lines,
			whole,
			percent: atEnd ? 100 : Math.min(99, Math.floor((100 * (s.offset + s.text.length)) / this.#length)),
		};
	}

	#collect(count: number): Array<{ slice: number; row: number; text: string }> {
		const out: Array<{ slice: number; row: number; text: string }> = [];
		let { slice, row } = this.#top;
		while (out.length < count && slice < this.#slices.length) {
			const rows = this.#rowsOf(slice);
			for (; row < rows.length && out.length < count; row++) out.push({ slice, row, text: rows[row] as string });
			if (row >= rows.length) {
				slice++;
				row = 0;
			}
		}
		return out;
	}
}

function isLowSurrogate(c: number): boolean {
	return c >= 0xdc00 && c <= 0xdfff;
}
