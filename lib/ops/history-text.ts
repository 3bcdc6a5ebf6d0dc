/**
 * History in one vocabulary (issue 27): `state-flow history`, `/state history`, the browser and
 * what an undo lists print a transition with the same words — newest first, local short times
 * (ISO with `--full`), short ids, keys as users type them (`intents.x`, `tactics["a b"]`), and
 * what each did (`set …, delete …`, `undo of …`, `(undone)`), so no two read alike (issue 35).
 * Shared by the CLI and the host, so it lives beside `projectLine`; terminal width rules differ
 * (pi's `visibleWidth` in the host, code points in the CLI, which loads no pi), so they are passed
 * in: `historyText(columns)`. Stored text goes through `core/printable.ts` (`spellId`, `inline`).
 */
import { formatKeySegment } from "../core/locator.js";
import { patchLeaves } from "../core/merge.js";
import { inline, printable, spellId } from "../core/printable.js";
import type { Provenance, TransitionRecord, Who } from "../core/types.js";
import { SECTIONS } from "../core/types.js";
import { formatWho } from "../storage/placement/who.js";

/** Columns every line of history fits in (unless `--full` asks for whole ids). */
export const TEXT_WIDTH = 80;

/** Keys a one-line listing looks at, at most: more never fit a line. */
export const LISTED_KEYS = 64;
/** Columns a clipped first item keeps at least: its verb (`delete `) and the start of its key. */
const MIN_CLIPPED = 12;

/**
 * Characters of a short id, at most: ids come from stores, and two planted ids of a megabyte
 * sharing their start would otherwise cost a comparison per character (issue 24). A UUID is 36.
 */
const MAX_SHORT_ID = 40;

