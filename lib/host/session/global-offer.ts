/**
 * "Remember this for all my projects" in one step (issue 35): when the model writes Global
 * while Global is not among this session's owners, its `patch_state` is refused as always, and
 * then — with a UI — the user is asked once whether to add Global. A yes adds it (as `/state
 * owners` would) and the refusal the model reads says so, so its next call, the same patch,
 * lands in this run; a no leaves everything as it was, says so, and is not asked again while
 * this pi runs. Nothing is added to the tool
 * declarations: the offer costs bytes only when it happens (docs/decisions.md, "Global in one
 * step"). Only in the scoped shape: a flat session's grammar cannot name Global until the next
 * prompt (BACKLOG).
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { isPlainObject } from "../../core/json.js";
import { OWNERS } from "../../core/types.js";
import { chooseSelection } from "../commands/index.js";
import type { CommandOutput } from "../commands/output.js";
import type { StateFlowHost } from "../runtime.js";
import { shapeOf } from "./selection.js";

/** The dialog's title and text: what Global is, that the write was refused, what yes does. */
export const GLOBAL_OFFER = {
	title: "State Flow: remember this in Global?",
	text: (owners: readonly string[]) =>
		`The model tried to write to Global, the memory every project of yours shares, but this session works with ${owners.join(" and ")} only, so nothing was written.\n\nAdd Global to this session's owners (as /state owners would) and let the model write it?`,
};

/** What the model reads after the refusal, for each answer. */
const AFTER = {
	yes: "The user has just added Global to this session's owners: send the same patch_state again, unchanged.",
	no: "The user chose not to add Global: do not write it; say where else it could be kept (cwd), or ask.",
};

/** True when a `patch_state` call's input names Global at its top (the scoped grammar's owner key). */
function namesGlobal(input: unknown): boolean {
	return isPlainObject(input) && Object.hasOwn(input, "global");
}

/** Ask once, after a refused `patch_state` that named Global while Global was not wanted. */
export function registerGlobalOffer(host: StateFlowHost, output: CommandOutput): void {
	// A no is asked once: later writes to Global in this runtime are refused without a dialog.
	let declined = false;
	host.pi.on("tool_result", async (event, ctx: ExtensionContext) => {
		if (event.toolName !== "patch_state" || !event.isError || !ctx.hasUI || !namesGlobal(event.input)) return undefined;
		host.bind(ctx);
		const sel = host.selection();
		const wanted = host.admission.receipt(event.toolCallId)?.wanted ?? sel.owners;
		if (sel.mode === "off" || wanted.includes("global") || sel.owners.includes("global") || shapeOf(wanted) !== "scoped") return undefined;
		const yes = !declined && (await ctx.ui.confirm(GLOBAL_OFFER.title, GLOBAL_OFFER.text(sel.owners)));
		declined = !yes;
		// The selection line `/state owners` prints, in the chat when the run ends.
		if (yes) output.line(chooseSelection(host, { mode: sel.mode, owners: OWNERS.filter((o) => o === "global" || sel.owners.includes(o)) }), "info", ctx);
		return { content: [...event.content, { type: "text" as const, text: `\n${yes ? AFTER.yes : AFTER.no}` }] };
	});
}
