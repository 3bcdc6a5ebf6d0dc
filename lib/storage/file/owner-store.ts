/**
 * The file adapter's owner store (docs/storage-format.md): an append-only log plus a checkpoint in
 * one folder, committed under the folder's lock with one append and one fsync, compacted when
 * due, and read through `FileLogReader` (a cache validated by `fstat`). A store no backend took
 * in (doctor, a migration) commits alone; `LocalBackend` takes the ones a `Stores` uses.
 */
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fail, messageOf } from "../../core/errors.js";
import { adoptionProblem, historyFrom, newHistory, transitionIn } from "../../core/history.js";
import type { OwnerHistory, TransitionRecord } from "../../core/types.js";
import { crashNow, fault, faultDue } from "../fault.js";
import { acquireLock, crashEvidence } from "./lock.js";
import { applyDurable, checkCommitSeq, commitDecision, compactionDue } from "../owner-log.js";
import type { CommitOutcome, OwnerBackend, OwnerLocation, OwnerStore, OwnerStoreStatus } from "../port.js";
import { checkpointText, damaged, recordLine } from "../format.js";
import type { Cache } from "./log-cache.js";
import { NEWLINE, emptyCache, isRealDirOrLink, statStamp } from "./log-cache.js";
import { tornWords } from "./log-damage.js";
import { DEFAULT_LOCK_TIMEOUT_MS, FileLogReader, type FileStoreOptions, OWNER_NAME } from "./log-reader.js";
import {
	FILE_MODE,
	SHARED_DIR_MODE,
	SHARED_FILE_MODE,
	atomicWrite,
	ensureDirIn,
	fsyncDir,
	ioFail,
	openFile,
	realOrSelf as realOrSelfOf,
	writeAll,
} from "../fs-util.js";

export { CHECKPOINT_FILE, DEFAULT_LOCK_TIMEOUT_MS, type FileStoreOptions, LOCK_FILE, LOG_FILE } from "./log-reader.js";

/** The backend of a file store no `LocalBackend` took in (doctor, a migration): only its own single-owner commit. */
const ALONE: OwnerBackend = {
	commitTogether: () => fail("invalid_input", "this file store belongs to no backend; commit through its `Stores`"),
};

export class FileOwnerStore extends FileLogReader implements OwnerStore {
	readonly lockTimeoutMs: number;
	/** Set by the backend that takes this store in (`LocalBackend`); a store on its own commits alone. */
	backend: OwnerBackend = ALONE;
	private readonly gitignore: boolean;

	constructor(opts: FileStoreOptions) {
		super(opts);
		this.gitignore = opts.gitignore;
		this.lockTimeoutMs = opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
	}

	location(): OwnerLocation {
		return { backend: "file", owner: this.owner, path: this.root };
	}

	/** The port's read: the current history (see `read`). */
	async load(): Promise<OwnerHistory> {
		return this.read();
	}

	/**
	 * The port's single-owner commit: under the owner lock, catch up and append `record` if
	 * the owner is still at `expectedSeq`. Pending multi-owner journals are the facade's to
	 * complete first (`LocalOwners.recover`).
	 */
	async commit(record: TransitionRecord, expectedSeq: number): Promise<CommitOutcome> {
		checkCommitSeq(record, expectedSeq);
		this.ensureRoot();
		const lock = await acquireLock(this.lockPath, this.lockTimeoutMs);
		try {
			const h = this.catchUpLocked(lock.recoveredCrash);
			const decided = commitDecision(h, record, expectedSeq);
			if (decided !== undefined) return decided;
			this.appendLocked(record);
			applyDurable(h, record);
			this.compactAfterCommit();
			return { kind: "committed", seq: record.seq };
		} finally {
			lock.release();
		}
	}

	/** Seq of a transition still in the retained tail (older ones are folded into the checkpoint). */
	async committedSeq(id: string): Promise<number | undefined> {
		return transitionIn(this.read(), id)?.seq;
	}

	async status(): Promise<OwnerStoreStatus> {
		const out: OwnerStoreStatus = { location: this.location(), exists: this.exists(), seq: 0, retained: 0, bytes: 0 };
		try {
			const h = this.read();
			Object.assign(out, { seq: h.seq, retained: h.tail.length, bytes: h.bytes });
		} catch (e) {
			out.error = messageOf(e);
		}
		return out;
	}

	async created(): Promise<boolean> {
		return this.knownToExist();
	}

	async close(): Promise<void> {
		this.reset();
	}

