/**
 * Owner history: a checkpoint, a retained tail of transitions and the current state.
 * Invariant: replay(checkpoint, tail) deep-equals state and tail.length <= retention.
 * Temporal reads walk the tail's undo patches backwards, restricted to the path read,
 * and never invent history beyond the retained tail.
 */

import { spellId } from "./printable.js";
import { fail } from "./errors.js";
import { cloneJson, getOwn, isPlainObject, jsonEqual, setOwn } from "./json.js";
import { applyMergePatch, applyPatch } from "./merge.js";
import { emptyState, stateBytes } from "./state.js";
import { PLANES } from "./types.js";
import type { Json, JsonObject, Owner, OwnerHistory, OwnerState, TransitionRecord } from "./types.js";

type Path = readonly (string | number)[];

function cloneState(s: OwnerState): OwnerState {
	const out = emptyState();
	for (const p of PLANES) out[p] = cloneJson(s[p]);
	if (s.roots !== undefined) out.roots = cloneJson(s.roots);
	return out;
}

/** A never-written owner with retention R. */
export function newHistory(owner: Owner, retention: number): OwnerHistory {
	const state = emptyState();
	return { owner, checkpoint: emptyState(), checkpointSeq: 0, tail: [], state, seq: 0, bytes: stateBytes(state), retention };
}

/** Replay `tail` onto a copy of `checkpoint`; returns a fresh state. */
export function replay(checkpoint: OwnerState, tail: readonly TransitionRecord[]): OwnerState {
	const s = cloneState(checkpoint);
	for (const r of tail) applyPatch(s, r.patch);
	return s;
}

/**
 * Rebuild a history from a stored checkpoint and the records after it; folds beyond retention.
 * `owned`: the caller hands `checkpoint` over (freshly parsed, referenced nowhere else), so the
 * history keeps it instead of a copy — one whole-state clone less on every cold load.
 */
export function historyFrom(
	owner: Owner,
	checkpoint: OwnerState,
	checkpointSeq: number,
	records: readonly TransitionRecord[],
	retention: number,
	owned = false,
): OwnerHistory {
	records.forEach((r, i) => {
		if (r.seq !== checkpointSeq + 1 + i) {
			fail(
				"corrupt",
				`${owner} history is damaged: transition \`${spellId(r.id)}\` has seq ${r.seq} but ${checkpointSeq + 1 + i} was expected after checkpoint ${checkpointSeq}; restore the store from a backup or inspect it with \`state-flow\``,
				[owner, "history", i],
			);
		}
	});
	const state = replay(checkpoint, records);
	const h: OwnerHistory = {
		owner,
		checkpoint: owned ? checkpoint : cloneState(checkpoint),
		checkpointSeq,
		tail: records.slice(),
		state,
		seq: checkpointSeq + records.length,
		bytes: stateBytes(state),
		retention,
	};
	fold(h, retention);
	return h;
}

/**
 * Why `history` cannot be adopted whole by another store of `owner` (`state-flow migrate`, either
 * way), or undefined when its retained tail continues its checkpoint seq by seq, every record
 * names the owner, and the tail ends at the head.
 */
export function adoptionProblem(history: OwnerHistory, owner: Owner): string | undefined {
	const bad = history.tail.find((r, i) => r.seq !== history.checkpointSeq + 1 + i || !r.owners.includes(owner));
	if (bad !== undefined) return `the history to adopt is inconsistent at transition \`${spellId(bad.id)}\` (seq ${bad.seq})`;
	const end = history.checkpointSeq + history.tail.length;
	return end === history.seq ? undefined : `the history to adopt ends at seq ${end}, not at its head ${history.seq}`;
}

/**
 * The retained transitions of each history by id, built on first use and kept up to date by
 * `commitRecord` and `fold` (the only code that changes a tail in place), so the question every
 * commit asks — does this owner hold the id already? — costs O(1), not O(retention). An index is
 * built again when its history's tail is another array or another length than it knew.
 */
