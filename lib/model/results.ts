/**
 * Model-facing results of `patch_state` and `read_state` (docs/spec.md §3.4, §4.2): short text that
 * never echoes the whole state, paths relative to the sole owner for the flat interface, and
 * `details` with the canonical operator data for renderers, tests and the transcript.
 */
import { type KeyLens, SAME_KEYS, recordsToModel, reportToModel } from "../core/artifact-keys.js";
import { shownLocator } from "../core/elide.js";
import { inline } from "../core/printable.js";
import { getOwn, isPlainObject, jsonUtf8Bytes, parsePointer, setOwn } from "../core/json.js";
import type { Cascade, DanglingRef, Json, JsonObject, Owner, Pointer, StageReport, StaleArtifact, TransitionRecord } from "../core/types.js";
import { formatSize } from "../core/size.js";
import { MARKER_KEY, modelLocator } from "./head-elide.js";
import { presentCanonical, presentLocator, presentPointer, presentValue, soleOwner } from "./interface.js";

/** `details` of a `patch_state` result: canonical forms only. */
export interface PatchDetails {
	transitionId: string | null;
	scopes: Owner[];
	changed: Pointer[];
	missingDeletions: Pointer[];
	cascades: Cascade[];
	danglingRefs: DanglingRef[];
	artifacts: Json[];
	notices: string[];
}

/** `details` of a `read_state` result. */
export interface ReadDetails {
	/** The locators as the model sent them, in request order. */
	locators: string[];
	/** Their canonical forms (`cwd.tactics`, `cwd[1].tactics`, `cwd.patches[0]`). */
	canonical: string[];
	projection: string;
	/** Transition id per locator (`patches[N]` only; null elsewhere). */
	transitionIds: Array<string | null>;
	/** The transition id when exactly one `patches[N]` was read. */
	transitionId?: string;
	notices: string[];
}

/** A model-facing tool result. */
export interface ToolText<D> {
	content: Array<{ type: "text"; text: string }>;
	details: D;
}

/** Longest drop patch spelled out in a result; a longer one is described instead. */
const MAX_DROP_CHARS = 1200;

/**
 * The one patch that drops every dangling reference the transition reported, in the model's
 * form, so deleting an owned target and tidying its intent is two exact calls, never a guess.
 */
function dropLine(dangling: readonly DanglingRef[], wanted: readonly Owner[]): string | undefined {
	const perOwner: Partial<Record<Owner, JsonObject>> = {};
	for (const d of dangling) if (d.drop !== undefined) setOwn((perOwner[d.owner] ??= {}), d.intent, d.drop);
	const owners = Object.keys(perOwner) as Owner[];
	if (owners.length === 0) return undefined;
	const patch: JsonObject = {};
	for (const owner of owners) {
		const intents = presentValue({ intents: perOwner[owner] as JsonObject }, wanted);
		if (wanted.length === 1) Object.assign(patch, intents);
		else setOwn(patch, owner, intents);
	}
	const text = JSON.stringify(patch);
	if (text.length <= MAX_DROP_CHARS) return `to drop them: patch_state ${text}`;
	return `to drop them: resend ${owners.flatMap((o) => Object.keys(perOwner[o] as JsonObject).map((i) => intentLocator(o, i, wanted))).join(", ")} without those refs`;
}

/** `intents.login` (flat) or `cwd.intents.login` (scoped): where an intent lives, as the model writes it. */
function intentLocator(owner: Owner, intent: string, wanted: readonly Owner[]): string {
	return shownLocator(presentLocator({ kind: "state", scope: owner, offset: 0, plane: "intents", path: [intent] }, wanted));
}

/** One line per list, omitted when empty; lists longer than `max` are counted, not spelled out. */
function listLine(label: string, items: string[], max = 12): string | undefined {
	if (items.length === 0) return undefined;
	const shown = items.slice(0, max).join(", ");
	return `${label}: ${shown}${items.length > max ? ` (+${items.length - max} more)` : ""}`;
}

/** Characters of changed paths spelled out per result; the rest are counted per plane. */
const MAX_CHANGED_CHARS = 2000;

/** `tactics` (flat) or `cwd.tactics` (scoped), a root by its name: where a canonical pointer lives. */
function planeOf(ptr: Pointer, wanted: readonly Owner[]): string {
	const [owner, section, name] = parsePointer(ptr);
	const plane = section === "roots" && name !== undefined ? name : (section ?? "");
	return wanted.length === 1 ? plane : `${owner}.${plane}`;
}

