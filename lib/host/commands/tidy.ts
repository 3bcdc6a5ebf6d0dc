/**
 * `/state tidy`: one model turn asked to clean the wanted owners up in one `patch_state` (close
 * finished intents, delete stale tactics, merge duplicates); when the run ends, the transitions
 * it made, each with its id for `/state undo`. A model turn, not a hand edit: nothing is
 * written here.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { messageOf } from "../../core/errors.js";
import { formatKeySegment } from "../../core/locator.js";
import { printable, spellId } from "../../core/printable.js";
import { OWNERS, type Owner, type TransitionRecord } from "../../core/types.js";
import type { EditOutput } from "./edit.js";
import { loadFor } from "./status.js";
import type { StateFlowHost } from "../runtime.js";

/** The instruction `/state tidy` sends the model: one turn, one `patch_state`, nothing invented. */
export function tidyPrompt(owners: readonly Owner[]): string {
	return [
		`Tidy the State Flow state of ${owners.join(" and ")} now, in ONE patch_state call (so /state undo reverts it as one change):`,
		"- close intents that are finished (set their status as the state records it, or delete them when nothing refers to them);",
		"- delete tactics that are stale: done, abandoned, or owned by no open intent;",
		"- merge duplicates: keep one entry with the combined content and delete the others.",
		"Read the state first if you need to. Change nothing else, invent nothing, and if nothing needs tidying, make no call and say so.",
	].join("\n");
}

/** Transitions the owners gained since `before` (their seqs then), newest first. */
async function gained(
	host: StateFlowHost,
	owners: readonly Owner[],
	before: Partial<Record<Owner, number>>,
): Promise<Array<{ owner: Owner; record: TransitionRecord }>> {
	const out: Array<{ owner: Owner; record: TransitionRecord }> = [];
	for (const owner of owners) {
		const h = await loadFor(host, owner);
		if (!h.ok) continue;
		for (const record of h.value.tail) if (record.seq > (before[owner] ?? 0)) out.push({ owner, record });
	}
	return out.sort((a, b) => (a.record.at < b.record.at ? 1 : a.record.at > b.record.at ? -1 : 0));
}

/** What each host's tidy run shows when it ends (at most one: a tidy is refused while the model answers). */
const afterTidy = new WeakMap<StateFlowHost, () => Promise<void>>();

/** Listen for the end of a tidy run (once per host, beside the `/state` command). */
export function registerTidyHook(host: StateFlowHost): void {
	host.pi.on("agent_end", async () => {
		const report = afterTidy.get(host);
		afterTidy.delete(host);
		await report?.();
	});
}

/**
 * `/state tidy`: one model turn asked to tidy the wanted owners; when the run ends, the
 * transitions it made, each with its id for `/state undo`. Refused while the model is answering
 * (a prompt sent then would join that run) and when State Flow is off (the model has no tools).
 */
export async function runTidy(host: StateFlowHost, args: string, out: EditOutput, ctx: ExtensionCommandContext): Promise<void> {
	if (args.trim() !== "") return out.show("usage", "`tidy` takes no argument.", "warning");
	const sel = host.selection();
	if (sel.mode === "off") return out.show("tidy", "State Flow is off: the model has no state tools. Turn it on (`/state active`) first.", "warning");
	if (!ctx.isIdle()) return out.show("tidy", "The model is answering; run /state tidy when it is done.", "warning");
	const owners = OWNERS.filter((o) => sel.owners.includes(o));
	const before: Partial<Record<Owner, number>> = {};
	for (const owner of owners) {
		const h = await loadFor(host, owner);
		if (h.ok) before[owner] = h.value.seq;
	}
	afterTidy.set(host, async () => {
		try {
			out.show("tidy", tidyReport(await gained(host, owners, before)));
		} catch (e) {
			out.show("tidy", `cannot list what the tidy changed: ${messageOf(e)}`, "error");
		}
		// Inside agent_end pi still counts as streaming: the message is delivered once it is idle.
		setTimeout(() => out.flush?.(), 0);
	});
	try {
		host.pi.sendUserMessage(tidyPrompt(owners));
	} catch (e) {
		// No run started: nothing to report at the next one.
		afterTidy.delete(host);
		throw e;
	}
}

/** What a tidy run made, newest first, and how to undo it. */
function tidyReport(made: Array<{ owner: Owner; record: TransitionRecord }>): string {
	const ids = [...new Set(made.map((m) => m.record.id))];
	if (ids.length === 0) return "The model changed nothing: the state needs no tidying, by its reading.";
	const lines = [`The model made ${ids.length} transition${ids.length === 1 ? "" : "s"}:`];
	for (const { owner, record } of made) {
		const leaves = Object.entries(record.patch).flatMap(([plane, p]) =>
			Object.keys(p ?? {}).map((k) => printable(`${plane}${formatKeySegment(k)}${p?.[k] === null ? " (deleted)" : ""}`)),
		);
		const shown = leaves.slice(0, 6).join(", ") + (leaves.length > 6 ? ` +${leaves.length - 6}` : "");
		lines.push(`  ${owner} #${record.seq} ${spellId(record.id.slice(0, 8))}: ${shown}`);
		for (const c of record.cascades) lines.push(`    cascade: intents${printable(formatKeySegment(c.intent))} took ${c.targets.length} target(s)`);
	}
	lines.push(ids.length === 1 ? `/state undo ${ids[0]?.slice(0, 8)} reverts it as one change.` : "/state undo reverts them one at a time, newest first.");
	return lines.join("\n");
}