/** Shortest prefix (at least `min` characters, at most `MAX_SHORT_ID`) that tells each id apart from the others. */
export function uniquePrefixes(ids: readonly string[], min = 4): Map<string, string> {
	const distinct = [...new Set(ids)];
	const out = new Map<string, string>();
	for (const id of distinct) {
		let n = Math.min(min, id.length);
		const most = Math.min(id.length, MAX_SHORT_ID);
		while (n < most && distinct.some((o) => o !== id && o.startsWith(id.slice(0, n)))) n++;
		out.set(id, id.slice(0, n));
	}
	return out;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** Local time, as short as the distance from `now` allows: `14:03:09`, `11-28 14:03`, `2025-11-28`. */
export function compactTime(iso: string, now: Date): string {
	const t = new Date(iso);
	if (Number.isNaN(t.getTime())) return iso.slice(0, 16);
	const hms = `${pad2(t.getHours())}:${pad2(t.getMinutes())}:${pad2(t.getSeconds())}`;
	if (t.toDateString() === now.toDateString()) return hms;
	if (t.getFullYear() === now.getFullYear()) return `${pad2(t.getMonth() + 1)}-${pad2(t.getDate())} ${hms.slice(0, 5)}`;
	return `${t.getFullYear()}-${pad2(t.getMonth() + 1)}-${pad2(t.getDate())}`;
}

/**
 * The keys a transition touched, one level into each plane: `tactics.a`, `intents["x y"]`; at
 * most `limit` of them (a one-line listing needs a few, not an import's 200,000: `changeCounts`).
 */
export function changedKeys(record: TransitionRecord, limit = Number.POSITIVE_INFINITY): string[] {
	const keys: string[] = [];
	// Plane order, as `changedLeaves` (a record's own key order is the writer's).
	for (const plane of SECTIONS) {
		const patch = record.patch[plane];
		for (const key in patch ?? {}) {
			if (keys.length >= limit) return keys;
			if (Object.hasOwn(patch as object, key)) keys.push(`${plane}${formatKeySegment(key)}`);
		}
	}
	return keys;
}

/** How many keys, one level into each plane, a transition sets and how many it deletes. */
export function changeCounts(record: TransitionRecord): { set: number; deleted: number } {
	let set = 0;
	let deleted = 0;
	for (const patch of Object.values(record.patch) as (Record<string, unknown> | undefined)[]) {
		for (const key in patch ?? {}) if (Object.hasOwn(patch as object, key)) patch?.[key] === null ? deleted++ : set++;
	}
	return { set, deleted };
}

/**
 * What a transition did to each key, one level into each plane, sets first: `set tactics.a`,
 * `lazy.b`, `delete tactics.c` (a list reads "set tactics.a, lazy.b, delete tactics.c"); at most
 * `limit` keys (`changeCounts` counts them all).
 */
export function changeItems(record: TransitionRecord, limit = Number.POSITIVE_INFINITY): string[] {
	const sets: string[] = [];
	const deletes: string[] = [];
	for (const plane of SECTIONS) {
		const patch = record.patch[plane] as Record<string, unknown> | undefined;
		for (const key in patch ?? {}) {
			if (sets.length + deletes.length >= limit) break;
			if (Object.hasOwn(patch as object, key)) (patch?.[key] === null ? deletes : sets).push(`${plane}${formatKeySegment(key)}`);
		}
	}
	const lead = (words: string[], verb: string) => words.map((k, i) => (i === 0 ? `${verb} ${k}` : k));
	return [...lead(sets, "set"), ...lead(deletes, "delete")];
}

/** Every leaf a transition sets or deletes, as a locator relative to its owner: `intents.x.goal`, `tactics.a (deleted)`. */
export function changedLeaves(record: TransitionRecord): string[] {
	return patchLeaves(record.patch).map((l) => `${l.plane}${l.path.map(formatKeySegment).join("")}${l.deleted ? " (deleted)" : ""}`);
}

/** Options of a history listing. */
export interface HistoryFormat {
	now: Date;
	/** Whole ids, ISO times, full call ids, every changed leaf and the cascades, one field per line. */
	full: boolean;
	width?: number;
	/** Transitions undone now, each with the undo or redo that reverted it (`core/undo.ts` `undoneIn`). */
	undone?: ReadonlyMap<string, string>;
}

/** The mark of a transition undone now, in a one-line listing. */
export const UNDONE = "(undone)";

/** Columns of a short who; when both names do not fit, each keeps at least half, so neither is lost. */
const WHO_WIDTH = 20;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The history vocabulary for one way of counting terminal columns. */
export function historyText(columns: (text: string) => number) {
	/** Cut text to `width` columns with an ellipsis, between whole characters (never inside a pair or cluster). */
	function clipText(text: string, width: number): string {
		if (columns(text) <= width) return text;
		let out = "";
		let used = 0;
		for (const { segment } of graphemes.segment(text)) {
			const w = columns(segment);
			if (used + w > width - 1) break;
			out += segment;
			used += w;
		}
		return `${out}…`;
	}

	function provenanceWords(by: Provenance, full: boolean): string {
		switch (by.kind) {
			case "tool":
				return `model ${full ? by.toolCallId : clipText(by.toolCallId, 12)}`;
			case "command": {
				// An undo, redo or restore names what it reverted: `undo of 3f2a1b2c`.
				const rev = by.reverts;
				if (rev !== undefined && typeof rev.target === "string")
					return `${rev.op} ${rev.op === "restore" ? "to" : "of"} ${printable(full ? rev.target : rev.target.slice(0, 8))}${full && rev.path !== undefined ? ` (${printable(rev.path)})` : ""}`;
				return full ? by.command : clipText(by.command, 24);
			}
			case "import":
				return `import ${full ? by.source : clipText(by.source.split("/").pop() ?? by.source, 20)}`;
			case "system":
				return `system ${clipText(by.reason, full ? 200 : 20)}`;
			case "extension":
				return `extension ${full ? by.extension : clipText(by.extension, 20)}`;
			default:
				return "unknown";
		}
	}

	/** Who made a transition, short: `model call_8xKz…`, `/state undo cwd`, `import x.json`; stored text in it stays on its line (`inline`). */
	const who = (by: Provenance, full = false): string => inline(provenanceWords(by, full));

	/** Which teammate on which machine, short: `alice@laptop` (the host's first label; both whole with `full`). */
	function shortWho(w: Who, full = false): string {
		if (full) return formatWho(w);
		const host = w.host.split(".")[0] || w.host;
		const room = WHO_WIDTH - 1;
		const user = clipText(w.user, Math.max(room - columns(host), Math.ceil(room / 2)));
		return formatWho({ user, host: clipText(host, room - columns(user)) });
	}

	/** Who made a transition and, when recorded, as which teammate on which machine: `model call_8xKz… alice@laptop`. */
	const madeBy = (r: TransitionRecord, full = false): string => (r.who === undefined ? who(r.by, full) : `${who(r.by, full)} ${shortWho(r.who, full)}`);

	/**
	 * As many items as fit `width` columns, then `+N` for the rest (the first one clipped if need be);
	 * `total` counts items not passed (a listing of the first `LISTED_KEYS`), or says what is left
	 * once `n` items are shown (`changeList`).
	 * One pass, stopping once the list is wider than `width`: a transition of many keys costs what fits.
	 */
	function fitList(items: readonly string[], width: number, total: number | ((shown: number) => string) = items.length): string {
		const more = typeof total === "function" ? total : (n: number) => (n < total ? ` +${total - n}` : "");
		let best = 0;
		let used = -2;
		for (let n = 1; n <= items.length; n++) {
			used += 2 + columns(items[n - 1] as string);
			if (used > width) break;
			if (used + more(n).length <= width) best = n;
		}
		if (best > 0) return items.slice(0, best).join(", ") + more(best);
		if (items.length === 0) return "";
		// No item fits: the first clipped, then the rest counted; counted by kind, and too narrow to
		// show the first item's verb, the counts alone (a bare "…" would hide whether it set or deleted).
		if (typeof total === "function" && width - more(1).length < MIN_CLIPPED) return clipText(total(0).trimStart(), width);
		return clipText(items[0] as string, Math.max(1, width - more(1).length)) + more(1);
	}

	/**
	 * What a transition did, key by key (`changeItems`), in `width` columns; what does not fit is
	 * counted in the list's own verbs (`set intents.x +1, delete +2`), so two transitions that did
	 * different things to the same keys never read alike. `shown` spells each item (the browser
	 * makes stored text printable).
	 */
	function changeList(r: TransitionRecord, width: number, shown: (item: string) => string = (item) => item): string {
		const items = changeItems(r, LISTED_KEYS);
		const firstDelete = items.findIndex((item) => item.startsWith("delete "));
		const listedSets = firstDelete < 0 ? items.length : firstDelete;
		const counts = changeCounts(r);
		const more = (n: number): string => {
			const sets = counts.set - Math.min(n, listedSets);
			const deletes = counts.deleted - Math.max(0, n - listedSets);
			if (n === 0) return ` ${[sets > 0 ? `set +${sets}` : "", deletes > 0 ? `delete +${deletes}` : ""].filter((w) => w !== "").join(", ")}`;
			// The count after the last item shown continues its verb; the other verb is named.
			if (n > listedSets) return `${deletes > 0 ? ` +${deletes}` : ""}${sets > 0 ? `, set +${sets}` : ""}`;
			return `${sets > 0 ? ` +${sets}` : ""}${deletes > 0 ? `, delete +${deletes}` : ""}`;
		};
		return fitList(items.map(shown), width, more);
	}

	/**
	 * `<lead>a, b, …` wrapped at `width` under its label, at most `max` lines; what does not fit is
	 * counted (`… and 1,204 more (1,210 changes)`), never one 47 KB line (issue 27). An item longer
	 * than a line is clipped.
	 */
	function labelledList(lead: string, items: readonly string[], max = Number.POSITIVE_INFINITY, width = TEXT_WIDTH): string[] {
		const pad = " ".repeat(columns(lead));
		if (items.length === 0) return [`${lead}(nothing)`];
		const room = width - columns(lead);
		const lines: string[] = [];
		let line = "";
		let shown = 0;
		const more = (n: number) => `… and ${(items.length - n).toLocaleString("en-US")} more (${items.length.toLocaleString("en-US")} changes)`;
		for (const it of items) {
			const item = clipText(it, room - 1);
			const next = line === "" ? item : `${line}, ${item}`;
			if (columns(next) + 1 <= room) {
				line = next;
				shown++;
				continue;
			}
			lines.push(`${line},`);
			if (lines.length === max - 1) {
				// The last line: what still fits, then the count of the rest.
				line = "";
				break;
			}
			line = item;
			shown++;
		}
		if (shown < items.length) {
			let last = "";
			for (let i = shown; i < items.length; i++) {
				const item = clipText(items[i] as string, room - 1);
				const next = last === "" ? item : `${last}, ${item}`;
				if (columns(`${next}, ${more(i + 1)}`) > room) break;
				last = next;
				shown = i + 1;
			}
			line = last === "" ? more(shown) : `${last}, ${more(shown)}`;
		}
		lines.push(line);
		return lines.map((l, i) => (i === 0 ? lead : pad) + l);
	}

	/**
	 * One transition in a listing: `#12 3f2a 14:03:09 model call_8xKz… alice@laptop tactics.a, lazy.b +2`
	 * (fits `width`); in full form, whole id, ISO time and who, every changed leaf wrapped under
	 * its label, and the cascades.
	 */
	function transitionLine(r: TransitionRecord, shortId: string, f: HistoryFormat, indent = "  "): string {
		const width = f.width ?? TEXT_WIDTH;
		const undoneBy = f.undone?.get(r.id);
		if (f.full) {
			const lines = [`${indent}#${r.seq} ${spellId(r.id)}${r.owners.length > 1 ? ` (with ${r.owners.join(", ")})` : ""}`];
			lines.push(`${indent}   at ${r.at} by ${madeBy(r, true)}`);
			if (undoneBy !== undefined) lines.push(`${indent}   undone by ${spellId(undoneBy)}`);
			lines.push(...labelledList(`${indent}   changed: `, changedLeaves(r), Number.POSITIVE_INFINITY, width));
			for (const c of r.cascades) lines.push(`${indent}   cascaded: intents${formatKeySegment(c.intent)} -> ${spellId(c.targets.join(", "))}`);
			return lines.join("\n");
		}
		const head = `${indent}#${r.seq} ${spellId(shortId)} ${compactTime(r.at, f.now)} ${undoneBy !== undefined ? `${UNDONE} ` : ""}${madeBy(r)}`;
		// Long names (a command, who) can leave less than the 8 columns the keys keep: the line is cut at the width.
		return clipText(`${head} ${changeList(r, Math.max(8, width - columns(head) - 1))}`, width);
	}

	/** Words cut into lines of at most `width` columns (a longer word keeps its own line). */
	function wrapWords(text: string, width: number): string[] {
		const lines: string[] = [];
		let line = "";
		for (const word of text.split(/\s+/).filter((w) => w !== "")) {
			if (line !== "" && columns(line) + 1 + columns(word) > width) {
				lines.push(line);
				line = word;
			} else line = line === "" ? word : `${line} ${word}`;
		}
		if (line !== "") lines.push(line);
		return lines;
	}

	/**
	 * A line laid out in lines of at most `width` columns, or itself when it fits. Broken between
	 * words, every later line under the line's own indentation and two more (so wrapped JSON stays
	 * under the member it continues, and a message's lines read as one); spacing inside is kept. A
	 * `quoted command`, a path and a URL are never broken (copied whole: only such a word longer
	 * than a line passes the width); any other word longer than a line (a hash, a value without
	 * spaces) is broken between characters. One pass: a value may be a megabyte.
	 */
	function fitLine(line: string, width: number): string[] {
		if (line.length <= width && columns(line) <= width) return [line];
		const lead = /^ */.exec(line)?.[0] ?? "";
		const hang = " ".repeat(Math.min(lead.length + 2, Math.floor(width / 2)));
		const out: string[] = [];
		let cur = lead;
		let used = lead.length;
		let bare = true; // `cur` holds only indentation
		const breakLine = () => {
			out.push(cur.trimEnd());
			cur = hang;
			used = hang.length;
			bare = true;
		};
		for (const { word, gap } of lineWords(line.slice(lead.length))) {
			const w = columns(word);
			if (!bare && used + w > width) breakLine();
			if (used + w <= width || unbroken(word)) {
				cur += word;
				used += w;
			} else {
				for (const { segment } of graphemes.segment(word)) {
					const g = columns(segment);
					if (!bare && used + g > width) breakLine();
					cur += segment;
					used += g;
					bare = false;
				}
			}
			bare = false;
			cur += gap;
			used += gap.length;
		}
		out.push(cur);
		return out;
	}

	return { clipText, who, shortWho, madeBy, fitList, changeList, labelledList, transitionLine, wrapWords, fitLine };
}

/**
 * The words of a line with the spacing after each; a span in backticks (`state-flow doctor
 * --salvage cwd`) is one word, so a line never breaks inside a command to copy (an unclosed
 * backtick: its words one by one).
 */
function lineWords(text: string): Array<{ word: string; gap: string }> {
	const raw = [...text.matchAll(/(\S+)(\s*)/g)].map((m) => ({ word: m[1] as string, gap: m[2] as string }));
	const out: Array<{ word: string; gap: string }> = [];
	for (let i = 0; i < raw.length; i++) {
		const first = raw[i] as { word: string; gap: string };
		if (ticks(first.word) % 2 === 0) {
			out.push(first);
			continue;
		}
		let end = i + 1;
		while (end < raw.length && ticks((raw[end] as { word: string }).word) % 2 === 0) end++;
		if (end >= raw.length) {
			out.push(first);
			continue;
		}
		const span = raw.slice(i, end + 1);
		out.push({ word: span.map((x, j) => x.word + (j < span.length - 1 ? x.gap : "")).join(""), gap: (raw[end] as { gap: string }).gap });
		i = end;
	}
	return out;
}

const ticks = (word: string): number => word.split("`").length - 1;

/** A word a line never breaks inside: a quoted command, a path (`/…`, `~/…`, `./…`) or a URL (anything with `://`), copied whole. */
const unbroken = (word: string): boolean => /^[("'[]*(`|[~.]{0,2}\/)/.test(word) || word.includes("://");

/** The history vocabulary for one way of counting columns. */
export type HistoryText = ReturnType<typeof historyText>;
