/**
 * `patch_state`'s execution for any front-end: the model's patch → the canonical patch (refused
 * in State Flow's words), one atomic commit through `Stores.commit` with the artifact compiler
 * (the front-end's frontmatter parser), new intents stamped with the checkout's branch, the
 * writer's precondition checked under the locks when it says what it saw, and the result text
 * of `model/results.ts` with the seqs after the commit. Admission is the front-end's (`check`).
 */
import { patchFromModel, viewState } from "../core/artifact-keys.js";
import { fail } from "../core/errors.js";
import { stampIntentBranches } from "../core/intent-branch.js";
import type { Owner, OwnerHistory, OwnerState, Provenance } from "../core/types.js";
import { soleOwner, type StateOf } from "../model/interface.js";
import { type PatchDetails, patchResult } from "../model/results.js";
import { createArtifactCompiler, type PreparedEffects } from "../storage/artifacts/compiler.js";
import { afterCommit, courtesyLines } from "./courtesy.js";
import { checkPreconditions, type Seen } from "./precondition.js";
import type { Answered } from "./read.js";
import { artifactRootsOf, lensOf, type Surface, seqsOf } from "./surface.js";

/** One `patch_state` call: who makes it, for which owners, and the front-end's own checks. */
export interface PatchCall {
	/** The captured wanted owners: the grammar of `params` and the owners it may write. */
	wanted: readonly Owner[];
	by: Provenance;
	/** What the writer last saw of each owner (absent: its write merges as any other). */
	seen?: Seen;
	signal?: AbortSignal;
	/** Admission again, right before the durable write (pi: the selection may have moved while waiting for a lock). */
	check?: () => void;
}

function checkSignal(signal: AbortSignal | undefined): void {
	if (signal?.aborted) fail("aborted", "The call was cancelled before it committed; nothing was written.");
}

/**
 * The wanted owners' current states for phrasing reference refusals: loaded up front (the
 * stores answer asynchronously), but a store that cannot be read throws only when its state
 * is asked for, as a lazy load would.
 */
async function statesOf(s: Surface, wanted: readonly Owner[]): Promise<StateOf> {
	const lens = lensOf(s);
	const loaded = new Map<Owner, { state: OwnerState | undefined } | { error: unknown }>();
	// One snapshot of the wanted owners, each with its state or the error reading it met.
	const read = await s.stores().loadEach(wanted);
	wanted.forEach((owner, i) => {
		const got = read[i];
		loaded.set(owner, got === undefined || "error" in got ? { error: got?.error } : { state: viewState(lens, owner, got.history.state) });
	});
	return (owner) => {
		const got = loaded.get(owner);
		if (got !== undefined && "error" in got) throw got.error;
		return got?.state;
	};
}

/** Run one `patch_state` call with the model's `params` (the patch only: a front-end takes `seen` out first). */
export async function patchCall(s: Surface, params: unknown, call: PatchCall): Promise<Answered<PatchDetails>> {
	const { wanted, signal, seen } = call;
	// The current state only phrases reference refusals in the model's spelling; the commit checks again under the lock.
	// Only a patch that writes a `$ref` asks for them: a cheap superset test spares every other call the loads.
	const states = JSON.stringify(params).includes('"$ref"') ? await statesOf(s, wanted) : undefined;
	// The model's artifact keys are relative to the folder the front-end runs in; stored ones to the checkout's root.
	const lens = lensOf(s);
	const patch = patchFromModel(lens, s.toCanonical(params, wanted, states));
	const compile = createArtifactCompiler(artifactRootsOf(s), { parseFrontmatter: await s.frontmatter(patch), lens });
	const branch = await s.branch();
	let effects: PreparedEffects | undefined;
	// The histories the commit staged on (the last `prepare` call: caught up under the locks).
	let staged: Partial<Record<Owner, OwnerHistory>> | undefined;
	const outcome = await s.stores().commit(patch, {
		by: call.by,
		id: s.newId(),
		at: s.now().toISOString(),
		...(signal ? { signal } : {}),
		// Root refusals spell paths as the model writes them (flat: without the owner).
		...(s.rootGate ? { roots: s.rootGate(soleOwner(wanted)) } : {}),
		check: () => {
			call.check?.();
			checkSignal(signal);
		},
		prepare: (p, histories) => {
			staged = histories;
			// On the fresh histories, under the locks: no writer can slip in between the check and the write.
			if (seen !== undefined) checkPreconditions(seen, p, histories, wanted, lens);
			// New intents record the checkout's branch; a gitBranch the model sent is never stored as sent.
			effects = compile(stampIntentBranches(p, histories, branch), histories);
			return effects;
		},
	});
	await s.committed?.(outcome);
	const after = await afterCommit(s, wanted, staged);
	const lines = [...(effects?.notes ?? []), ...(await courtesyLines(s, wanted, after))];
	const result = patchResult({
		transitionId: outcome.noop ? null : outcome.transitionId,
		report: outcome.report,
		wanted,
		lens,
		artifacts: effects?.artifacts ?? [],
		notices: lines,
		...(outcome.noop ? {} : { records: outcome.records }),
	});
	return { result, seqs: seqsOf(wanted, after ?? (await s.available(wanted)).histories) };
}
