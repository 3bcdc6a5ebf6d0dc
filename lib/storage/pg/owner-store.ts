/**
 * The PostgreSQL owner store (docs/shared-memory.md): owner and transition rows, cached by seq, committed in the
 * database's transaction (its COMMIT the commit point), every row checked; it asks its database only through `PgSession`.
 */
import type pg from "pg";
import { fail, isStateError } from "../../core/errors.js";
import { adoptionProblem } from "../../core/history.js";
import type { OwnerHistory, TransitionRecord } from "../../core/types.js";
import { recordLine, sameHistoryText } from "../format.js";
import { applyDurable, checkCommitSeq, commitDecision, compactionDue, expectNext } from "../owner-log.js";
import type { CommitOutcome, OwnerStore } from "../port.js";
import { CHECKPOINT_SEQ_TAG, UNIQUE_VIOLATION, checksum, connectionLost, sqlStateOf, stateText } from "./rows.js";
import { PgOwnerReader } from "./owner-reader.js";

export class PgOwnerStore extends PgOwnerReader implements OwnerStore {
	async commit(record: TransitionRecord, expectedSeq: number): Promise<CommitOutcome> {
		checkCommitSeq(record, expectedSeq);
		const outcome = await this.db.commitTogether<CommitOutcome>([this], ([h]) => {
			const decided = commitDecision(h as OwnerHistory, record, expectedSeq);
			return decided !== undefined ? { records: [undefined], value: decided } : { records: [record], value: { kind: "committed", seq: record.seq } };
		});
		if (outcome.kind === "conflict") {
			// The id may have been folded out of the retained tail: the table still knows it.
			const seq = await this.committedSeq(record.id);
			if (seq !== undefined) return { kind: "already", seq };
		}
		return outcome;
	}

	committedSeq(id: string): Promise<number | undefined> {
		return this.db.run(this.label, (c) => this.committedSeqOn(c, id));
	}

	async committedSeqOn(c: pg.Client, id: string): Promise<number | undefined> {
		const r = await c.query({
			name: "sf-committed-seq",
			text: `SELECT t.seq FROM ${this.db.tables.transitions} t JOIN ${this.db.tables.owners} o USING (owner_id) WHERE o.kind = $1 AND o.key = $2 AND t.id = $3`,
			values: [this.kind, this.key, id],
		});
		const row = r.rows[0] as { seq: string } | undefined;
		return row === undefined ? undefined : Number(row.seq);
	}

	/**
	 * Whether a transition with this id committed, decisively: the head row is locked first, so
	 * a transaction still in flight on another connection (a writer that lost its connection or
	 * died during COMMIT) has finished, one way or the other, before the id is looked up.
	 */
	outcomeOf(id: string): Promise<number | undefined> {
		return this.db.run(this.label, async (c) => {
			await c.query("BEGIN");
			await this.catchUpLocked(c);
			const found = await this.committedSeqOn(c, id);
			await c.query("ROLLBACK");
			this.rolledBack();
			return found;
		});
	}

	close(): Promise<void> {
		return this.db.close();
	}

	/** Inside the transaction, head locked: insert one record and move the head in one statement; false when the id is already stored. */
	async insertLocked(c: pg.Client, h: OwnerHistory, record: TransitionRecord): Promise<boolean> {
		expectNext(h.seq, record, (what) => fail("invalid_input", `${this.label}: ${what}; re-stage it on the current state`));
		const body = recordLine(record);
		this.insertedBytes = Buffer.byteLength(body);
		const t = this.db.tables;
		let ins: pg.QueryResult;
		try {
			ins = await c.query({
				// One round trip: the head moves only when the row went in (not when the id was already there).
				name: "sf-insert",
				text: `WITH ins AS (INSERT INTO ${t.transitions} (owner_id, seq, id, body, sum) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (owner_id, id) DO NOTHING RETURNING seq) UPDATE ${t.owners} o SET seq = ins.seq FROM ins WHERE o.owner_id = $1 RETURNING o.seq`,
				values: [this.ownerId, record.seq, record.id, body, checksum(this.kind, this.key, record.seq, body)],
			});
		} catch (e) {
			// The head row is locked, so only a row written outside State Flow can already hold this seq.
			if (sqlStateOf(e) === UNIQUE_VIOLATION)
				this.db.damaged(this.kind, this.key, `a transition row with seq ${record.seq} exists beyond its head seq ${h.seq}`);
			throw e;
		}
		return ins.rows.length > 0;
	}

	/** The transaction that may have created the owner row ended without committing it. */
	rolledBack(): void {
		if (this.idUncommitted) this.ownerId = undefined;
		this.idUncommitted = false;
	}

	/** After COMMIT: the record is durable; apply it to the cached history. */
	applyCommitted(record: TransitionRecord): void {
		this.idUncommitted = false;
		if (this.cache === undefined || this.cache.seq !== record.seq - 1) {
			this.forget();
			return;
		}
		applyDurable(this.cache, record);
		this.storedTailBytes += this.insertedBytes;
	}

