/**
 * The head's inputs, built the same way for every front-end (docs/spec.md §6.2): the wanted
 * owners' histories in one snapshot (an unavailable or damaged owner said in one line), the
 * bounded stale-artifact window, the checkout's branch and what became of the branches intents
 * record, artifact keys as the model is shown them; then `model/head.ts` renders it. pi renders
 * it once per prompt (`before_agent_start`), the MCP server on each `state_head` call.
 */
import { staleToModel, viewHistories } from "../core/artifact-keys.js";
import { isStateError } from "../core/errors.js";
import type { Owner, OwnerHistory, StaleArtifact } from "../core/types.js";
import { isBootstrap, renderHead, unavailableReason } from "../model/head.js";
import { soleOwner } from "../model/interface.js";
import { staleMention } from "../model/results.js";
import { recordedBranches } from "../storage/project/git-branch.js";
import { checkStaleWindow, staleSignature } from "./stale-window.js";
import { artifactRootsOf, lensOf, type Seqs, type Surface } from "./surface.js";

/** What the head is rendered for. */
export interface HeadRequest {
	mode: "active" | "passive";
	wanted: readonly Owner[];
	budget: number;
	/** Compiled Skills the front-end wrote or could not write (pi): named first, like stale artifacts. */
	skillProblems?: (histories: Partial<Record<Owner, OwnerHistory>>) => readonly StaleArtifact[];
}

/** A rendered head, and what the run that shows it remembers. */
export interface BuiltHead {
	head: string;
	/** Every wanted owner has no entry (the protocol's bootstrap variant); false when one cannot be read. */
	bootstrap: boolean;
	/** The seq of each owner the head showed: changes after it are another writer's (notices) or the run's own. */
	seqAtHead: Seqs;
	/** Stale findings the head named (by `staleSignature`): results do not repeat them. */
	shown: string[];
}

/** The one-line reason the head gives for each unavailable owner (`damage`: the damaged ones, else the unreachable ones). */
function reasonsOf(unavailable: Partial<Record<Owner, Error>>, damage: boolean): Partial<Record<Owner, string>> | undefined {
	const out: Partial<Record<Owner, string>> = {};
	for (const [owner, e] of Object.entries(unavailable) as Array<[Owner, Error]>) {
		if ((isStateError(e) && e.code === "corrupt") === damage) out[owner] = unavailableReason(e.message);
	}
	return Object.keys(out).length > 0 ? out : undefined;
}

/** The Skill problems first, then the stale findings about other artifacts (one line per artifact). */
function withSkillProblems(problems: readonly StaleArtifact[], stale: readonly StaleArtifact[]): StaleArtifact[] {
	const mine = new Set(problems.map((p) => JSON.stringify([p.owner, p.key])));
	return [...problems, ...stale.filter((s) => !mine.has(JSON.stringify([s.owner, s.key])))];
}

/** Build and render the head of the wanted owners now. */
export async function buildHead(s: Surface, req: HeadRequest): Promise<BuiltHead> {
	const { wanted } = req;
	const { histories, unavailable } = await s.available(wanted);
	const seqAtHead: Seqs = {};
	// An unavailable owner has no seq to compare: its changes are not "concurrent", it was not shown.
	for (const owner of wanted) if (unavailable[owner] === undefined) seqAtHead[owner] = histories[owner]?.seq ?? 0;
	const down = Object.keys(unavailable).length > 0;
	const bootstrap = req.mode === "active" && !down && isBootstrap(histories, wanted);
	// Compiled Skills missing here are written first (pi); what cannot be is named like a stale artifact.
	const problems = req.skillProblems?.(histories) ?? [];
	const take = (total: number, count: number) => s.runs?.takeStaleWindow(total, count) ?? 0;
	const { stale: window, unchecked } = checkStaleWindow(take, wanted, histories, artifactRootsOf(s));
	const stale = withSkillProblems(problems, window);
	// The branch is read once per head; other branches' fate only when intents record them.
	const git = await s.gitView(recordedBranches(histories));
	// Artifact keys as the model is shown them: relative to the folder the front-end runs in.
	const lens = lensOf(s);
	const shownStale = stale.map((a) => staleToModel(lens, a));
	const head = renderHead({
		mode: req.mode,
		wanted,
		histories: viewHistories(lens, histories),
		budget: req.budget,
		staleArtifacts: shownStale,
		staleUnchecked: unchecked,
		roots: s.rootNames(),
		git,
		...(down ? { unavailable: reasonsOf(unavailable, false), damaged: reasonsOf(unavailable, true) } : {}),
	});
	// Tool results repeat only what the head did not show (it may have elided some lines).
	const shown: string[] = [];
	stale.forEach((a, i) => {
		if (head.includes(staleMention(shownStale[i] as StaleArtifact, soleOwner(wanted)))) shown.push(staleSignature(a, histories[a.owner]?.state));
	});
	return { head, bootstrap, seqAtHead, shown };
}
