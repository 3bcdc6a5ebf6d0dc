import type pg from "pg";
import { fail, isStateError, messageOf } from "../../core/errors.js";
import { adoptionProblem, historyFrom, newHistory } from "../../core/history.js";
import { emptyState } from "../../core/state.js";
import type { OwnerHistory, SharedOwner, TransitionRecord } from "../../core/types.js";
import { recordLine, sameHistoryText } from "../format.js";
import { applyDurable, checkCommitSeq, commitDecision, compactionDue, expectNext } from "../owner-log.js";
import type { CommitOutcome, OwnerLocation, OwnerStore, OwnerStoreStatus } from "../port.js";
import type { PgDatabase } from "./database.js";
import { CHECKPOINT_SEQ_TAG, UNIQUE_VIOLATION, checksum, connectionLost, sqlStateOf, stateText, verifyCheckpoint, verifyRow } from "./rows.js";
import type { HeadRow, Row } from "./rows.js";

export class PgOwnerStore implements OwnerStore {
	readonly owner: SharedOwner;
	readonly backend: PgDatabase;
	/** Row id of the owner once known (it exists only after the first commit). */
	private ownerId: number | undefined;
	/** `ownerId` came from a row this open transaction created: not real until it commits. */
	private idUncommitted = false;
	private cache: OwnerHistory | undefined;
	/** Checkpoint seq stored in the owner row (compaction moves it). */
	private storedCheckpointSeq = 0;
	/** Bytes of the rows' text after the stored checkpoint (what a full load verifies and replays): compaction is due by it too. */
	private storedTailBytes = 0;
	/** The text size of the row `insertLocked` wrote, counted once its transaction commits (`applyCommitted`). */
	private insertedBytes = 0;

	constructor(
		readonly db: PgDatabase,
		readonly kind: SharedOwner,
		readonly key: string,
		private retention: number,
	) {
		this.owner = kind;
		this.backend = db;
	}

	/** A changed retention (the config was edited) applies from the next read on. */
	setRetention(retention: number): void {
		if (retention === this.retention) return;
		this.retention = retention;
		this.forget();
	}

	location(): OwnerLocation {
		return { backend: "postgres", owner: this.owner, url: this.db.shownUrl, schema: this.db.schema, kind: this.kind, key: this.key };
	}

	get label(): string {
		return this.db.describeOwner(this.kind, this.key);
	}

	load(): Promise<OwnerHistory> {
		return this.db.run(this.label, (c) => this.refresh(c, false));
	}

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

	async status(): Promise<OwnerStoreStatus> {
		const location = this.location();
		try {
			const h = await this.load();
			return { location, exists: this.ownerId !== undefined, seq: h.seq, retained: h.tail.length, bytes: h.bytes };
		} catch (e) {
			return { location, exists: this.ownerId !== undefined, seq: 0, retained: 0, bytes: 0, error: messageOf(e) };
		}
	}

	close(): Promise<void> {
		return this.db.close();
	}

	/** Drop the cache (after an unknown outcome): the next read rebuilds from the rows. */
	forget(): void {
		this.cache = undefined;
		// Found again by key: a row id read inside a transaction that did not commit may not exist.
		this.ownerId = undefined;
	}

	/**
	 * The current history: one indexed probe of the head seq; when it moved, only the rows
	 * after the cached seq; a full, verified load when there is no usable cache. With
	 * `lock`, the head row is locked (`FOR UPDATE`) for the rest of the transaction; with
	 * `inTransaction` (implied by `lock`), a full load reads inside the caller's transaction.
	 */
	async refresh(c: pg.Client, lock: boolean, inTransaction = lock): Promise<OwnerHistory> {
		const t = this.db.tables;
		const suffix = lock ? " FOR UPDATE" : "";
		const head =
			this.ownerId === undefined
				? await c.query({
						name: `sf-head-by-key${lock ? "-lock" : ""}`,
						text: `SELECT owner_id, seq FROM ${t.owners} WHERE kind = $1 AND key = $2${suffix}`,
						values: [this.kind, this.key],
					})
				: await c.query({
						name: `sf-head${lock ? "-lock" : ""}`,
						text: `SELECT owner_id, seq FROM ${t.owners} WHERE owner_id = $1${suffix}`,
						values: [this.ownerId],
					});
		const row = head.rows[0] as HeadRow | undefined;
		const now = this.atHead(row);
		if (now !== undefined) return now;
		// Rows must be read: the head row is there (without one, `atHead` answers).
		const seq = Number((row as HeadRow).seq);
		const c0 = this.cache;
		if (c0 !== undefined && seq > c0.seq && (await this.catchUp(c, c0, seq))) return c0;
		return this.fullLoad(c, inTransaction);
	}

	/**
	 * The history when the head row just read (undefined: there is none) needs no other row:
	 * no owner yet, or the cache at that head. Undefined when rows must be read.
	 */
	atHead(row: HeadRow | undefined): OwnerHistory | undefined {
		if (row === undefined) {
			if (this.cache !== undefined && this.cache.seq > 0)
				this.db.damaged(this.kind, this.key, `its owner row is gone although it held ${this.cache.seq} transitions`);
			this.ownerId = undefined;
			this.cache ??= newHistory(this.owner, this.retention);
			return this.cache;
		}
		this.ownerId = Number(row.owner_id);
		return this.cache !== undefined && this.cache.seq === Number(row.seq) ? this.cache : undefined;
	}

