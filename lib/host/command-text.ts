/**
 * What `/state`, `/state show`, `/state history` and `/state undo` compute and print for the
 * user, laid out to fit an 80-column terminal: short ids (the shortest unique prefix), compact
 * local times and short model call ids, with full ids on demand (`--full`). Reads go through
 * the stores (never creating files); an undo uses the stored `undo` patch of a transition so
 * the revert is exact.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import { isStateError, messageOf } from "../core/errors.js";
import { formatKeySegment } from "../core/locator.js";
import { inline, printable, spellId } from "../core/printable.js";
import type { Owner, OwnerHistory, Provenance, Result, TransitionRecord, Who } from "../core/types.js";
import { DEFAULT_RETENTION, OWNERS } from "../core/types.js";
import { formatSize } from "../model/head.js";
import { configPath } from "../storage/config.js";
import type { Stores } from "../storage/stores.js";
import { DATABASE_ENV } from "../storage/backend.js";
import { locationLines, readSuggestion } from "./link.js";
import { formatWho, whoAmI } from "../storage/who.js";
import { projectLine } from "../storage/project.js";
import { apartLine, storesApart } from "../storage/stores-apart.js";
import { movedLine } from "../storage/moved-marker.js";
import type { StateFlowHost } from "./runtime.js";
import { describeSelection, shapeOf } from "./selection.js";

/** Columns every line of command output fits in (unless `--full` asks for whole ids). */
export const TEXT_WIDTH = 80;

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