	/**
	 * Under the lock: catch up; cut bytes after the last complete record only when this
	 * lock was recovered from a writer that died (`recoveredCrash`), which is what leaves
	 * them; migrate 0.1.0 files to the current format. `rootChecked`: the caller proved the
	 * folder's containment right before taking the lock, without waiting for it (the proof is
	 * as fresh as one made here; docs/security.md).
	 */
	catchUpLocked(recoveredCrash = false, rootChecked = false): OwnerHistory {
		// A writer looks at the files themselves, never only at memory.
		this.checkBroken();
		const h = this.readChecked(rootChecked);
		const c = this.cache as Cache;
		if (c.ino !== 0 && c.size > c.offset) {
			if (!recoveredCrash && !crashEvidence(this.lockPath, c.mtimeMs)) {
				damaged(this.logPath, tornWords(c.size - c.offset, "no crashed writer left them", this.owner));
			}
			this.cutTornLocked();
		}
		if (c.legacy) this.rewriteLocked(h);
		return h;
	}

	/** Under the lock: cut the bytes after the last complete record (they cannot be a complete valid record). */
	cutTornLocked(): void {
		const c = this.cache as Cache;
		const fd = this.openWrite();
		try {
			ftruncateSync(fd, c.offset);
			fsyncSync(fd);
		} catch (e) {
			ioFail(this.logPath, "repair the torn last record of", e);
		}
		this.refreshStat(fd);
	}

	/** Create the owner's folder (and `.gitignore`) on the first write. */
	ensureRoot(): void {
		this.checkRoot();
		if (isRealDirOrLink(this.root)) return;
		const base = realOrSelfOf(this.base);
		if (this.gitignore) ensureDirIn(dirname(this.root), base, OWNER_NAME[this.owner], SHARED_DIR_MODE, SHARED_DIR_MODE);
		ensureDirIn(this.root, base, OWNER_NAME[this.owner]);
		if (this.gitignore) atomicWrite(join(this.root, ".gitignore"), "# State Flow's local store: never commit it by accident.\n*\n", { mode: SHARED_FILE_MODE });
		// No folder was a deliberate fresh start (`git clean -X`, `doctor --move-aside`): a new history begins here.
		this.seen?.clear(this.root);
	}

	private openWrite(): number {
		if (this.writeFd !== undefined) return this.writeFd;
		const fd = openFile(this.logPath, constants.O_WRONLY | constants.O_APPEND);
		if (fd === undefined) ioFail(this.logPath, "open for writing", { code: "ENOENT" });
		this.writeFd = fd;
		return fd;
	}

	/**
	 * Under the lock, after this writer's own append or cut: the cache is the whole log again.
	 * Its containment was checked under this lock (`catchUpLocked`), so later reads may answer
	 * from memory while the log stays this file, unchanged.
	 */
	private refreshStat(fd: number): void {
		const st = fstatSync(fd);
		const c = this.cache as Cache;
		c.size = st.size;
		c.mtimeMs = st.mtimeMs;
		c.offset = st.size;
		c.verified = statStamp(st);
	}

	/** Create the log on the first write (under the lock): the folder must exist. */
	private createLog(): void {
		const fd = openFile(this.logPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, FILE_MODE) as number;
		try {
			fsyncDir(this.root);
		} catch (e) {
			closeSync(fd);
			ioFail(this.logPath, "create", e);
		}
		const st = fstatSync(fd);
		const prev = this.cache;
		this.closeFds();
		this.writeFd = fd;
		this.readFd = openFile(this.logPath, constants.O_RDONLY);
		this.fdIno = st.ino;
		const history = prev?.history ?? newHistory(this.owner, this.retention);
		this.cache = {
			...emptyCache(),
			ino: st.ino,
			size: st.size,
			mtimeMs: st.mtimeMs,
			offset: st.size,
			diskCheckpointSeq: prev?.diskCheckpointSeq ?? 0,
			legacy: prev?.legacy ?? false,
			history,
		};
	}

	/**
	 * Under the lock, after `catchUpLocked`: make one record durable with ONE write of the
	 * whole line and one fsync. The caller then applies it in memory (`commitRecord`).
	 */
	appendLocked(record: TransitionRecord): void {
		if (this.cache === undefined || this.cache.ino === 0) this.createLog();
		const c = this.cache as Cache;
		const fd = this.openWrite();
		const line = Buffer.from(`${recordLine(record)}\n`);
		const buf = c.missingNewline ? Buffer.concat([NEWLINE, line]) : line;
		if (faultDue("mid-append")) {
			writeAll(fd, buf.subarray(0, buf.length >> 1));
			crashNow();
		}
		try {
			writeAll(fd, buf);
			fsyncSync(fd);
		} catch (e) {
			// Take back a partial or unsynced line so no reader treats it as committed.
			try {
				ftruncateSync(fd, c.offset);
			} catch {
				// What stays is refused as a cut-short record until `state-flow doctor` cuts it.
			}
			ioFail(this.logPath, "append to", e);
		}
		c.prefix.update(buf);
		c.lastStart = c.offset + buf.length - line.length;
		c.lastLine = line;
		c.missingNewline = false;
		this.refreshStat(fd);
		// Durable now: this machine remembers it, so a later fresh look notices if it goes missing.
		this.seen?.write(this.root, { seq: record.seq, id: record.id });
	}

