/**
 * The owner-store port: what the engine, the host and the CLI need from a place that keeps
 * one owner's transitions. The file store (Global, CWD), the Session store and the PostgreSQL
 * store each implement it, so a backend is added without touching the layers above.
 *
 * Everything is asynchronous at this boundary (a database answers over the network), and
 * every method either returns a consistent answer or throws a `StateError` whose message says
 * what to do: `corrupt` for damage (never reset), `io` for an owner that cannot be reached,
 * `busy` for a lock that was not obtained in time.
 *
 * Histories returned by `load` are owned by the store: callers read them and must not mutate
 * them. A successful `commit` applies the record to the store's history itself, so the next
 * `load` (and any snapshot still held, which is the same object) already includes it.
 */
import type { Owner, OwnerHistory, TransitionRecord } from "../core/types.js";

/** Where an owner lives, for `/state`, `state-flow show`, journals and messages. Never holds a secret. */
export type OwnerLocation =
	| { backend: "file"; owner: Owner; path: string }
	| { backend: "session"; owner: "session"; sessionId: string }
	| {
			backend: "postgres";
			owner: Owner;
			/** The database URL without its password. */
			url: string;
			/** The PostgreSQL schema holding State Flow's tables. */
			schema: string;
			/** `cwd` owners are keyed by project id, `global` owners by user. */
			kind: "cwd" | "global";
			key: string;
	  };

/** One string that names an owner's storage uniquely (journal parts, caches, equality). */
export function locationKey(l: OwnerLocation): string {
	switch (l.backend) {
		case "file":
			return `file:${l.owner}:${l.path}`;
		case "session":
			return `session:${l.sessionId}`;
		case "postgres":
			return `postgres:${l.url}:${l.schema}:${l.kind}:${l.key}`;
	}
}

/** One owner's answer to a read of several: its history, or the error that kept it from being read. */
export type LoadAnswer = { history: OwnerHistory } | { error: unknown };

/**
 * The outcome of committing one staged record at an expected seq.
 * - `committed`: the record is durable at `seq` and applied to the store's history.
 * - `already`: a transition with the record's id is already stored for this owner (at
 *   `seq`), so nothing was written: a roll-forward or a retry after a lost answer is a no-op.
 * - `conflict`: the owner moved on (another writer committed first); nothing was written.
 *   The caller reloads, re-stages on the current state and tries again.
 */
export type CommitOutcome = { kind: "committed"; seq: number } | { kind: "already"; seq: number } | { kind: "conflict"; seq: number };

/** What `/state` and `state-flow show` say about one owner. */
export interface OwnerStoreStatus {
	location: OwnerLocation;
	/** The owner has been written (a never-written owner exists nowhere yet). */
	exists: boolean;
	seq: number;
	/** Retained transitions (the tail). */
	retained: number;
	/** State size as counted by the limits (`stateBytes`). */
	bytes: number;
	/** Set when the owner cannot be read now (damage or unreachable); says what to do. */
	error?: string;
}

export interface OwnerStore {
	readonly owner: Owner;
	/** The backend that keeps this owner: multi-owner commits, snapshots and watches are routed by it. */
	readonly backend: OwnerBackend;
	location(): OwnerLocation;
	/**
	 * The current history (warm reads cost one freshness check). Never creates anything:
	 * a never-written owner reads as an empty history at seq 0.
	 */
	load(): Promise<OwnerHistory>;
	/**
	 * Make `record` durable if the owner is still at `expectedSeq` (then `record.seq` must be
	 * `expectedSeq + 1`) and no transition with `record.id` is stored for it yet.
	 */
	commit(record: TransitionRecord, expectedSeq: number): Promise<CommitOutcome>;
	/**
	 * Seq of the stored transition with this id, if the owner holds it. PostgreSQL keeps every
	 * id for the owner's life; the file and Session stores can tell only while the record is
	 * still in their log (callers then compare seqs, as the journal's roll-forward does).
	 */
	committedSeq(id: string): Promise<number | undefined>;
	status(): Promise<OwnerStoreStatus>;
	/**
	 * False while the first commit would still create the owner's storage (a folder in the
	 * project): the facade then refuses bad input before anything is created. Backends whose
	 * first commit creates nothing visible omit it.
	 */
	created?(): Promise<boolean>;
	/**
	 * Whether a transition with this id committed, decisively: a transaction still in flight on
	 * another connection has finished first. Only backends whose commit point a local journal can
	 * wait on (PostgreSQL) have it; roll-forward of a mixed transition asks it.
	 */
	outcomeOf?(id: string): Promise<number | undefined>;
	/** Release connections and handles; the store may be used again afterwards (it reopens). */
	close(): Promise<void>;
}

