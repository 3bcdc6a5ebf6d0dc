/**
 * What the head folds instead of showing: intents of other branches (one line each, with the
 * branch's fate when git knows it), and how old the entries a plane's marker counts are.
 */
import { modelJson } from "../core/printable.js";
import type { Owner, OwnerHistory, TransitionRecord } from "../core/types.js";
import { modelLocator } from "./head-elide.js";
import type { GitView } from "../core/intent-branch.js";
import type { OwnerRank } from "./head-rank.js";

/** Other-branch intents listed per owner; the rest are counted. */
const MAX_FOLDED = 8;

/** JSON text of a stored string for a head line (`<` escaped, so stored text never closes the block). */
function quoted(text: string): string {
	return modelJson(JSON.stringify(text));
}

/** One line per intent of another branch (name, branch, open steps), and whether that branch was merged or deleted. */
export function branchLines(owner: Owner, rank: OwnerRank, sole: Owner | undefined, git: GitView | undefined): string[] {
	const scope = sole === undefined ? owner : undefined;
	const lines = rank.otherBranch.slice(0, MAX_FOLDED).map((f) => {
		const gone = git?.gone?.[f.branch];
		const fate =
			gone === undefined
				? ""
				: `; the branch was ${gone === "merged" ? `merged into ${quoted(git?.defaultBranch ?? "the default branch")}` : "deleted"}: close the intent, or keep it on every branch with gitBranch null`;
		return `~ ${modelLocator(scope, "intents", [f.key])} of branch ${quoted(f.branch)}: ${f.open} open ${f.open === 1 ? "step" : "steps"}${fate}`;
	});
	const more = rank.otherBranch.length - MAX_FOLDED;
	if (more > 0) lines.push(`~ ${more} more intents of other branches: read_state ${modelLocator(scope, "intents", [])} with projection keys`);
	return lines;
}

/**
 * The day none of a plane's entries not shown changed after, for its marker: the day of the newest
 * retained change to an entry that is still there and not shown, else of the oldest retained
 * transition (they are older). Undefined without retained transitions (nothing to say).
 */
export function hiddenDay(h: OwnerHistory, plane: "intents" | "tactics", shown: ReadonlySet<string>): string | undefined {
	if (h.tail.length === 0) return undefined;
	const value = h.state[plane];
	for (let i = h.tail.length - 1; i >= 0; i--) {
		const p = (h.tail[i] as TransitionRecord).patch[plane];
		if (p === undefined) continue;
		for (const key of Object.keys(p)) if (p[key] !== null && !shown.has(key) && Object.hasOwn(value, key)) return day(h.tail[i] as TransitionRecord);
	}
	return day(h.tail[0] as TransitionRecord);
}

/** The calendar day of a transition, as the head spells it (10 characters). */
function day(rec: TransitionRecord): string {
	return rec.at.slice(0, 10).padEnd(10, " ");
}
