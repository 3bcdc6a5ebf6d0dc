/**
 * Global and CWD owners in PostgreSQL: one `PgDatabase` per database URL holds one
 * connection (opened on first use, reopened by the next call after it is lost) and hands out
 * `PgOwnerStore`s keyed by (kind, project id or user). Reads are warm: one indexed probe of the
 * owner's head seq, then only the rows committed since. A commit locks the owners' head rows
 * (`FOR UPDATE`, in the fixed owner order), catches up, re-stages on the current state,
 * inserts the records and moves the heads in ONE SQL transaction, idempotent by transition id.
 * Rows are verified on every read (checksum, JSON, seq continuity): damage is reported, never
 * reset. Connection failures become an "owner unavailable" error that never holds the password.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { StateError, fail, isStateError, messageOf } from "../../core/errors.js";
import { adoptionProblem, historyFrom, newHistory } from "../../core/history.js";
import { isPlainObject } from "../../core/json.js";
import { emptyState } from "../../core/state.js";
import { DEFAULT_RETENTION, OWNERS, PLANES, ROOTS } from "../../core/types.js";
import type { OwnerHistory, OwnerState, SharedOwner, TransitionRecord } from "../../core/types.js";
import { fault } from "../fault.js";
import { applyDurable, compactionSlack } from "../file-store.js";
import { checkRecord, recordLine } from "../format.js";
import type { AtomicOwners, CommitOutcome, LoadAnswer, LockedStage, OwnerLocation, OwnerStore, OwnerStoreStatus } from "../port.js";
import { checkSchemaName, ensureSchema } from "./schema.js";
import { redactUrl, scrubber } from "./url.js";

export type PgOwnerKind = SharedOwner;

export interface PgDatabaseOptions {
	/** `postgres://user:password@host:port/database?sslmode=…` (TLS and the rest come from the URL). */
	url: string;
	/** Schema holding State Flow's tables (default `state_flow`). */
	schema?: string;
	/** How long to wait for a connection before reporting the owner unavailable (default 5 s). */
	connectTimeoutMs?: number;
	/** Server-side statement timeout (default 10 s). */
	statementTimeoutMs?: number;
	/** How long a commit waits for another writer's row lock before "busy" (default 10 s). */
	lockTimeoutMs?: number;
}

/** SQLSTATEs that mean "this connection or server cannot serve us now". */
const UNAVAILABLE_STATES = /^(08|57P0[1-4]|53300|28P01|28000|3D000)/;
const LOCK_NOT_AVAILABLE = "55P03";
const QUERY_CANCELED = "57014";
const INSUFFICIENT_PRIVILEGE = "42501";
const UNIQUE_VIOLATION = "23505";

function sqlStateOf(e: unknown): string | undefined {
	const code = (e as { code?: unknown } | null)?.code;
	return typeof code === "string" ? code : undefined;
}

/** The error leaves this connection unusable (lost, refused, timed out, server shutting down). */
function connectionLost(e: unknown): boolean {
	if (isStateError(e)) return false;
	const code = sqlStateOf(e);
	if (code !== undefined && (UNAVAILABLE_STATES.test(code) || /^E[A-Z]+$/.test(code))) return true;
	const msg = messageOf(e);
	return /Connection terminated|connection timeout|not queryable|timeout exceeded|Query read timeout|socket|ECONN|EPIPE/i.test(msg);
}

function checksum(kind: PgOwnerKind, key: string, seq: number, body: string): string {
	return createHash("sha256").update(`${kind}\n${key}\n${seq}\n${body}`).digest("hex");
}

/** Checkpoint rows use seq -1 in their checksum input, so a row's text cannot pass for a checkpoint. */
const CHECKPOINT_SEQ_TAG = -1;

function checkpointText(state: OwnerState): string {
	return JSON.stringify(state);
}

/** The driver's socket of a connection (not in its typings), to say whether it keeps the process alive. */
function socketOf(c: pg.Client): { ref?: () => void; unref?: () => void } | undefined {
	return (c as unknown as { connection?: { stream?: { ref?: () => void; unref?: () => void } } }).connection?.stream;
}