/**
 * The records one locked staging produced: `records[i]` is the record for `stores[i]`, or
 * undefined when that owner does not change. `value` is handed back to the caller as is.
 */
export interface LockedStage<T> {
	records: ReadonlyArray<TransitionRecord | undefined>;
	value: T;
	/** `bytesAfter[i]`: the size of `stores[i]`'s state after `records[i]`, as the stage computed it (a backend need not plan it again). */
	bytesAfter?: ReadonlyArray<number | undefined>;
	/**
	 * Called when the records could not be made durable and nothing was committed (the write
	 * failed before the commit point): undo what the stage did outside the store.
	 */
	abandon?(): void;
	/**
	 * Called with the records about to be written, after they are staged and right before the
	 * backend's commit point (PostgreSQL: before COMMIT). A transition that also touches another
	 * backend records itself here (the local journal); a throw means nothing is committed.
	 */
	beforeCommit?(records: readonly TransitionRecord[]): Promise<void> | void;
}

/** The step a multi-owner commit runs while its owners are held: stage on their current histories. */
export type StageStep<T> = (histories: readonly OwnerHistory[]) => Promise<LockedStage<T>> | LockedStage<T>;

/**
 * A backend: the place that keeps some owners (the local files and Session, one PostgreSQL
 * database). Every store names its backend (`OwnerStore.backend`); the facade and the router
 * talk only to this interface, never to a store's class.
 */
export interface OwnerBackend {
	/**
	 * Commit several owners of this backend in one atomic step (one SQL transaction, or the file
	 * locks taken in the fixed owner order). `stage` runs while the owners are held, on their
	 * current histories, so it re-stages on the latest state and no update is lost; whatever it
	 * returns is made durable all together or not at all. A record whose id the owner already
	 * holds is skipped (idempotent by transition id).
	 */
	commitTogether<T>(stores: readonly OwnerStore[], stage: StageStep<T>): Promise<T>;
	/**
	 * Commit owners of this backend together with owners of `other`, whose own commit is the
	 * commit point: this backend records its parts durably right before it (the local journal).
	 * Only a backend that can wait on another's outcome has it (the local one).
	 */
	commitAround?<T>(stores: readonly OwnerStore[], other: OwnerBackend, stage: StageStep<T>): Promise<T>;
	/** Refuse, before any backend takes a lock, owners that cannot be written at all now (an unreachable placement). */
	ready?(stores: readonly OwnerStore[]): Promise<void>;
	/**
	 * Complete what a writer that died after the commit point left unfinished for `store`
	 * (the file backend's journal); the facade calls it before every read. Backends whose
	 * multi-owner commit is one transaction (PostgreSQL) have nothing to complete and omit it.
	 */
	recover?(store: OwnerStore): Promise<void>;
	/**
	 * True when `recover` has nothing to complete for any of `stores`, found with at most one look
	 * (one `stat`) for all of them: a read of several owners then skips `recover` for each.
	 */
	settled?(stores: readonly OwnerStore[]): boolean;
	/**
	 * Histories of several owners of this backend as one snapshot, each answered with its history
	 * or its error. Backends without it are read one by one and checked afterwards by the facade.
	 */
	loadTogether?(stores: readonly OwnerStore[]): Promise<LoadAnswer[]>;
	/** Call `changed` after each commit to this backend's owners, by any process, as it lands; returns the way to stop. */
	watch?(changed: () => void): () => void;
}