	/** Apply the rows after the cached seq; false when they are not all there (folded meanwhile). */
	private async catchUp(c: pg.Client, h: OwnerHistory, head: number): Promise<boolean> {
		const r = await c.query({
			name: "sf-rows-after",
			text: `SELECT seq, id, body, sum FROM ${this.db.tables.transitions} WHERE owner_id = $1 AND seq > $2 ORDER BY seq`,
			values: [this.ownerId, h.seq],
		});
		const rows = r.rows as Row[];
		if (rows.length < head - h.seq || rows.some((row, i) => Number(row.seq) !== h.seq + 1 + i || row.body === null)) return false;
		const records = rows.map((row) => verifyRow(row, this, this.damage));
		try {
			for (const record of records) applyDurable(h, record);
		} catch (e) {
			this.forget();
			throw e;
		}
		for (const row of rows) this.storedTailBytes += Buffer.byteLength(row.body ?? "");
		return true;
	}

	/** Read checkpoint and rows in one snapshot (REPEATABLE READ, unless the head row is locked) and verify them. */
	private async fullLoad(c: pg.Client, locked: boolean): Promise<OwnerHistory> {
		const t = this.db.tables;
		if (!locked) await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
		try {
			const o = await c.query({
				name: "sf-owner-full",
				text: `SELECT seq, checkpoint_seq, checkpoint, checkpoint_sum FROM ${t.owners} WHERE owner_id = $1`,
				values: [this.ownerId],
			});
			const own = o.rows[0] as { seq: string; checkpoint_seq: string; checkpoint: string; checkpoint_sum: string } | undefined;
			if (own === undefined) this.db.damaged(this.kind, this.key, "its owner row vanished while it was read");
			const r = await c.query({
				name: "sf-rows-full",
				text: `SELECT seq, id, body, sum FROM ${t.transitions} WHERE owner_id = $1 AND seq > $2 ORDER BY seq`,
				values: [this.ownerId, own.checkpoint_seq],
			});
			if (!locked) await c.query("COMMIT");
			const head = Number(own.seq);
			const cpSeq = Number(own.checkpoint_seq);
			const checkpoint = verifyCheckpoint(own.checkpoint, own.checkpoint_sum, cpSeq, this, this.damage);
			const rows = r.rows as Row[];
			rows.forEach((row, i) => {
				if (Number(row.seq) !== cpSeq + 1 + i)
					this.db.damaged(this.kind, this.key, `transition seq ${cpSeq + 1 + i} is missing (the next row has seq ${row.seq})`);
			});
			if (cpSeq + rows.length !== head) {
				this.db.damaged(this.kind, this.key, `its head says seq ${head} but the stored transitions end at seq ${cpSeq + rows.length}`);
			}
			const records = rows.map((row) => verifyRow(row, this, this.damage));
			let h: OwnerHistory;
			try {
				h = historyFrom(this.owner, checkpoint, cpSeq, records, this.retention);
			} catch (e) {
				if (isStateError(e) && e.code === "corrupt") this.db.damaged(this.kind, this.key, e.message);
				throw e;
			}
			this.cache = h;
			this.storedCheckpointSeq = cpSeq;
			this.storedTailBytes = rows.reduce((n, row) => n + Buffer.byteLength(row.body ?? ""), 0);
			return h;
		} catch (e) {
			if (!locked) await c.query("ROLLBACK").catch(() => undefined);
			throw e;
		}
	}

	/** Damage of this owner's rows (`verifyRow`, `verifyCheckpoint`): reported, never reset. */
	private readonly damage = (what: string): never => this.db.damaged(this.kind, this.key, what);

	/** Inside the caller's transaction (which holds the owner from here): create the owner row if needed, lock it and catch up. */
	async catchUpLocked(c: pg.Client): Promise<OwnerHistory> {
		if (this.ownerId === undefined) {
			// The row id read below exists only if this transaction commits: forgotten on rollback.
			this.idUncommitted = true;
			const empty = stateText(emptyState());
			// Created inside the transaction: a commit that rolls back leaves no owner row behind.
			await c.query({
				name: "sf-owner-create",
				text: `INSERT INTO ${this.db.tables.owners} (kind, key, checkpoint, checkpoint_sum) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, key) DO NOTHING`,
				values: [this.kind, this.key, empty, checksum(this.kind, this.key, CHECKPOINT_SEQ_TAG, empty)],
			});
		}
		return this.refresh(c, true);
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
	 * Adopt a whole history (a file store moved into the database by `state-flow migrate`) in
	 * ONE SQL transaction: create or lock the owner row, refuse an owner that already holds
	 * transitions, store the checkpoint (the state at `checkpointSeq`) and the retained tail with
	 * the checksums every read verifies, move the head, then read it all back on the same
	 * transaction and compare it with `history` byte for byte before COMMIT. A refusal or a
	 * mismatch rolls back: nothing is written. Ids of transitions folded before the checkpoint
	 * are not known to a file store and are not stored.
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