/** A transaction phase, to tell a failure before COMMIT (nothing written) from one during it (unknown). */
type Phase = "before-commit" | "commit";

export class PgDatabase implements AtomicOwners {
	readonly schema: string;
	/** The URL without its password: what every message shows. */
	readonly shownUrl: string;
	private readonly s: string;
	private readonly scrub: (text: string) => string;
	private readonly config: pg.ClientConfig;
	private conn: pg.Client | undefined;
	private migrated = false;
	private chain: Promise<unknown> = Promise.resolve();
	private readonly stores = new Map<string, PgOwnerStore>();
	readonly lockTimeoutMs: number;
	/** Told whenever any process commits to this schema (LISTEN/NOTIFY on `channel`). */
	private readonly watchers = new Set<() => void>();
	/** The notification channel of this schema: every commit to it says so, inside its transaction. */
	readonly channel: string;

	constructor(opts: PgDatabaseOptions) {
		this.schema = opts.schema ?? "state_flow";
		this.s = checkSchemaName(this.schema);
		this.shownUrl = redactUrl(opts.url);
		this.scrub = scrubber(opts.url);
		this.lockTimeoutMs = opts.lockTimeoutMs ?? 10_000;
		this.channel = `state_flow_${createHash("sha256").update(this.schema).digest("hex").slice(0, 24)}`;
		const statementTimeout = opts.statementTimeoutMs ?? 10_000;
		this.config = {
			connectionString: opts.url,
			connectionTimeoutMillis: opts.connectTimeoutMs ?? 5_000,
			statement_timeout: statementTimeout,
			lock_timeout: this.lockTimeoutMs,
			// A server that vanished without a reset (a cut network) must not hang a call forever.
			query_timeout: statementTimeout + 5_000,
			keepAlive: true,
			application_name: "state-flow",
		};
	}

	/** The store of one owner (one object per (kind, key), so every caller shares its cache). */
	store(kind: PgOwnerKind, key: string, retention = DEFAULT_RETENTION): PgOwnerStore {
		if (typeof key !== "string" || key === "" || key.length > 200) {
			fail("invalid_input", `the ${kind === "cwd" ? "project id" : "user"} of a shared owner must be 1..200 characters, got ${JSON.stringify(key)}`, [
				kind === "cwd" ? "project" : "user",
			]);
		}
		const id = `${kind}\n${key}`;
		let s = this.stores.get(id);
		if (s === undefined) {
			s = new PgOwnerStore(this, kind, key, retention);
			this.stores.set(id, s);
		}
		s.setRetention(retention);
		return s;
	}

	/**
	 * Call `changed` after each commit any process makes to this schema, from now until the
	 * returned function is called. The connection is opened for it now; while it is lost (the
	 * server restarted) nothing is told until the next call reconnects.
	 */
	watch(changed: () => void): () => void {
		this.watchers.add(changed);
		// Opening the connection starts listening; a database that cannot be reached says so at its next use.
		void this.run("watch", async () => undefined).catch(() => undefined);
		return () => {
			this.watchers.delete(changed);
		};
	}

	/** Close the connection; the next call opens a new one. */
	async close(): Promise<void> {
		await this.exclusive(async () => {
			const c = this.conn;
			this.conn = undefined;
			if (c === undefined) return;
			// Waiting for the server's goodbye has no timer of the driver's: the socket keeps the process alive meanwhile.
			socketOf(c)?.ref?.();
			await c.end().catch(() => undefined);
		});
	}

