/**
 * Human-readable text of `state-flow show` and `history`: deterministic, plain (no colour),
 * lazy bodies as a catalog unless asked for. Pure functions of histories.
 */
import { spellId } from "../core/printable.js";
import { escapePointerToken } from "../core/json.js";
import { describeProvenance } from "../core/history.js";
import { patchLeaves } from "../core/merge.js";
import type { Json, Owner, OwnerHistory, PlanePatch, TransitionRecord } from "../core/types.js";
import { PLANES } from "../core/types.js";
import { DATABASE_ENV, type Placement } from "../storage/backend.js";
import type { OwnerLocation } from "../storage/port.js";
import { formatWho } from "../storage/who.js";

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

/** Pointers (relative to the owner) of every leaf a merge patch sets or deletes. */
function patchPaths(patch: PlanePatch): string[] {
	return patchLeaves(patch).map((l) => `/${spellId([l.plane, ...l.path].map(escapePointerToken).join("/"))}${l.deleted ? " (deleted)" : ""}`);
}

/** Lines the `changed:` list of one transition may take before the rest is counted (an import changes thousands). */
export const CHANGED_LINES = 4;
const WIDTH = 80;

/** Characters of a text (the CLI counts code points; pi's own width rules live in the host). */
const columns = (text: string): number => [...text].length;
const clipText = (text: string, width: number): string => (columns(text) <= width ? text : `${[...text].slice(0, width - 1).join("")}…`);

/**
 * `    changed: /tactics/a, /tactics/b, …` wrapped at 80 columns under its label, at most
 * CHANGED_LINES lines; what does not fit is counted (`… and 1,204 more (1,210 paths)`), never
 * printed as one 47 KB line (issue 27). A path longer than a line is clipped.
 */
export function changedLines(paths: readonly string[]): string[] {
	const lead = "    changed: ";
	const pad = " ".repeat(lead.length);
	if (paths.length === 0) return [`${lead}(nothing)`];
	const room = WIDTH - lead.length;
	const lines: string[] = [];
	let line = "";
	let shown = 0;
	const more = (n: number) => `… and ${(paths.length - n).toLocaleString("en-US")} more (${paths.length.toLocaleString("en-US")} paths)`;
	for (const path of paths) {
		const item = clipText(path, room - 1);
		const next = line === "" ? item : `${line}, ${item}`;
		if (columns(next) + 1 <= room) {
			line = next;
			shown++;
			continue;
		}
		lines.push(`${line},`);
		if (lines.length === CHANGED_LINES - 1) {
			// The last line: what still fits, then the count of the rest.
			line = "";
			break;
		}
		line = item;
		shown++;
	}
	if (shown < paths.length) {
		let last = "";
		for (let i = shown; i < paths.length; i++) {
			const item = clipText(paths[i] as string, room - 1);
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

/** One transition as `history` prints it (also in what undo, redo and restore revert). */
export function formatRecord(r: TransitionRecord): string {
	const lines = [
		`#${r.seq}  ${r.at}  ${describeProvenance(r.by)}${r.by.kind === "tool" ? ` (session ${r.by.sessionId})` : ""}`,
		`    id ${spellId(r.id)}${r.owners.length > 1 ? `  (with ${r.owners.join(", ")})` : ""}`,
	];
	// On a line of its own: whole names, without pushing the provenance or the id past 80 columns.
	if (r.who !== undefined) lines.push(`    who ${formatWho(r.who)}`);
	lines.push(...changedLines(patchPaths(r.patch)));
	for (const c of r.cascades) lines.push(`    cascaded: intents/${spellId(escapePointerToken(c.intent))} -> ${spellId(c.targets.join(", "))}`);
	return lines.join("\n");
}

/** One owner's retained transitions, oldest first, with where the folded history ends. */
export function formatHistory(owner: Owner, root: string, h: OwnerHistory): string {
	const head = `${TITLES[owner]}  ${root}  (seq ${h.seq}; ${h.tail.length} retained`;
	if (h.seq === 0) return `${head})\n  (no transitions)`;
	const folded = h.checkpointSeq > 0 ? `, transitions 1-${h.checkpointSeq} folded into the checkpoint)` : ")";
	return [head + folded, ...h.tail.map(formatRecord)].join("\n");
}
