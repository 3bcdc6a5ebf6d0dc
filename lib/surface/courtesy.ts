/**
 * The courtesy lines of a tool result (docs/spec.md §6.4, §9): shared owners changed by other
 * processes since the run's head, then source-change hints of tracked artifacts. Both look at
 * the histories the call loaded once; a store that cannot be read is reported by the call
 * itself, never by a notice. Without a run (stateless HTTP) there is nothing to be relative to.
 */
import { staleToModel, viewHistories } from "../core/artifact-keys.js";
import type { Owner, OwnerHistory, StaleArtifact } from "../core/types.js";
import { concurrentNotice } from "../model/notices.js";
import { MAX_STALE_HINTS, staleHintLines } from "../model/results.js";
import { checkStaleWindow, staleSignature } from "./stale-window.js";
import { artifactRootsOf, lensOf, type Surface } from "./surface.js";

/** Notices and hints for a result over `wanted`, from `loaded` when given (else loaded now). */
export async function courtesyLines(s: Surface, wanted: readonly Owner[], loaded?: Partial<Record<Owner, OwnerHistory>>): Promise<string[]> {
	const run = s.runs?.run;
	if (!run) return [];
	let histories: Partial<Record<Owner, OwnerHistory>>;
	let text: string | undefined;
	try {
		// An unavailable owner is left out: the call itself says so when it needs that owner.
		histories = loaded ?? (await s.available(wanted)).histories;
		text = concurrentNotice({
			wanted,
			histories: viewHistories(lensOf(s), histories),
			seqAtHead: run.seqAtHead,
			ownSeqs: run.ownSeqs,
			roots: s.rootNames(),
		});
	} catch {
		// A notice is a courtesy; a store that cannot be read now is reported by the call itself.
		return [];
	}
	return [...(text === undefined ? [] : [text]), ...staleHints(s, wanted, histories)];
}

/**
 * Source-change hints for a tool result: tracked artifacts of the wanted owners whose file
 * changed since it was recorded and that this run has not shown yet. Bounded by `checkStaleWindow`.
 */
function staleHints(s: Surface, wanted: readonly Owner[], histories: Partial<Record<Owner, OwnerHistory>>): string[] {
	const runs = s.runs;
	const run = runs?.run;
	if (!runs || !run) return [];
	try {
		const { stale } = checkStaleWindow((total, count) => runs.takeStaleWindow(total, count), wanted, histories, artifactRootsOf(s));
		const fresh: Array<StaleArtifact & { sig: string }> = [];
		for (const a of stale) {
			const sig = staleSignature(a, histories[a.owner]?.state);
			if (!run.hinted.has(sig)) fresh.push({ ...a, sig });
		}
		// Only what a line names counts as shown; the counted rest is named by later calls.
		runs.markHinted(fresh.slice(0, MAX_STALE_HINTS).map((a) => a.sig));
		const lens = lensOf(s);
		return staleHintLines(
			fresh.map((a) => staleToModel(lens, a)),
			wanted,
		);
	} catch {
		// A hint is a courtesy; a store that cannot be read now is reported by the call itself.
		return [];
	}
}

/**
 * The wanted owners' histories right after a commit, for its result's courtesy lines and seqs.
 * The owners it staged on were caught up under their locks, and the stores' live histories now
 * hold its record: only the other wanted owners are loaded again. Undefined when the commit never
 * staged, or when the others cannot be read now: then they are all loaded (or left out) later.
 */
export async function afterCommit(
	s: Surface,
	wanted: readonly Owner[],
	staged: Partial<Record<Owner, OwnerHistory>> | undefined,
): Promise<Partial<Record<Owner, OwnerHistory>> | undefined> {
	if (staged === undefined) return undefined;
	const out: Partial<Record<Owner, OwnerHistory>> = {};
	const rest: Owner[] = [];
	for (const owner of wanted) {
		const h = staged[owner];
		if (h === undefined) rest.push(owner);
		else out[owner] = h;
	}
	if (rest.length === 0) return out;
	try {
		return { ...out, ...(await s.available(rest)).histories };
	} catch {
		// A notice is a courtesy: `courtesyLines` loads them all and reports nothing it cannot read.
		return undefined;
	}
}
