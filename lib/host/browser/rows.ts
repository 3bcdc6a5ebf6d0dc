/**
 * What the `/state` browser shows, as pure functions of stored histories: each plane as a
 * collapsible tree with sizes (the lazy plane as a catalog of keys with their first line), the
 * history as a timeline, and the diff of one transition. The component (`browser.ts`) only
 * lays these rows out and handles keys. Stored text reaches the screen `printable`: a planted
 * store never sends terminal controls.
 */
import { jsonUtf8Bytes } from "../../core/json.js";
import { formatKeySegment } from "../../core/locator.js";
import { patchLeaves } from "../../core/merge.js";
import { printable, spellId } from "../../core/printable.js";
import type { Json, Owner, OwnerHistory, OwnerState, PlanePatch, Result, TransitionRecord } from "../../core/types.js";
import { ROOTS, SECTIONS } from "../../core/types.js";
import { formatSize } from "../../core/size.js";
import { clipText, columns, madeBy } from "../commands/status.js";

/** One owner as the browser sees it. */
export interface OwnerView {
	owner: Owner;
	wanted: boolean;
	/** The history, or why it cannot be read. */
	history: Result<OwnerHistory>;
}

/** One visible row of a state tree. */
export interface TreeRow {
	/** `[plane, key, …]`; its JSON is the expansion key. */
	path: string[];
	depth: number;
	/** Plane name, or the key as written in a locator (`.a`, `["x y"]`, `[0]`). */
	label: string;
	/** Has children that can be shown. */
	branch: boolean;
	expanded: boolean;
	bytes: number;
	/** Children count for a branch, a short value preview for a leaf. */
	note: string;
}

/** UTF-8 bytes of a stored value as JSON (sizes of nested objects are kept: every row of a tree does not measure its subtree again). */
export function bytesOf(v: Json | undefined): number {
	return v === undefined ? 0 : jsonUtf8Bytes(v);
}

/**
 * A one-line preview of a value: strings without quotes when they are one line. Bounded by the
 * width, not the value: only the first `4 × width + 4` code units of a string, or of a value's
 * JSON (`jsonHead`), are looked at (a row of a state at the size limit draws in microseconds).
 */
export function preview(v: Json, width = 48): string {
	const max = width * 4 + 4;
	if (typeof v !== "string") return clipText(printable(jsonHead(v, max)), width);
	const nl = v.indexOf("\n");
	const line = nl < 0 ? v : v.slice(0, nl);
	const first = printable(line.length > max ? line.slice(0, max) : line);
	// A clipped line already ends in "…"; a whole first line of a longer text gets one.
	return columns(first) > width ? clipText(first, width) : `${first}${line.length > max || nl >= 0 ? "…" : ""}`;
}

/** The first `max` code units (or a few more) of a value's JSON text, without writing the rest. */
export function jsonHead(v: Json, max: number): string {
	let out = "";
	const put = (s: string): boolean => {
		out += s;
		return out.length < max;
	};
	const walk = (x: Json): boolean => {
		if (typeof x === "string") return put(JSON.stringify(x.length > max ? x.slice(0, max) : x));
		if (x === null || typeof x !== "object") return put(JSON.stringify(x));
		if (Array.isArray(x)) {
			if (!put("[")) return false;
			for (let i = 0; i < x.length; i++) if ((i > 0 && !put(",")) || !walk(x[i] as Json)) return false;
			return put("]");
		}
		if (!put("{")) return false;
		let first = true;
		for (const k in x) {
			if (!Object.hasOwn(x, k)) continue;
			if ((!first && !put(",")) || !put(`${JSON.stringify(k.length > max ? k.slice(0, max) : k)}:`) || !walk(x[k] as Json)) return false;
			first = false;
		}
		return put("}");
	};
	walk(v);
	return out.length > max ? out.slice(0, max) : out;
}

