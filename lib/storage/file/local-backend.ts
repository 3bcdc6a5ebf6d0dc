/**
 * The local backend (the port's `OwnerBackend` over the Global and CWD file stores and the
 * Session store). File owners are locked in the fixed order Global -> CWD and
 * caught up; the stage runs on their fresh histories; one durable owner is one append +
 * fsync, several are made durable by the journal first (the commit point), then each owner.
 * A writer that dies after the commit point leaves the journal, which `recover` completes
 * before the next read of any owner it concerns.
 */
import { existsSync } from "node:fs";
import { fail, messageOf } from "../../core/errors.js";
import { transitionIn } from "../../core/history.js";
import { OWNERS } from "../../core/types.js";
import type { OwnerHistory, SharedOwner, TransitionRecord } from "../../core/types.js";
import { fault } from "../fault.js";
import type { FaultPoint } from "../fault.js";
import type { JournalPart } from "../format.js";
import { JournalDir } from "./journal.js";
import { acquireLock } from "./lock.js";
import type { HeldLock } from "./lock.js";
import { applyDurable } from "../owner-log.js";
import { locationKey } from "../port.js";
import type { LockedStage, OwnerBackend, OwnerStore, StageStep } from "../port.js";
import type { SeenMarks } from "./seen.js";
import { SessionStore } from "../session/store.js";
import type { SessionLog } from "../session/store.js";
import { FileOwnerStore } from "./owner-store.js";
import { Recovery } from "./recovery.js";
import type { DatabaseOutcome } from "./recovery.js";

/** A stage whose local parts are already in a journal (a mixed commit wrote it before the database's COMMIT). */
type LocalStage<T> = LockedStage<T> & { journaled?: boolean };

/** One owner's part of a commit, paired with the store it goes to. */
interface Part {
	store: FileOwnerStore | SessionStore;
	history: OwnerHistory;
	record: TransitionRecord;
	/** The state's size after `record`, as the stage computed it. */
	bytesAfter: number | undefined;
}

export interface LocalBackendOptions {
	files: Record<SharedOwner, FileOwnerStore>;
	journalDir: string;
	retention: number;
	lockTimeoutMs: number;
	/** The Session store attached now (it changes with the session and the branch). */
	session: () => SessionStore | undefined;
	/** Asks a database whether a mixed transition committed (journals with a database part). */
	database?: DatabaseOutcome;
	/** This machine's seen marks, for stores of other projects a journal names. */
	seen?: SeenMarks;
}

export class LocalBackend implements OwnerBackend {
	private readonly files: Record<SharedOwner, FileOwnerStore>;
	private readonly journal: JournalDir;
	private readonly recovery: Recovery;
	private readonly lockTimeoutMs: number;
	private readonly retention: number;
	private readonly session: () => SessionStore | undefined;
	/** Journals this backend is writing right now (a mixed commit between its journal and the other's commit): recovery leaves them alone. */
	private readonly writing = new Set<string>();

	constructor(opts: LocalBackendOptions) {
		this.files = opts.files;
		for (const f of Object.values(opts.files)) f.backend = this;
		this.journal = new JournalDir(opts.journalDir);
		this.recovery = new Recovery(this.journal, opts.files, opts.retention, opts.lockTimeoutMs, this.writing, opts.database, opts.seen);
		this.lockTimeoutMs = opts.lockTimeoutMs;
		this.retention = opts.retention;
		this.session = opts.session;
	}

	/** A Session store of this backend over `log` (its branch is read now). */
	openSession(log: SessionLog): SessionStore {
		return new SessionStore(log, this.retention, this);
	}

	async recover(store: OwnerStore): Promise<void> {
		await this.recovery.rollForward(store.owner, this.session());
	}

	settled(): boolean {
		return this.journal.pending().length === 0;
	}

