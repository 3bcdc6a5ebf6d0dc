/**
 * Concurrent-change notices (docs/spec.md §6.4). Global and CWD are shared by every pi process of
 * the user; when a tool call finds that one of them moved since this run's head was rendered
 * by transitions this run did not make, its result carries one compact line naming the exact
 * paths that changed and, when recorded, who made them. Values are never echoed (lazy bodies included).
 */

import { inline, spellId } from "../core/printable.js";
import { patchLeaves } from "../core/merge.js";
import { ROOTS, SHARED_OWNERS } from "../core/types.js";
import type { Owner, OwnerHistory } from "../core/types.js";
import { modelLocator } from "./head-elide.js";

/** Paths listed per owner before the rest is counted. */
const MAX_PATHS = 12;

export interface ConcurrentNoticeArgs {
	wanted: readonly Owner[];
	/** Histories as loaded now (after catching up with the store). */
	histories: Partial<Record<Owner, OwnerHistory>>;
	/** Each owner's `seq` when this run's head was rendered. Owners without an entry are not compared. */
	seqAtHead: Partial<Record<Owner, number>>;
	/**
	 * Sequence numbers this run committed, per owner; acknowledged in their own results. By seq,
	 * not id, so an own transition already folded out of retention is still recognised.
	 */
	ownSeqs: Partial<Record<Owner, ReadonlySet<number>>>;
	/** Registered roots the model knows; paths inside other (dormant) roots are not named. */
	roots?: readonly string[];
}

/** Every seq in (`since`, `seq`] is one of `own` (the usual case in a run that writes alone): nothing to name, no record to look at. */
function onlyOwn(own: ReadonlySet<number>, since: number, seq: number): boolean {
	if (own.size < seq - since) return false;
	// Stops at the first seq another process made.
	for (let s = since + 1; s <= seq; s++) if (!own.has(s)) return false;
	return true;
}

/**
 * One line per shared wanted owner that others changed since the head, or undefined when
 * nothing changed. Flat (one wanted owner) paths are relative, scoped paths owner-qualified.
 */
export function concurrentNotice(args: ConcurrentNoticeArgs): string | undefined {
	const sole = args.wanted.length === 1 ? args.wanted[0] : undefined;
	const lines: string[] = [];
	for (const owner of SHARED_OWNERS) {
		if (!args.wanted.includes(owner)) continue;
		const h = args.histories[owner];
		const since = args.seqAtHead[owner];
		if (h === undefined || since === undefined || h.seq <= since) continue;
		const own = args.ownSeqs[owner] ?? new Set<number>();
		if (onlyOwn(own, since, h.seq)) continue;
		const foreign = h.tail.filter((r) => r.seq > since && !own.has(r.seq));
		// Foreign transitions folded out of the tail can no longer be listed; count them instead of guessing.
		let folded = 0;
		for (let seq = since + 1; seq <= Math.min(h.checkpointSeq, h.seq); seq++) if (!own.has(seq)) folded++;
		if (foreign.length === 0 && folded === 0) continue;
		const paths: string[] = [];
		for (const r of foreign) {
			for (const { plane, path } of patchLeaves(r.patch)) {
				if (plane === ROOTS && !(args.roots ?? []).includes(path[0] as string)) continue;
				const loc = modelLocator(sole === undefined ? owner : undefined, plane, path);
				if (!paths.includes(loc)) paths.push(loc);
			}
		}
		const shown = paths.slice(0, MAX_PATHS).join(", ");
		const more = paths.length > MAX_PATHS ? ` +${paths.length - MAX_PATHS} more` : "";
		const count = foreign.length + folded;
		const foldNote = folded > 0 ? `; ${folded} no longer retained` : "";
		// Whose they were, so the model can tell that a teammate changed the plan (records carry no author before who was recorded).
		const authors = [...new Set(foreign.flatMap((r) => (r.who === undefined ? [] : [`${spellId(r.who.user)}@${spellId(r.who.host)}`])))];
		const whose = authors.length === 0 ? "" : ` by ${authors.slice(0, 3).join(", ")}${authors.length > 3 ? ` +${authors.length - 3}` : ""}`;
		lines.push(
			`Note: ${owner} was changed by another process since this run's head (${count} transition${count === 1 ? "" : "s"}${whose}, now seq ${h.seq}${foldNote})` +
				(shown === "" ? "" : `: ${shown}${more}`) +
				". The head is not updated; read_state for current values.",
		);
	}
	// One line per owner whatever a key or a name holds (stored text never starts a line of its own).
	return lines.length === 0 ? undefined : lines.map(inline).join("\n");
}