	/**
	 * Run `fn` alone on the connection (transactions must not interleave), mapping failures.
	 * A kept connection found dead (the server restarted while we were idle and no event told
	 * us) is replaced and `fn` run once more, as long as `mayRetry()` says nothing can have
	 * been committed yet.
	 */
	run<T>(owner: string, fn: (c: pg.Client) => Promise<T>, mayRetry: () => boolean = () => true): Promise<T> {
		return this.exclusive(async () => {
			for (let attempt = 0; ; attempt++) {
				const kept = this.conn !== undefined;
				try {
					return await fn(await this.connection());
				} catch (e) {
					const lost = connectionLost(e);
					// Leave no transaction open behind a refusal or an unexpected error (outside one, ROLLBACK is a no-op).
					if (this.conn && !lost) await this.conn.query("ROLLBACK").catch(() => this.drop());
					if (lost && kept && attempt === 0 && mayRetry()) {
						this.drop();
						continue;
					}
					throw this.mapError(owner, e);
				}
			}
		});
	}

	private exclusive<T>(fn: () => Promise<T>): Promise<T> {
		const next = this.chain.then(fn, fn);
		this.chain = next.catch(() => undefined);
		return next;
	}

	private async connection(): Promise<pg.Client> {
		if (this.conn) return this.conn;
		// Loaded on first use: a user without a database never pays for the driver at pi's start.
		const { default: driver } = await import("pg");
		const c = new driver.Client(this.config);
		// A connection lost while idle is reported here: forget it, the next call reconnects.
		c.on("error", () => {
			if (this.conn === c) this.conn = undefined;
		});
		c.on("notification", (n) => {
			if (n.channel !== this.channel) return;
			for (const changed of [...this.watchers]) {
				try {
					changed();
				} catch {
					// A watcher's failure is its own; the others are still told.
				}
			}
		});
		try {
			await c.connect();
			if (!this.migrated) {
				await ensureSchema(c, this.schema);
				this.migrated = true;
			}
			// Every connection listens: the commits of other processes reach `watch` as they land.
			await c.query(`LISTEN ${this.channel}`);
		} catch (e) {
			c.end().catch(() => undefined);
			throw e;
		}
		// An idle connection must not keep the process alive (pi's print mode, a script that
		// forgets `close`). A query in flight still does: the driver holds a timer for it (`query_timeout`).
		socketOf(c)?.unref?.();
		this.conn = c;
		return c;
	}

	/**
	 * COMMIT, telling the schema's listeners in the same round trip: PostgreSQL delivers the
	 * notification only if the transaction commits. (The channel is this object's own hex name.)
	 */
	async commitAndNotify(c: pg.Client): Promise<void> {
		await c.query(`NOTIFY ${this.channel}; COMMIT`);
	}

	/** Forget a connection that failed: the next call opens a new one. */
	drop(): void {
		const c = this.conn;
		this.conn = undefined;
		c?.end().catch(() => undefined);
	}

	/** One place that turns a driver failure into a StateError saying what to do (never the password). */
	mapError(owner: string, e: unknown): unknown {
		if (isStateError(e)) return e;
		const code = sqlStateOf(e);
		const detail = this.scrub(`${messageOf(e)}${code && !/^E[A-Z]+$/.test(code) ? ` [SQLSTATE ${code}]` : ""}`);
		if (connectionLost(e)) this.drop();
		if (code === LOCK_NOT_AVAILABLE) {
			return new StateError(
				"busy",
				`${owner} is being written by another process (waited ${this.lockTimeoutMs} ms for its row lock); nothing was written; retry.`,
			);
		}
		if (code === INSUFFICIENT_PRIVILEGE) {
			return new StateError(
				"unavailable",
				`${owner} unavailable: the database role lacks a privilege on schema \`${this.schema}\` at ${this.shownUrl} (${detail}); nothing was written. Grant what docs/shared-memory.md lists, or ask the database owner to.`,
			);
		}
		if (!connectionLost(e) && code !== QUERY_CANCELED) {
			// The server answered but refused a statement: not an outage, and retrying will not help.
			return new StateError(
				"io",
				`${owner}: PostgreSQL at ${this.shownUrl} refused a State Flow statement (${detail}); nothing was written. The tables in schema \`${this.schema}\` may have been changed by hand: run \`state-flow doctor\`, and report it if they were not.`,
			);
		}
		const what =
			code === QUERY_CANCELED
				? "did not answer in time"
				: code === "28P01" || code === "28000"
					? "refused the credentials"
					: code === "3D000"
						? "has no such database"
						: "cannot be reached";
		return new StateError(
			"unavailable",
			`${owner} unavailable: PostgreSQL at ${this.shownUrl} ${what} (${detail}). Nothing was written and nothing is queued; the other owners keep working. Check that the server runs and that the URL and credentials are right; the next call reconnects by itself.`,
		);
	}

