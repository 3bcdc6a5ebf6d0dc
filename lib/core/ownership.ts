/**
 * Ownership and cascades (docs/spec.md §3.3). An intent owns every same-owner top-level `tactics`
 * or `lazy` entry that a current structured reference inside it points to. Deleting an
 * intent deletes the entries it owned that no remaining intent references. Work is
 * proportional to the patch plus the intents plane, and zero for ordinary writes.
 */
import { getOwn, hasOwn, isPlainObject, jsonEqual, setOwn } from "./json.js";
import { formatLocator, tryParseLocator } from "./locator.js";
import { applyMergePatch } from "./merge.js";
import { isRef, refsIn } from "./refs.js";
import { OWNABLE_PLANES, type Cascade, type DanglingRef, type Json, type JsonObject, type Owner, type OwnerState, type PlanePatch } from "./types.js";

type OwnablePlane = (typeof OWNABLE_PLANES)[number];

/** A top-level ownable entry, identified as `<plane>\0<key>`. */
interface OwnedTarget {
	id: string;
	plane: OwnablePlane;
	key: string;
}

/** The entry a reference string points into, when it can be owned by an intent of `owner`. */
function ownedTarget(ref: string, owner: Owner): OwnedTarget | undefined {
	const loc = tryParseLocator(ref, "canonical");
	if (loc?.kind !== "state" || loc.scope !== owner || loc.offset !== 0) return undefined;
	const plane = loc.plane;
	const key = loc.path[0];
	if (plane !== "tactics" && plane !== "lazy") return undefined;
	if (typeof key !== "string") return undefined;
	return { id: `${plane}\0${key}`, plane, key };
}

/** The same-owner `tactics` and `lazy` keys an intent value owns (docs/spec.md §3.3), in document order. */
export function ownedEntries(value: Json, owner: Owner): Array<{ plane: OwnablePlane; key: string }> {
	return targetsOf(value, owner).map(({ target }) => ({ plane: target.plane, key: target.key }));
}

/** Targets referenced by one intent value, with the reference strings that name them. */
function targetsOf(value: Json, owner: Owner): Array<{ ref: string; target: OwnedTarget }> {
	const out: Array<{ ref: string; target: OwnedTarget }> = [];
	for (const ref of refsIn(value)) {
		const target = ownedTarget(ref, owner);
		if (target) out.push({ ref, target });
	}
	return out;
}

function sortedKeys(obj: JsonObject): string[] {
	return Object.keys(obj).sort();
}

/**
 * What a patch to one owner does to ownership: the owned entries deleting intents takes with
 * them (`cascades`, `extraDeletions`) and the references it leaves dangling.
 */
export function planCascades(
	owner: Owner,
	state: OwnerState,
	patch: PlanePatch,
): { cascades: Cascade[]; extraDeletions: PlanePatch; danglingRefs: DanglingRef[] } {
	const removed = removedByPatch(state, patch);
	if (patch.intents === undefined && removed.size === 0) return { cascades: [], extraDeletions: {}, danglingRefs: [] };
	const intents = intentsAfter(state, patch.intents);
	// Only deletions need the whole intents plane; plain intent writes check just themselves.
	const remaining = remainingTargets(owner, state, intents, intents.deleted.length > 0 || removed.size > 0);
	const { cascades, extraDeletions } = cascadeDeletions(owner, state, patch, intents.deleted, remaining, removed);
	const danglingRefs = danglingAfter(owner, state, patch, intents.written, remaining, removed);
	return { cascades, extraDeletions, danglingRefs };
}

/** The patch writes this target (an explicit write wins over a cascade and is never dangling). */
function patchWrites(patch: PlanePatch, t: OwnedTarget): boolean {
	const p = patch[t.plane];
	const v = p === undefined ? undefined : getOwn(p, t.key);
	return v !== undefined && v !== null;
}

/** Ownable entries the patch itself deletes (that exist), as `OwnedTarget` ids. */
function removedByPatch(state: OwnerState, patch: PlanePatch): Set<string> {
	const removed = new Set<string>();
	for (const plane of OWNABLE_PLANES) {
		const p = patch[plane];
		if (p === undefined) continue;
		for (const key of Object.keys(p)) if (p[key] === null && hasOwn(state[plane], key)) removed.add(`${plane}\0${key}`);
	}
	return removed;
}

/** The intents plane after the patch: existing keys it deletes (sorted), new values of keys it writes. */
interface IntentsAfter {
	deleted: string[];
	written: Map<string, Json>;
}

function intentsAfter(state: OwnerState, intentsPatch: JsonObject | undefined): IntentsAfter {
	const deleted: string[] = [];
	const written = new Map<string, Json>();
	for (const key of Object.keys(intentsPatch ?? {})) {
		const pv = (intentsPatch as JsonObject)[key] as Json;
		if (pv === null) {
			if (hasOwn(state.intents, key)) deleted.push(key);
		} else {
			written.set(key, applyMergePatch(getOwn(state.intents, key), pv));
		}
	}
	deleted.sort();
	return { deleted, written };
}

/** Targets of the intents that stay (written ones, and with `scanAll` every untouched one), and which entries they reference. */
interface Remaining {
	targets: Map<string, Array<{ ref: string; target: OwnedTarget }>>;
	referenced: Set<string>;
}