/** Terminal columns of plain text: a wide (CJK) character takes two, a combining mark none. */
export const columns: (text: string) => number = visibleWidth;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Cut text to `width` columns with an ellipsis, between whole characters (never inside a pair or cluster). */
export function clipText(text: string, width: number): string {
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

/** Who made a transition, short: `model call_8xKz…`, `/state undo cwd`, `import x.json`; stored text in it stays on its line (`inline`). */
export function who(by: Provenance, full = false): string {
	return inline(provenanceWords(by, full));
}

function provenanceWords(by: Provenance, full: boolean): string {
	switch (by.kind) {
		case "tool":
			return `model ${full ? by.toolCallId : clipText(by.toolCallId, 12)}`;
		case "command": {
			// An undo, redo or restore names what it reverted: `undo of 3f2a1b2c`.
			const rev = by.reverts;
			if (rev !== undefined && typeof rev.target === "string")
				return `${rev.op} ${rev.op === "restore" ? "to" : "of"} ${printable(full ? rev.target : rev.target.slice(0, 8))}`;
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

/** Columns of a short who; when both names do not fit, each keeps at least half, so neither is lost. */
const WHO_WIDTH = 20;

/** Which teammate on which machine, short: `alice@laptop` (the host's first label; both whole with `full`). */
export function shortWho(w: Who, full = false): string {
	if (full) return formatWho(w);
	const host = w.host.split(".")[0] || w.host;
	const room = WHO_WIDTH - 1;
	const user = clipText(w.user, Math.max(room - columns(host), Math.ceil(room / 2)));
	return formatWho({ user, host: clipText(host, room - columns(user)) });
}

/** Who made a transition and, when recorded, as which teammate on which machine: `model call_8xKz… alice@laptop`. */
export function madeBy(r: TransitionRecord, full = false): string {
	return r.who === undefined ? who(r.by, full) : `${who(r.by, full)} ${shortWho(r.who, full)}`;
}

/**
 * The keys a transition touched, one level into each plane: `tactics.a`, `intents["x y"]`; at
 * most `limit` of them (a one-line listing needs a few, not an import's 200,000: `changedCount`).
 */
export function changedKeys(record: TransitionRecord, limit = Number.POSITIVE_INFINITY): string[] {
	const keys: string[] = [];
	for (const [plane, patch] of Object.entries(record.patch)) {
		for (const key in patch ?? {}) {
			if (keys.length >= limit) return keys;
			if (Object.hasOwn(patch as object, key)) keys.push(`${plane}${formatKeySegment(key)}`);
		}
	}
	return keys;
}

/** How many keys `changedKeys` lists in all. */
export function changedCount(record: TransitionRecord): number {
	let n = 0;
	for (const patch of Object.values(record.patch)) n += Object.keys(patch ?? {}).length;
	return n;
}

/** Keys a one-line listing looks at, at most: more never fit a line. */
export const LISTED_KEYS = 64;

/**
 * As many items as fit `width` columns, then `+N` for the rest (the first one clipped if need be);
 * `total` counts items not passed (a listing of the first `LISTED_KEYS`).
 * One pass, stopping once the list is wider than `width`: a transition of many keys costs what fits.
 */
export function fitList(items: readonly string[], width: number, total = items.length): string {
	const more = (n: number) => (n < total ? ` +${total - n}` : "");
	let best = 0;
	let used = -2;
	for (let n = 1; n <= items.length; n++) {
		used += 2 + columns(items[n - 1] as string);
		if (used > width) break;
		if (used + more(n).length <= width) best = n;
	}
	if (best > 0) return items.slice(0, best).join(", ") + more(best);
	return items.length === 0 ? "" : clipText(items[0] as string, Math.max(1, width - more(1).length)) + more(1);
}

/** Load an owner's history for display; a damaged or unavailable store is described, not thrown. */
export async function loadFor(host: StateFlowHost, owner: Owner): Promise<Result<OwnerHistory>> {
	try {
		return { ok: true, value: await host.requireStores().load(owner) };
	} catch (e) {
		return { ok: false, why: `${isStateError(e) && e.code === "unavailable" ? "unavailable" : "unreadable"}: ${messageOf(e)}` };
	}
}

/** Where an owner lives, one or more lines: the folder, or `postgres <url without password>` and its schema and key. */
export function whereIs(host: StateFlowHost, owner: Owner): string[] {
	if (owner === "session") {
		return [host.ctx.sessionManager.getSessionFile() !== undefined ? "entries in the session file" : "memory only (in-memory session)"];
	}
	let stores: Stores;
	try {
		stores = host.requireStores();
	} catch {
		return [host.identity()[owner === "global" ? "globalRoot" : "cwdRoot"]];
	}
	return locationLines(stores.location(owner));
}

/** Words cut into lines of at most `width` columns (a longer word keeps its own line). */
export function wrapWords(text: string, width: number): string[] {
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

/** An owner that cannot be read, wrapped to the width: `cwd: unavailable: …` and indented continuation lines. */
function failureLines(owner: Owner, why: string): string[] {
	const [first, ...rest] = wrapWords(`${owner}: ${why}`, TEXT_WIDTH);
	return [first ?? owner, ...wrapWords(rest.join(" "), TEXT_WIDTH - 2).map((l) => `  ${l}`)];
}

/** Where the effective selection comes from. */
export function selectionSource(host: StateFlowHost): string {
	const source = {
		session: "this session's /state choice",
		run: "this session's earlier runs (kept when continued)",
		flags: "CLI flags",
		config: "defaults and config",
	}[host.selectionSource()];
	const over = host.flagOverride;
	return over === undefined ? source : `${source}; CLI flags overrode its stored ${describeSelection(over)}`;
}

/** One store's size line: `1.2 KB, 2 transitions, 2 retained`. */
export function storeSummary(loaded: Result<OwnerHistory>): string {
	if (!loaded.ok) return loaded.why;
	const h = loaded.value;
	if (h.seq === 0) return "empty";
	return `${formatSize(h.bytes)}, ${h.seq} transition${h.seq === 1 ? "" : "s"}, ${h.tail.length} retained`;
}

/** `/state`: mode, wanted owners, stores with sizes and where they live, retention, config file. */
export async function describeStatus(host: StateFlowHost, browsable = false): Promise<string> {
	const sel = host.selection();
	const project = host.project();
	const lines = [`${describeSelection(sel)} — ${shapeOf(sel.owners)} interface, from ${selectionSource(host)}`, projectLine(project, host.placement.project)];
	const apart = apartLine(storesApart(project));
	if (apart !== undefined) lines.push(...wrapWords(`note: ${apart}`, TEXT_WIDTH));
	const moved = movedLine(project.store, host.placement.project);
	if (moved !== undefined) lines.push(...wrapWords(moved, TEXT_WIDTH));
	lines.push("stores:");
	const indent = " ".repeat(11);
	for (const owner of OWNERS) {
		const wanted = sel.owners.includes(owner) ? "wanted" : "not wanted";
		const loaded = await loadFor(host, owner);
		// A failure gets its kind on the owner's line and its message wrapped below, within the width.
		const [kind, ...why] = loaded.ok ? [storeSummary(loaded)] : loaded.why.split(": ");
		lines.push(`  ${owner.padEnd(8)} ${wanted.padEnd(11)} ${kind}`);
		for (const l of whereIs(host, owner)) lines.push(`${indent}${l}`);
		if (why.length > 0) for (const l of wrapWords(why.join(": "), TEXT_WIDTH - indent.length)) lines.push(`${indent}${l}`);
	}
	lines.push(`retention: ${host.config.retention ?? DEFAULT_RETENTION} transitions per owner`);
	lines.push(`config: ${configPath(host.options.agentDir)}`);
	lines.push(...describePlacement(host));
	lines.push(...(await describeRoots(host)));
	if (browsable) lines.push("browse: /state browse");
	return lines.join("\n");
}

/** The database in use and a repository's suggestion not taken up yet; nothing when files are all there is. */
function describePlacement(host: StateFlowHost): string[] {
	const p = host.placement;
	const lines: string[] = [];
	if (p.database !== undefined) lines.push(`database: ${p.database.shownUrl} (from ${p.database.source === "env" ? DATABASE_ENV : "config"})`);
	// Teammates see this name on every transition; without `user` it is the OS user (often the same for everyone, e.g. root).
	if (p.database !== undefined) {
		const me = formatWho(whoAmI(host.config.user));
		const from =
			host.config.user !== undefined ? "config `user`" : `the OS user; set "user" in ${configPath(host.options.agentDir)} so teammates see your name`;
		lines.push(...wrapWords(`you are: ${me} (${from})`, TEXT_WIDTH));
	}
	if (p.problem !== undefined) lines.push(...wrapWords(`problem: ${p.problem}`, TEXT_WIDTH));
	if (p.database !== undefined && p.project === undefined) {
		const suggestion = readSuggestion(host.ctx.cwd);
		if (suggestion !== undefined && "project" in suggestion)
			lines.push(...wrapWords(`the repository suggests project ${suggestion.project}: /state link shares it (asks first)`, TEXT_WIDTH));
	}
	return lines;
}

/** Registered roots and dormant root data (docs/spec.md §12): one line each, none when there are none. */
export async function describeRoots(host: StateFlowHost): Promise<string[]> {
	const lines: string[] = [];
	for (const r of host.roots.entries()) {
		if (r.dormant === undefined) lines.push(`root ${r.name}: extension ${r.extension}, in ${r.owners.join(", ")}`);
	}
	const histories: Partial<Record<Owner, OwnerHistory>> = {};
	for (const owner of OWNERS) {
		const h = await loadFor(host, owner);
		if (h.ok) histories[owner] = h.value;
	}
	for (const d of host.roots.dormantNames(histories)) lines.push(`root ${d.name}: dormant in ${d.owners.join(", ")}, data kept: ${d.why}`);
	return lines;
}

/** `/state show [owner]`: the full state of each owner as JSON. */
export async function describeState(host: StateFlowHost, owners: readonly Owner[]): Promise<string> {
	const out: string[] = [];
	for (const owner of owners) {
		const loaded = await loadFor(host, owner);
		if (!loaded.ok) {
			out.push(...failureLines(owner, loaded.why));
			continue;
		}
		const h = loaded.value;
		out.push(`${owner} (seq ${h.seq}, ${formatSize(h.bytes)}):\n${JSON.stringify(h.state, null, 2)}`);
	}
	return out.join("\n");
}

/** Options of a history listing. */
export interface HistoryFormat {
	now: Date;
	/** Whole ids, ISO times, full call ids and every key, one field per line. */
	full: boolean;
	width?: number;
}

/**
 * One transition in a listing: `#12 3f2a1b 14:03:09 model call_8xKz… alice@laptop tactics.a, lazy.b +2`
 * (fits `width`), or in full form three lines with whole ids and times.
 */
export function transitionLine(r: TransitionRecord, shortId: string, f: HistoryFormat, indent = "  "): string {
	if (f.full) {
		return [`${indent}#${r.seq} ${spellId(r.id)}`, `${indent}   at ${r.at} by ${madeBy(r, true)}`, `${indent}   changed: ${changedKeys(r).join(", ")}`].join(
			"\n",
		);
	}
	const head = `${indent}#${r.seq} ${shortId} ${compactTime(r.at, f.now)} ${madeBy(r)}`;
	const width = f.width ?? TEXT_WIDTH;
	// Long names (a command, who) can leave less than the 8 columns the keys keep: the line is cut at the width.
	return clipText(`${head} ${fitList(changedKeys(r, LISTED_KEYS), Math.max(8, width - columns(head) - 1), changedCount(r))}`, width);
}

/** Short ids across the histories shown together (one transition id is shared by its owners). */
export function shortIdsOf(histories: ReadonlyArray<Result<OwnerHistory>>): Map<string, string> {
	return uniquePrefixes(histories.flatMap((h) => (h.ok ? h.value.tail.map((r) => r.id) : [])));
}

/** `/state history [owner] [--full]`: retained transitions, newest first. */
export async function describeHistory(host: StateFlowHost, owners: readonly Owner[], f: HistoryFormat): Promise<string> {
	const loaded: Array<readonly [Owner, Result<OwnerHistory>]> = [];
	for (const o of owners) loaded.push([o, await loadFor(host, o)]);
	const short = shortIdsOf(loaded.map(([, h]) => h));
	const lines: string[] = [];
	for (const [owner, result] of loaded) {
		if (!result.ok) {
			lines.push(...failureLines(owner, result.why));
			continue;
		}
		const h = result.value;
		lines.push(`${owner}: ${h.tail.length} retained of ${h.seq} transitions`);
		for (const r of [...h.tail].reverse()) lines.push(transitionLine(r, short.get(r.id) ?? r.id, f));
	}
	if (!f.full && lines.length > owners.length) lines.push("full ids and times: /state history --full");
	return lines.join("\n");
}
