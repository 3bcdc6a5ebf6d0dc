/**
 * What `/state`, `/state show`, `/state history` and `/state undo` compute and print for the
 * user, laid out to fit an 80-column terminal: short ids (the shortest unique prefix), compact
 * local times and short model call ids, with full ids on demand (`--full`). Reads go through
 * the stores (never creating files); an undo uses the stored `undo` patch of a transition so
 * the revert is exact.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import { isStateError, messageOf } from "../../core/errors.js";
import type { Owner, OwnerHistory, Result } from "../../core/types.js";
import { DEFAULT_RETENTION, OWNERS } from "../../core/types.js";
import { undoneIn } from "../../core/undo-chain.js";
import { formatSize } from "../../core/size.js";
import { configPath, readConfig } from "../../storage/placement/config.js";
import type { Stores } from "../../storage/stores.js";
import { foreignLinkLine } from "../../storage/placement/placement.js";
import { placementLines } from "./link-text.js";
import { locationLines } from "../../ops/where.js";
import { projectLine, projectNote } from "../../storage/project/project.js";
import { apartLine, storesApart } from "../../storage/project/stores-apart.js";
import { movedLine } from "../../storage/project/moved-marker.js";
import { compactTime, type HistoryFormat, historyText, type HistoryText, TEXT_WIDTH, UNDONE, uniquePrefixes } from "../../ops/history-text.js";
import type { StateFlowHost } from "../runtime.js";
import { describeSelection, shapeOf } from "../session/selection.js";

/** Terminal columns of plain text: a wide (CJK) character takes two, a combining mark none. */
export const columns: (text: string) => number = visibleWidth;

/** The shared history vocabulary (`ops/history-text.ts`) measured as pi draws it (whole, for `ops/` functions that take one). */
export const piText: HistoryText = historyText(columns);
export const { clipText, who, shortWho, madeBy, fitList, changeList, labelledList, transitionLine, wrapWords } = piText;
export { compactTime, TEXT_WIDTH, UNDONE };

/**
 * Load an owner's history for display; a damaged or unavailable store is described, not thrown.
 * Through `host.available`, so what `/state`, `show`, `history` and the browser find also
 * reaches the footer (`cwd damaged`, `cwd unavailable`, cleared once it reads again).
 */
export async function loadFor(host: StateFlowHost, owner: Owner): Promise<Result<OwnerHistory>> {
	try {
		const got = await host.available([owner]);
		const history = got.histories[owner];
		if (history !== undefined) return { ok: true, value: history };
		throw got.unavailable[owner];
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
	const note = projectNote(project);
	if (note !== undefined) lines.push(...wrapWords(note, TEXT_WIDTH));
	const apart = apartLine(storesApart(project));
	if (apart !== undefined) lines.push(...wrapWords(`note: ${apart}`, TEXT_WIDTH));
	const moved = movedLine(project.store, host.placement.project);
	if (moved !== undefined) lines.push(...wrapWords(moved, TEXT_WIDTH));
	// The config as it is now: a link recorded since the session started is in the file, not in `host.config`.
	const foreign = foreignLinkLine(readConfig(host.options.agentDir).config, host.ctx.cwd);
	if (foreign !== undefined) lines.push(...wrapWords(foreign, TEXT_WIDTH));
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
	const { placement, config, ctx } = host;
	const declined = placement.linkable !== undefined && host.linkAsk.declined(ctx.cwd, placement.linkable);
	const wrap = (l: string) => wrapWords(l, TEXT_WIDTH);
	lines.push(...placementLines({ placement, config, agentDir: host.options.agentDir, cwd: ctx.cwd, hasUI: ctx.hasUI, declined, wrap }));
	lines.push(...(await describeRoots(host)));
	if (browsable) lines.push("browse: /state browse");
	return lines.join("\n");
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

/** `/state show [owner]`: the full state of each owner as JSON, every line within TEXT_WIDTH columns. */
export async function describeState(host: StateFlowHost, owners: readonly Owner[]): Promise<string> {
	const out: string[] = [];
	for (const owner of owners) {
		const loaded = await loadFor(host, owner);
		if (!loaded.ok) {
			out.push(...failureLines(owner, loaded.why));
			continue;
		}
		const h = loaded.value;
		// Laid out for TEXT_WIDTH as the rest of `/state`: a long member wraps under itself (`fitLine`), never at column 1 where it would read as a key.
		const json = JSON.stringify(h.state, null, 2).split("\n");
		out.push(`${owner} (seq ${h.seq}, ${formatSize(h.bytes)}):`, ...json.flatMap((l) => piText.fitLine(l, TEXT_WIDTH)));
	}
	return out.join("\n");
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
		const undone = undoneIn(h.tail);
		for (const r of [...h.tail].reverse()) lines.push(transitionLine(r, short.get(r.id) ?? r.id, { ...f, undone }));
	}
	if (!f.full && lines.length > owners.length) lines.push("full ids and times: /state history --full");
	return lines.join("\n");
}