function remainingTargets(owner: Owner, state: OwnerState, intents: IntentsAfter, scanAll: boolean): Remaining {
	const gone = new Set(intents.deleted);
	const unwritten = scanAll ? Object.keys(state.intents).filter((k) => !gone.has(k) && !intents.written.has(k)) : [];
	const targets = new Map<string, Array<{ ref: string; target: OwnedTarget }>>();
	const referenced = new Set<string>();
	for (const key of [...unwritten, ...intents.written.keys()]) {
		const found = targetsOf(intentValue(state, intents.written, key), owner);
		targets.set(key, found);
		for (const { target } of found) referenced.add(target.id);
	}
	return { targets, referenced };
}

function intentValue(state: OwnerState, written: ReadonlyMap<string, Json>, key: string): Json {
	return written.has(key) ? (written.get(key) as Json) : (state.intents[key] as Json);
}

/** What deleting `deleted` intents takes with it: owned entries no remaining intent references; adds them to `removed`. */
function cascadeDeletions(
	owner: Owner,
	state: OwnerState,
	patch: PlanePatch,
	deleted: readonly string[],
	remaining: Remaining,
	removed: Set<string>,
): { cascades: Cascade[]; extraDeletions: PlanePatch } {
	const cascades: Cascade[] = [];
	const extraDeletions: PlanePatch = {};
	for (const intent of deleted) {
		const targets: string[] = [];
		for (const { target } of targetsOf(state.intents[intent] as Json, owner)) {
			if (remaining.referenced.has(target.id) || removed.has(target.id) || patchWrites(patch, target)) continue;
			if (!hasOwn(state[target.plane], target.key)) continue;
			removed.add(target.id);
			const del = (extraDeletions[target.plane] ??= {});
			setOwn(del, target.key, null);
			targets.push(formatLocator({ kind: "state", scope: owner, offset: 0, plane: target.plane, path: [target.key] }));
		}
		if (targets.length > 0) cascades.push({ owner, intent, targets });
	}
	return { cascades, extraDeletions };
}

/** Dangling after the patch: only in intents the patch writes, or references to entries it removes. */
function danglingAfter(
	owner: Owner,
	state: OwnerState,
	patch: PlanePatch,
	written: ReadonlyMap<string, Json>,
	remaining: Remaining,
	removed: ReadonlySet<string>,
): DanglingRef[] {
	const exists = (t: OwnedTarget): boolean => patchWrites(patch, t) || (hasOwn(state[t.plane], t.key) && !removed.has(t.id));
	const danglingRefs: DanglingRef[] = [];
	for (const intent of [...remaining.targets.keys()].sort()) {
		const seen = new Set<string>();
		for (const { ref, target } of remaining.targets.get(intent) ?? []) {
			if (!written.has(intent) && !removed.has(target.id)) continue;
			if (exists(target) || seen.has(ref)) continue;
			seen.add(ref);
		}
		if (seen.size === 0) continue;
		const drop = dropRefsPatch(intentValue(state, written, intent), seen);
		for (const ref of seen) danglingRefs.push({ owner, intent, ref, ...(drop !== undefined ? { drop } : {}) });
	}
	return danglingRefs;
}

/** Every reference of an intent of `owner` to a tactics/lazy entry that does not exist (full scan). */
export function findDanglingRefs(owner: Owner, state: OwnerState): DanglingRef[] {
	const out: DanglingRef[] = [];
	for (const intent of sortedKeys(state.intents)) {
		const seen = new Set<string>();
		for (const { ref, target } of targetsOf(state.intents[intent] as Json, owner)) {
			if (hasOwn(state[target.plane], target.key) || seen.has(ref)) continue;
			seen.add(ref);
			out.push({ owner, intent, ref });
		}
	}
	return out;
}

/**
 * The merge patch of an intent value that removes each reference to one of `refs` and
 * nothing else: an object member holding one becomes `null`; an array holding one (at any
 * depth) is resent without it, since a merge patch replaces arrays whole. Undefined when the
 * value is not an object or is itself such a reference.
 */
export function dropRefsPatch(value: Json, refs: ReadonlySet<string>): JsonObject | undefined {
	const dangling = (v: Json): boolean => isRef(v) && refs.has(v.$ref);
	const strip = (v: Json): Json => {
		if (Array.isArray(v)) return v.filter((item) => !dangling(item)).map(strip);
		if (!isPlainObject(v)) return v;
		const out: JsonObject = {};
		for (const key of Object.keys(v)) if (!dangling(v[key] as Json)) setOwn(out, key, strip(v[key] as Json));
		return out;
	};
	const patchOf = (obj: JsonObject): JsonObject => {
		const out: JsonObject = {};
		for (const key of Object.keys(obj)) {
			const v = obj[key] as Json;
			if (dangling(v)) setOwn(out, key, null);
			else if (Array.isArray(v)) {
				const next = strip(v);
				if (!jsonEqual(next, v)) setOwn(out, key, next);
			} else if (isPlainObject(v)) {
				const sub = patchOf(v);
				if (Object.keys(sub).length > 0) setOwn(out, key, sub);
			}
		}
		return out;
	};
	return isPlainObject(value) && !dangling(value) ? patchOf(value) : undefined;
}