	/** Text for messages about one owner. */
	describeOwner(kind: PgOwnerKind, key: string): string {
		return `\`${kind}\` owner (${kind === "cwd" ? "project" : "user"} \`${key}\`)`;
	}

	/** Damage: what, where, and what to do; the rows are left as they are. */
	damaged(kind: PgOwnerKind, key: string, what: string): never {
		fail(
			"corrupt",
			`The ${this.describeOwner(kind, key)} in PostgreSQL at ${this.shownUrl} (schema \`${this.schema}\`) is damaged: ${what}. It was left unchanged and nothing was written. Restore its rows from a database backup, or fix the row by hand (see docs/shared-memory.md).`,
		);
	}

	get tables(): { owners: string; transitions: string } {
		return { owners: `${this.s}.owners`, transitions: `${this.s}.transitions` };
	}

	/**
	 * Commit several owners of this database in ONE SQL transaction. Head rows are locked in the
	 * fixed owner order (so two writers never deadlock), histories caught up under the locks,
	 * `stage` re-stages on them, and its records are inserted with the heads moved. A record
	 * whose id the owner already holds is skipped. After a connection lost during COMMIT, the
	 * transition ids tell whether it committed.
	 */
	async commitLocked<T>(stores: readonly OwnerStore[], stage: (histories: readonly OwnerHistory[]) => Promise<LockedStage<T>> | LockedStage<T>): Promise<T> {
		const mine = stores.map((s) => {
			if (!(s instanceof PgOwnerStore) || s.db !== this) fail("invalid_input", "commitLocked takes only owners of this database");
			return s;
		});
		// The fixed lock order: Global before CWD, then by key (two projects in one transaction).
		const rank = (s: PgOwnerStore): string => `${OWNERS.indexOf(s.owner)}\n${s.key}`;
		const order = mine.map((_, i) => i).sort((a, b) => (rank(mine[a] as PgOwnerStore) < rank(mine[b] as PgOwnerStore) ? -1 : 1));
		const label = mine.map((s) => this.describeOwner(s.kind, s.key)).join(" and ");
		let phase = "before-commit" as Phase;
		let staged: LockedStage<T> | undefined;
		let written: Array<{ store: PgOwnerStore; record: TransitionRecord }> = [];
		try {
			return await this.run(
				label,
				async (c) => {
					await c.query("BEGIN");
					const histories: OwnerHistory[] = new Array(mine.length);
					for (const i of order) histories[i] = await (mine[i] as PgOwnerStore).lockAndCatchUp(c);
					fault("pg-after-lock");
					staged = await stage(histories);
					written = [];
					for (const i of order) {
						const record = staged.records[i];
						const store = mine[i] as PgOwnerStore;
						if (record === undefined) continue;
						if (await store.insertLocked(c, histories[i] as OwnerHistory, record)) written.push({ store, record });
					}
					if (written.length === 0) {
						await c.query("ROLLBACK");
						for (const s of mine) s.rolledBack();
						return staged.value;
					}
					await staged.beforeCommit?.(written.map((w) => w.record));
					fault("pg-before-commit");
					phase = "commit";
					await this.commitAndNotify(c);
					fault("pg-after-commit");
					for (const w of written) w.store.applyCommitted(w.record);
					for (const w of written) await w.store.compactIfDue(c);
					return staged.value;
				},
				() => phase !== "commit",
			);
		} catch (e) {
			for (const s of mine) s.rolledBack();
			if (phase !== "commit") staged?.abandon?.();
			if (phase !== "commit" || staged === undefined || !isStateError(e) || e.code !== "unavailable") throw e;
			await this.resolveLostCommit(label, written, e, staged);
			return staged.value;
		}
	}