/** `tactics 38, artifacts 2`: how many pointers fall in each plane, in first-seen order. */
function perPlane(ptrs: readonly Pointer[], wanted: readonly Owner[]): string {
	const counts = new Map<string, number>();
	for (const ptr of ptrs) {
		const plane = planeOf(ptr, wanted);
		counts.set(plane, (counts.get(plane) ?? 0) + 1);
	}
	return [...counts].map(([plane, n]) => `${plane} ${n}`).join(", ");
}

/**
 * Every changed path (issue 26: a cleanup is verified from the result, never by reading the
 * state back): spelled out up to `MAX_CHANGED_CHARS`, the rest counted per plane.
 */
function changedLine(ptrs: readonly Pointer[], wanted: readonly Owner[]): string | undefined {
	if (ptrs.length === 0) return undefined;
	const shown: string[] = [];
	let used = 0;
	for (const ptr of ptrs) {
		// A path of long keys shows its start and end: every one fits, the first too.
		const text = shownLocator(presentPointer(ptr, wanted));
		if (used + text.length > MAX_CHANGED_CHARS) break;
		shown.push(text);
		used += text.length + 2;
	}
	const rest = ptrs.slice(shown.length);
	return `changed: ${shown.join(", ")}${rest.length > 0 ? ` (+${rest.length} more: ${perPlane(rest, wanted)})` : ""}`;
}

/** Whether the transition's committed patch deletes what `ptr` names (its member is null there). */
function deletes(ptr: Pointer, records: Partial<Record<Owner, TransitionRecord>>): boolean {
	const [owner, ...path] = parsePointer(ptr);
	let v: Json | undefined = records[owner as Owner]?.patch as JsonObject | undefined;
	for (const seg of path) v = isPlainObject(v) ? getOwn(v, seg) : undefined;
	return v === null;
}

/** `deleted: 3 (tactics 2, artifacts 1)`: deletions, including cascades, counted per plane. */
function deletedLine(ptrs: readonly Pointer[], records: Partial<Record<Owner, TransitionRecord>> | undefined, wanted: readonly Owner[]): string | undefined {
	if (records === undefined) return undefined;
	const gone = ptrs.filter((p) => deletes(p, records));
	return gone.length === 0 ? undefined : `deleted: ${gone.length} (${perPlane(gone, wanted)})`;
}

/** The text and details of a committed (or no-op) patch. */
export function patchResult(input: {
	transitionId: string | null;
	report: StageReport;
	wanted: readonly Owner[];
	artifacts?: Json[];
	notices?: string[];
	/** The committed records, whose patches tell deletions from writes. */
	records?: Partial<Record<Owner, TransitionRecord>>;
	/** How the text shows artifact keys (the folder pi runs in); `details` stay canonical. */
	lens?: KeyLens;
}): ToolText<PatchDetails> {
	const { transitionId, wanted } = input;
	const lens = input.lens ?? SAME_KEYS;
	const report = reportToModel(lens, input.report);
	const records = input.records === undefined ? undefined : recordsToModel(lens, input.records);
	const notices = input.notices ?? [];
	const p = (ptr: Pointer) => shownLocator(presentPointer(ptr, wanted));
	const lines: string[] = [];
	if (transitionId === null) {
		lines.push("No change: the patch matches the current state, so nothing was committed.");
	} else {
		lines.push(`Committed transition ${transitionId}${wanted.length > 1 ? ` (${report.scopes.join("+")})` : ""}.`);
	}
	const extra = [
		changedLine(report.changed, wanted),
		deletedLine(report.changed, records, wanted),
		listLine(
			"cascaded",
			report.cascades.map(
				(c) => `${intentLocator(c.owner, c.intent, wanted)} took ${c.targets.map((t) => shownLocator(presentCanonical(t, wanted))).join(" + ")}`,
			),
		),
		listLine("already absent (null deleted nothing)", report.missingDeletions.map(p)),
		listLine(
			"dangling refs (target is gone; update or drop the ref)",
			report.danglingRefs.map((d) => `${intentLocator(d.owner, d.intent, wanted)} -> ${shownLocator(presentCanonical(d.ref, wanted))}`),
		),
		dropLine(report.danglingRefs, wanted),
	];
	for (const line of extra) if (line !== undefined) lines.push(line);
	lines.push(...notices);
	return {
		content: [{ type: "text", text: lines.join("\n") }],
		details: {
			transitionId,
			scopes: [...input.report.scopes],
			changed: [...input.report.changed],
			missingDeletions: [...input.report.missingDeletions],
			cascades: input.report.cascades,
			danglingRefs: input.report.danglingRefs,
			artifacts: input.artifacts ?? [],
			notices,
		},
	};
}

