/**
 * Hand edits from pi: `/state set <locator> <json>` and `/state delete <locator>`, and the
 * commit the browser's `e` and `d` share (`commitHandEdit`). Every edit is one transition signed
 * by the user, through the same commit path as the model's patches; one that deletes more than
 * the value named (cascades) is shown and confirmed first (`--yes` without a UI).
 */
import { type ExtensionCommandContext, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { type EditOp, parseEditTarget, targetText } from "../../core/edit.js";
import { messageOf } from "../../core/errors.js";
import { detach } from "../../core/json.js";
import { artifactRootsFor } from "../../storage/artifacts/files.js";
import { createArtifactCompiler } from "../../storage/artifacts/compiler.js";
import { commitEdit, describeEdit, type EditPreview, previewEdit } from "../../ops/edit.js";
import type { StateFlowHost } from "../runtime.js";

/** Where `/state set|delete|tidy` print: a titled chat message (multi-line) or a notice. */
export interface EditOutput {
	show: (title: string, text: string, level?: "info" | "warning" | "error") => void;
	/** Deliver what waits (output given during a run appears when it ends). */
	flush?: () => void;
}

/**
 * `--allow-secret` (the one-command override of the credential check, `CommitOptions.allowSecret`,
 * typed by the user only) taken off a `/state set` argument text: as a word before the locator,
 * right after it, or at the end — never inside the JSON value, which keeps its spaces as typed.
 */
function takeAllowSecret(raw: string): { raw: string; allowSecret: boolean } {
	const lead = /^\s*--allow-secret(?:\s+|$)/;
	if (lead.test(raw)) return { raw: raw.replace(lead, ""), allowSecret: true };
	const [first, rest] = splitFirst(raw);
	if (lead.test(rest)) return { raw: `${first} ${rest.replace(lead, "")}`, allowSecret: true };
	const end = /\s--allow-secret\s*$/;
	if (end.test(rest)) return { raw: `${first} ${rest.replace(end, "")}`, allowSecret: true };
	return { raw, allowSecret: false };
}

/** Split `<locator> <rest>` off a raw argument text, keeping the rest as typed (JSON may hold spaces). */
function splitFirst(text: string): [string, string] {
	const trimmed = text.trim();
	const at = trimmed.search(/\s/);
	return at < 0 ? [trimmed, ""] : [trimmed.slice(0, at), trimmed.slice(at + 1).trim()];
}

/** Commit a previewed edit as the user, through the artifact compiler and the roots' gate; the transition's id, or undefined for no change. */
export async function commitHandEdit(
	host: StateFlowHost,
	preview: EditPreview,
	op: EditOp,
	command: string,
	ctx: ExtensionCommandContext,
	allowSecret = false,
): Promise<string | undefined> {
	const compile = createArtifactCompiler(artifactRootsFor(ctx.cwd, host.options.agentDir, host.project(ctx)), { parseFrontmatter });
	const result = await commitEdit(host.requireStores(), preview, op, {
		by: { kind: "command", command },
		id: host.options.newId(),
		at: host.options.now().toISOString(),
		roots: host.roots.gate,
		prepare: (patch, histories) => compile(patch, histories),
		...(allowSecret ? { allowSecret: true } : {}),
	});
	await host.roots.sync();
	host.showStatus();
	return result.noop ? undefined : result.transitionId;
}

/** What an edit's preview says, then what happened. */
function outcomeText(preview: EditPreview, id: string | undefined): string {
	const lines = describeEdit(preview);
	lines.push(id === undefined ? "No change; nothing was written." : `Done as transition ${id.slice(0, 8)} (/state undo reverts it).`);
	return lines.join("\n");
}

/** `/state set <locator> <json>` and `/state delete <locator> [--yes]`. */
export async function runEditCommand(host: StateFlowHost, verb: "set" | "delete", typed: string, out: EditOutput, ctx: ExtensionCommandContext): Promise<void> {
	const { raw, allowSecret } = verb === "set" ? takeAllowSecret(typed) : { raw: typed, allowSecret: false };
	const [first, rest] = splitFirst(raw);
	const words = rest.split(/\s+/).filter((w) => w !== "");
	const yes = verb === "delete" && words.includes("--yes");
	if (first === "")
		return out.show("usage", `\`${verb}\` needs a locator, e.g. \`/state ${verb} cwd.tactics.next${verb === "set" ? ' "parse"' : ""}\`.`, "warning");
	if (verb === "delete" && words.some((w) => w !== "--yes")) return out.show("usage", "`delete` takes one locator (and `--yes`).", "warning");
	let op: EditOp;
	if (verb === "delete") op = { kind: "delete" };
	else {
		if (rest === "") return out.show("usage", '`set` needs a JSON value after the locator, e.g. `/state set cwd.tactics.next "parse"`.', "warning");
		let value: unknown;
		try {
			value = JSON.parse(rest);
		} catch (e) {
			return out.show("set", `the value is not JSON (${messageOf(e)}); a string needs its quotes, e.g. "write the parser". Nothing was written.`, "warning");
		}
		op = { kind: "set", value: detach(value) };
	}
	const target = parseEditTarget(first);
	const preview = await previewEdit(host.requireStores(), target, op, host.roots.gate);
	if (preview.noop) return out.show(verb, outcomeText(preview, undefined));
	if (preview.alsoDeletes.length > 0 && !yes) {
		const shown = describeEdit(preview).join("\n");
		const agreed = ctx.hasUI && (await ctx.ui.confirm(`State Flow: ${verb} ${targetText(target)}?`, `${shown}\n\nThis deletes more than the value named.`));
		if (!agreed) {
			const how = ctx.hasUI
				? "Kept: nothing was written."
				: verb === "delete"
					? "Nothing was written: add --yes to delete them too (no dialog can ask here)."
					: "Nothing was written: it deletes more than the value, and no dialog can ask here; delete those first (/state delete … --yes).";
			return out.show(verb, `${shown}\n${how}`, "warning");
		}
	}
	const id = await commitHandEdit(host, preview, op, `/state ${verb} ${targetText(target)}`, ctx, allowSecret);
	return out.show(verb, outcomeText(preview, id));
}