	/**
	 * The connection died while COMMIT was in flight (or right after it): reconnect and ask the
	 * server whether the transition is there. Returns when it committed; throws saying exactly
	 * what is known otherwise. Every owner of it is in the same SQL transaction: one id answers for all.
	 */
	private async resolveLostCommit(
		label: string,
		written: ReadonlyArray<{ store: PgOwnerStore; record: TransitionRecord }>,
		lost: Error,
		staged: LockedStage<unknown>,
	): Promise<void> {
		for (const w of written) w.store.forget();
		const first = written[0] as { store: PgOwnerStore; record: TransitionRecord };
		const id = first.record.id;
		let seq: number | undefined;
		try {
			seq = await first.store.outcomeOf(id);
		} catch {
			fail(
				"unavailable",
				`${label}: the connection was lost while committing transition \`${id}\`, and PostgreSQL at ${this.shownUrl} could not be asked whether it committed; it is either wholly there or wholly absent, and the next read shows which. (${lost.message})`,
			);
		}
		if (seq === undefined) {
			staged.abandon?.();
			fail(
				"unavailable",
				`${label}: the connection was lost while committing transition \`${id}\`; it was NOT committed (checked after reconnecting) and nothing was written. Retry the change.`,
			);
		}
	}
}

/** An owner's head row as the head probes read it. */
interface HeadRow {
	kind?: string;
	key?: string;
	owner_id: string;
	seq: string;
}

interface Row {
	seq: string | number;
	id: string;
	body: string | null;
	sum: string | null;
}

export class PgOwnerStore implements OwnerStore {
	readonly owner: PgOwnerKind;
	/** Row id of the owner once known (it exists only after the first commit). */
	private ownerId: number | undefined;
	/** `ownerId` came from a row this open transaction created: not real until it commits. */
	private idUncommitted = false;
	private cache: OwnerHistory | undefined;
	/** Checkpoint seq stored in the owner row (compaction moves it). */
	private storedCheckpointSeq = 0;

