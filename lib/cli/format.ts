/**
 * Human-readable text of `state-flow show` and `history`: deterministic, plain (no colour),
 * lazy bodies as a catalog unless asked for. Pure functions of histories.
 */
import { jsonTextBytes } from "../core/size.js";
import type { Json, Owner, OwnerHistory } from "../core/types.js";
import { PLANES } from "../core/types.js";
import { undoneIn } from "../core/undo-chain.js";
import type { Linkable } from "../storage/placement/placement.js";
import { linkCommand, linkableWords } from "../ops/where.js";
import { type HistoryFormat, historyText, type HistoryText, TEXT_WIDTH } from "../ops/history-text.js";

export const TITLES: Record<Owner, string> = { global: "Global", cwd: "CWD", session: "Session" };

/** A link this checkout only claims (`show`, `link` without an id): stays local until `state-flow link` runs here. */
export function linkableLine(l: Linkable): string {
	return `linkable: ${l.project} — run \`${linkCommand(l.project)}\` here to share; ${linkableWords(l)}.`;
}

function indent(text: string, by = "  "): string {
	return text
		.split("\n")
		.map((l) => by + l)
		.join("\n");
}

/** One owner's state: a header line, then each plane as indented JSON. */
export function formatShow(owner: Owner, root: string, h: OwnerHistory, full: boolean): string {
	const lines = [`${TITLES[owner]}  ${root}  (seq ${h.seq}, ${h.bytes} bytes)`];
	if (h.seq === 0) {
		lines.push("  (empty: nothing written yet)");
		return lines.join("\n");
	}
	for (const plane of PLANES) {
		const value = h.state[plane];
		const keys = Object.keys(value);
		if (keys.length === 0) {
			lines.push(`${plane}: {}`);
			continue;
		}
		if (plane === "lazy" && !full) {
			lines.push(`${plane}: (catalog; --full prints bodies)`);
			for (const key of keys) lines.push(`  ${JSON.stringify(key)}  ${jsonTextBytes(value[key] as Json)} bytes`);
			continue;
		}
		lines.push(`${plane}:`, indent(JSON.stringify(value, null, 2)));
	}
	// Registered roots (docs/spec.md §12), kept for their extensions whether loaded or not.
	if (h.state.roots !== undefined && Object.keys(h.state.roots).length > 0)
		lines.push("roots (of extensions):", indent(JSON.stringify(h.state.roots, null, 2)));
	return lines.join("\n");
}

/** Terminal columns as the CLI counts them: code points (it loads no pi; pi's width rules live in the host). */
export const columns = (text: string): number => [...text].length;

/** The shared history vocabulary (`ops/history-text.ts`), so `state-flow history` and `/state history` read alike. */
export const cliText: HistoryText = historyText(columns);
export const { labelledList, transitionLine } = cliText;

/**
 * What the command line prints for a person, every line within `TEXT_WIDTH` columns: a longer
 * one broken between words under itself, a command, path or URL kept whole (`fitLine`); lines
 * that fit are left as they are.
 */
export function fitText(text: string): string {
	return text
		.split("\n")
		.flatMap((l) => cliText.fitLine(l, TEXT_WIDTH))
		.join("\n");
}

/** One owner's retained transitions, newest first (as `/state history`), with where the folded history ends; `short` ids are unique across the owners listed. */
export function formatHistory(owner: Owner, root: string, h: OwnerHistory, f: HistoryFormat, short: ReadonlyMap<string, string>): string {
	const head = `${TITLES[owner]}  ${root}  (seq ${h.seq}; ${h.tail.length} retained`;
	if (h.seq === 0) return `${head})\n  (no transitions)`;
	const folded = h.checkpointSeq > 0 ? `, transitions 1-${h.checkpointSeq} folded into the checkpoint)` : ")";
	const undone = undoneIn(h.tail);
	return [head + folded, ...[...h.tail].reverse().map((r) => transitionLine(r, short.get(r.id) ?? r.id, { ...f, undone }))].join("\n");
}