function children(v: Json): Array<[string, Json]> {
	if (Array.isArray(v)) return v.map((x, i) => [String(i), x]);
	if (v !== null && typeof v === "object") return Object.entries(v);
	return [];
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

export const pathKey = (path: readonly string[]): string => JSON.stringify(path);

function keyLabel(parent: Json, key: string): string {
	return Array.isArray(parent) ? `[${key}]` : printable(formatKeySegment(key).replace(/^\./, ""));
}

/**
 * The visible rows of an owner's state: every plane, and below each expanded node its
 * children. A lazy entry is a leaf whose note is the first line of its value (the catalog),
 * unless expanded.
 */
export function treeRows(state: OwnerState, expanded: ReadonlySet<string>): TreeRow[] {
	const rows: TreeRow[] = [];
	const walk = (value: Json, path: string[], depth: number, label: string) => {
		const kids = children(value);
		const open = expanded.has(pathKey(path));
		const isBranch = kids.length > 0;
		const catalog = path[0] === "lazy" && path.length === 2;
		const note = isBranch && !(catalog && !open) ? count(kids.length, Array.isArray(value) ? "item" : "key") : preview(value);
		rows.push({ path, depth, label, branch: isBranch, expanded: open && isBranch, bytes: bytesOf(value), note });
		if (open) for (const [k, v] of kids) walk(v, [...path, k], depth + 1, keyLabel(value, k));
	};
	// The registered roots' namespace (docs/spec.md §12) follows the planes once a root was written.
	for (const plane of SECTIONS) {
		if (plane === ROOTS && state.roots === undefined) continue;
		const value = (plane === ROOTS ? state.roots : state[plane]) as Json;
		const kids = children(value);
		const open = expanded.has(pathKey([plane]));
		rows.push({
			path: [plane],
			depth: 0,
			label: plane === "lazy" ? "lazy (catalog)" : plane === ROOTS ? "roots (of extensions)" : plane,
			branch: kids.length > 0,
			expanded: open && kids.length > 0,
			bytes: bytesOf(value),
			note: count(kids.length, "key"),
		});
		if (open) for (const [k, v] of kids) walk(v, [plane, k], 1, keyLabel(value, k));
	}
	return rows;
}

/** Nodes a search looks at, at most: a state at the size limit is searched in milliseconds. */
export const SEARCH_NODES = 200_000;

/**
 * Where `query` occurs in an owner's state, in the order the tree shows it: every node whose
 * key, or whose text (a string value), contains it, ignoring case. A path is `[plane, key, …]`
 * as in `TreeRow`. Stops after `SEARCH_NODES` nodes (`more` then says the rest was not searched).
 */
export function searchPaths(state: OwnerState, query: string): { paths: string[][]; more: boolean } {
	const needle = query.toLowerCase();
	const paths: string[][] = [];
	let nodes = 0;
	const walk = (value: Json, path: string[]): boolean => {
		if (++nodes > SEARCH_NODES) return false;
		const key = path[path.length - 1] ?? "";
		if (path.length > 1 && (key.toLowerCase().includes(needle) || (typeof value === "string" && value.toLowerCase().includes(needle)))) paths.push(path);
		for (const [k, v] of children(value)) if (!walk(v, [...path, k])) return false;
		return true;
	};
	for (const plane of SECTIONS) {
		const value = (plane === ROOTS ? state.roots : state[plane]) as Json | undefined;
		if (value !== undefined && !walk(value, [plane])) return { paths, more: true };
	}
	return { paths, more: false };
}

/**
 * The transitions of a timeline (their indexes, in its order) whose id, author, written paths,
 * values before or after, or cascades hold `query`, ignoring case: what the history tab's `/`
 * finds. Whole values are searched, not their previews.
 */
export function searchTransitions(records: readonly TransitionRecord[], query: string): number[] {
	const needle = query.toLowerCase();
	const has = (text: string) => text.toLowerCase().includes(needle);
	const holds = (v: Json | undefined) => v !== undefined && v !== null && has(typeof v === "string" ? v : JSON.stringify(v));
	const hits: number[] = [];
	records.forEach((r, i) => {
		const found =
			has(r.id) || has(madeBy(r, true)) || leafChanges(r).some((c) => has(c.where) || holds(c.before) || holds(c.after)) || cascadeTexts(r).some(has);
		if (found) hits.push(i);
	});
	return hits;
}

/** The timeline of an owner: retained transitions, newest first. */
export function timeline(h: OwnerHistory): TransitionRecord[] {
	return [...h.tail].reverse();
}

/** One line of a diff: `-` before, `+` after, `!` cascade. */
export interface DiffLine {
	sign: "-" | "+" | "!";
	text: string;
}

function valueAt(patch: PlanePatch, plane: string, path: readonly string[]): Json | undefined {
	let v: Json | undefined = (patch as Record<string, Json | undefined>)[plane];
	for (const k of path) {
		if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
		v = (v as Record<string, Json>)[k];
	}
	return v;
}

/**
 * What one transition changed in an owner: for each written path its value before (from the
 * stored inverse) and after; a deletion has no after line. With a `limit`, only that many lines
 * are written out (a transition of 200,000 keys took seconds per drawing); `total` counts all.
 */
export function diffLines(record: TransitionRecord, width = 72, limit = Number.POSITIVE_INFINITY): DiffLine[] & { total: number } {
	const out: DiffLine[] = [];
	let total = 0;
	for (const leaf of patchLeaves(record.patch)) {
		const before = valueAt(record.undo, leaf.plane, leaf.path);
		const after = valueAt(record.patch, leaf.plane, leaf.path);
		const had = before !== undefined && before !== null;
		const gone = after === undefined || after === null;
		const lines = gone || !had ? 1 : 2;
		total += lines;
		if (total - lines >= limit) continue;
		const where = whereOf(leaf);
		const room = Math.max(8, width - where.length - 4);
		if (gone) {
			out.push({ sign: "-", text: had ? `${where}: ${preview(before, room - 10)} (deleted)` : `${where} (deleted)` });
			continue;
		}
		if (had) out.push({ sign: "-", text: `${where}: ${preview(before, room)}` });
		out.push({ sign: "+", text: `${where}: ${preview(after, room)}` });
	}
	for (const text of cascadeTexts(record)) {
		if (total++ < limit) out.push({ sign: "!", text });
	}
	return Object.assign(out, { total });
}

/** A written path as a locator, printable. */
function whereOf(leaf: { plane: string; path: readonly string[] }): string {
	return printable(`${leaf.plane}${leaf.path.map((k) => formatKeySegment(k)).join("")}`);
}

/** Each path a transition wrote: where (as a locator, printable), its value before (from the stored inverse) and after. */
function leafChanges(record: TransitionRecord): Array<{ where: string; before: Json | undefined; after: Json | undefined }> {
	return patchLeaves(record.patch).map((leaf) => ({
		where: whereOf(leaf),
		before: valueAt(record.undo, leaf.plane, leaf.path),
		after: valueAt(record.patch, leaf.plane, leaf.path),
	}));
}

/** What each cascade of a transition did, in words. */
function cascadeTexts(record: TransitionRecord): string[] {
	return record.cascades.map((c) => printable(`cascade: intents${formatKeySegment(c.intent)} took ${c.targets.length} target(s)`));
}

/** A value or a transition shown whole in the browser's detail pane: a title and its lines (not yet wrapped, not yet `printable`). */
export interface Detail {
	title: string;
	lines: string[];
}

/**
 * A value as the detail pane reads it: a string as its text (a lazy note reads as written),
 * anything else as indented JSON, in lines. Not yet `printable`, and tabs not yet spaces: the
 * pane does both to the part it shows (`DetailPager`), so opening a value costs no pass over it
 * but the split.
 */
function wholeText(v: Json): string[] {
	return (typeof v === "string" ? v : JSON.stringify(v, null, 2)).split(/\r?\n/);
}

/** The whole value at a tree row's path (`[plane, key, …]`), titled with its locator and size; undefined when it is gone. */
export function valueDetail(owner: Owner, state: OwnerState, path: readonly string[]): Detail | undefined {
	const [plane, ...keys] = path;
	if (plane === undefined) return undefined;
	let v: Json | undefined = (plane === ROOTS ? state.roots : (state as unknown as Record<string, Json>)[plane]) as Json | undefined;
	let where = `${owner}.${plane}`;
	for (const k of keys) {
		if (Array.isArray(v)) {
			v = v[Number(k)];
			where += `[${k}]`;
		} else if (v !== null && typeof v === "object" && Object.hasOwn(v, k)) {
			v = v[k];
			where += formatKeySegment(k);
		} else return undefined;
	}
	if (v === undefined) return undefined;
	return { title: `${printable(where)} · ${formatSize(bytesOf(v))}`, lines: wholeText(v) };
}

/** One transition's changes with whole values: per written path the value before (stored inverse) and after, then cascades. */
export function transitionDetail(owner: Owner, record: TransitionRecord): Detail {
	const lines: string[] = [];
	for (const { where, before, after } of leafChanges(record)) {
		if (before !== undefined && before !== null) lines.push(`- ${where}:`, ...wholeText(before).map((l) => `-   ${l}`));
		if (after === undefined || after === null) lines.push(`- ${where} (deleted)`);
		else lines.push(`+ ${where}:`, ...wholeText(after).map((l) => `+   ${l}`));
	}
	for (const text of cascadeTexts(record)) lines.push(`! ${text}`);
	return { title: `${owner} #${record.seq} ${spellId(record.id)}`, lines };
}
