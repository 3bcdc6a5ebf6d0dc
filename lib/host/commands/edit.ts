/**
 * Hand edits and tidying from pi: `/state set <locator> <json>`, `/state delete <locator>`,
 * the browser's `e` (the value in $VISUAL/$EDITOR) and `d`, and `/state tidy` (one model turn
 * asked to clean the state up in one `patch_state`). Every edit is one transition signed by
 * the user, through the same commit path as the model's patches; one that deletes more than
 * the value named (cascades) is shown and confirmed first (`--yes` without a UI).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ExtensionCommandContext, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { type EditOp, type EditTarget, parseEditTarget, targetText, valueAtTarget } from "../../core/edit.js";
import { messageOf } from "../../core/errors.js";
import { detach, isPlainObject } from "../../core/json.js";
import { formatKeySegment, type Segment } from "../../core/locator.js";
import { printable, spellId } from "../../core/printable.js";
import { OWNERS, type Json, type Owner, type OwnerState, ROOTS, type TransitionRecord } from "../../core/types.js";
import { artifactRootsFor } from "../../storage/artifacts/files.js";
import { createArtifactCompiler } from "../../storage/artifacts/compiler.js";
import { commitEdit, describeEdit, type EditPreview, previewEdit } from "../../ops/edit.js";
import { loadFor } from "./status.js";
import type { StateFlowHost } from "../runtime.js";

/** Where `/state set|delete|tidy` print: a titled chat message (multi-line) or a notice. */
export interface EditOutput {
	show: (title: string, text: string, level?: "info" | "warning" | "error") => void;
	/** Deliver what waits (output given during a run appears when it ends). */
	flush?: () => void;
}

/** `set`, `delete` and `tidy`: the `/state` words this module answers. */
export const EDIT_VERBS = ["set", "delete", "tidy"] as const;

/** Usage lines for `/state` (commands.ts lists them with the rest). */
export const EDIT_USAGE = [
	"  /state set <locator> <json> [--allow-secret]  set one value by hand (JSON)",
	"  /state delete <locator>       delete one value by hand",
	"  /state tidy                   the model closes, deletes, merges: one change",
];

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

/** A browser tree row's path (`[plane, key, …]`, indexes as text) as an edit target in `state`. */
export function rowTarget(owner: Owner, state: OwnerState, path: readonly string[]): EditTarget | undefined {
	const [plane, ...keys] = path;
	if (plane === undefined) return undefined;
	let v: Json | undefined = (plane === ROOTS ? (state.roots ?? {}) : (state as unknown as Record<string, Json>)[plane]) as Json | undefined;
	const segments: Segment[] = [];
	for (const k of keys) {
		if (Array.isArray(v)) {
			segments.push(Number(k));
			v = v[Number(k)];
		} else if (isPlainObject(v) && Object.hasOwn(v, k)) {
			segments.push(k);
			v = v[k];
		} else return undefined;
	}
	return { owner, plane: plane as EditTarget["plane"], path: segments };
}

/** The browser's hand edits (`e`, `d`) over the live host. */
export interface BrowserEdits {
	/** Open the value in $VISUAL/$EDITOR and set what is saved; what happened in words (a refusal keeps the text for the next `e`). */
	edit(target: EditTarget): Promise<{ text: string; level: "info" | "warning" | "error"; confirm?: PendingEdit }>;
	/** What deleting the value does, to confirm. */
	previewDelete(target: EditTarget): Promise<PendingEdit>;
	/** Commit a confirmed edit; what happened in words. */
	commit(pending: PendingEdit): Promise<string>;
}

/** An edit shown and waiting for `y`. */
export interface PendingEdit {
	preview: EditPreview;
	op: EditOp;
	/** The preview in lines, for the message line (the first) and the detail of the confirmation. */
	lines: string[];
}

/** Runs a program with the terminal handed over (pi's TUI stopped, then started and redrawn). */
export type Suspend = <T>(run: () => T) => T;

/** The editor pi itself uses for its external editor: $VISUAL, else $EDITOR. */
function editorCommand(env: NodeJS.ProcessEnv): string | undefined {
	return env.VISUAL || env.EDITOR || undefined;
}

/**
 * The browser's edits for one `/state browse`. Text the user saved that was refused (not JSON,
 * over a limit, the value changed meanwhile) is kept per locator: the next `e` on that value opens it again.
 */
