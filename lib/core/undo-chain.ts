/**
 * The undo chain read from owner histories (pure): every undo, redo and restore names what it
 * reverted (`by.reverts`), so the records alone say which transitions are in effect, which an
 * undo or a redo would revert next, and which history marks as undone. The plans that commit
 * an undo, redo or restore are `undo.ts`'s.
 */
import { isPlainObject } from "./json.js";
import { REVERSAL_OPS, isOneOf } from "./types.js";
import type { Owner, OwnerHistory, Result, Reversal, TransitionRecord } from "./types.js";

/** Owners' histories as loaded, each or why it cannot be read; an owner not asked for is absent. */
export type LoadedHistories = Partial<Record<Owner, Result<OwnerHistory>>>;
export type Histories = Readonly<LoadedHistories>;

/** The `by.reverts` of an undo, redo or restore, or undefined (any other transition, or a malformed one). */
export function reversalOf(r: TransitionRecord): Reversal | undefined {
	if (r.by.kind !== "command") return undefined;
	const rev = r.by.reverts as unknown;
	if (!isPlainObject(rev) || !isOneOf(REVERSAL_OPS, rev.op) || typeof rev.target !== "string") return undefined;
	return rev as unknown as Reversal;
}

/**
 * Every retained transition of `owners`, each once, in commit order: each owner's tail in seq
 * order, merged by time; a transition several owners share comes when it heads all of them.
 */
export function timeline(histories: Histories, owners: readonly Owner[]): TransitionRecord[] {
	const tails = owners.flatMap((o) => {
		const h = histories[o];
		return h?.ok ? [h.value.tail] : [];
	});
	const where = tails.map((t) => new Map(t.map((r, i) => [r.id, i])));
	const pos = tails.map(() => 0);
	const emitted = new Set<string>();
	const out: TransitionRecord[] = [];
	const ready = (r: TransitionRecord) => where.every((w, j) => w.get(r.id) === undefined || (w.get(r.id) as number) === pos[j]);
	for (;;) {
		let best = -1;
		let fallback = -1;
		tails.forEach((t, i) => {
			const r = t[pos[i] as number];
			if (r === undefined) return;
			const earlier = (k: number) => {
				const other = k < 0 ? undefined : tails[k]?.[pos[k] as number];
				return other === undefined || r.at < other.at;
			};
			if (earlier(fallback)) fallback = i;
			if (ready(r) && earlier(best)) best = i;
		});
		const pick = best >= 0 ? best : fallback;
		if (pick < 0) return out;
		const r = tails[pick]?.[pos[pick] as number] as TransitionRecord;
		tails.forEach((_, j) => {
			if (tails[j]?.[pos[j] as number]?.id === r.id) pos[j] = (pos[j] as number) + 1;
		});
		if (!emitted.has(r.id)) {
			emitted.add(r.id);
			out.push(r);
		}
	}
}

/**
 * Which of one owner's `records` (in seq order) are undone now, each with the id of the undo or
 * redo whose effect keeps it out (docs/decisions.md, "undone marks"): an undo or redo marks its
 * target; what that target reverted is back in effect (unmarked), what that one reverted is out
 * again (marked by it), and so on down the chain. So the undo V of a redo R of an undo U of T
 * leaves the marks of U's time: T undone by U, and R undone by V. A restore is no mark (its own
 * line names what it reverted). The walk stops at a record not in `records` or seen in this walk
 * (a damaged log may claim a cycle).
 */
export function undoneIn(records: readonly TransitionRecord[]): Map<string, string> {
	const undone = new Map<string, string>();
	const targetOf = new Map<string, string>();
	for (const r of records) {
		const rev = reversalOf(r);
		if (rev === undefined || rev.op === "restore") continue;
		const seen = new Set<string>([r.id]);
		let by = r.id;
		let out = true;
		for (let id: string | undefined = rev.target; id !== undefined && !seen.has(id); id = targetOf.get(id)) {
			seen.add(id);
			if (out) undone.set(id, by);
			else undone.delete(id);
			by = id;
			out = !out;
		}
		targetOf.set(r.id, rev.target);
	}
	return undone;
}

/** The undo chain: transitions in effect that an undo would revert (latest last), undos a redo would revert, and what cleared the redos. */
export interface Chain {
	done: TransitionRecord[];
	redo: TransitionRecord[];
	/** The newest transition that came after an undo and so ended its redo. */
	clearedBy?: TransitionRecord;
}

/** Read the undo chain of `owners` from their records (editor rules: new work ends the redos). */
export function undoChain(histories: Histories, owners: readonly Owner[]): Chain {
	let done: TransitionRecord[] = [];
	let redo: TransitionRecord[] = [];
	let clearedBy: TransitionRecord | undefined;
	for (const r of timeline(histories, owners)) {
		const rev = reversalOf(r);
		if (rev?.op === "undo") {
			done = done.filter((d) => d.id !== rev.target);
			redo.push(r);
		} else if (rev?.op === "redo") {
			redo = redo.filter((d) => d.id !== rev.target);
			done.push(r);
		} else {
			done.push(r);
			if (redo.length > 0) {
				redo = [];
				clearedBy = r;
			}
		}
	}
	return clearedBy === undefined ? { done, redo } : { done, redo, clearedBy };
}
