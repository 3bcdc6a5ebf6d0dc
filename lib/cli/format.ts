/**
 * Human-readable text of `state-flow show` and `history`: deterministic, plain (no colour),
 * lazy bodies as a catalog unless asked for. Pure functions of histories.
 */
import { escapePointerToken, isPlainObject } from "../core/json.js";
import type { Json, JsonObject, Owner, OwnerHistory, Provenance, TransitionRecord } from "../core/types.js";
import { PLANES } from "../core/types.js";

const TITLES: Record<Owner, string> = { global: "Global", cwd: "CWD", session: "Session" };

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
	return lines.join("\n");
}

/** Who made a transition, in words. */
export function formatProvenance(by: Provenance): string {
	switch (by.kind) {
		case "tool":
			return `model tool call ${by.toolCallId} (session ${by.sessionId})`;
		case "command":
			return `command ${by.command}`;
		case "import":
			return `import from ${by.source}`;
		case "system":
			return `system: ${by.reason}`;
		default:
			return `unknown (${JSON.stringify(by)})`;
	}
}

/** Pointers (relative to the owner) of every leaf a merge patch sets or deletes. */
export function patchPaths(patch: JsonObject, prefix = ""): string[] {
	const out: string[] = [];
	for (const key of Object.keys(patch)) {
		const ptr = `${prefix}/${escapePointerToken(key)}`;
		const v = patch[key] as Json;
		if (v === null) out.push(`${ptr} (deleted)`);
		else if (isPlainObject(v) && Object.keys(v).length > 0) out.push(...patchPaths(v, ptr));
		else out.push(ptr);
	}
	return out;
}

function formatRecord(r: TransitionRecord): string {
	const lines = [`#${r.seq}  ${r.at}  ${formatProvenance(r.by)}`, `    id ${r.id}${r.owners.length > 1 ? `  (with ${r.owners.join(", ")})` : ""}`];
	const paths = patchPaths(r.patch as unknown as JsonObject);
	lines.push(`    changed: ${paths.length > 0 ? paths.join(", ") : "(nothing)"}`);
	for (const c of r.cascades) lines.push(`    cascaded: intents/${escapePointerToken(c.intent)} -> ${c.targets.join(", ")}`);
	return lines.join("\n");
}

/** One owner's retained transitions, oldest first, with where the folded history ends. */
export function formatHistory(owner: Owner, root: string, h: OwnerHistory): string {
	const head = `${TITLES[owner]}  ${root}  (seq ${h.seq}; ${h.tail.length} retained`;
	if (h.seq === 0) return `${head})\n  (no transitions)`;
	const folded = h.checkpointSeq > 0 ? `, transitions 1-${h.checkpointSeq} folded into the checkpoint)` : ")";
	return [head + folded, ...h.tail.map(formatRecord)].join("\n");
}