	async commitTogether<T>(stores: readonly OwnerStore[], stage: StageStep<T>): Promise<T> {
		const mine = stores.map((s) => this.own(s));
		// Lock order: Global before CWD, whatever order the caller listed them in.
		const files = mine.filter((s): s is FileOwnerStore => s instanceof FileOwnerStore).sort((a, b) => OWNERS.indexOf(a.owner) - OWNERS.indexOf(b.owner));
		attempts: for (let attempt = 0; ; attempt++) {
			// Complete pending journals first: a damaged one is refused before any folder is created. A
			// first attempt on stores that exist leaves it to the look under the locks (`pendingFor`),
			// which sends the next attempt here: one look at the journal folder per commit, not two.
			for (const s of mine) if (attempt > 0 || !(s instanceof FileOwnerStore && s.knownToExist())) await this.recover(s);
			for (const f of files) if (!f.knownToExist()) f.ensureRoot();
			const locks: HeldLock[] = [];
			try {
				for (const f of files) {
					// The lock and its holder files are written inside the store folder: it must still lead inside its owner's folder.
					f.checkRoot();
					try {
						locks.push(await acquireLock(f.lockPath, this.lockTimeoutMs));
					} catch (e) {
						// The folder was removed while cached as existing (e.g. `git clean -X`): forget it and create it afresh.
						if (attempt >= 5 || existsSync(f.root)) throw e;
						f.reset();
						continue attempts;
					}
				}
				fault("after-lock");
				// A writer that died after its commit point left a journal: complete it first (in lock order).
				if (files.some((f) => this.recovery.pendingFor(f.owner))) {
					if (attempt >= 5) fail("busy", "Pending journals in `state-flow/journal` could not be completed; retry, or run `state-flow doctor`.");
					continue;
				}
				// A lock recovered from a writer that died: the bytes it left after its last record may be cut.
				const crashed = new Set(files.filter((_, i) => locks[i]?.recoveredCrash === true));
				// Each folder was proved contained right before its lock; a wait for any lock makes those proofs old.
				const fresh = !locks.some((l) => l.waited);
				const histories = mine.map((s) => (s instanceof FileOwnerStore ? s.catchUpLocked(crashed.has(s), fresh) : s.history()));
				const staged: LocalStage<T> = await stage(histories);
				const parts = partsOf(mine, histories, staged.records, staged.bytesAfter);
				if (parts.length === 0) return staged.value;
				if (staged.journaled) this.complete(parts, (parts[0] as Part).record.id);
				else this.durable(parts, staged);
				for (const p of parts) applyDurable(p.history, p.record, p.bytesAfter);
				for (const p of parts) if (p.store instanceof FileOwnerStore) p.store.compactAfterCommit();
				fault("before-unlock");
				return staged.value;
			} finally {
				for (const l of locks.reverse()) l.release();
			}
		}
	}

	/** This backend's own store behind `s`, or a clear refusal. */
	private own(s: OwnerStore): FileOwnerStore | SessionStore {
		if (s === this.session()) return s as SessionStore;
		if (s.owner !== "session" && this.files[s.owner] === s) return s as FileOwnerStore;
		fail("invalid_input", `a local commit takes only the owners of this agent directory and session, not \`${s.owner}\` at another place`);
	}

	/** Make the records durable; returns only when the transition is committed. */
	private durable(parts: readonly Part[], staged: LockedStage<unknown>): void {
		const fileParts = parts.filter((p) => p.store instanceof FileOwnerStore);
		const sessionPart = parts.find((p) => p.store instanceof SessionStore);
		const session = sessionPart?.store as SessionStore | undefined;
		const sessionDurable = session !== undefined && session.log.persistent();
		const id = (parts[0] as Part).record.id;
		if (fileParts.length + (sessionDurable ? 1 : 0) < 2) {
			try {
				for (const p of fileParts) (p.store as FileOwnerStore).appendLocked(p.record);
			} catch (e) {
				staged.abandon?.();
				throw e;
			}
			if (fileParts.length > 0) fault("after-append");
			if (sessionPart && session) session.append(sessionPart.record);
			return;
		}
		try {
			this.journal.write({ id, parts: this.journalParts(parts) });
		} catch (e) {
			staged.abandon?.();
			throw e;
		}
		this.complete(parts, id);
	}

	/** The parts as the journal records them (a persistent Session part is rolled forward too). */
	private journalParts(parts: readonly Part[]): JournalPart[] {
		const out: JournalPart[] = [];
		for (const p of parts) {
			if (p.store instanceof FileOwnerStore) out.push({ owner: p.store.owner, root: p.store.root, record: p.record });
			else out.push({ owner: "session", sessionId: p.store.log.sessionId(), persistent: p.store.log.persistent(), record: p.record });
		}
		return out;
	}

	/** After the commit point (the journal is durable): write every local part, then drop the journal. */
	private complete(parts: readonly Part[], id: string): void {
		const fileParts = parts.filter((p) => p.store instanceof FileOwnerStore);
		const sessionPart = parts.find((p) => p.store instanceof SessionStore);
		const session = sessionPart?.store as SessionStore | undefined;
		const sessionDurable = session !== undefined && session.log.persistent();
		// Committed. From here a failure leaves the journal for roll-forward instead of undoing.
		try {
			for (const p of fileParts) {
				(p.store as FileOwnerStore).appendLocked(p.record);
				fault(`after-append-${p.store.owner}` as FaultPoint);
			}
			if (sessionPart && session) {
				session.append(sessionPart.record);
				// pi appends without fsync: the Session part must be on disk before the journal goes.
				if (sessionDurable) session.log.sync?.();
				fault("after-append-session");
			}
		} catch (e) {
			for (const p of fileParts) (p.store as FileOwnerStore).reset();
			fail(
				"io",
				`Transition \`${id}\` is committed (journal \`${this.journal.pathOf(id)}\`) but could not be written to every owner yet (${messageOf(e)}); it is completed at the next access.`,
				[],
				e,
			);
		}
		fault("before-journal-delete");
		this.recovery.settle(id);
	}

