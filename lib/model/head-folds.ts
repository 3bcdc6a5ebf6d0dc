/**
 * What the head folds instead of showing: intents of other branches (with the branch's fate
 * when git knows it), and per owner one line counting the closed intents and loose tactics the
 * budget left out, how old they are and how to read them.
 */
import { modelJson } from "../core/printable.js";
import type { Owner, OwnerHistory, Plane, TransitionRecord } from "../core/types.js";
import { type Box, modelLocator } from "./head-elide.js";
import { planeIndex } from "./plane-index.js";
import type { GitView } from "../core/intent-branch.js";
import type { OwnerRank } from "./head-rank.js";
import type { PlaneView } from "./plane-view.js";

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
 * Per owner, once something is shortened: one line folding what the budget left out of the
 * closed intents and of the tactics no active intent owns — how many, how old, how to read them.
 * Without boxes (`undefined`): the longest such line can be, which the budget reserves.
 */
export function foldLines(
	owners: readonly Owner[],
	histories: Partial<Record<Owner, OwnerHistory>>,
	ranks: Map<Owner, OwnerRank>,
	views: readonly PlaneView[],
	boxes: Map<PlaneView, Box> | undefined,
	sole: Owner | undefined,
): Map<Owner, string> {
	const out = new Map<Owner, string>();
	for (const owner of owners) {
		const h = histories[owner];
		const rank = ranks.get(owner);
		if (h === undefined || rank === undefined) continue;
		const view = (plane: Plane): PlaneView | undefined => views.find((v) => v.owner === owner && v.plane === plane);
		const shownOf = (plane: Plane): Set<string> => {
			const v = view(plane);
			const box = v === undefined ? undefined : boxes?.get(v);
			return new Set(box === undefined ? [] : (box.shownKeys() as string[]));
		};
		const shownIntents = shownOf("intents");
		const shownTactics = shownOf("tactics");
		const closed = [...rank.closed].filter((k) => !shownIntents.has(k));
		const tacticKeys = planeIndex(h, "tactics").keys.length;
		const excluded = [...rank.exclude.tactics].filter((k) => Object.hasOwn(h.state.tactics, k)).length;
		const ownedHidden = rank.owned.tactics.filter((k) => Object.hasOwn(h.state.tactics, k) && !shownTactics.has(k)).length;
		const loose = tacticKeys - excluded - shownTactics.size - ownedHidden;
		if (closed.length === 0 && loose <= 0) continue;
		const scope = sole === undefined ? owner : undefined;
		const parts: string[] = [];
		const locs: string[] = [];
		if (closed.length > 0) {
			parts.push(`${closed.length} closed ${closed.length === 1 ? "intent" : "intents"}`);
			locs.push(modelLocator(scope, "intents", []));
		}
		if (loose > 0) {
			parts.push(`${loose} ${loose === 1 ? "tactic" : "tactics"} no active intent owns`);
			locs.push(modelLocator(scope, "tactics", []));
		}
		const hidden = (plane: "intents" | "tactics", key: string): boolean =>
			plane === "intents"
				? rank.closed.has(key) && !shownIntents.has(key)
				: !shownTactics.has(key) && !rank.exclude.tactics.has(key) && !rank.owned.tactics.includes(key);
		const age = newestChange(h, hidden, boxes === undefined);
		out.set(owner, `folded: ${parts.join(", ")}${age === undefined ? "" : `, none changed after ${age}`}: read_state ${locs.join(", ")} with projection keys`);
	}
	return out;
}

/**
 * The day of the newest retained change of a hidden entry, else of the oldest retained
 * transition (they are older); undefined without retained transitions. `any`: some day (the
 * reserved line's length; every day is spelled in 10 characters).
 */
function newestChange(h: OwnerHistory, hidden: (plane: "intents" | "tactics", key: string) => boolean, any: boolean): string | undefined {
	if (h.tail.length === 0) return undefined;
	const day = (at: string): string => at.slice(0, 10);
	if (any) return day((h.tail[0] as TransitionRecord).at);
	for (let i = h.tail.length - 1; i >= 0; i--) {
		const rec = h.tail[i] as TransitionRecord;
		for (const plane of ["intents", "tactics"] as const) {
			const p = rec.patch[plane];
			if (p === undefined) continue;
			for (const key of Object.keys(p)) if (p[key] !== null && hidden(plane, key)) return day(rec.at);
		}
	}
	return day((h.tail[0] as TransitionRecord).at);
}
