/**
 * RFC 7386 JSON Merge Patch over owner state. `applyPatch` is the only code that mutates
 * stored state (in place, values cloned in). `planPatch` is the pure dry run: what changes,
 * which deletions missed, the exact inverse patch and the exact size delta, all computed in
 * time proportional to the patch and the values it replaces, never to the whole state.
 */

import { cloneJson, forgetMeasured, getOwn, hasOwn, isPlainObject, jsonBytes, jsonEqual, setOwn, toPointer } from "./json.js";
import { ROOTS_MEMBER_BYTES } from "./state.js";
import { PLANES, SECTIONS } from "./types.js";
import type { Json, JsonObject, Owner, OwnerState, PlanePatch, Pointer, Section } from "./types.js";

/**
 * Own-key counts of objects that `planPatch` has measured, kept current by `mergeInPlace`
 * (the only mutation of state). Comma arithmetic needs to know whether an object is or
 * becomes empty; counting the keys of a large plane on every write would make each write
 * O(plane size), so the count is taken once and then maintained.
 */
const keyCounts = new WeakMap<JsonObject, number>();

function adjustCount(obj: JsonObject, delta: number): void {
	const n = keyCounts.get(obj);
	if (n !== undefined) keyCounts.set(obj, n + delta);
}

/** Merge an object patch into a plain object in place; values are cloned in. */
function mergeInPlace(target: JsonObject, patch: JsonObject): void {
	forgetMeasured(target);
	for (const key of Object.keys(patch)) {
		const pv = patch[key] as Json;
		const exists = hasOwn(target, key);
		if (pv === null) {
			if (exists) {
				delete target[key];
				adjustCount(target, -1);
			}
			continue;
		}
		if (!exists) adjustCount(target, 1);
		if (isPlainObject(pv)) {
			const cur = getOwn(target, key);
			if (isPlainObject(cur)) mergeInPlace(cur, pv);
			else setOwn(target, key, applyMergePatch(undefined, pv));
			continue;
		}
		setOwn(target, key, cloneJson(pv));
	}
}

/** RFC 7386 on a single value: returns a new value and shares nothing with either input. */
export function applyMergePatch(target: Json | undefined, patch: Json): Json {
	if (!isPlainObject(patch)) return cloneJson(patch);
	const out: JsonObject = isPlainObject(target) ? cloneJson(target) : {};
	mergeInPlace(out, patch);
	return out;
}

/** Apply a per-plane merge patch to `state` in place. Idempotent. A `roots` patch creates the namespace. */
export function applyPatch(state: OwnerState, patch: PlanePatch): void {
	forgetMeasured(state);
	for (const plane of PLANES) {
		const p = patch[plane];
		if (p !== undefined) mergeInPlace(state[plane], p);
	}
	if (patch.roots !== undefined) mergeInPlace((state.roots ??= {}), patch.roots);
}

/** The dry run of one owner's patch against its current state. */
export interface PatchPlan {
	/** Nothing would change (missing deletions may still be reported). */
	noop: boolean;
	/** Canonical pointers (`/cwd/tactics/step1`) of the deepest keys set, replaced or deleted. */
	changed: Pointer[];
	/** Canonical pointers of `null`s aimed at keys that do not exist. */
	missingDeletions: Pointer[];
	/** Exact inverse merge patch: applying `patch` then `undo` restores the prior state. */
	undo: PlanePatch;
	/** `stateBytes(after) - stateBytes(before)`. */
	bytesDelta: number;
}

interface Acc {
	changed: Pointer[];
	missing: Pointer[];
	bytes: number;
}

/** Serialised length of an object member's key plus its colon. */
function memberHead(key: string): number {
	return JSON.stringify(key).length + 1;
}

/** Own-key count of `obj`: measured once, then maintained by `mergeInPlace`. */
function keyCount(obj: JsonObject): number {
	let n = keyCounts.get(obj);
	if (n === undefined) {
		n = Object.keys(obj).length;
		keyCounts.set(obj, n);
	}
	return n;
}

/** Collect missing deletions inside a value that is being created from scratch. */
function collectNullsInNew(patch: JsonObject, path: (string | number)[], acc: Acc): void {
	for (const key of Object.keys(patch)) {
		const pv = patch[key] as Json;
		path.push(key);
		if (pv === null) acc.missing.push(toPointer(path));
		else if (isPlainObject(pv)) collectNullsInNew(pv, path, acc);
		path.pop();
	}
}

/** Plan `patch` against the existing object `cur`; returns the undo patch for this level. */
function planObject(cur: JsonObject, patch: JsonObject, path: (string | number)[], acc: Acc): JsonObject {
	const undo: JsonObject = {};
	let added = 0;
	let removed = 0;
	for (const key of Object.keys(patch)) {
		const pv = patch[key] as Json;
		const exists = hasOwn(cur, key);
		const old = exists ? (cur[key] as Json) : undefined;
		path.push(key);
		if (pv === null) {
			if (exists) {
				acc.changed.push(toPointer(path));
				setOwn(undo, key, cloneJson(old as Json));
				acc.bytes -= memberHead(key) + jsonBytes(old as Json);
				removed++;
			} else {
				acc.missing.push(toPointer(path));
			}
		} else if (isPlainObject(pv) && isPlainObject(old)) {
			const sub = planObject(old, pv, path, acc);
			if (Object.keys(sub).length > 0) setOwn(undo, key, sub);
		} else {
			const next = isPlainObject(pv) ? applyMergePatch(undefined, pv) : pv;
			if (isPlainObject(pv)) collectNullsInNew(pv, path, acc);
			if (!exists || !jsonEqual(old as Json, next)) {
				acc.changed.push(toPointer(path));
				if (exists) {
					setOwn(undo, key, cloneJson(old as Json));
					acc.bytes += jsonBytes(next) - jsonBytes(old as Json);
				} else {
					setOwn(undo, key, null);
					acc.bytes += memberHead(key) + jsonBytes(next);
					added++;
				}
			}
		}
		path.pop();
	}
	if (added + removed > 0) {
		// Commas: n members serialise with max(n - 1, 0) commas.
		const before = keyCount(cur);
		const after = before + added - removed;
		acc.bytes += Math.max(after - 1, 0) - Math.max(before - 1, 0);
	}
	return undo;
}

