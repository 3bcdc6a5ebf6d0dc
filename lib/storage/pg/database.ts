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
import { fail, isStateError } from "../../core/errors.js";
import { DEFAULT_RETENTION, OWNERS } from "../../core/types.js";
import type { OwnerHistory, SharedOwner, TransitionRecord } from "../../core/types.js";
import { fault } from "../fault.js";
import type { LockedStage, LoadAnswer, OwnerStore, StageStep } from "../port.js";
import { PgOwnerStore } from "./owner-store.js";
import { connectionLost } from "./rows.js";
import type { HeadRow, PgSession } from "./rows.js";
import { checkSchemaName, ensureSchema } from "./schema.js";
import { redactUrl, scrubber } from "./url.js";
import { driverError } from "./errors.js";

export type { PgOwnerStore } from "./owner-store.js";

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

/** The driver's socket of a connection (not in its typings), to say whether it keeps the process alive. */
function socketOf(c: pg.Client): { ref?: () => void; unref?: () => void } | undefined {
	return (c as unknown as { connection?: { stream?: { ref?: () => void; unref?: () => void } } }).connection?.stream;
}

/** A transaction phase, to tell a failure before COMMIT (nothing written) from one during it (unknown). */
type Phase = "before-commit" | "commit";

export class PgDatabase implements PgSession {
	readonly schema: string;
	/** The URL without its password: what every message shows. */
	readonly shownUrl: string;
	private readonly s: string;
	readonly scrub: (text: string) => string;
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
	store(kind: SharedOwner, key: string, retention = DEFAULT_RETENTION): PgOwnerStore {
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
		if (connectionLost(e)) this.drop();
		return driverError(owner, e, this);
	}

	/** Text for messages about one owner. */
	describeOwner(kind: SharedOwner, key: string): string {
		return `\`${kind}\` owner (${kind === "cwd" ? "project" : "user"} \`${key}\`)`;
	}

	/** Damage: what, where, and what to do; the rows are left as they are. */
	damaged(kind: SharedOwner, key: string, what: string): never {
		fail(
			"corrupt",
			`The ${this.describeOwner(kind, key)} in PostgreSQL at ${this.shownUrl} (schema \`${this.schema}\`) is damaged: ${what}. It was left unchanged and nothing was written. Restore its rows from a database backup, or fix the row by hand (see docs/shared-memory.md).`,
		);
	}

	get tables(): { owners: string; transitions: string } {
		return { owners: `${this.s}.owners`, transitions: `${this.s}.transitions` };
	}

	/** The stores of this database behind `stores`, or a clear refusal. */
	private mine(stores: readonly OwnerStore[]): PgOwnerStore[] {
		return stores.map((s) => {
			if (s.backend !== this) fail("invalid_input", `a database commit takes only owners of this database, not \`${s.owner}\` at another place`);
			return s as PgOwnerStore;
		});
	}

	/**
	 * Histories of several owners of ONE database as one snapshot (a read of Global and CWD never
	 * straddles another process's transition over both, docs/spec.md §8). Their heads come from
	 * one statement, so when every cached history is at its head (the usual read) that single
	 * round trip is the whole read; otherwise all of them are brought up to date inside one
	 * REPEATABLE READ READ ONLY transaction. Damage of one owner is that owner's answer; the
	 * others are still read. An outage fails the whole call.
	 */
	loadTogether(all: readonly OwnerStore[]): Promise<LoadAnswer[]> {
		const stores = this.mine(all);
		// Damage is the owner's own answer; anything else (an outage) fails the whole read.
		const damage = (error: unknown): LoadAnswer => {
			if (!isStateError(error) || error.code !== "corrupt") throw error;
			return { error };
		};
		return this.run(stores.map((s) => s.label).join(", "), async (c) => {
			const heads = await c.query({
				name: `sf-heads-${stores.length}`,
				text: `SELECT kind, key, owner_id, seq FROM ${this.tables.owners} WHERE ${stores.map((_, i) => `(kind = $${2 * i + 1} AND key = $${2 * i + 2})`).join(" OR ")}`,
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
	 * Commit several owners of this database in ONE SQL transaction. Head rows are locked in the
	 * fixed owner order (so two writers never deadlock), histories caught up under the locks,
	 * `stage` re-stages on them, and its records are inserted with the heads moved. A record
	 * whose id the owner already holds is skipped. After a connection lost during COMMIT, the
	 * transition ids tell whether it committed.
	 */
	async commitTogether<T>(stores: readonly OwnerStore[], stage: StageStep<T>): Promise<T> {
		const mine = this.mine(stores);
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
					for (const i of order) histories[i] = await (mine[i] as PgOwnerStore).catchUpLocked(c);
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