const byId = new WeakMap<OwnerHistory, { tail: readonly TransitionRecord[]; ids: Map<string, TransitionRecord> }>();

/** The index of `h` while it still describes `h.tail` (before a change the caller makes to both). */
function indexOf(h: OwnerHistory): Map<string, TransitionRecord> | undefined {
	const index = byId.get(h);
	return index !== undefined && index.tail === h.tail ? index.ids : undefined;
}

/** The retained transition of `h` with this id, if there is one. */
export function transitionIn(h: OwnerHistory, id: string): TransitionRecord | undefined {
	let index = byId.get(h);
	if (index === undefined || index.tail !== h.tail || index.ids.size !== h.tail.length) {
		const ids = new Map<string, TransitionRecord>();
		// The first of a repeated id, as a scan would find it (a hand-edited log may repeat one: its index is then rebuilt each time).
		for (const r of h.tail) if (!ids.has(r.id)) ids.set(r.id, r);
		index = { tail: h.tail, ids };
		byId.set(h, index);
	}
	return index.ids.get(id);
}

/** Apply a committed record in place, append it, fold beyond retention. */
export function commitRecord(h: OwnerHistory, record: TransitionRecord, bytesAfter?: number): void {
	if (record.seq !== h.seq + 1) {
		fail("corrupt", `${h.owner} transition \`${spellId(record.id)}\` has seq ${record.seq}, expected ${h.seq + 1}; reload the store and retry`, [h.owner]);
	}
	applyPatch(h.state, record.patch);
	h.tail.push(record);
	const ids = indexOf(h);
	if (ids !== undefined && !ids.has(record.id)) ids.set(record.id, record);
	h.seq = record.seq;
	h.bytes = bytesAfter ?? stateBytes(h.state);
	fold(h, h.retention);
}

/** Fold the oldest records into the checkpoint until at most `retention` remain. */
export function fold(h: OwnerHistory, retention: number): void {
	h.retention = retention;
	while (h.tail.length > retention) {
		const r = h.tail.shift() as TransitionRecord;
		indexOf(h)?.delete(r.id);
		applyPatch(h.checkpoint, r.patch);
		h.checkpointSeq = r.seq;
		h.foldedId = r.id;
	}
}

/** Refuse offsets beyond what the tail holds; `max` is the largest valid offset (-1: none). */
function checkOffset(h: OwnerHistory, offset: number, max: number, what: "an offset" | "a patch index"): void {
	if (!Number.isSafeInteger(offset) || offset < 0) {
		fail("invalid_input", `${what} \`${offset}\` must be a whole number >= 0`, [h.owner]);
	}
	if (offset <= max) return;
	const instead = max >= 0 ? `read ${what} of at most ${max}` : "no transition is retained, so read the current state instead";
	if (h.checkpointSeq > 0) {
		const oldest = h.tail[0];
		if (oldest === undefined) {
			const upTo = h.foldedId === undefined ? "" : ` up to transition ${h.foldedId}`;
			fail(
				"folded",
				`${h.owner} history${upTo} was folded; retention is ${h.retention}: only the current state is kept; read the current state, or raise \`retention\` in config to keep history of future transitions`,
				[h.owner],
			);
		}
		fail(
			"folded",
			`${h.owner} history before transition ${oldest.id} was folded; retention is ${h.retention}; ${instead}, or raise retention for future transitions`,
			[h.owner],
		);
	}
	fail("not_found", `${h.owner} has only ${h.seq} transition${h.seq === 1 ? "" : "s"}; ${instead}`, [h.owner]);
}

/** Read `path` of a value (number segments index arrays, strings key objects). */
function getAt(v: Json | undefined, path: Path): Json | undefined {
	let cur = v;
	for (const seg of path) {
		if (typeof seg === "number") cur = Array.isArray(cur) ? cur[seg] : undefined;
		else cur = isPlainObject(cur) ? getOwn(cur, seg) : undefined;
		if (cur === undefined) return undefined;
	}
	return cur;
}

