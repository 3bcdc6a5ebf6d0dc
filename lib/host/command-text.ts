/**
 * What `/state`, `/state show`, `/state history` and `/state undo` compute and print for the
 * user. Reads go through the stores (never creating files); the undo plan uses the stored
 * `undo` patch of the latest transition so the revert is exact.
 */
import { join } from "node:path";
import { messageOf } from "../core/errors.js";
import { describeProvenance } from "../core/history.js";
import type { CanonicalPatch, Owner, OwnerHistory, TransitionRecord } from "../core/types.js";
import { DEFAULT_RETENTION } from "../core/types.js";
import { configPath } from "../storage/config.js";
import type { StateFlowHost } from "./runtime.js";
import { describeSelection, shapeOf } from "./selection.js";

function size(bytes: number): string {
	return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

/** Load an owner's history for display; a damaged store is described, not thrown. */
function loadFor(host: StateFlowHost, owner: Owner): OwnerHistory | string {
	try {
		return host.requireStores().load(owner);
	} catch (e) {
		return `unreadable: ${messageOf(e)}`;
	}
}

function whereIs(host: StateFlowHost, owner: Owner): string {
	switch (owner) {
		case "global":
			return join(host.options.agentDir, "state-flow", "global");
		case "cwd":
			return join(host.ctx.cwd, ".pi", "state-flow");
		case "session":
			return host.ctx.sessionManager.getSessionFile() !== undefined ? "entries in the session file" : "memory only (in-memory session)";
		default:
			throw new Error(`unknown owner ${String(owner)}`);
	}
}

/** `/state`: mode, wanted owners, stores with sizes, retention, config file. */
export function describeStatus(host: StateFlowHost): string {
	const sel = host.selection();
	const source = host.sessionChoice ? "this session's /state choice" : host.flagLayer.mode || host.flagLayer.owners ? "CLI flags" : "defaults and config";
	const lines = [
		`State Flow: ${describeSelection(sel)} (${shapeOf(sel.owners)} interface; from ${source})`,
		"stores:",
	];
	for (const owner of ["global", "cwd", "session"] as const) {
		const h = loadFor(host, owner);
		const wanted = sel.owners.includes(owner) ? "wanted" : "not wanted";
		const info =
			typeof h === "string"
				? h
				: h.seq === 0
					? "empty"
					: `${size(h.bytes)}, ${h.seq} transition${h.seq === 1 ? "" : "s"}, ${h.tail.length} retained`;
		lines.push(`  ${owner.padEnd(7)} ${wanted.padEnd(10)} ${info} — ${whereIs(host, owner)}`);
	}
	lines.push(`retention: ${host.config.retention ?? DEFAULT_RETENTION} transitions per owner`);
	lines.push(`config: ${configPath(host.options.agentDir)}`);
	return lines.join("\n");
}

/** `/state show [owner]`: the full state of each owner as JSON. */
export function describeState(host: StateFlowHost, owners: readonly Owner[]): string {
	return owners
		.map((owner) => {
			const h = loadFor(host, owner);
			return typeof h === "string" ? `${owner}: ${h}` : `${owner} (seq ${h.seq}):\n${JSON.stringify(h.state, null, 2)}`;
		})
		.join("\n");
}

function changedKeys(record: TransitionRecord): string {
	const keys: string[] = [];
	for (const [plane, patch] of Object.entries(record.patch)) {
		for (const key of Object.keys(patch ?? {})) keys.push(`${plane}.${key}`);
	}
	return keys.length > 6 ? `${keys.slice(0, 6).join(", ")} (+${keys.length - 6})` : keys.join(", ");
}

/** `/state history [owner]`: retained transitions, newest first: id, time, who, what. */
export function describeHistory(host: StateFlowHost, owners: readonly Owner[]): string {
	const lines: string[] = [];
	for (const owner of owners) {
		const h = loadFor(host, owner);
		if (typeof h === "string") {
			lines.push(`${owner}: ${h}`);
			continue;
		}
		lines.push(`${owner}: ${h.tail.length} retained of ${h.seq} transitions`);
		for (const r of [...h.tail].reverse()) {
			lines.push(`  #${r.seq} ${r.id} ${r.at} by ${describeProvenance(r.by)}: ${changedKeys(r)}`);
		}
	}
	return lines.join("\n");
}

/** What `/state undo` will commit, or why it cannot. */
export interface UndoPlan {
	id: string;
	owners: Owner[];
	patch: CanonicalPatch;
}

/**
 * The latest transition among `owners` (by time, then sequence). A transition that touched
 * several owners is reverted in every touched owner where it is still the latest, unless the
 * user named one owner explicitly.
 */
export function undoPlan(host: StateFlowHost, owners: readonly Owner[], explicit: boolean): UndoPlan | string {
	let latest: { owner: Owner; record: TransitionRecord } | undefined;
	for (const owner of owners) {
		const h = loadFor(host, owner);
		if (typeof h === "string") return `cannot undo ${owner}: ${h}`;
		const record = h.tail[h.tail.length - 1];
		if (record && (!latest || record.at > latest.record.at)) latest = { owner, record };
	}
	if (!latest) return `no retained transition to undo for ${owners.join("+")}.`;
	const { record } = latest;
	const touched: Owner[] = explicit ? [latest.owner] : [];
	if (!explicit) {
		for (const owner of record.owners) {
			const h = loadFor(host, owner);
			if (typeof h !== "string" && h.tail[h.tail.length - 1]?.id === record.id) touched.push(owner);
		}
	}
	const patch: CanonicalPatch = {};
	for (const owner of touched) {
		const h = loadFor(host, owner) as OwnerHistory;
		const r = h.tail[h.tail.length - 1] as TransitionRecord;
		patch[owner] = r.undo;
	}
	return { id: record.id, owners: touched, patch };
}
