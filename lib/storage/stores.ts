/**
 * The storage facade: Global and CWD file stores, the Session store and the journal,
 * behind one API. `commit` locks the touched file owners in the fixed order Global -> CWD,
 * catches them up, stages on the fresh state, makes the transition durable (one owner:
 * one append + fsync; several durable owners: the journal first) and applies it in place.
 */
import { existsSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { fail } from "../core/errors.js";
import { stage, commitStaged } from "../core/stage.js";
import { DEFAULT_LIMITS, DEFAULT_RETENTION, MAX_RETENTION, OWNERS } from "../core/types.js";
import type { CanonicalPatch, JsonObject, Limits, Owner, OwnerHistory, Provenance, RootGate, StageReport, TransitionRecord } from "../core/types.js";
import { fault } from "./fault.js";
import type { FaultPoint } from "./fault.js";
import { FileOwnerStore } from "./file-store.js";
import type { FileOwner } from "./file-store.js";
import { JournalDir } from "./journal.js";
import type { Journal, JournalPart } from "./format.js";
import { acquireLock } from "./lock.js";
import type { HeldLock } from "./lock.js";
import { Recovery } from "./recovery.js";
import { SessionStore } from "./session-store.js";
import type { SessionLog } from "./session-store.js";

export type { SessionLog } from "./session-store.js";

export interface StoresOptions {
	/** Global root = `<agentDir>/state-flow/global/`; journals under `<agentDir>/state-flow/journal/`. */
	agentDir: string;
	/** CWD root = `<cwd>/.pi/state-flow/`. */
	cwd: string;
	/** Absent: the Session owner is unavailable. */
	session?: SessionLog;
	/** Retained transitions per owner, 0..1000 (default 20). */
	retention?: number;
	limits?: Limits;
	/** How long a writer waits for a lock before "busy" (default 10 s). */
	lockTimeoutMs?: number;
}

export interface CommitOptions {
	by: Provenance;
	id: string;
	at: string;
	/** An exact state delta (undo): staged without ownership cascades. */
	exact?: boolean;
	/** Which registered roots may be written, and their schemas (absent: none). */
	roots?: RootGate;
	/** Checked again right before the durable write; aborted -> "aborted", nothing written. */
	signal?: AbortSignal;
	/** Admission re-check under the locks right before the durable write; throws to refuse. */
	check?: () => void;
	/** Artifact compiler hook: may rewrite the patch and carry file effects. */
	prepare?: (patch: CanonicalPatch, histories: Partial<Record<Owner, OwnerHistory>>) => Promise<PreparedEffects> | PreparedEffects;
}

/** File effects of a commit: `apply()` after staging, before the durable write; `revert()` if that write fails. */
export interface PreparedEffects {
	patch: CanonicalPatch;
	apply(): void;
	revert(): void;
	/** `apply()` would change files even when the state does not change (a compiled file went missing). */
	hasEffects?: boolean;
}

export type CommitResult =
	| { noop: true; report: StageReport }
	| { noop: false; transitionId: string; report: StageReport; records: Partial<Record<Owner, TransitionRecord>> };

export interface OwnerStatus {
	available: boolean;
	exists: boolean;
	bytes: number;
	seq: number;
	retained: number;
	path?: string;
	/** Set when the store cannot be read (damage or I/O); the message says what to do. */
	error?: string;
}

const FILE_OWNERS = ["global", "cwd"] as const;

function realOrResolved(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return resolve(path);
	}
}

export class Stores {
	private readonly files: Record<FileOwner, FileOwnerStore>;
	private readonly journal: JournalDir;
	private readonly recovery: Recovery;
	private session: SessionStore | undefined;
	private readonly retention: number;
	private readonly limits: Limits;
	private readonly lockTimeoutMs: number;
	private queue: Promise<unknown> = Promise.resolve();

	constructor(opts: StoresOptions) {
		const retention = opts.retention ?? DEFAULT_RETENTION;
		if (!Number.isInteger(retention) || retention < 0 || retention > MAX_RETENTION) {
			fail("invalid_input", `\`retention\` must be a whole number from 0 to ${MAX_RETENTION}, got ${String(retention)}; fix the config file.`, ["retention"]);
		}
		this.retention = retention;
		this.limits = opts.limits ?? DEFAULT_LIMITS;
		this.lockTimeoutMs = opts.lockTimeoutMs ?? 10_000;
		const base = join(realOrResolved(opts.agentDir), "state-flow");
		this.files = {
			global: new FileOwnerStore({ owner: "global", root: join(base, "global"), retention, gitignore: false }),
			cwd: new FileOwnerStore({ owner: "cwd", root: join(realOrResolved(opts.cwd), ".pi", "state-flow"), retention, gitignore: true }),
		};
		this.journal = new JournalDir(join(base, "journal"));
		this.recovery = new Recovery(this.journal, this.files, retention, this.lockTimeoutMs);
		this.resetSession(opts.session);
	}

