/**
 * `seen`, what a client last saw of each owner (issue 38): read from its arguments in State
 * Flow's words, then checked on the histories a commit stages on, under the owners' locks
 * (`core/precondition.ts` decides; `model/conflict.ts` words the refusal). A refusal writes
 * nothing and names, in the model's grammar, each colliding key with its current value.
 */
import { type KeyLens, viewState } from "../core/artifact-keys.js";
import { fail, StateError } from "../core/errors.js";
import { getOwn, isPlainObject } from "../core/json.js";
import { checkSeen } from "../core/precondition.js";
import { type CanonicalPatch, isOwner, type Json, OWNERS, type Owner, type OwnerHistory } from "../core/types.js";
import { conflictText, type OwnerConflict } from "../model/conflict.js";
import { modelLocator } from "../model/head-elide.js";
import { presentValue, soleOwner } from "../model/interface.js";

/** Per owner, the seq a client last saw (results give it as `seqs`). */
export type Seen = Partial<Record<Owner, number>>;

/** The `seen` argument, refused naming the field when it is not `{ <wanted owner>: <seq> }`. */
export function parseSeen(value: unknown, wanted: readonly Owner[]): Seen {
	if (!isPlainObject(value as Json)) {
		fail("invalid_input", '`seen` must be an object of owner → seq, e.g. {"cwd":12}: send back the `seqs` of your last result', ["seen"]);
	}
	const out: Seen = {};
	for (const [owner, seq] of Object.entries(value as Record<string, unknown>)) {
		if (!isOwner(owner)) fail("invalid_input", `\`seen.${owner}\`: unknown owner; owners are ${OWNERS.join(", ")}`, ["seen", owner]);
		if (!wanted.includes(owner)) {
			fail("excluded_owner", `\`seen.${owner}\`: owner \`${owner}\` is not served here (served: ${wanted.join(", ")})`, ["seen", owner]);
		}
		if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0) {
			fail("invalid_input", `\`seen.${owner}\` must be a whole number ≥ 0, the seq your last result gave for ${owner}`, ["seen", owner]);
		}
		out[owner] = seq;
	}
	return out;
}

/** The value at a key of the model's view of an owner, or undefined when absent. */
function valueAt(view: Record<string, Json>, plane: string, path: readonly string[]): Json | undefined {
	let v: Json | undefined = view[plane];
	for (const seg of path) v = isPlainObject(v) ? getOwn(v, seg) : undefined;
	return v;
}

/**
 * Refuse `patch` (canonical, staged on `histories` under the locks) when an owner it writes
 * changed at its keys since the seq `seen` names; owners it does not write, or without a seen
 * seq, are not checked.
 */
export function checkPreconditions(
	seen: Seen,
	patch: CanonicalPatch,
	histories: Partial<Record<Owner, OwnerHistory>>,
	wanted: readonly Owner[],
	lens: KeyLens,
): void {
	const conflicts: OwnerConflict[] = [];
	const sole = soleOwner(wanted);
	for (const owner of OWNERS) {
		const seq = seen[owner];
		const part = patch[owner];
		const h = histories[owner];
		if (seq === undefined || part === undefined || h === undefined) continue;
		const found = checkSeen(h, seq, part);
		if (found.kind === "ok") continue;
		if (found.kind !== "changed") {
			conflicts.push(
				found.kind === "ahead"
					? { owner, kind: "ahead", seen: seq, seq: found.seq }
					: { owner, kind: "folded", seen: seq, seq: found.seq, retainedFrom: found.retainedFrom },
			);
			continue;
		}
		// Keys and values as the model reads them: artifact keys relative to its folder, same-owner refs relative when flat.
		const view = viewState(lens, owner, h.state) as unknown as Record<string, Json>;
		const keys = found.keys.map(({ plane, path }) => {
			const shown = plane === "artifacts" && path.length > 0 ? [lens.toModel(path[0] as string), ...path.slice(1)] : path;
			const value = valueAt(view, plane, shown);
			return {
				locator: modelLocator(sole === undefined ? owner : undefined, plane, shown),
				value: value === undefined ? undefined : presentValue(value, wanted),
			};
		});
		conflicts.push({ owner, kind: "changed", seen: seq, seq: found.seq, transitions: found.transitions, keys });
	}
	if (conflicts.length > 0) throw new StateError("conflict", conflictText(conflicts), ["seen"]);
}
