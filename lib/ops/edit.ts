/**
 * A hand edit (`/state set|delete`, the browser's `e`/`d`, `state-flow set|delete|edit`) as one
 * transition through the normal commit path: previewed first (what it changes, what cascades
 * with it), then committed only if, under the store's lock, the value and the cascades are
 * still what the preview showed — a teammate's or the model's write in between refuses it.
 */
import fastJsonPatch from "fast-json-patch";
import { fail } from "../core/errors.js";
import { cascadeTargets, type EditOp, type EditTarget, editPatch, stillAt, targetText, valueAtTarget } from "../core/edit.js";
import { jsonEqual } from "../core/json.js";
import { formatKeySegment } from "../core/locator.js";
import { printable } from "../core/printable.js";
import { stage } from "../core/stage.js";
import type { CanonicalPatch, Json, Owner, OwnerHistory, Provenance, RootGate, StageReport } from "../core/types.js";
import type { CommitResult, CommitEffects, Stores } from "../storage/stores.js";

const { compare, unescapePathComponent } = fastJsonPatch;

/** What an edit will do, shown before it happens. */
export interface EditPreview {
	target: EditTarget;
	/** The target as the user names it, e.g. `cwd.tactics.next`. */
	text: string;
	before: Json | undefined;
	after: Json | undefined;
	patch: CanonicalPatch;
	/** Staged against the state the preview read: changed pointers, cascades, dangling references. */
	report: StageReport;
	/** Nothing would change. */
	noop: boolean;
	/** Canonical locators the edit deletes besides the value it names (cascades): a reason to ask first. */
	alsoDeletes: string[];
}

const PREVIEW_META = { id: "preview", at: "1970-01-01T00:00:00.000Z", by: { kind: "system", reason: "preview" } as Provenance };

function previewOf(h: OwnerHistory, target: EditTarget, op: EditOp, stores: Stores, roots: RootGate | undefined): EditPreview {
	const patch = editPatch(h.state, target, op);
	const histories: Partial<Record<Owner, OwnerHistory>> = { [target.owner]: h };
	const staged = stage(histories, patch, { ...PREVIEW_META, ...(roots ? { roots } : {}) }, stores.limits);
	return {
		target,
		text: targetText(target),
		before: valueAtTarget(h.state, target),
		after: op.kind === "set" ? op.value : undefined,
		patch,
		report: staged.report,
		noop: staged.noop,
		alsoDeletes: cascadeTargets(staged.report),
	};
}

/**
 * Plan an edit on the owner's current state (throws a `StateError` for a bad target, value or
 * limit). `since`: the value the user started from (an editor opened on it); refused when it is
 * no longer there.
 */
export async function previewEdit(stores: Stores, target: EditTarget, op: EditOp, roots?: RootGate, since?: { value: Json | undefined }): Promise<EditPreview> {
	const h = await stores.load(target.owner);
	if (since !== undefined && !stillAt(h.state, target, since.value)) changedMeanwhile(targetText(target));
	return previewOf(h, target, op, stores, roots);
}

function changedMeanwhile(text: string): never {
	return fail("aborted", `\`${text}\` changed since it was shown (another session or process wrote it); nothing was written. Look again and retry.`);
}

/** Commit a previewed edit, refused (nothing written) when the owner changed where it matters since the preview. */
export function commitEdit(
	stores: Stores,
	preview: EditPreview,
	op: EditOp,
	opts: {
		by: Provenance;
		id: string;
		at: string;
		roots?: RootGate;
		prepare?: (patch: CanonicalPatch, histories: Partial<Record<Owner, OwnerHistory>>) => CommitEffects;
		/** `--allow-secret`: the user said this edit's text is no secret (`CommitOptions.allowSecret`). */
		allowSecret?: boolean;
	},
): Promise<CommitResult> {
	const { target } = preview;
	return stores.commit(preview.patch, {
		by: opts.by,
		id: opts.id,
		at: opts.at,
		...(opts.roots ? { roots: opts.roots } : {}),
		...(opts.allowSecret === true ? { allowSecret: true } : {}),
		prepare: (patch, histories) => {
			const h = histories[target.owner];
			const again = h === undefined ? undefined : previewOf(h, target, op, stores, opts.roots);
			if (h === undefined || again === undefined || !stillAt(h.state, target, preview.before) || !jsonEqual(again.alsoDeletes, preview.alsoDeletes)) {
				changedMeanwhile(preview.text);
			}
			return opts.prepare ? opts.prepare(patch, histories) : { patch, apply: () => {}, revert: () => {} };
		},
	});
}