export function browserEdits(host: StateFlowHost, ctx: ExtensionCommandContext, suspend: Suspend, env: NodeJS.ProcessEnv = process.env): BrowserEdits {
	const kept = new Map<string, string>();
	const stores = () => host.requireStores();
	const pending = async (target: EditTarget, op: EditOp, since?: { value: Json | undefined }): Promise<PendingEdit> => {
		const preview = await previewEdit(stores(), target, op, host.roots.gate, since);
		return { preview, op, lines: describeEdit(preview) };
	};
	const commit = async (p: PendingEdit): Promise<string> => {
		const verb = p.op.kind === "set" ? "edit" : "delete";
		const id = await commitHandEdit(host, p.preview, p.op, `/state ${verb} ${p.preview.text}`, ctx);
		if (id === undefined) return `${p.preview.text}: no change; nothing was written.`;
		kept.delete(p.preview.text);
		return `${verb === "edit" ? "set" : "deleted"} ${p.preview.text} as transition ${id.slice(0, 8)} (/state undo reverts it).`;
	};
	return {
		async edit(target) {
			const where = targetText(target);
			const editor = editorCommand(env);
			if (editor === undefined) return { text: `set $VISUAL or $EDITOR to edit here, or use /state set ${where} <json>.`, level: "warning" };
			const before = valueAtTarget((await stores().load(target.owner)).state, target);
			const original = before === undefined ? "" : `${JSON.stringify(before, null, 2)}\n`;
			const dir = mkdtempSync(join(tmpdir(), "state-flow-edit-"));
			try {
				const file = join(dir, "value.json");
				writeFileSync(file, kept.get(where) ?? original, { mode: 0o600 });
				// As git and pi run an editor: through the shell (so `code --wait` works), the file an argument, never spliced.
				const ran = suspend(() => spawnSync("/bin/sh", ["-c", `${editor} "$1"`, "state-flow-editor", file], { stdio: "inherit", env }));
				if (ran.error !== undefined || ran.status !== 0) {
					return { text: `the editor (${editor}) failed (${ran.error?.message ?? `exit code ${ran.status}`}); nothing was written.`, level: "error" };
				}
				const text = readFileSync(file, "utf8");
				if (text.trim() === "" || text === original) {
					kept.delete(where);
					return { text: `${where}: no change; nothing was written.`, level: "info" };
				}
				try {
					const p = await pending(target, { kind: "set", value: detach(JSON.parse(text)) }, { value: before });
					if (p.preview.noop) return { text: `${where}: no change; nothing was written.`, level: "info" };
					if (p.preview.alsoDeletes.length > 0) {
						kept.set(where, text);
						return { text: p.lines[0] ?? where, level: "warning", confirm: p };
					}
					return { text: await commit(p), level: "info" };
				} catch (e) {
					kept.set(where, text);
					return { text: `refused: ${messageOf(e).split("\n")[0]} — nothing written; e opens your text again.`, level: "error" };
				}
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		},
		previewDelete: (target) => pending(target, { kind: "delete" }),
		commit,
	};
}

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

/** The browser's question for a pending edit, on one line. */
export function editQuestion(p: PendingEdit): string {
	const more = p.preview.alsoDeletes.length;
	const also = more > 0 ? ` (and ${more} entr${more === 1 ? "y" : "ies"} it owns)` : "";
	const verb = p.op.kind === "delete" ? "Delete" : "Set";
	return `${verb} ${p.preview.text}${also}? y = ${verb.toLowerCase()}, any other key = keep`;
}

/** The browser's edits, each followed by a reload of the owners it shows (`then` reloads, whatever the outcome). */
export function reloading(edits: BrowserEdits, then: (change: () => Promise<string>) => Promise<string>): BrowserEdits {
	return {
		edit: async (target) => {
			let answer: Awaited<ReturnType<BrowserEdits["edit"]>> | undefined;
			await then(async () => {
				answer = await edits.edit(target);
				return answer.text;
			});
			return answer as Awaited<ReturnType<BrowserEdits["edit"]>>;
		},
		previewDelete: (target) => edits.previewDelete(target),
		commit: (pending) => then(() => edits.commit(pending)),
	};
}
