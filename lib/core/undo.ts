/**
 * Planning an undo from owner histories (pure; `/state undo`, the browser and `state-flow undo`
 * commit the plan through the normal commit path). An undo applies a transition's stored
 * inverse in the owners that still retain it, as a new transition; it is refused where it would
 * overwrite later work.
 */
import { patchLeaves } from "./merge.js";
import { OWNERS } from "./types.js";
import type { CanonicalPatch, Owner, OwnerHistory, Result, TransitionRecord } from "./types.js";

/** What an undo will commit. */
export interface UndoPlan {
	id: string;
	owners: Owner[];
	patch: CanonicalPatch;
}

/** Owners' histories as loaded, each or why it cannot be read; an owner not asked for is absent. */
export type LoadedHistories = Partial<Record<Owner, Result<OwnerHistory>>>;
export type Histories = Readonly<LoadedHistories>;

function leafPaths(record: TransitionRecord): string[][] {
	return patchLeaves(record.patch).map((l) => [l.plane, ...l.path]);
}

function overlaps(a: readonly string[], b: readonly string[]): boolean {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
	return true;
}

/** The latest retained transition among `owners` (by time) and its owner, or why there is none. */
export function latestRecord(histories: Histories, owners: readonly Owner[]): Result<{ owner: Owner; record: TransitionRecord }> {
	let latest: { owner: Owner; record: TransitionRecord } | undefined;
	for (const owner of owners) {
		const h = histories[owner];
		if (h === undefined) continue;
		if (!h.ok) return { ok: false, why: `cannot undo ${owner}: ${h.why}` };
		const record = h.value.tail[h.value.tail.length - 1];
		if (record && (!latest || record.at > latest.record.at)) latest = { owner, record };
	}
	return latest === undefined ? { ok: false, why: `no retained transition to undo for ${owners.join("+")}.` } : { ok: true, value: latest };
}

/**
 * The latest transition among `owners`. A transition that touched several owners is reverted in
 * every touched owner (of `histories`) where it is still the latest, unless the user named one
 * owner explicitly.
 */
export function latestUndoPlan(histories: Histories, owners: readonly Owner[], explicit: boolean): Result<UndoPlan> {
	const latest = latestRecord(histories, owners);
	if (!latest.ok) return latest;
	const { record } = latest.value;
	const patch: CanonicalPatch = {};
	const touched: Owner[] = [];
	for (const owner of explicit ? [latest.value.owner] : record.owners) {
		const h = histories[owner];
		const last = h?.ok ? h.value.tail[h.value.tail.length - 1] : undefined;
		if (last?.id !== record.id) continue;
		patch[owner] = last.undo;
		touched.push(owner);
	}
	return { ok: true, value: { id: record.id, owners: touched, patch } };
}

/**
 * The one retained transition whose id starts with `prefix` (`/state history` shows the
 * shortest unique prefixes), among the owners that can be read, planned as `selectedUndoPlan`.
 * `where` names the owners the user could have meant, for the refusal.
 */
export function idUndoPlan(histories: Histories, prefix: string, where: string, listed: string): Result<UndoPlan> {
	const ids = new Set<string>();
	for (const owner of OWNERS) {
		const h = histories[owner];
		if (h?.ok) for (const r of h.value.tail) if (r.id.startsWith(prefix)) ids.add(r.id);
	}
	const [id, ...more] = ids;
	if (id === undefined) return { ok: false, why: `\`${prefix}\` is no owner (${where}) and no retained transition's id starts with it; ${listed} lists them.` };
	if (more.length > 0) {
		const shown = [...ids].slice(0, 4).join(", ");
		return { ok: false, why: `\`${prefix}\` starts ${ids.size} transition ids (${shown}${ids.size > 4 ? ", …" : ""}); type more of the id.` };
	}
	return selectedUndoPlan(histories, id);
}

/**
 * Undo of one chosen transition (the browser, an id): its stored inverse, in every owner it
 * touched that still retains it, provided no later transition changed a path it changed —
 * otherwise the inverse would overwrite that later work, so the plan names the later transition instead.
 */
export function selectedUndoPlan(histories: Histories, id: string): Result<UndoPlan> {
	const patch: CanonicalPatch = {};
	const owners: Owner[] = [];
	for (const owner of OWNERS) {
		const loaded = histories[owner];
		if (!loaded?.ok) continue;
		const h = loaded.value;
		const at = h.tail.findIndex((r) => r.id === id);
		if (at < 0) continue;
		const record = h.tail[at] as TransitionRecord;
		const mine = leafPaths(record);
		for (const later of h.tail.slice(at + 1)) {
			if (leafPaths(later).some((p) => mine.some((q) => overlaps(p, q)))) {
				return { ok: false, why: `${owner} #${later.seq} (${later.id.slice(0, 8)}) changed the same keys later; undo that one first.` };
			}
		}
		patch[owner] = record.undo;
		owners.push(owner);
	}
	if (owners.length === 0) return { ok: false, why: `transition ${id} is no longer retained.` };
	return { ok: true, value: { id, owners, patch } };
}
