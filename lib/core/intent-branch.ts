/**
 * Intents know their git branch (docs/model-surface.md, "Branches"): an intent created in a
 * checkout that is on a branch records it in `gitBranch`, written by the runtime only. The model
 * can drop the field (`null`: keep the intent on every branch) but never set it: a value it sends
 * is replaced on a new intent and left out on an existing one, like the artifact compiler's fields.
 */
import { getOwn, hasOwn, isPlainObject, setOwn } from "./json.js";
import type { CanonicalPatch, Json, JsonObject, Owner, OwnerHistory, PlanePatch } from "./types.js";

/** The runtime-owned member of an intent naming the branch it was created on. */
export const INTENT_BRANCH = "gitBranch";

/** The checkout's git branch as the host read it (the head and the branch watch share it), and what became of other branches. */
export interface GitView {
	/** The branch the checkout is on; absent (not a git folder, detached HEAD): intents are not folded. */
	branch?: string;
	/** The default branch merges are judged against (`origin/HEAD`, else `main`, else `master`). */
	defaultBranch?: string;
	/** Branches recorded by intents that were merged into the default branch or deleted. */
	gone?: Readonly<Record<string, "merged" | "deleted">>;
}

/** Owners whose intents record a branch: the project's, and the conversation's (it runs in one checkout). Global spans projects. */
export const BRANCHED_OWNERS: readonly Owner[] = ["cwd", "session"];

/**
 * A git branch name as State Flow accepts it from `.git/HEAD` or storage: what `git check-ref-format`
 * allows in one branch (no control characters, spaces, `~^:?*[\`, `..`, `@{`, no leading `-` or
 * `/`, no trailing `/` or `.`, no `/`-separated part starting with `.` or ending in `.lock`), at
 * most 255 characters.
 */
export function isBranchName(name: unknown): name is string {
	return (
		typeof name === "string" &&
		name.length > 0 &&
		name.length <= 255 &&
		// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
		!/[\u0000-\u0020\u007f~^:?*[\\]|\.\.|@\{|\/\/|\/\.|^[-/.]|[/.]$|\.lock(?:\/|$)/.test(name) &&
		name !== "@"
	);
}

/** The branch an intent records, when it records a well-formed one. */
export function intentBranch(value: Json | undefined): string | undefined {
	if (!isPlainObject(value)) return undefined;
	const b = getOwn(value, INTENT_BRANCH);
	return isBranchName(b) ? b : undefined;
}

/** `obj` without its own `key` (a copy; `obj` untouched). */
function without(obj: JsonObject, key: string): JsonObject {
	const out: JsonObject = {};
	for (const k of Object.keys(obj)) if (k !== key) setOwn(out, k, obj[k] as Json);
	return out;
}

/**
 * The patch with branches stamped: every intent it creates in a branched owner gets `branch`
 * (when the checkout is on one), and a `gitBranch` the caller sent is replaced (new intent) or
 * left out (existing intent; `null`, which drops the field, is kept). Parts it does not change are
 * shared with `patch`; called under the commit's lock with the states it applies to.
 */
export function stampIntentBranches(patch: CanonicalPatch, histories: Partial<Record<Owner, OwnerHistory>>, branch: string | undefined): CanonicalPatch {
	let out: CanonicalPatch | undefined;
	for (const owner of BRANCHED_OWNERS) {
		const intents = patch[owner]?.intents;
		if (intents === undefined) continue;
		const stored = histories[owner]?.state.intents ?? {};
		let changed: JsonObject | undefined;
		for (const key of Object.keys(intents)) {
			const pv = intents[key] as Json;
			if (!isPlainObject(pv)) continue;
			const exists = hasOwn(stored, key);
			const sent = hasOwn(pv, INTENT_BRANCH);
			if (exists && (!sent || pv[INTENT_BRANCH] === null)) continue;
			if (!exists && !sent && branch === undefined) continue;
			const next = sent ? without(pv, INTENT_BRANCH) : { ...pv };
			if (!exists && branch !== undefined) setOwn(next, INTENT_BRANCH, branch);
			changed ??= { ...intents };
			setOwn(changed, key, next);
		}
		if (changed === undefined) continue;
		out ??= { ...patch };
		out[owner] = { ...(patch[owner] as PlanePatch), intents: changed };
	}
	return out ?? patch;
}
