/**
 * Relevance of the head (docs/model-surface.md, "Relevance"): which intents are active, closed
 * or another branch's, which tactics and lazy entries the active ones own, and what changed
 * recently. `head.ts` turns this into each plane's offer order (`PlaneOrder`). Pure; the intents
 * plane is scanned once per owner `seq` (kept in a `WeakMap` beside the stored plane object).
 */
import { BRANCHED_OWNERS, type GitView, intentBranch } from "../core/intent-branch.js";
import { isPlainObject } from "../core/json.js";
import { isClosed } from "./status.js";
import { naturalCompare } from "../core/order.js";
import { ownedEntries } from "../core/ownership.js";
import type { Json, JsonObject, OwnerHistory, Section } from "../core/types.js";

/** One intent of another branch, folded into one line. */
export interface FoldedIntent {
	key: string;
	branch: string;
	/** Owned tactics that are still open. */
	open: number;
}

/** How one owner's entries rank. */
export interface OwnerRank {
	/** Open intents, this branch's first, then those of no branch; natural order within each. */
	active: string[];
	closed: ReadonlySet<string>;
	/** Intents of another branch (only while the checkout is on a branch), natural order. */
	otherBranch: FoldedIntent[];
	/** Tactics and lazy entries the active intents own, in the intents' order then reference order. */
	owned: { tactics: string[]; lazy: string[] };
	/** Never offered (folded into the other-branch lines): those intents, and what only they own. */
	exclude: { intents: ReadonlySet<string>; tactics: ReadonlySet<string>; lazy: ReadonlySet<string> };
}

interface Cached {
	seq: number;
	bytes: number;
	branch: string | undefined;
	rank: OwnerRank;
}

const cache = new WeakMap<JsonObject, Cached>();

/** The ranking of one owner's entries for a checkout on `git.branch` (cached per `seq`). */
export function rankOwner(h: OwnerHistory, git: GitView | undefined): OwnerRank {
	const intents = h.state.intents;
	// Global spans projects: its intents record no branch and are never folded.
	const branch = BRANCHED_OWNERS.includes(h.owner) ? git?.branch : undefined;
	const hit = cache.get(intents);
	if (hit !== undefined && hit.seq === h.seq && hit.bytes === h.bytes && hit.branch === branch) return hit.rank;
	const own: string[] = [];
	const none: string[] = [];
	const closed = new Set<string>();
	const other: Array<{ key: string; branch: string }> = [];
	for (const key of Object.keys(intents).sort(naturalCompare)) {
		const v = intents[key] as Json;
		const b = intentBranch(v);
		if (branch !== undefined && b !== undefined && b !== branch) other.push({ key, branch: b });
		else if (isClosed(v)) closed.add(key);
		else (b === undefined ? none : own).push(key);
	}
	const active = [...own, ...none];
	const owned = { tactics: [] as string[], lazy: [] as string[] };
	const kept = { tactics: new Set<string>(), lazy: new Set<string>() };
	const folded = new Set(other.map((o) => o.key));
	for (const key of Object.keys(intents)) {
		if (folded.has(key)) continue;
		for (const t of ownedEntries(intents[key] as Json, h.owner)) kept[t.plane].add(t.key);
	}
	for (const key of active) {
		for (const t of ownedEntries(intents[key] as Json, h.owner)) if (!owned[t.plane].includes(t.key)) owned[t.plane].push(t.key);
	}
	const exclude = { intents: folded, tactics: new Set<string>(), lazy: new Set<string>() };
	const otherBranch: FoldedIntent[] = other.map(({ key, branch: b }) => {
		let open = 0;
		for (const t of ownedEntries(intents[key] as Json, h.owner)) {
			if (!kept[t.plane].has(t.key)) exclude[t.plane].add(t.key);
			if (t.plane === "tactics" && Object.hasOwn(h.state.tactics, t.key) && !isClosed(h.state.tactics[t.key])) open++;
		}
		return { key, branch: b, open };
	});
	const rank: OwnerRank = { active, closed, otherBranch, owned, exclude };
	cache.set(intents, { seq: h.seq, bytes: h.bytes, branch, rank });
	return rank;
}

/** Recently changed keys offered per section: more than any head shows, so a bulk change costs no more. */
const MAX_RECENT_KEYS = 256;

/** Keys of `section` set by the owner's last `count` transitions, newest first (at most `MAX_RECENT_KEYS`). */
export function recentKeys(h: OwnerHistory, section: Section, count: number, root?: string): string[] {
	const out: string[] = [];
	const seen = new Set<string>();
	for (let i = h.tail.length - 1; i >= 0 && i >= h.tail.length - count && out.length < MAX_RECENT_KEYS; i--) {
		const patch = (h.tail[i] as OwnerHistory["tail"][number]).patch;
		const p = root === undefined ? (section === "roots" ? undefined : patch[section]) : patch.roots?.[root];
		if (!isPlainObject(p)) continue;
		for (const key of Object.keys(p)) {
			if (out.length >= MAX_RECENT_KEYS) break;
			if (p[key] === null || seen.has(key)) continue;
			seen.add(key);
			out.push(key);
		}
	}
	return out;
}