	/**
	 * Under the lock, after the in-memory apply: when compaction is due (the on-disk tail exceeds
	 * R + slack records and the log a share of the state's bytes: `compactionDue`), write the
	 * in-memory checkpoint (state R transitions back) first, then a log holding only the retained
	 * tail. A crash between the two leaves a loadable pair.
	 */
	compactLocked(): boolean {
		const c = this.cache;
		if (c === undefined || c.ino === 0) return false;
		const h = c.history;
		if (!compactionDue(h.seq, c.diskCheckpointSeq, this.retention, c.size, h.bytes)) return false;
		this.rewriteLocked(h);
		return true;
	}

	/** Under the lock: write checkpoint then log from the history, in the current format (compaction and migration). */
	private rewriteLocked(h: OwnerHistory): void {
		atomicWrite(this.checkpointPath, checkpointText(this.owner, h.checkpointSeq, h.checkpoint));
		fault("mid-compaction");
		const lines = h.tail.map((r) => `${recordLine(r)}\n`);
		const bytes = Buffer.from(lines.join(""));
		atomicWrite(this.logPath, bytes, { midFault: "mid-compaction-log" });
		this.closeFds();
		const fd = openFile(this.logPath, constants.O_RDONLY) as number;
		const st = fstatSync(fd);
		this.readFd = fd;
		this.fdIno = st.ino;
		const last = Buffer.from(lines[lines.length - 1] ?? "");
		this.cache = {
			ino: st.ino,
			size: st.size,
			mtimeMs: st.mtimeMs,
			offset: st.size,
			lastStart: st.size - last.length,
			lastLine: last,
			prefix: createHash("sha256").update(bytes),
			missingNewline: false,
			diskCheckpointSeq: h.checkpointSeq,
			legacy: false,
			history: h,
		};
	}

	/**
	 * Fill this empty store with a whole history, its checkpoint and retained tail
	 * (`state-flow migrate --to-files`), folded to this store's retention; returns what was
	 * written. Refused, with nothing written, when the store holds a transition. This machine's
	 * seen mark goes first, naming the head the copy ends at, so a crash part-way leaves a store
	 * that is reported as missing transitions, never a shorter history taken for the whole; then
	 * the checkpoint and the log, each written atomically.
	 */
	async adopt(history: OwnerHistory): Promise<OwnerHistory> {
		const problem = adoptionProblem(history, this.owner);
		if (problem !== undefined) fail("invalid_input", `the ${this.owner} store ${this.root}: ${problem}; nothing was written`);
		const copy = historyFrom(this.owner, history.checkpoint, history.checkpointSeq, history.tail, this.retention);
		this.ensureRoot();
		const lock = await acquireLock(this.lockPath, this.lockTimeoutMs);
		try {
			const h = this.catchUpLocked(lock.recoveredCrash);
			if (h.seq > 0) {
				fail(
					"invalid_input",
					`The local ${this.owner} store ${this.root} already holds ${h.seq} transition(s); a migration only fills an empty store, so nothing was written.`,
				);
			}
			const last = copy.tail.at(-1);
			this.seen?.write(this.root, { seq: copy.seq, ...(last !== undefined ? { id: last.id } : {}) });
			this.rewriteLocked(copy);
			return copy;
		} finally {
			lock.release();
		}
	}

	/**
	 * Move this store's whole history into `target`, an empty store (`adopt`), while holding this
	 * store's lock: a writer here either committed before (and is in the copy) or waits, proves
	 * its folder again and finds it taken over (`FileStoreOptions.supersededBy`). This store is
	 * left as it is. Returns what was written.
	 */
	async moveInto(target: FileOwnerStore): Promise<OwnerHistory> {
		const lock = await acquireLock(this.lockPath, this.lockTimeoutMs);
		try {
			return await target.adopt(this.catchUpLocked(lock.recoveredCrash));
		} finally {
			lock.release();
		}
	}

	/** Under the lock, after a commit: compact when due. The transition is committed either way; a failed compaction is retried at the next commit. */
	compactAfterCommit(): void {
		try {
			this.compactLocked();
		} catch {
			this.reset();
		}
	}
}
