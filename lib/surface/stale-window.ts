/**
 * The stale-artifact window: which tracked artifacts one check (the head, or one tool call)
 * looks at for source changes, continuing where the previous check stopped, and the identity
 * of a finding so a run hints it once. Shared by the head (`head.ts`) and the tools.
 */
import { isEmptyObject, isPlainObject, setOwn } from "../core/json.js";
import { emptyState } from "../core/state.js";
import type { Json, Owner, OwnerHistory, OwnerState, StaleArtifact } from "../core/types.js";
import { planeIndex } from "../model/plane-index.js";
import type { ArtifactRoots } from "../storage/artifacts/compiler.js";
import { staleArtifacts } from "../storage/artifacts/stale.js";

/** Where a check of `count` of `total` tracked artifacts starts (the run's cursor, `RunTracker.takeStaleWindow`). */
export type TakeWindow = (total: number, count: number) => number;

/** Artifacts whose source one check (the head, or one tool call) looks at, at most; larger sets are walked over several checks. */
export const STALE_CHECKS_PER_CALL = 32;

/**
 * Check the next `STALE_CHECKS_PER_CALL` tracked artifacts of `wanted` for source changes,
 * continuing where the previous check (head or tool call) stopped, so a large artifacts plane
 * is walked over several checks instead of every file being read each time. `unchecked`
 * counts, per owner, the artifacts this check did not look at.
 */
export function checkStaleWindow(
	take: TakeWindow,
	wanted: readonly Owner[],
	histories: Partial<Record<Owner, OwnerHistory>>,
	roots: ArtifactRoots,
): { stale: StaleArtifact[]; unchecked: Partial<Record<Owner, number>> } {
	// The artifacts' keys come from the head's plane index (kept up to date per transition), so a
	// call costs its window, not a listing of every tracked artifact.
	const lists: Array<{ owner: Owner; keys: readonly string[] }> = [];
	const unchecked: Partial<Record<Owner, number>> = {};
	let total = 0;
	for (const owner of wanted) {
		const h = histories[owner];
		// Most owners track no artifact: say so without bringing the plane's index up to date.
		const keys = h === undefined || isEmptyObject(h.state.artifacts) ? [] : planeIndex(h, "artifacts").keys;
		if (keys.length === 0) continue;
		lists.push({ owner, keys });
		unchecked[owner] = keys.length;
		total += keys.length;
	}
	if (total === 0) return { stale: [], unchecked };
	const count = Math.min(STALE_CHECKS_PER_CALL, total);
	const start = take(total, count);
	const at = (n: number): { owner: Owner; key: string } => {
		for (const { owner, keys } of lists) {
			if (n < keys.length) return { owner, key: keys[n] as string };
			n -= keys.length;
		}
		throw new Error("unreachable: the window lies within the listed artifacts");
	};
	const picked = new Map<Owner, OwnerState>();
	for (let i = 0; i < count; i++) {
		const { owner, key } = at((start + i) % total);
		const sub = picked.get(owner) ?? emptyState();
		setOwn(sub.artifacts, key, (histories[owner] as OwnerHistory).state.artifacts[key] as Json);
		picked.set(owner, sub);
		unchecked[owner] = (unchecked[owner] ?? 0) - 1;
	}
	const stale = [...picked].flatMap(([owner, sub]) => staleArtifacts(owner, sub, roots));
	return { stale, unchecked };
}

/** Identity of one stale finding: the same file, recorded value and note is hinted once per run. */
export function staleSignature(s: StaleArtifact, state: OwnerState | undefined): string {
	const v = state?.artifacts[s.key];
	const rec = isPlainObject(v) ? [v.fingerprint ?? null, v.compiledHash ?? null, v.sourceHash ?? null] : null;
	return JSON.stringify([s.owner, s.key, s.note, rec]);
}
