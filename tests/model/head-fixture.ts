/** Set-up shared by the head renderer's tests: owner histories built by the real engine. */
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Owner, OwnerHistory } from "../../lib/core/types.js";

export type Histories = Partial<Record<Owner, OwnerHistory>>;

/**
 * Histories for `wanted` after committing `patches` through the engine, one minute apart.
 * `exact`: store them as sent (as an older build may have), without reference checks.
 */
export function build(wanted: readonly Owner[], patches: CanonicalPatch[], exact = false): Histories {
	const histories: Histories = {};
	for (const o of wanted) histories[o] = newHistory(o, 20);
	patches.forEach((patch, i) => {
		const at = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
		commitStaged(histories, stage(histories, patch, { id: `t${i + 1}`, at, by: { kind: "system", reason: "test" }, ...(exact ? { exact } : {}) }));
	});
	return histories;
}
