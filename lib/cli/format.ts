/**
 * Human-readable text of `state-flow show` and `history`: deterministic, plain (no colour),
 * lazy bodies as a catalog unless asked for. Pure functions of histories.
 */
import type { Json, Owner, OwnerHistory } from "../core/types.js";
import { PLANES } from "../core/types.js";
import { undoneIn } from "../core/undo.js";
import { DATABASE_ENV, type Placement } from "../storage/placement/placement.js";
import type { OwnerLocation } from "../storage/port.js";
import { type HistoryFormat, historyText, type HistoryText } from "../ops/history-text.js";

export const TITLES: Record<Owner, string> = { global: "Global", cwd: "CWD", session: "Session" };

/** The configured database in one line (never the password): `postgres <url> schema <s> (from …)`. */
export function describeDatabase(db: NonNullable<Placement["database"]>): string {
	return `postgres ${db.shownUrl} schema ${db.schema} (from ${db.source === "env" ? DATABASE_ENV : "config.json `database`"})`;
}

/** Where an owner lives, in one line: its folder, or `postgres <url without password> schema <s>, project|user <key>`. */
export function describeLocation(l: OwnerLocation): string {
	switch (l.backend) {
		case "file":
			return l.path;
		case "session":
			return `pi session ${l.sessionId}`;
		case "postgres":
			return `postgres ${l.url} schema ${l.schema}, ${l.kind === "cwd" ? "project" : "user"} ${l.key}`;
	}
}

function indent(text: string, by = "  "): string {
	return text
		.split("\n")
		.map((l) => by + l)
		.join("\n");
}

function bytesOf(v: Json): number {
	return Buffer.byteLength(JSON.stringify(v), "utf8");
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
			for (const key of keys) lines.push(`  ${JSON.stringify(key)}  ${bytesOf(value[key] as Json)} bytes`);
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

/** One owner's retained transitions, newest first (as `/state history`), with where the folded history ends; `short` ids are unique across the owners listed. */
export function formatHistory(owner: Owner, root: string, h: OwnerHistory, f: HistoryFormat, short: ReadonlyMap<string, string>): string {
	const head = `${TITLES[owner]}  ${root}  (seq ${h.seq}; ${h.tail.length} retained`;
	if (h.seq === 0) return `${head})\n  (no transitions)`;
	const folded = h.checkpointSeq > 0 ? `, transitions 1-${h.checkpointSeq} folded into the checkpoint)` : ")";
	const undone = undoneIn(h.tail);
	return [head + folded, ...[...h.tail].reverse().map((r) => transitionLine(r, short.get(r.id) ?? r.id, { ...f, undone }))].join("\n");
}
