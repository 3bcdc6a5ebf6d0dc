/**
 * The browser's hand edits (`/state browse`): `e` opens the selected value in $VISUAL/$EDITOR
 * and sets what is saved, `d` deletes it after `y`. Each is one transition signed by the user
 * through `/state`'s own commit (`commitHandEdit`); one that deletes more than the value named
 * is shown and confirmed first, and `d`'s question says what goes with the value and what it
 * leaves dangling in `state-flow delete`'s words (`editAlso`).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { type EditOp, type EditTarget, targetText, valueAtTarget } from "../../core/edit.js";
import { messageOf } from "../../core/errors.js";
import { detach, isPlainObject } from "../../core/json.js";
import type { Segment } from "../../core/locator.js";
import { type Json, type Owner, type OwnerState, ROOTS } from "../../core/types.js";
import { describeEdit, editAlso, type EditPreview, previewEdit } from "../../ops/edit.js";
import { commitHandEdit } from "../commands/edit.js";
import type { StateFlowHost } from "../runtime.js";

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

/** The browser's question for a pending edit, on one line. */
export function editQuestion(p: PendingEdit): string {
	const more = editAlso(p.preview);
	const also = more === "" ? "" : ` (${more})`;
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