	/**
	 * After a commit: when compaction is due (more than R + slack transitions after the stored
	 * checkpoint, and their text a share of the state's bytes: `compactionDue`), store the
	 * in-memory checkpoint and drop the text of the rows it covers (their ids stay).
	 * Its own short transaction under the head lock; a failure is retried at a later commit.
	 */
	async compactIfDue(c: pg.Client): Promise<void> {
		const h = this.cache;
		if (h === undefined || !compactionDue(h.seq, this.storedCheckpointSeq, this.retention, this.storedTailBytes, h.bytes)) return;
		const t = this.db.tables;
		try {
			await c.query("BEGIN");
			const head = await c.query({
				name: "sf-head-lock",
				text: `SELECT owner_id, seq FROM ${t.owners} WHERE owner_id = $1 FOR UPDATE`,
				values: [this.ownerId],
			});
			if (Number((head.rows[0] as { seq: string } | undefined)?.seq) !== h.seq) {
				await c.query("ROLLBACK");
				return;
			}
			const text = stateText(h.checkpoint);
			await c.query({
				name: "sf-checkpoint",
				text: `UPDATE ${t.owners} SET checkpoint_seq = $2, checkpoint = $3, checkpoint_sum = $4 WHERE owner_id = $1`,
				values: [this.ownerId, h.checkpointSeq, text, checksum(this.kind, this.key, CHECKPOINT_SEQ_TAG, text)],
			});
			await c.query({
				name: "sf-fold-rows",
				text: `UPDATE ${t.transitions} SET body = NULL, sum = NULL WHERE owner_id = $1 AND seq <= $2 AND body IS NOT NULL`,
				values: [this.ownerId, h.checkpointSeq],
			});
			await c.query("COMMIT");
			this.storedCheckpointSeq = h.checkpointSeq;
			// What stays after the checkpoint is the retained tail (O(R) records, once per compaction).
			this.storedTailBytes = h.tail.reduce((n, r) => n + Buffer.byteLength(recordLine(r)), 0);
		} catch (e) {
			await c.query("ROLLBACK").catch(() => undefined);
			if (connectionLost(e)) throw e;
		}
	}

	/**
	 * Adopt a whole history (a file store moved into the database by `state-flow migrate`) in ONE SQL transaction:
	 * create or lock the owner row, refuse an owner that already holds transitions, store the checkpoint (the state
	 * at `checkpointSeq`) and the retained tail with the checksums every read verifies, move the head, read it back and
	 * compare it with `history` byte for byte before COMMIT. A refusal or a mismatch rolls back: nothing is
	 * written. Ids of transitions folded before the checkpoint are not known to a file store, nor stored.
	 */
	adopt(history: OwnerHistory): Promise<void> {
		const t = this.db.tables;
		const rows = history.tail;
		const problem = adoptionProblem(history, this.owner);
		if (problem !== undefined) fail("invalid_input", `${this.label}: ${problem}; nothing was written`);
		let committing = false;
		const adopt = async (c: pg.Client): Promise<void> => {
			await c.query("BEGIN");
			this.forget();
			const head = await this.catchUpLocked(c);
			if (head.seq > 0) {
				fail(
					"invalid_input",
					`The ${this.label} in PostgreSQL at ${this.db.shownUrl} (schema \`${this.db.schema}\`) already holds ${head.seq} transition(s); a migration only fills an empty owner, so nothing was written. Link to it instead (\`state-flow link\`), or migrate into another, empty owner.`,
				);
			}
			const text = stateText(history.checkpoint);
			await c.query({
				name: "sf-adopt-head",
				text: `UPDATE ${t.owners} SET seq = $2, checkpoint_seq = $3, checkpoint = $4, checkpoint_sum = $5 WHERE owner_id = $1`,
				values: [this.ownerId, history.seq, history.checkpointSeq, text, checksum(this.kind, this.key, CHECKPOINT_SEQ_TAG, text)],
			});
			for (const record of rows) {
				const body = recordLine(record);
				await c.query({
					name: "sf-adopt-row",
					text: `INSERT INTO ${t.transitions} (owner_id, seq, id, body, sum) VALUES ($1, $2, $3, $4, $5)`,
					values: [this.ownerId, record.seq, record.id, body, checksum(this.kind, this.key, record.seq, body)],
				});
			}
			// Read back through every check a load makes, inside the transaction: a difference rolls back.
			this.cache = undefined;
			const back = await this.fullLoad(c, true);
			const differs = sameHistoryText(back, history);
			if (differs !== undefined) {
				this.forget();
				fail("corrupt", `${this.label}: the copy read back from PostgreSQL differs from the source (${differs}); it was rolled back and nothing was written.`);
			}
			committing = true;
			await this.db.commitAndNotify(c);
			this.idUncommitted = false;
		};
		return this.db
			.run(
				this.label,
				async (c) => {
					try {
						await adopt(c);
					} catch (e) {
						// A row id or history seen inside a transaction that did not commit is not the owner's.
						this.forget();
						throw e;
					}
				},
				() => !committing,
			)
			.catch((e: unknown) => {
				if (!committing || !isStateError(e) || e.code !== "unavailable") throw e;
				return fail(
					"unavailable",
					`${this.label}: the connection was lost during the COMMIT of the migration, so whether it committed is not known: it is wholly there or wholly absent. Check with \`state-flow show\` before running it again. (${e.message})`,
				);
			});
	}
}