	/**
	 * A transition over local owners and owners of another backend (PostgreSQL) whose COMMIT is
	 * the commit point. The local owners are locked and caught up first, then the database's
	 * owners inside its transaction; the stage runs on all of them. Right before the database
	 * commits, a journal with every part is made durable (a local part must never be missing
	 * once the database has it); after the COMMIT the local parts are written and the journal
	 * dropped. A COMMIT that definitely failed drops the journal; one whose outcome is unknown
	 * leaves it, and roll-forward asks the database (\`Recovery\`) before completing or dropping it.
	 */
	commitAround<T>(stores: readonly OwnerStore[], remote: OwnerBackend, stage: StageStep<T>): Promise<T> {
		const isRemote = (s: OwnerStore): boolean => s.backend === remote;
		const localAt = stores.flatMap((s, i) => (isRemote(s) ? [] : [i]));
		const remoteAt = stores.flatMap((s, i) => (isRemote(s) ? [i] : []));
		const localStores = localAt.map((i) => stores[i] as OwnerStore);
		return this.commitTogether<T>(localStores, async (localHistories) => {
			const mine = localStores.map((s) => this.own(s));
			let localRecords: ReadonlyArray<TransitionRecord | undefined> = [];
			let localBytes: ReadonlyArray<number | undefined> = [];
			let journaled = false;
			let journalId: string | undefined;
			const value = await remote
				.commitTogether<T>(
					remoteAt.map((i) => stores[i] as OwnerStore),
					async (remoteHistories) => {
						const all: OwnerHistory[] = new Array(stores.length);
						localAt.forEach((at, k) => {
							all[at] = localHistories[k] as OwnerHistory;
						});
						remoteAt.forEach((at, k) => {
							all[at] = remoteHistories[k] as OwnerHistory;
						});
						const staged = await stage(all);
						localRecords = localAt.map((i) => staged.records[i]);
						localBytes = localAt.map((i) => staged.bytesAfter?.[i]);
						const parts = partsOf(mine, localHistories, localRecords, localBytes);
						return {
							records: remoteAt.map((i) => staged.records[i]),
							bytesAfter: remoteAt.map((i) => staged.bytesAfter?.[i]),
							value: staged.value,
							beforeCommit: (written) => {
								// Only an in-memory Session part: nothing local can be lost in a crash, no journal.
								if (!parts.some((p) => p.store instanceof FileOwnerStore || p.store.log.persistent())) return;
								const id = (written[0] as TransitionRecord).id;
								const dbParts: JournalPart[] = remoteAt.flatMap((i) => {
									const record = staged.records[i];
									const store = stores[i] as OwnerStore;
									return record !== undefined && written.includes(record) ? [{ owner: store.owner, database: locationKey(store.location()), record }] : [];
								});
								this.writing.add(id);
								journalId = id;
								this.journal.write({ id, parts: [...this.journalParts(parts), ...dbParts] });
								journaled = true;
							},
							abandon: () => {
								// Nothing was committed: the journal must not be completed later.
								if (journalId !== undefined) {
									if (journaled) this.recovery.settle(journalId);
									this.writing.delete(journalId);
								}
								staged.abandon?.();
							},
						};
					},
				)
				.finally(() => {
					// Settled or left for roll-forward: from here on recovery may look at it.
					if (journalId !== undefined) this.writing.delete(journalId);
				});
			return { records: localRecords, bytesAfter: localBytes, value, journaled };
		});
	}
}

/** The parts a stage produced that an owner does not hold yet (idempotent by transition id). */
function partsOf(
	stores: ReadonlyArray<FileOwnerStore | SessionStore>,
	histories: readonly OwnerHistory[],
	records: ReadonlyArray<TransitionRecord | undefined>,
	bytesAfter: ReadonlyArray<number | undefined> = [],
): Part[] {
	const parts: Part[] = [];
	stores.forEach((store, i) => {
		const record = records[i];
		const history = histories[i] as OwnerHistory;
		if (record !== undefined && transitionIn(history, record.id) === undefined) parts.push({ store, history, record, bytesAfter: bytesAfter[i] });
	});
	return parts;
}