	constructor(
		readonly db: PgDatabase,
		readonly kind: PgOwnerKind,
		readonly key: string,
		private retention: number,
	) {
		this.owner = kind;
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

	private get label(): string {
		return this.db.describeOwner(this.kind, this.key);
	}

	load(): Promise<OwnerHistory> {
		return this.db.run(this.label, (c) => this.refresh(c, false));
	}

	async commit(record: TransitionRecord, expectedSeq: number): Promise<CommitOutcome> {
		const outcome = await this.db.commitLocked<CommitOutcome>([this], ([h]) => {
			const history = h as OwnerHistory;
			const have = history.tail.find((r) => r.id === record.id);
			if (have) return { records: [undefined], value: { kind: "already", seq: have.seq } };
			if (history.seq !== expectedSeq) return { records: [undefined], value: { kind: "conflict", seq: history.seq } };
			return { records: [record], value: { kind: "committed", seq: record.seq } };
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
			await this.lockAndCatchUp(c);
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
	 * Histories of several owners of ONE database as one snapshot (a read of Global and CWD never
	 * straddles another process's transition over both, docs/spec.md §8). Their heads come from
	 * one statement, so when every cached history is at its head (the usual read) that single
	 * round trip is the whole read; otherwise all of them are brought up to date inside one
	 * REPEATABLE READ READ ONLY transaction. Damage of one owner is that owner's answer; the
	 * others are still read. An outage fails the whole call.
	 */
	static loadTogether(stores: readonly PgOwnerStore[]): Promise<LoadAnswer[]> {
		const db = (stores[0] as PgOwnerStore).db;
		if (stores.some((s) => s.db !== db)) throw new Error("loadTogether: the owners live in different databases");
		// Damage is the owner's own answer; anything else (an outage) fails the whole read.
		const damage = (error: unknown): LoadAnswer => {
			if (!isStateError(error) || error.code !== "corrupt") throw error;
			return { error };
		};
		return db.run(stores.map((s) => s.label).join(", "), async (c) => {
			const heads = await c.query({
				name: `sf-heads-${stores.length}`,
				text: `SELECT kind, key, owner_id, seq FROM ${db.tables.owners} WHERE ${stores.map((_, i) => `(kind = $${2 * i + 1} AND key = $${2 * i + 2})`).join(" OR ")}`,
				values: stores.flatMap((s) => [s.kind, s.key]),
			});
			const rows = heads.rows as HeadRow[];
			const cached = stores.map((s): LoadAnswer | undefined => {
				try {
					const history = s.atHead(rows.find((r) => r.kind === s.kind && r.key === s.key));
					return history === undefined ? undefined : { history };
				} catch (error) {
					return damage(error);
				}
			});
			if (cached.every((x) => x !== undefined)) return cached as LoadAnswer[];
			await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
			const out: LoadAnswer[] = [];
			for (const s of stores) out.push(await s.refresh(c, false, true).then((history): LoadAnswer => ({ history }), damage));
			await c.query("COMMIT");
			return out;
		});
	}

	/**
	 * The current history: one indexed probe of the head seq; when it moved, only the rows
	 * after the cached seq; a full, verified load when there is no usable cache. With
	 * `lock`, the head row is locked (`FOR UPDATE`) for the rest of the transaction; with
	 * `inTransaction` (implied by `lock`), a full load reads inside the caller's transaction.
	 */
	private async refresh(c: pg.Client, lock: boolean, inTransaction = lock): Promise<OwnerHistory> {
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
	private atHead(row: HeadRow | undefined): OwnerHistory | undefined {
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
		const records = rows.map((row) => this.verify(row));
		try {
			for (const record of records) applyDurable(h, record);
		} catch (e) {
			this.forget();
			throw e;
		}
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
			const checkpoint = this.verifyCheckpoint(own.checkpoint, own.checkpoint_sum, cpSeq);
			const rows = r.rows as Row[];
			rows.forEach((row, i) => {
				if (Number(row.seq) !== cpSeq + 1 + i)
					this.db.damaged(this.kind, this.key, `transition seq ${cpSeq + 1 + i} is missing (the next row has seq ${row.seq})`);
			});
			if (cpSeq + rows.length !== head) {
				this.db.damaged(this.kind, this.key, `its head says seq ${head} but the stored transitions end at seq ${cpSeq + rows.length}`);
			}
			const records = rows.map((row) => this.verify(row));
			let h: OwnerHistory;
			try {
				h = historyFrom(this.owner, checkpoint, cpSeq, records, this.retention);
			} catch (e) {
				if (isStateError(e) && e.code === "corrupt") this.db.damaged(this.kind, this.key, e.message);
				throw e;
			}
			this.cache = h;
			this.storedCheckpointSeq = cpSeq;
			return h;
		} catch (e) {
			if (!locked) await c.query("ROLLBACK").catch(() => undefined);
			throw e;
		}
	}

	/** One stored transition row, checked: checksum, JSON, record shape, seq and id as the row says. */
	private verify(row: Row): TransitionRecord {
		const seq = Number(row.seq);
		const where = `transition row seq ${seq}`;
		if (row.body === null || row.sum === null) this.db.damaged(this.kind, this.key, `${where} has no text although it is after the checkpoint`);
		if (checksum(this.kind, this.key, seq, row.body) !== row.sum)
			this.db.damaged(this.kind, this.key, `${where} does not match its checksum (edited outside State Flow)`);
		let value: unknown;
		try {
			value = JSON.parse(row.body);
		} catch {
			this.db.damaged(this.kind, this.key, `${where} is not valid JSON`);
		}
		const report = (_where: string, what: string): never => this.db.damaged(this.kind, this.key, what);
		const record = checkRecord(value, this.label, where, report);
		if (record.seq !== seq || record.id !== row.id) this.db.damaged(this.kind, this.key, `${where} holds transition \`${record.id}\` with seq ${record.seq}`);
		if (!record.owners.includes(this.owner)) this.db.damaged(this.kind, this.key, `${where} belongs to owners ${record.owners.join(", ")}`);
		return record;
	}

	private verifyCheckpoint(text: string, sum: string, seq: number): OwnerState {
		if (checksum(this.kind, this.key, CHECKPOINT_SEQ_TAG, text) !== sum)
			this.db.damaged(this.kind, this.key, `its checkpoint (state at seq ${seq}) does not match its checksum (edited outside State Flow)`);
		let value: unknown;
		try {
			value = JSON.parse(text);
		} catch {
			this.db.damaged(this.kind, this.key, "its checkpoint is not valid JSON");
		}
		// The planes, and the registered roots' namespace once one was written (docs/spec.md §12).
		const sections = isPlainObject(value) ? Object.keys(value).filter((k) => k !== ROOTS || isPlainObject(value[k])) : [];
		if (
			!isPlainObject(value) ||
			sections.length !== Object.keys(value).length ||
			sections.length - (ROOTS in value ? 1 : 0) !== PLANES.length ||
			PLANES.some((p) => !isPlainObject(value[p]))
		) {
			this.db.damaged(this.kind, this.key, `its checkpoint is not an object of the planes ${PLANES.join(", ")}`);
		}
		return value as unknown as OwnerState;
	}

	/** Inside a transaction: create the owner row if needed, lock it and catch up. */
	async lockAndCatchUp(c: pg.Client): Promise<OwnerHistory> {
		if (this.ownerId === undefined) {
			// The row id read below exists only if this transaction commits: forgotten on rollback.
			this.idUncommitted = true;
			const empty = checkpointText(emptyState());
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
		if (record.seq !== h.seq + 1)
			fail("invalid_input", `${this.label}: record \`${record.id}\` has seq ${record.seq}, but the owner is at ${h.seq}; re-stage it on the current state`);
		const body = recordLine(record);
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
	}

	/**
	 * After a commit: when more than R + slack transitions lie after the stored checkpoint,
	 * store the in-memory checkpoint and drop the text of the rows it covers (their ids stay).
	 * Its own short transaction under the head lock; a failure is retried at a later commit.
	 */
	async compactIfDue(c: pg.Client): Promise<void> {
		const h = this.cache;
		if (h === undefined || h.seq - this.storedCheckpointSeq <= this.retention + compactionSlack(this.retention)) return;
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
			const text = checkpointText(h.checkpoint);
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
			const head = await this.lockAndCatchUp(c);
			if (head.seq > 0) {
				fail(
					"invalid_input",
					`The ${this.label} in PostgreSQL at ${this.db.shownUrl} (schema \`${this.db.schema}\`) already holds ${head.seq} transition(s); a migration only fills an empty owner, so nothing was written. Link to it instead (\`state-flow link\`), or migrate into another, empty owner.`,
				);
			}
			const text = checkpointText(history.checkpoint);
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

/** Where two histories differ in their stored text (seq, checkpoint, each retained record, state), or undefined when they do not. */
export function sameHistoryText(a: OwnerHistory, b: OwnerHistory): string | undefined {
	if (a.seq !== b.seq) return `head seq ${a.seq} vs ${b.seq}`;
	if (a.checkpointSeq !== b.checkpointSeq) return `checkpoint seq ${a.checkpointSeq} vs ${b.checkpointSeq}`;
	if (checkpointText(a.checkpoint) !== checkpointText(b.checkpoint)) return `the checkpoint at seq ${a.checkpointSeq}`;
	if (a.tail.length !== b.tail.length) return `${a.tail.length} vs ${b.tail.length} retained transitions`;
	for (let i = 0; i < a.tail.length; i++) {
		if (recordLine(a.tail[i] as TransitionRecord) !== recordLine(b.tail[i] as TransitionRecord)) return `transition seq ${(a.tail[i] as TransitionRecord).seq}`;
	}
	if (checkpointText(a.state) !== checkpointText(b.state)) return "the current state";
	return undefined;
}
