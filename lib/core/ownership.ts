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

export function planCascades(
	owner: Owner,
	state: OwnerState,
	patch: PlanePatch,
): { cascades: Cascade[]; extraDeletions: PlanePatch; danglingRefs: DanglingRef[] } {
	const intentsPatch = patch.intents;
	// Targets the patch itself removes, and whether the patch writes a target (explicit write wins).
	const removed = new Set<string>();
	for (const plane of OWNABLE_PLANES) {
		const p = patch[plane];
		if (p === undefined) continue;
		for (const key of Object.keys(p)) if (p[key] === null && hasOwn(state[plane], key)) removed.add(`${plane}\0${key}`);
	}
	if (intentsPatch === undefined && removed.size === 0) return { cascades: [], extraDeletions: {}, danglingRefs: [] };
	const writes = (t: OwnedTarget): boolean => {
		const v = patch[t.plane] === undefined ? undefined : getOwn(patch[t.plane] as JsonObject, t.key);
		return v !== undefined && v !== null;
	};

	// The intents plane after the patch: deleted keys, and new values of written intents.
	const deleted: string[] = [];
	const written = new Map<string, Json>();
	if (intentsPatch !== undefined) {
		for (const key of Object.keys(intentsPatch)) {
			const pv = intentsPatch[key] as Json;
			if (pv === null) {
				if (hasOwn(state.intents, key)) deleted.push(key);
			} else {
				written.set(key, applyMergePatch(getOwn(state.intents, key), pv));
			}
		}
	}
	deleted.sort();

	// Only deletions need the whole intents plane; plain intent writes check just themselves.
	const scanAll = deleted.length > 0 || removed.size > 0;
	const gone = new Set(deleted);
	const unwritten = scanAll ? Object.keys(state.intents).filter((k) => !gone.has(k) && !written.has(k)) : [];
	const remainingTargets = new Map<string, Array<{ ref: string; target: OwnedTarget }>>();
	const referenced = new Set<string>();
	for (const key of [...unwritten, ...written.keys()]) {
		const targets = targetsOf(written.has(key) ? (written.get(key) as Json) : (state.intents[key] as Json), owner);
		remainingTargets.set(key, targets);
		for (const { target } of targets) referenced.add(target.id);
	}

	const cascades: Cascade[] = [];
	const extraDeletions: PlanePatch = {};
	for (const intent of deleted) {
		const targets: string[] = [];
		for (const { target } of targetsOf(state.intents[intent] as Json, owner)) {
			if (referenced.has(target.id) || removed.has(target.id) || writes(target)) continue;
			if (!hasOwn(state[target.plane], target.key)) continue;
			removed.add(target.id);
			const del = (extraDeletions[target.plane] ??= {});
			setOwn(del, target.key, null);
			targets.push(formatLocator({ kind: "state", scope: owner, offset: 0, plane: target.plane, path: [target.key] }));
		}
		if (targets.length > 0) cascades.push({ owner, intent, targets });
	}

	// Dangling: only intents the patch writes, or references to entries this patch removes.
	const exists = (t: OwnedTarget): boolean => writes(t) || (hasOwn(state[t.plane], t.key) && !removed.has(t.id));
	const danglingRefs: DanglingRef[] = [];
	for (const intent of [...remainingTargets.keys()].sort()) {
		const seen = new Set<string>();
		for (const { ref, target } of remainingTargets.get(intent) ?? []) {
			if (!written.has(intent) && !removed.has(target.id)) continue;
			if (exists(target) || seen.has(ref)) continue;
			seen.add(ref);
		}
		if (seen.size === 0) continue;
		const drop = dropRefsPatch(written.has(intent) ? (written.get(intent) as Json) : (state.intents[intent] as Json), seen);
		for (const ref of seen) danglingRefs.push({ owner, intent, ref, ...(drop !== undefined ? { drop } : {}) });
	}
	return { cascades, extraDeletions, danglingRefs };
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
