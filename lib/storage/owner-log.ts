/**
 * The rules every owner-store adapter shares (files, Session, PostgreSQL): what a single-owner
 * commit answers, how a record continues a history, when compaction is due (by records and by
 * bytes, so its cost stays O(record) per commit at any state size), how a durable
 * record is applied in memory, what a checkpoint's state must look like. Each adapter calls
 * these, so a rule has one answer whatever backend keeps the owner.
 */
import { spellId } from "../core/printable.js";
import { fail } from "../core/errors.js";
import { commitRecord, transitionIn } from "../core/history.js";
import { planPatch } from "../core/merge.js";
import type { OwnerHistory, OwnerState, TransitionRecord } from "../core/types.js";
import { stateShapeProblem } from "./format.js";
import type { CommitOutcome } from "./port.js";

/**
 * The port's commit precondition, checked before anything is locked or read: a record staged
 * at `expectedSeq` has seq `expectedSeq + 1`. Anything else is the caller's mistake, never a conflict.
 */
export function checkCommitSeq(record: TransitionRecord, expectedSeq: number): void {
	if (record.seq !== expectedSeq + 1) {
		fail(
			"invalid_input",
			`record \`${spellId(record.id)}\` has seq ${record.seq}, but a commit at seq ${expectedSeq} needs seq ${expectedSeq + 1}; stage it on the owner's state at seq ${expectedSeq}. Nothing was written.`,
			["seq"],
		);
	}
}

/**
 * A single-owner commit's answer on the owner's current history, under its lock: `already` when
 * the owner holds the id (at `heldSeq`), `conflict` when it moved on, undefined when the record
 * is to be written. `heldSeq` defaults to the retained tail; a store that knows more passes it.
 */
export function commitDecision(
	h: OwnerHistory,
	record: TransitionRecord,
	expectedSeq: number,
	heldSeq: number | undefined = transitionIn(h, record.id)?.seq,
): CommitOutcome | undefined {
	if (heldSeq !== undefined) return { kind: "already", seq: heldSeq };
	if (h.seq !== expectedSeq) return { kind: "conflict", seq: h.seq };
	return undefined;
}

/** `record` must continue a history at `seq`; `report` says what a gap or repeat means where it was found. */
export function expectNext(seq: number, record: TransitionRecord, report: (what: string) => never): void {
	if (record.seq !== seq + 1) report(`record \`${spellId(record.id)}\` has seq ${record.seq} where ${seq + 1} was expected`);
}

/** Compact when the stored tail exceeds R by at least this slack, so a small state's compaction is amortised O(1). */
export function compactionSlack(retention: number): number {
	return Math.max(retention, 64);
}

/**
 * The log after the stored checkpoint may grow to this share of the state's bytes before it is
 * compacted. A compaction writes the whole state, so it runs once per `LOG_SHARE × state` bytes
 * of records: O(record) per commit amortised at any state size. A cold load replays at most this
 * much log beside the checkpoint: replaying a log byte costs ~2.6 times a checkpoint byte, so an
 * eighth keeps a cold load within ~1.2 times what it was (docs/decisions.md, "Close to the floor").
 */
export const LOG_SHARE = 0.125;

/**
 * More than R + slack transitions lie after the stored checkpoint, and their stored bytes
 * (`logBytes`: what a cold load replays) reach `LOG_SHARE` of the state's (`stateBytes`).
 */
export function compactionDue(seq: number, storedCheckpointSeq: number, retention: number, logBytes: number, stateBytes: number): boolean {
	return seq - storedCheckpointSeq > retention + compactionSlack(retention) && logBytes >= stateBytes * LOG_SHARE;
}

/**
 * Apply a record already durable to an in-memory history, keeping `bytes` O(patch).
 * `bytesAfter`: the size the stage that made `record` computed on this very history (its
 * plan is not made twice); absent for records read back or handed in, which are planned here.
 */
export function applyDurable(h: OwnerHistory, record: TransitionRecord, bytesAfter?: number): void {
	commitRecord(h, record, bytesAfter ?? h.bytes + planPatch(h.owner, h.state, record.patch).bytesDelta);
}

/** A stored checkpoint's state, checked by the same schema on every backend; `report` says what damage means there. */
export function checkpointState(value: unknown, report: (what: string) => never): OwnerState {
	const problem = stateShapeProblem(value);
	if (problem !== undefined) report(`its checkpoint has an invalid shape (${problem})`);
	return value as OwnerState;
}