/**
 * Plan the roots namespace like planes: each root is an object the patch merges into, so
 * changes are reported inside it (`/cwd/roots/todos/a`), not as the root as a whole. A root
 * that does not exist yet is created by the merge (even when its patch only deletes), so
 * its size is counted and its undo removes it again.
 */
function planRoots(owner: Owner, roots: JsonObject, patch: JsonObject, acc: Acc): JsonObject {
	const undo: JsonObject = {};
	let added = 0;
	let removed = 0;
	for (const name of Object.keys(patch)) {
		const pv = patch[name] as Json;
		const exists = hasOwn(roots, name);
		const cur = exists ? (roots[name] as Json) : undefined;
		const path = [owner, "roots", name];
		if (pv === null) {
			if (!exists) {
				acc.missing.push(toPointer(path));
				continue;
			}
			acc.changed.push(toPointer(path));
			setOwn(undo, name, cloneJson(cur as Json));
			acc.bytes -= memberHead(name) + jsonBytes(cur as Json);
			removed++;
		} else if (isPlainObject(cur) && isPlainObject(pv)) {
			const u = planObject(cur, pv, path, acc);
			if (Object.keys(u).length > 0) setOwn(undo, name, u);
		} else {
			// A new root (or a damaged non-object one): the merge creates it, even when its patch only deletes.
			if (isPlainObject(pv)) {
				planObject({}, pv, path, acc);
				acc.bytes += 2;
			} else {
				acc.changed.push(toPointer(path));
				acc.bytes += jsonBytes(pv);
			}
			acc.bytes += exists ? -jsonBytes(cur as Json) : memberHead(name);
			if (!exists) added++;
			setOwn(undo, name, exists ? cloneJson(cur as Json) : null);
		}
	}
	if (added + removed > 0) {
		const before = keyCount(roots);
		acc.bytes += Math.max(before + added - removed - 1, 0) - Math.max(before - 1, 0);
	}
	return undo;
}

/** Pure dry run of `patch` on `owner`'s `state`; see PatchPlan. */
export function planPatch(owner: Owner, state: OwnerState, patch: PlanePatch): PatchPlan {
	const acc: Acc = { changed: [], missing: [], bytes: 0 };
	const undo: PlanePatch = {};
	for (const plane of PLANES) {
		const p = patch[plane];
		if (p === undefined) continue;
		const u = planObject(state[plane], p, [owner, plane], acc);
		if (Object.keys(u).length > 0) undo[plane] = u;
	}
	if (patch.roots !== undefined) {
		const u = planRoots(owner, state.roots ?? {}, patch.roots, acc);
		if (Object.keys(u).length > 0) undo.roots = u;
		// `applyPatch` creates the namespace for any roots patch of a transition that changes something.
		if (state.roots === undefined && acc.changed.length > 0) acc.bytes += ROOTS_MEMBER_BYTES;
	}
	return {
		noop: acc.changed.length === 0,
		changed: acc.changed,
		missingDeletions: acc.missing,
		undo,
		bytesDelta: acc.bytes,
	};
}

/** One leaf a merge patch sets or deletes: objects with keys merge (recursed into), anything else is a leaf. */
export interface PatchLeaf {
	plane: Section;
	path: string[];
	deleted: boolean;
}

/** Every leaf of a per-owner patch, in plane order then key order (for history and notices). */
export function patchLeaves(patch: PlanePatch): PatchLeaf[] {
	const out: PatchLeaf[] = [];
	const walk = (plane: Section, value: Json, path: string[]): void => {
		if (isPlainObject(value) && Object.keys(value).length > 0) {
			for (const key of Object.keys(value)) walk(plane, value[key] as Json, [...path, key]);
		} else if (path.length > 0) out.push({ plane, path, deleted: value === null });
	};
	for (const plane of SECTIONS) {
		const p = patch[plane];
		if (p !== undefined) walk(plane, p, []);
	}
	return out;
}

/**
 * The RFC 7386 merge patch that turns `from` into `to`: deletions as `null`, objects
 * recursed, everything else replaced (values cloned). Empty when two objects are equal.
 * `to` must hold no `null` object members (a merge patch cannot write them).
 */
export function mergeDiff(from: JsonObject, to: JsonObject): JsonObject;
export function mergeDiff(from: Json | undefined, to: Json): Json;
export function mergeDiff(from: Json | undefined, to: Json): Json {
	if (!isPlainObject(from) || !isPlainObject(to)) return cloneJson(to);
	const out: JsonObject = {};
	for (const key of Object.keys(from)) if (!hasOwn(to, key)) setOwn(out, key, null);
	for (const key of Object.keys(to)) {
		const a = getOwn(from, key);
		const b = to[key] as Json;
		if (a === undefined) setOwn(out, key, cloneJson(b));
		else if (!jsonEqual(a, b)) setOwn(out, key, mergeDiff(a, b));
	}
	return out;
}