/** One evaluated locator of a read. */
export interface ReadItem {
	/** As the model sent it. */
	locator: string;
	canonical: string;
	value: Json;
	transitionId?: string;
}

/**
 * UTF-8 bytes of values a batch returns, at most (issue 24): 20 temporal reads of a 3 MiB lazy
 * body would otherwise put 60 MiB into the context and the session file. The first value always
 * comes whole (one value is bounded by its owner's size limit), so reading a value alone always
 * works; each later value that would go over is left out, replaced by a marker (the head's `…`
 * key) naming its size and the locator to read alone.
 */
export const READ_BATCH_BYTES = 256 * 1024;

/** What stands for a batch value left out: its size and how to read it. */
function leftOutMarker(locator: string, bytes: number): JsonObject {
	return { [MARKER_KEY]: `left out: ${formatSize(bytes)}, over the ${formatSize(READ_BATCH_BYTES)} a batch returns; read_state ${locator} alone` };
}

/** A batch's values within `READ_BATCH_BYTES` (the first always whole), the rest as markers. */
function withinCap(values: Json[], locators: readonly string[]): Json[] {
	let used = 0;
	return values.map((v, i) => {
		const n = jsonUtf8Bytes(v);
		if (i > 0 && used + n > READ_BATCH_BYTES) return leftOutMarker(locators[i] ?? "", n);
		used += n;
		return v;
	});
}

/**
 * The text of a read: the JSON of the value (single) or of the values in request order
 * (batch, bounded by `READ_BATCH_BYTES`), under at most a one-line header, then any notices.
 */
export function readResult(input: {
	items: ReadItem[];
	batch: boolean;
	projection: string;
	wanted: readonly Owner[];
	notices?: string[];
}): ToolText<ReadDetails> {
	const { items, wanted } = input;
	const notices = input.notices ?? [];
	const values = items.map((i) => presentValue(i.value, wanted));
	let text: string;
	if (input.batch) {
		const locators = items.map((i) => i.locator);
		text = `${items.length} values in request order: ${locators.join(", ")}\n${JSON.stringify(withinCap(values, locators))}`;
	} else {
		text = JSON.stringify(values[0] ?? null);
	}
	if (notices.length > 0) text += `\n${notices.join("\n")}`;
	const transitionIds = items.map((i) => i.transitionId ?? null);
	const details: ReadDetails = {
		locators: items.map((i) => i.locator),
		canonical: items.map((i) => i.canonical),
		projection: input.projection,
		transitionIds,
		notices,
	};
	const ids = transitionIds.filter((t): t is string => t !== null);
	if (ids.length === 1 && items.length === 1) details.transitionId = ids[0] as string;
	return { content: [{ type: "text", text }], details };
}

/** Hint lines named per result before the rest is counted (the rest are named by later results). */
export const MAX_STALE_HINTS = 5;

/**
 * One line per changed artifact, with the locator the model patches (relative for a sole
 * owner, like the head's `! stale artifact:` lines), at most a few before the rest is counted.
 */
export function staleHintLines(hints: readonly StaleArtifact[], wanted: readonly Owner[]): string[] {
	const lines = hints.slice(0, MAX_STALE_HINTS).map((h) => `Source changed: ${staleMention(h, soleOwner(wanted))}.`);
	if (hints.length > MAX_STALE_HINTS) lines.push(`Source changed: ${hints.length - MAX_STALE_HINTS} more tracked artifacts changed on disk.`);
	return lines;
}

/** How a stale artifact is named to the model (`artifacts["a.ts"]: file changed…`), in the head and in results alike. */
export function staleMention(s: StaleArtifact, sole: Owner | undefined): string {
	return `${modelLocator(sole === undefined ? s.owner : undefined, "artifacts", [s.key])}: ${inline(s.note)}`;
}
