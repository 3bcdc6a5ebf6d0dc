/**
 * The protocol block appended to the system prompt while the mode is not `off`. Variants:
 * Active, Active-bootstrap (every wanted owner empty) and Passive, each in the flat form
 * (one wanted owner, unqualified locators) or the scoped form (owner-qualified). Texts are
 * hash-guarded by tests: change them deliberately and re-measure with `npm run metrics`.
 */

import { OWNERS } from "../core/types.js";
import type { Owner } from "../core/types.js";

/** Options that pick the protocol variant. */
export interface ProtocolOptions {
	mode: "active" | "passive";
	/** The captured wanted owners (1–3); order does not matter. */
	wanted: readonly Owner[];
	/** True when every wanted owner is empty (see `isBootstrap` in head.ts); Active only. */
	bootstrap: boolean;
	/**
	 * Who shows the protocol: pi injects the head before each prompt; an MCP client injects
	 * nothing, so the model is told to call `state_head`, and about `seen` (issue 38).
	 */
	front?: "pi" | "mcp";
}

/** Delimiters of the protocol block in the system prompt. */
export const PROTOCOL_OPEN = "<state_flow_protocol>";
export const PROTOCOL_CLOSE = "</state_flow_protocol>";

const OWNER_NOTES: Record<Owner, string> = {
	global: "Global (the user, every project)",
	cwd: "CWD (this project, shared by its pi sessions)",
	session: "Session (this conversation and its branch)",
};

/** An MCP server serves every agent of the project: the project's note says so. */
const MCP_OWNER_NOTES: Record<Owner, string> = { ...OWNER_NOTES, cwd: "CWD (this project, shared by every agent working in it)" };

/** Wanted owners in the fixed display order, duplicates dropped. */
export function orderedOwners(wanted: readonly Owner[]): Owner[] {
	return OWNERS.filter((o) => wanted.includes(o));
}

/** The owner scoped examples are written for: the project if wanted, else the session, else global. */
function exampleOwner(owners: readonly Owner[]): Owner {
	if (owners.includes("cwd")) return "cwd";
	if (owners.includes("session")) return "session";
	return "global";
}

/** Render the protocol block for one variant. Deterministic: same options, same bytes. */
export function renderProtocol(opts: ProtocolOptions): string {
	const owners = orderedOwners(opts.wanted);
	if (owners.length === 0) throw new Error("renderProtocol needs at least one wanted owner");
	const scoped = owners.length > 1;
	const ex = exampleOwner(owners);
	// `q` qualifies a locator for the scoped grammar and leaves it bare for flat.
	const q = (loc: string): string => (scoped ? `${ex}.${loc}` : loc);
	const wrap = (planes: string): string => (scoped ? `{"${ex}":${planes}}` : planes);
	const other = owners.find((o) => o !== ex) ?? ex;

	const mcp = opts.front === "mcp";
	const notes = mcp ? MCP_OWNER_NOTES : OWNER_NOTES;
	const lines: string[] = [PROTOCOL_OPEN];
	lines.push(
		"State Flow is your durable working memory. Tools: `read_state` reads it, `patch_state` changes it (JSON merge patch: null deletes). " +
			(mcp
				? "`state_head` shows it: call it when you start a task. Results end with `seen`; send it with a patch_state to have the write refused, with the current values, if another agent changed those keys since."
				: "<state_flow_head> shows it before each user prompt, frozen for that run."),
	);
	if (scoped) {
		lines.push(
			`Owners ${mcp ? "served here" : "of this session"} (others are refused): ${owners.map((o) => notes[o]).join("; ")}. ` +
				`Every patch key and locator names its owner: ${wrap('{"tactics":{…}}')}, \`${ex}.tactics\`.`,
		);
	} else {
		lines.push(`Owner: ${notes[ex]}, the only one ${mcp ? "served here" : "of this session"}. Patch keys and locators start at the plane.`);
	}
	lines.push(
		"Planes:",
		"- intents: what the user asks for: goals, requirements, decisions, status.",
		"- strategy: the approach taken, standing rules (they outlive intents), rationale, rejected options.",
		"- tactics: concrete next steps with a status (next, doing, blocked: shown first; todo, done).",
		"- artifacts: files and Skills the work uses or made, keyed by exact path.",
		"- lazy: large bodies (notes, logs, plans); the head lists only key and size.",
		`A reference is {"$ref":"${q("tactics.t1")}"} (a read_state locator) alone in its object; quote keys that are not plain names: {"$ref":${JSON.stringify(q('lazy["notes/plan.md"]'))}}. ` +
			"An intent owns the tactics and lazy entries it references; deleting the intent deletes them; " +
			`the head abbreviates ref arrays ("refs: ${q("tactics.t1")}…t3 (3)").`,
	);
	if (opts.mode === "active") {
		lines.push(
			"Record multi-step work the user wants carried across turns as an intent; a one-shot edit or a plain question needs none. " +
				"Keep tactics honest: add steps before you work, update their status, delete finished ones. Close a finished intent: null, or status done.",
		);
		if (opts.bootstrap) {
			lines.push(
				"The state is empty. Start now for multi-step work, e.g. patch_state " +
					wrap(`{"intents":{"login":{"goal":"fix login","owns":[{"$ref":"${q("tactics.t1")}"}]}},"tactics":{"t1":"reproduce the bug"}}`),
			);
		}
	} else {
		lines.push("Passive mode: write only when the user explicitly asks you to; read whenever it helps.");
	}
	const temporal = scoped ? `${other}[1].tactics` : "effective[1].tactics";
	const latest = scoped ? `${other}.patches[0]` : "patches[0]";
	lines.push(
		`Read: \`${q('lazy["notes/plan.md"]')}\` is a lazy body; \`${temporal}\` is one transition back; ` +
			`\`${latest}\` the latest change; projections "keys", "history" (a path's changes); ` +
			'{"search":"x"} finds text, lazy bodies too.' +
			// How to read what a shortened head hides is said by the head itself, once, when it is shortened.
			(scoped ? ` \`effective.tactics\` overlays ${[...owners].reverse().join(" over ")}.` : ""),
		PROTOCOL_CLOSE,
	);
	return lines.join("\n");
}
