/**
 * The write precondition of a client that says what it last saw (issue 38): a patch is refused
 * when it touches a key another writer changed since the seq the client saw of that owner, so a
 * model merges instead of overwriting. "Touches" means the patch's leaves and the entries its
 * intent deletions would cascade to; "changed" means the leaves of every retained transition
 * after that seq. Two paths collide when one is the other or lies inside it; the shorter of the
 * two is reported (it covers both). Writes to other keys merge as every commit does: they lose
 * nothing. Pure: the caller runs it on the history it stages on, under the owner's lock.
 */
import { patchLeaves } from "./merge.js";
import { planCascades } from "./ownership.js";
import type { OwnerHistory, PlanePatch, Section } from "./types.js";

/** A key of an owner: its section and the path inside it. */
export interface KeyPath {
	plane: Section;
	path: string[];
}

/** What the check found for one owner. */
export type SeenCheck =
	| { kind: "ok" }
	/** The client claims a seq the owner never reached (another store, or a made-up number). */
	| { kind: "ahead"; seq: number }
	/** Transitions after the seen seq were folded into the checkpoint: what they changed is not known any more. */
	| { kind: "folded"; seq: number; retainedFrom: number }
	/** Keys the patch touches that transitions after the seen seq changed. */
	| { kind: "changed"; seq: number; transitions: number; keys: KeyPath[] };

const keyOf = (plane: Section, path: readonly string[]): string => JSON.stringify([plane, ...path]);

/**
 * Check `patch` (this owner's part of a canonical patch) against what changed after `seen`.
 * Refuses conservatively: a seq older than the retained history is `folded` even when the
 * folded transitions might not have touched these keys, since nothing says they did not.
 */
export function checkSeen(history: OwnerHistory, seen: number, patch: PlanePatch): SeenCheck {
	const { seq } = history;
	if (seen > seq) return { kind: "ahead", seq };
	if (seen === seq) return { kind: "ok" };
	if (seen < history.checkpointSeq) return { kind: "folded", seq, retainedFrom: history.checkpointSeq };
	const since = history.tail.filter((r) => r.seq > seen);
	// Every path another writer changed, and every prefix of one (a patch writing a parent replaces it).
	const changed = new Set<string>();
	const inside = new Set<string>();
	for (const r of since) {
		for (const leaf of patchLeaves(r.patch)) {
			changed.add(keyOf(leaf.plane, leaf.path));
			for (let n = 1; n <= leaf.path.length; n++) inside.add(keyOf(leaf.plane, leaf.path.slice(0, n)));
		}
	}
	const mine = [...patchLeaves(patch), ...patchLeaves(planCascades(history.owner, history.state, patch).extraDeletions)];
	const keys: KeyPath[] = [];
	const reported = new Set<string>();
	const report = (plane: Section, path: string[]): void => {
		const k = keyOf(plane, path);
		if (reported.has(k)) return;
		reported.add(k);
		keys.push({ plane, path });
	};
	for (const leaf of mine) {
		// A changed path is this one or lies inside it: this one covers it.
		if (inside.has(keyOf(leaf.plane, leaf.path))) {
			report(leaf.plane, leaf.path);
			continue;
		}
		// This one lies inside a changed path (a value replaced or deleted whole): that one covers it.
		for (let n = 1; n < leaf.path.length; n++) {
			const prefix = leaf.path.slice(0, n);
			if (changed.has(keyOf(leaf.plane, prefix))) {
				report(leaf.plane, prefix);
				break;
			}
		}
	}
	return keys.length === 0 ? { kind: "ok" } : { kind: "changed", seq, transitions: since.length, keys };
}