	/** Current history of an owner; never creates anything; rolls forward pending journals first. */
	load(owner: Owner): OwnerHistory {
		if (owner === "session") {
			const session = this.sessionStore();
			this.recovery.rollForward("session", session);
			return session.history();
		}
		this.recovery.rollForward(owner, this.session);
		return this.files[owner].load();
	}

	/** Physical identity of the roots (for admission checks). */
	identity(): { globalRoot: string; cwdRoot: string; sessionId: string | undefined } {
		return { globalRoot: this.files.global.root, cwdRoot: this.files.cwd.root, sessionId: this.session?.log.sessionId() };
	}

	/** Files, sizes and sequence numbers per owner for `/state`. */
	status(): Record<Owner, OwnerStatus> {
		const out = {} as Record<Owner, OwnerStatus>;
		for (const o of FILE_OWNERS) {
			const store = this.files[o];
			const st: OwnerStatus = { available: true, exists: store.exists(), bytes: 0, seq: 0, retained: 0, path: store.root };
			try {
				const h = this.load(o);
				st.bytes = store.diskBytes();
				st.seq = h.seq;
				st.retained = h.tail.length;
			} catch (e) {
				st.error = e instanceof Error ? e.message : String(e);
			}
			out[o] = st;
		}
		const s = this.session;
		out.session = { available: s !== undefined, exists: false, bytes: 0, seq: 0, retained: 0 };
		try {
			const h = s?.history();
			if (h) Object.assign(out.session, { exists: h.seq > 0, bytes: h.bytes, seq: h.seq, retained: h.tail.length });
		} catch (e) {
			out.session.error = e instanceof Error ? e.message : String(e);
		}
		return out;
	}

	/** Rebuild the Session view from the branch (session_start / session_tree); rolls its journal part forward. */
	resetSession(session?: SessionLog): void {
		this.session = session === undefined ? undefined : new SessionStore(session, this.retention);
		try {
			if (this.session) this.recovery.rollForward("session", this.session);
		} catch {
			// Never thrown at start-up: every access of the Session owner rolls forward again and reports what is wrong.
		}
	}

	/** Record the final answer of a run in the runtime-owned response plane (not a transition). */
	setResponse(text: string, at: string): void {
		this.sessionStore().setResponse(text, at);
	}

	response(): JsonObject | undefined {
		return this.session?.response();
	}

	private sessionStore(): SessionStore {
		if (this.session === undefined) {
			fail("excluded_owner", "Session state is unavailable here (no pi session is attached); use the `global` or `cwd` owner.", ["session"]);
		}
		return this.session;
	}

	/**
	 * Commit a canonical patch atomically across every owner it touches. Commits of one
	 * Stores run one after another (the Session owner has no file lock, and `prepare` awaits).
	 */
	commit(patch: CanonicalPatch, opts: CommitOptions): Promise<CommitResult> {
		const run = this.queue.then(() => this.commitNow(patch, opts));
		this.queue = run.catch(() => undefined);
		return run;
	}

	private async commitNow(patch: CanonicalPatch, opts: CommitOptions): Promise<CommitResult> {
		if (opts.signal?.aborted) fail("aborted", "The tool call was cancelled before its commit; nothing was written.");
		// Anything but an object is refused by `stage` with the usual message; it touches no owner.
		const touched = patch !== null && typeof patch === "object" ? OWNERS.filter((o) => Object.hasOwn(patch, o)) : [];
		const fileOwners = FILE_OWNERS.filter((o) => touched.includes(o));
		attempts: for (let attempt = 0; ; attempt++) {
			// Complete pending journals first (one stat when none): a damaged one is refused before any folder is created.
			for (const o of touched) this.recovery.rollForward(o, this.session);
			if (fileOwners.some((o) => !this.files[o].knownToExist())) {
				// First write: refuse bad input (also what `prepare` refuses, it is pure until apply) before any folder exists.
				const hs = this.histories(touched, false);
				const pre = opts.prepare ? await opts.prepare(patch, hs) : undefined;
				const dry = stage(hs, pre?.patch ?? patch, opts, this.limits);
				// Nothing to change in a store that does not exist: a valid outcome at this instant, and nothing is created.
				if (dry.noop) return { noop: true, report: dry.report };
				for (const o of fileOwners) this.files[o].ensureRoot();
			}
			const locks: HeldLock[] = [];
			try {
				for (const o of fileOwners) {
					// The lock and its holder files are written inside the store folder: it must still lead inside its owner's folder.
					this.files[o].checkRoot();
					try {
						locks.push(await acquireLock(this.files[o].lockPath, this.lockTimeoutMs));
					} catch (e) {
						// The folder was removed while cached as existing (e.g. `git clean -X`): forget it and create it afresh.
						if (attempt >= 5 || existsSync(this.files[o].root)) throw e;
						this.files[o].reset();
						continue attempts;
					}
				}
				fault("after-lock");
				// A writer that died after its commit point left a journal: complete it first (in lock order).
				if (fileOwners.some((o) => this.recovery.pendingFor(o))) {
					if (attempt >= 5) fail("busy", "Pending journals in `state-flow/journal` could not be completed; retry, or run `state-flow doctor`.");
					continue;
				}
				// A lock recovered from a writer that died: the bytes it left after its last record may be cut.
				const crashed = new Set<FileOwner>(fileOwners.filter((_, i) => locks[i]?.recoveredCrash === true));
				return await this.commitLocked(touched, patch, opts, crashed);
			} finally {
				for (const l of locks.reverse()) l.release();
			}
		}
	}

