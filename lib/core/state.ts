/**
 * The owner state value: exactly the five planes, each a plain object. `stateBytes` is
 * the one definition of an owner's size (the serialised five-plane object in PLANES order),
 * which `planPatch` maintains incrementally and the size limit is checked against.
 */

import { PLANES } from "./types.js";
import type { JsonObject, OwnerState } from "./types.js";

/** A fresh state with five empty planes in PLANES order. */
export function emptyState(): OwnerState {
	return { intents: {}, strategy: {}, tactics: {}, artifacts: {}, lazy: {} };
}

/** True when no plane has an entry (history and `response` do not count). */
export function isEmptyState(s: OwnerState): boolean {
	for (const p of PLANES) {
		for (const k in s[p]) if (Object.hasOwn(s[p], k)) return false;
	}
	return true;
}

/** `JSON.stringify` length of the five planes in PLANES order, then `roots` once written (UTF-16 code units). */
export function stateBytes(s: OwnerState): number {
	const ordered: Record<string, JsonObject> = {};
	for (const p of PLANES) ordered[p] = s[p];
	if (s.roots !== undefined) ordered.roots = s.roots;
	return JSON.stringify(ordered).length;
}

/** Bytes the `roots` member adds when it first appears: `,"roots":{}`. */
export const ROOTS_MEMBER_BYTES = ',"roots":{}'.length;
