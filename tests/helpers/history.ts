/**
 * Transitions built on an in-memory owner history for the engine's tests: the record a stage
 * would make for a patch (its undo and size planned on the history's state), and its commit.
 */
import { commitRecord } from "../../lib/core/history.js";
import { planPatch } from "../../lib/core/merge.js";
import type { OwnerHistory, PlanePatch, TransitionRecord } from "../../lib/core/types.js";

/** The record of `patch` as the next transition of `h`, named `id` (stamped a second apart by seq). */
export function recordOn(h: OwnerHistory, patch: PlanePatch, id: string): TransitionRecord {
	return {
		id,
		at: `2026-01-01T00:00:0${h.seq % 10}Z`,
		seq: h.seq + 1,
		by: { kind: "system", reason: "test" },
		patch,
		undo: planPatch(h.owner, h.state, patch).undo,
		cascades: [],
		owners: [h.owner],
	};
}

/** Commit `patch` to `h` as its next transition (`t<seq>` unless named), with its exact size. */
export function commitOn(h: OwnerHistory, patch: PlanePatch, id = `t${h.seq + 1}`): void {
	const bytesAfter = h.bytes + planPatch(h.owner, h.state, patch).bytesDelta;
	commitRecord(h, recordOn(h, patch, id), bytesAfter);
}
