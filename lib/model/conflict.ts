/**
 * The refusal of a patch whose writer saw an older state of an owner than the one it would
 * change (issue 38, `core/precondition.ts`): which keys another writer changed since, their
 * current values (bounded; a value over the bound names the locator that reads it) and the
 * exact `seen` to send with the merged patch. Nothing was written; the model merges and retries.
 */
import { modelJson } from "../core/printable.js";
import type { Json, Owner } from "../core/types.js";
import { formatSize, utf8Bytes } from "../core/size.js";

/** Characters of current values one refusal spells out; the rest are named by their locators. */
export const MAX_CONFLICT_VALUES = 8000;
/** Keys listed per refusal; the rest are counted. */
const MAX_KEYS = 40;

/** One owner's refusal, its keys already presented in the model's grammar. */
export type OwnerConflict =
	| { owner: Owner; kind: "ahead"; seen: number; seq: number }
	| { owner: Owner; kind: "folded"; seen: number; seq: number; retainedFrom: number }
	| { owner: Owner; kind: "changed"; seen: number; seq: number; transitions: number; keys: Array<{ locator: string; value: Json | undefined }> };

/** The line of one owner's refusal and, when keys collided, one line per key with its current value. */
function ownerLines(c: OwnerConflict, budget: { left: number }): string[] {
	switch (c.kind) {
		case "ahead":
			return [`${c.owner}: you saw seq ${c.seen}, but it is at seq ${c.seq} (not a seq this store gave: read it again).`];
		case "folded":
			return [
				`${c.owner}: changed since seq ${c.seen} (now seq ${c.seq}), and only the transitions after seq ${c.retainedFrom} are retained, so which keys changed is not known any more: read what you patch again.`,
			];
		case "changed": {
			const n = c.transitions;
			const lines = [
				`${c.owner}: changed since seq ${c.seen} (now seq ${c.seq}, ${n} transition${n === 1 ? "" : "s"}) at keys this patch writes; current values:`,
			];
			for (const k of c.keys.slice(0, MAX_KEYS)) {
				if (k.value === undefined) {
					lines.push(`${k.locator}: (absent)`);
					continue;
				}
				const json = modelJson(JSON.stringify(k.value));
				if (json.length <= budget.left) {
					budget.left -= json.length;
					lines.push(`${k.locator}: ${json}`);
				} else lines.push(`${k.locator}: (${formatSize(utf8Bytes(json))}, read_state it)`);
			}
			if (c.keys.length > MAX_KEYS) lines.push(`+ ${c.keys.length - MAX_KEYS} more keys changed: read_state them`);
			return lines;
		}
	}
}

/** The whole refusal: nothing was written, what changed, and the `seen` to send with the merged patch. */
export function conflictText(conflicts: readonly OwnerConflict[]): string {
	const budget = { left: MAX_CONFLICT_VALUES };
	const seen: Partial<Record<Owner, number>> = {};
	for (const c of conflicts) seen[c.owner] = c.seq;
	return [
		"Refused: another writer changed what this patch writes since the state you saw; nothing was written.",
		...conflicts.flatMap((c) => ownerLines(c, budget)),
		`Merge the current values into your patch and send it again with "seen":${JSON.stringify(seen)}.`,
	].join("\n");
}
