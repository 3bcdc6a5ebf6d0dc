/**
 * The read side of a PostgreSQL owner store: its rows found by (kind, key), a verified full load, and a cache
 * brought forward by seq (only the rows after it are read). `owner-store.ts` adds the writes on top.
 */
import type pg from "pg";
import { isStateError, messageOf } from "../../core/errors.js";
import { historyFrom, newHistory } from "../../core/history.js";
import { emptyState } from "../../core/state.js";
import type { OwnerHistory, SharedOwner } from "../../core/types.js";
import { applyDurable } from "../owner-log.js";
import type { OwnerLocation, OwnerStoreStatus } from "../port.js";
import { CHECKPOINT_SEQ_TAG, checksum, stateText, verifyCheckpoint, verifyRow } from "./rows.js";
import type { HeadRow, PgSession, Row } from "./rows.js";

export abstract class PgOwnerReader {
	readonly owner: SharedOwner;
	readonly backend: PgSession;
	/** Row id of the owner once known (it exists only after the first commit). */
	protected ownerId: number | undefined;
	/** `ownerId` came from a row this open transaction created: not real until it commits. */
	protected idUncommitted = false;
	protected cache: OwnerHistory | undefined;
	/** Checkpoint seq stored in the owner row (compaction moves it). */
	protected storedCheckpointSeq = 0;
	/** Bytes of the rows' text after the stored checkpoint (what a full load verifies and replays): compaction is due by it too. */
	protected storedTailBytes = 0;
	/** The text size of the row `insertLocked` wrote, counted once its transaction commits (`applyCommitted`). */
	protected insertedBytes = 0;

	constructor(
		readonly db: PgSession,
		readonly kind: SharedOwner,
		readonly key: string,
		protected retention: number,
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

	async status(): Promise<OwnerStoreStatus> {
		const location = this.location();
		try {
			const h = await this.load();
			return { location, exists: this.ownerId !== undefined, seq: h.seq, retained: h.tail.length, bytes: h.bytes };
		} catch (e) {
			return { location, exists: this.ownerId !== undefined, seq: 0, retained: 0, bytes: 0, error: messageOf(e) };
		}
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
	protected async catchUp(c: pg.Client, h: OwnerHistory, head: number): Promise<boolean> {
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
	protected async fullLoad(c: pg.Client, locked: boolean): Promise<OwnerHistory> {
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
	protected readonly damage = (what: string): never => this.db.damaged(this.kind, this.key, what);

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
}