/** One JSON value on one line, cut to `width` columns with `…` (stored text is data: controls spelled out). */
function oneLine(v: Json | undefined, width: number): string {
	return clip(v === undefined ? "(nothing)" : JSON.stringify(v), width);
}

/** Text cut to `width` columns with `…`, controls spelled out. */
function clip(text: string, width: number): string {
	const shown = printable(text);
	return shown.length <= width ? shown : `${shown.slice(0, Math.max(1, width - 1))}…`;
}

/** The value at a JSON pointer, by own members only (fast-json-patch's lookup refuses `__proto__`, a key a store may hold). */
function atPointer(v: Json | undefined, pointer: string): Json | undefined {
	for (const token of pointer.split("/").slice(1).map(unescapePathComponent)) {
		if (v === null || typeof v !== "object" || !Object.hasOwn(v, token)) return undefined;
		v = (v as Record<string, Json>)[token];
	}
	return v;
}

/** At most this many changed members are listed; the rest are counted. */
const MAX_DIFF_LINES = 12;

/**
 * What an edit does, in lines of at most `width` columns: the value before and after (for two
 * objects or arrays, the members that differ, from fast-json-patch's `compare`), then what it
 * deletes besides and the references it leaves dangling.
 */
export function describeEdit(p: EditPreview, width = 80): string[] {
	const verb = p.after === undefined ? "delete" : "set";
	const lines = [`${verb} ${printable(p.text)}${p.noop ? " — no change" : ""}`];
	const room = width - 4;
	const structured = (v: Json | undefined) => v !== null && typeof v === "object";
	if (structured(p.before) && structured(p.after)) {
		const ops = compare(p.before as object, p.after as object);
		for (const op of ops.slice(0, MAX_DIFF_LINES)) {
			const sign = op.op === "remove" ? "-" : op.op === "add" ? "+" : "~";
			const fit = Math.max(8, room - op.path.length - 2);
			const was = op.op === "replace" ? `${oneLine(atPointer(p.before as Json, op.path), Math.floor(fit / 2) - 2)} → ` : "";
			const value = "value" in op ? `: ${was}${oneLine(op.value as Json, fit - was.length)}` : "";
			lines.push(`  ${sign} ${clip(op.path, room)}${value}`.slice(0, width));
		}
		if (ops.length > MAX_DIFF_LINES) lines.push(`  … and ${ops.length - MAX_DIFF_LINES} more change(s)`);
	} else if (!p.noop) {
		if (p.before !== undefined) lines.push(`  - ${oneLine(p.before, room)}`);
		if (p.after !== undefined) lines.push(`  + ${oneLine(p.after, room)}`);
	}
	if (p.alsoDeletes.length > 0) {
		lines.push(`  also deletes ${p.alsoDeletes.length} entr${p.alsoDeletes.length === 1 ? "y" : "ies"} owned by what it removes:`);
		for (const t of p.alsoDeletes.slice(0, MAX_DIFF_LINES)) lines.push(`    ${clip(t, width - 4)}`);
		if (p.alsoDeletes.length > MAX_DIFF_LINES) lines.push(`    … and ${p.alsoDeletes.length - MAX_DIFF_LINES} more`);
	}
	for (const ref of leftDangling(p).slice(0, MAX_DIFF_LINES)) lines.push(`  leaves ${clip(ref, width - 20)} dangling`);
	return lines;
}

/** The references an edit leaves pointing at nothing, as the user reads them: `cwd.intents.parser -> cwd.tactics.lex`. */
function leftDangling(p: EditPreview): string[] {
	return p.report.danglingRefs.map((d) => `${d.owner}.intents${formatKeySegment(d.intent)} -> ${d.ref}`);
}

/**
 * What an edit does besides the value named, in the few words a one-line question has room for
 * (the browser's `d`), the same facts `describeEdit` lists: the entries it deletes with it and
 * the references it leaves dangling (one named, more counted). Empty when it does nothing more.
 */
export function editAlso(p: EditPreview): string {
	const parts: string[] = [];
	const more = p.alsoDeletes.length;
	if (more > 0) parts.push(`and ${more} entr${more === 1 ? "y" : "ies"} it owns`);
	const dangling = leftDangling(p);
	if (dangling.length === 1) parts.push(`leaves ${printable(dangling[0] as string)} dangling`);
	else if (dangling.length > 1) parts.push(`leaves ${dangling.length} references dangling`);
	return parts.join("; ");
}
