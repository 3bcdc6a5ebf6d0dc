/**
 * A merge plan checked against the real before and after: `planPatch`'s `bytesDelta` must be
 * the exact size change and its `undo` must restore the state it was planned on.
 */
import assert from "node:assert/strict";
import { cloneJson } from "../../lib/core/json.js";
import { applyPatch, planPatch } from "../../lib/core/merge.js";
import { stateBytes } from "../../lib/core/state.js";
import type { JsonObject, OwnerState, PlanePatch } from "../../lib/core/types.js";

/** Plan `patch` on `before` (CWD), apply it and its undo to a copy, and check both; returns the plan. */
export function checkPlan(before: OwnerState, patch: PlanePatch): ReturnType<typeof planPatch> {
	const plan = planPatch("cwd", before, patch);
	const after = cloneJson(before as unknown as JsonObject) as unknown as OwnerState;
	applyPatch(after, patch);
	assert.equal(plan.bytesDelta, stateBytes(after) - stateBytes(before), "bytesDelta is exact");
	applyPatch(after, plan.undo);
	assert.deepEqual(after, before, "undo restores the prior state");
	return plan;
}
