/**
 * Roll-forward of multi-owner transitions whose writer died after the commit point (the
 * journal) and before every owner had its record. Idempotent: an owner that already has
 * the record (same seq and id) is left alone. File owners are completed under their locks
 * in the fixed order Global -> CWD; the Session part when that session is next loaded.
 */
import { spellId } from "../../core/printable.js";
import { existsSync } from "node:fs";
import { fail } from "../../core/errors.js";
import { OWNERS } from "../../core/types.js";
import type { Owner, OwnerHistory, SharedOwner, TransitionRecord } from "../../core/types.js";
import { damaged } from "../format.js";
import type { Journal, JournalPart } from "../format.js";
import type { JournalDir } from "./journal.js";
import { acquireLockUnlessMine } from "./lock.js";
import type { HeldLock } from "./lock.js";
import { applyDurable, expectNext } from "../owner-log.js";
import type { SeenMarks } from "./seen.js";
import type { SessionStore } from "../session/store.js";
import { FileOwnerStore } from "./owner-store.js";

/**
 * Roll-forwards of this process, one at a time: while one waits for its next lock, another
 * (a second `Stores`) would find the first lock held by this process and read around a
 * transition that is being completed. Serialised, it waits and then sees it complete. The
 * chain never waits for a lock of this process (those are stepped around), so it cannot deadlock.
 */
let completing: Promise<unknown> = Promise.resolve();

/**
 * The file parts of a journal whose store folders still exist, in the order their locks are
 * taken (Global before CWD). A store folder removed since the commit (a deleted project) has
 * nothing left to complete, and its lock is not taken: it is never recreated.
 */
export function lockedParts(j: Journal): JournalPart[] {
	return j.parts.filter((p) => p.root !== undefined && existsSync(p.root)).sort((a, b) => OWNERS.indexOf(a.owner) - OWNERS.indexOf(b.owner));
}

/**
 * The seq at which the database owner named by a journal's database part (its `locationKey`)
 * holds transition `id`, undefined when it does not; decisive (a transaction still in flight
 * is waited for). Undefined as a whole when that database is not configured here.
 */
export type DatabaseOutcome = (location: string) => ((id: string) => Promise<number | undefined>) | undefined;

export class Recovery {
	/** Journals whose file parts this process has seen complete (the Session part may still wait). */
	private readonly settled = new Set<string>();
	private readonly others = new Map<string, FileOwnerStore>();

	constructor(
		private readonly journal: JournalDir,
		private readonly files: Record<SharedOwner, FileOwnerStore>,
		private readonly retention: number,
		private readonly lockTimeoutMs: number,
		/** Journals the backend is writing right now (between a journal and the other backend's commit): left alone. */
		private readonly writing: ReadonlySet<string>,
		private readonly database?: DatabaseOutcome,
		private readonly seen?: SeenMarks,
	) {}

	/** Is a journal with an unapplied part for this owner's store pending? */
	pendingFor(owner: SharedOwner): boolean {
		const root = this.files[owner].root;
		return this.journal.pending().some((j) => !this.settled.has(j.id) && j.parts.some((p) => p.owner === owner && p.root === root));
	}

	/** Complete every pending journal that concerns `owner` (the Session: this session's part). */
	async rollForward(owner: Owner, session: SessionStore | undefined): Promise<void> {
		const pending = this.journal.pending();
		if (pending.length === 0) return;
		for (const j of pending) {
			if (this.writing.has(j.id)) continue;
			const relevant =
				owner === "session"
					? session !== undefined &&
						session.healthy() &&
						!session.has(j.id) &&
						j.parts.some((p) => p.owner === "session" && p.sessionId === session.log.sessionId())
					: !this.settled.has(j.id) && j.parts.some((p) => p.owner === owner && p.root === this.files[owner].root);
			if (relevant) await this.complete(j, session);
		}
	}