/**
 * The part of `v` that can influence `path` under merge patches: objects keep only the
 * key on the path, arrays and scalars are kept whole (patches replace them atomically),
 * and an object read with a number segment keeps only its objecthood.
 */
function restrictValue(v: Json | undefined, path: Path): Json | undefined {
	if (v === undefined || path.length === 0) return v === undefined ? undefined : cloneJson(v);
	const [seg, ...rest] = path;
	if (isPlainObject(v)) {
		const out: JsonObject = {};
		if (typeof seg === "string") {
			const child = restrictValue(getOwn(v, seg), rest);
			if (child !== undefined) setOwn(out, seg, child);
		}
		return out;
	}
	return cloneJson(v);
}

/** The part of a merge patch that can influence `path` (same rules as restrictValue). */
function restrictPatch(p: Json | undefined, path: Path): Json | undefined {
	if (p === undefined || path.length === 0 || !isPlainObject(p)) return p;
	const [seg, ...rest] = path;
	const out: JsonObject = {};
	if (typeof seg === "string") {
		const child = restrictPatch(getOwn(p, seg), rest);
		if (child !== undefined) setOwn(out, seg, child);
	}
	return out;
}

/** Walk the tail newest first, yielding the value at `path` before each record. */
function* walkBack(h: OwnerHistory, path: Path, steps: number): Generator<{ record: TransitionRecord; before: Json | undefined; after: Json | undefined }> {
	let view = restrictValue(h.state, path) as Json;
	let after = getAt(view, path);
	for (let i = 0; i < steps; i++) {
		const record = h.tail[h.tail.length - 1 - i] as TransitionRecord;
		const p = restrictPatch(record.undo as JsonObject, path);
		if (p !== undefined) view = applyMergePatch(view, p);
		const before = getAt(view, path);
		yield { record, before, after };
		after = before;
	}
}

/** The value at `path` (`[plane, key, ...]`) `offset` transitions back; offset 0 is current. */
export function valueAt(h: OwnerHistory, offset: number, path: Path): Json | undefined {
	checkOffset(h, offset, h.tail.length, "an offset");
	if (path.length === 0) return stateAt(h, offset);
	let value = getAt(h.state, path);
	if (offset === 0) return value === undefined ? undefined : cloneJson(value);
	for (const step of walkBack(h, path, offset)) value = step.before;
	return value;
}

/** The whole state `offset` transitions back (a fresh copy). */
export function stateAt(h: OwnerHistory, offset: number): OwnerState {
	checkOffset(h, offset, h.tail.length, "an offset");
	const s = cloneState(h.state);
	for (let i = 0; i < offset; i++) applyPatch(s, (h.tail[h.tail.length - 1 - i] as TransitionRecord).undo);
	return s;
}

/** The `n`th latest retained transition (`patches[0]` is the latest). */
export function patchAt(h: OwnerHistory, n: number): TransitionRecord {
	checkOffset(h, n, h.tail.length - 1, "a patch index");
	return h.tail[h.tail.length - 1 - n] as TransitionRecord;
}

/** Retained transitions (newest first) that changed the value at `path`; absent reads as null. */
export function historyOf(h: OwnerHistory, path: Path): Array<{ id: string; at: string; before: Json | null; after: Json | null }> {
	const out: Array<{ id: string; at: string; before: Json | null; after: Json | null }> = [];
	const copy = (v: Json | undefined): Json => (v === undefined ? null : cloneJson(v));
	for (const { record, before, after } of walkBack(h, path, h.tail.length)) {
		if (before === undefined && after === undefined) continue;
		if (before !== undefined && after !== undefined && jsonEqual(before, after)) continue;
		out.push({ id: record.id, at: record.at, before: copy(before), after: copy(after) });
	}
	return out;
}