	/** Histories of `owners`: loaded, or (with `locked`) caught up under their locks, `crashed` ones repaired. */
	private histories(owners: readonly Owner[], locked: false | ReadonlySet<FileOwner>): Partial<Record<Owner, OwnerHistory>> {
		const out: Partial<Record<Owner, OwnerHistory>> = {};
		for (const o of owners) {
			if (o === "session") {
				if (this.session) out.session = this.session.history();
			} else out[o] = locked ? this.files[o].catchUpLocked(locked.has(o)) : this.files[o].load();
		}
		return out;
	}

	private async commitLocked(touched: readonly Owner[], patch: CanonicalPatch, opts: CommitOptions, crashed: ReadonlySet<FileOwner>): Promise<CommitResult> {
		let histories = this.histories(touched, crashed);
		const prepared = opts.prepare ? await opts.prepare(patch, histories) : undefined;
		// The hook ran asynchronously: the files are locked, but re-read the in-process caches.
		if (prepared) histories = this.histories(touched, crashed);
		const result = stage(histories, prepared?.patch ?? patch, { id: opts.id, at: opts.at, by: opts.by, ...(opts.exact ? { exact: true } : {}), ...(opts.roots ? { roots: opts.roots } : {}) }, this.limits);
		if (result.noop) {
			// The state already says it all, but a compiled file it describes may be missing
			// (deleted by hand): restore it without a transition.
			if (prepared?.hasEffects) {
				opts.check?.();
				if (opts.signal?.aborted) fail("aborted", "The tool call was cancelled before its commit; nothing was written.");
				prepared.apply();
			}
			return { noop: true, report: result.report };
		}
		opts.check?.();
		if (opts.signal?.aborted) fail("aborted", "The tool call was cancelled before its commit; nothing was written.");
		prepared?.apply();
		this.durable(result.records, opts.id, prepared);
		commitStaged(histories, result);
		for (const o of FILE_OWNERS) {
			if (result.records[o] === undefined) continue;
			try {
				this.files[o].compactLocked();
			} catch {
				// The transition is committed; a failed compaction is retried at the next commit.
				this.files[o].reset();
			}
		}
		fault("before-unlock");
		return { noop: false, transitionId: opts.id, report: result.report, records: result.records };
	}

	/** Make the records durable; returns only when the transition is committed. */
	private durable(records: Partial<Record<Owner, TransitionRecord>>, id: string, prepared: PreparedEffects | undefined): void {
		const fileRecs = FILE_OWNERS.filter((o) => records[o] !== undefined);
		const sessionRec = records.session;
		const session = this.session;
		const sessionDurable = sessionRec !== undefined && session !== undefined && session.log.persistent();
		if (fileRecs.length + (sessionDurable ? 1 : 0) < 2) {
			try {
				for (const o of fileRecs) this.files[o].appendLocked(records[o] as TransitionRecord);
			} catch (e) {
				prepared?.revert();
				throw e;
			}
			if (fileRecs.length > 0) fault("after-append");
			if (sessionRec && session) session.append(sessionRec);
			return;
		}
		const parts: JournalPart[] = fileRecs.map((o) => ({ owner: o, root: this.files[o].root, record: records[o] as TransitionRecord }));
		if (sessionRec && session) parts.push({ owner: "session", sessionId: session.log.sessionId(), persistent: sessionDurable, record: sessionRec });
		const journal: Journal = { id, parts };
		try {
			this.journal.write(journal);
		} catch (e) {
			prepared?.revert();
			throw e;
		}
		// Committed. From here a failure leaves the journal for roll-forward instead of undoing.
		try {
			for (const o of fileRecs) {
				this.files[o].appendLocked(records[o] as TransitionRecord);
				fault(`after-append-${o}` as FaultPoint);
			}
			if (sessionRec && session) {
				session.append(sessionRec);
				// pi appends without fsync: the Session part must be on disk before the journal goes.
				if (sessionDurable) session.log.sync?.();
				fault("after-append-session");
			}
		} catch (e) {
			for (const o of fileRecs) this.files[o].reset();
			fail(
				"io",
				`Transition \`${id}\` is committed (journal \`${this.journal.pathOf(id)}\`) but could not be written to every owner yet (${e instanceof Error ? e.message : String(e)}); it is completed at the next access.`,
				[],
				e,
			);
		}
		fault("before-journal-delete");
		this.recovery.settle(id);
	}
}