	/** True unless the journal has a database part and the database says the transition is not there. */
	private async committedInDatabase(j: Journal): Promise<boolean> {
		const part = j.parts.find((p) => p.database !== undefined);
		if (part === undefined) return true;
		const ask = this.database?.(part.database as string);
		if (ask === undefined) {
			fail(
				"unavailable",
				`Journal \`${this.journal.pathOf(j.id)}\` records a transition that also touched the database owner \`${part.database}\`, which is not configured here, so it cannot be told whether it committed; the owners it touched wait for it. Configure that database again (\`STATE_FLOW_DATABASE_URL\` or \`database\`), or run \`state-flow doctor\`.`,
			);
		}
		return (await ask(j.id)) !== undefined;
	}

	/** The writer finished every part itself: drop its journal. */
	settle(id: string): void {
		this.journal.remove(id);
	}

	private storeFor(p: JournalPart): FileOwnerStore {
		const owner = p.owner as SharedOwner;
		const root = p.root as string;
		if (this.files[owner].root === root) return this.files[owner];
		let s = this.others.get(`${owner}:${root}`);
		if (!s) {
			s = new FileOwnerStore({ owner, root, retention: this.retention, gitignore: false, ...(this.seen !== undefined ? { seen: this.seen } : {}) });
			this.others.set(`${owner}:${root}`, s);
		}
		return s;
	}

	private complete(j: Journal, session: SessionStore | undefined): Promise<void> {
		const run = completing.then(() => this.completeNow(j, session));
		completing = run.catch(() => undefined);
		return run;
	}

	private async completeNow(j: Journal, session: SessionStore | undefined): Promise<void> {
		if (!this.settled.has(j.id)) {
			const fileParts = lockedParts(j);
			const locks: HeldLock[] = [];
			try {
				for (const p of fileParts) {
					this.storeFor(p).checkRoot();
					const lock = await acquireLockUnlessMine(this.storeFor(p).lockPath, this.lockTimeoutMs);
					// This process holds the lock in an unfinished commit, which completes journals itself.
					if (lock === undefined) return;
					locks.push(lock);
				}
				// A transition that also touched a database committed there or nowhere: ask it (under the
				// local locks, so its writer is finished or dead) before completing anything.
				if (!(await this.committedInDatabase(j))) {
					this.journal.remove(j.id);
					this.settled.add(j.id);
					return;
				}
				fileParts.forEach((p, i) => {
					const store = this.storeFor(p);
					applyJournaled(store, store.catchUpLocked(locks[i]?.recoveredCrash === true), p.record, this.journal.pathOf(j.id));
				});
			} finally {
				for (const l of locks.reverse()) l.release();
			}
			this.settled.add(j.id);
		}
		const sp = j.parts.find((p) => p.owner === "session");
		// An in-memory session's part never waits (that session died with its process), but a live one is completed.
		let sessionDone = sp === undefined || sp.persistent !== true;
		if (sp && session && session.healthy() && session.log.sessionId() === sp.sessionId) {
			const h = session.history();
			if (session.has(j.id)) sessionDone = true;
			else if (h.seq === sp.record.seq - 1) {
				session.append(sp.record);
				applyDurable(h, sp.record);
				sessionDone = true;
			}
			// Otherwise the session moved to another branch: the part waits for a branch it fits.
			// pi appends without fsync (also the crashed writer's append): sync before the journal goes.
			if (sessionDone) session.log.sync?.();
		}
		if (sessionDone) this.journal.remove(j.id);
	}
}

/** Append a journaled record the store lacks; verify one it has. */
function applyJournaled(store: FileOwnerStore, h: OwnerHistory, record: TransitionRecord, journalPath: string): void {
	if (h.seq >= record.seq) {
		const have = h.tail.find((r) => r.seq === record.seq);
		if (have !== undefined && have.id !== record.id) {
			damaged(
				store.logPath,
				`seq ${record.seq} holds transition \`${spellId(have.id)}\` but journal \`${journalPath}\` committed \`${spellId(record.id)}\` there`,
			);
		}
		return;
	}
	expectNext(h.seq, record, () =>
		damaged(store.logPath, `journal \`${journalPath}\` expects seq ${record.seq - 1} before its record, the store is at ${h.seq}`),
	);
	store.appendLocked(record);
	applyDurable(h, record);
}
