/**
 * One file owner (Global or CWD): an append-only log of transition records plus a
 * checkpoint, read through an in-process cache validated by `lstat` (only bytes appended
 * by other processes are read). Methods named `*Locked` run with the owner lock already held.
 * The store's folder must lie inside its owner's territory (the project, the agent
 * directory) and only regular files are opened in it, never through a link.
 * Damage is reported, never rewritten: a log shorter than this process has read, earlier
 * bytes that changed, a checkpoint that does not fit the log, a record that fails its
 * integrity check. Only bytes that cannot be a complete valid record are cut, and only by
 * a writer that recovered the lock of a writer that died (a crash), never on a guess.
 */
import { spellId } from "../../core/printable.js";
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync } from "node:fs";
import type { Stats } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fail, isStateError, messageOf } from "../../core/errors.js";
import { adoptionProblem, historyFrom, newHistory } from "../../core/history.js";
import { emptyState } from "../../core/state.js";
import type { OwnerHistory, OwnerState, SharedOwner, TransitionRecord } from "../../core/types.js";
import { crashNow, fault, faultDue } from "../fault.js";
import { acquireLock, crashEvidence } from "../lock.js";
import { applyDurable, checkCommitSeq, commitDecision, compactionDue, expectNext } from "../owner-log.js";
import type { CommitOutcome, OwnerBackend, OwnerLocation, OwnerStore, OwnerStoreStatus } from "../port.js";
import type { SeenMark, SeenMarks } from "../seen.js";
import { checkpointText, damaged, parseCheckpoint, recordLine } from "../format.js";
import type { Cache, Parsed } from "./log-cache.js";
import { NEWLINE, emptyCache, isRealDirOrLink, lost, parseLines, realChain, sameStamp, statStamp } from "./log-cache.js";
import {
	FILE_MODE,
	SHARED_DIR_MODE,
	SHARED_FILE_MODE,
	atomicWrite,
	checkContained,
	ensureDirIn,
	fsyncDir,
	ioFail,
	kindOf,
	lstatOrUndefined,
	openFile,
	readFrom,
	readRegular,
	realOrSelf as realOrSelfOf,
	unsafePath,
	writeAll,
} from "../fs-util.js";

/** The backend of a file store no `LocalBackend` took in (doctor, a migration): only its own single-owner commit. */
const ALONE: OwnerBackend = {
	commitTogether: () => fail("invalid_input", "this file store belongs to no backend; commit through its `Stores`"),
};

/** How long a writer waits for a lock before "busy". */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

export const LOG_FILE = "log.jsonl";
export const CHECKPOINT_FILE = "checkpoint.json";
export const LOCK_FILE = "lock";

export interface FileStoreOptions {
	owner: SharedOwner;
	/** The owner's folder: `<base>/.pi/state-flow` (CWD) or `<base>/state-flow/global` (Global). */
	root: string;
	retention: number;
	/** Write a `.gitignore` of `*` when the folder is first created (CWD). */
	gitignore: boolean;
	/** How long a commit waits for the owner lock before "busy" (default 10 s). */
	lockTimeoutMs?: number;
	/** This machine's marks of what its writers made durable: a fresh look at the log is checked against them, each append raises them. */
	seen?: SeenMarks;
}

const OWNER_NAME: Record<SharedOwner, string> = { global: "The Global store folder", cwd: "The CWD store folder" };

export class FileOwnerStore implements OwnerStore {
	readonly owner: SharedOwner;
	readonly root: string;
	/** The owner's territory (real path): the store folder must lie inside it. */
	readonly base: string;
	readonly logPath: string;
	readonly checkpointPath: string;
	readonly lockPath: string;
	retention: number;
	readonly lockTimeoutMs: number;
	/** Set by the backend that takes this store in (`LocalBackend`); a store on its own commits alone. */
	backend: OwnerBackend = ALONE;
	private readonly seen: SeenMarks | undefined;
	private readonly gitignore: boolean;
	private cache: Cache | undefined;
	private readFd: number | undefined;
	private writeFd: number | undefined;
	private fdIno = 0;
	/** Damage this process saw that the files alone no longer show (they went back): refused until the folder is replaced. */
	private broken: { error: unknown; rootIno: number } | undefined;

	constructor(opts: FileStoreOptions) {
		this.owner = opts.owner;
		this.root = opts.root;
		this.base = dirname(dirname(opts.root));
		this.retention = opts.retention;
		this.gitignore = opts.gitignore;
		this.lockTimeoutMs = opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
		this.seen = opts.seen;
		this.logPath = join(opts.root, LOG_FILE);
		this.checkpointPath = join(opts.root, CHECKPOINT_FILE);
		this.lockPath = join(opts.root, LOCK_FILE);
	}

	/** True once the owner has been written (its log exists). */
	exists(): boolean {
		return lstatOrUndefined(this.logPath) !== undefined;
	}

	/** Cheap variant for the commit path: the cache already saw the log. */
	knownToExist(): boolean {
		return (this.cache !== undefined && this.cache.ino !== 0) || this.exists();
	}

	/** Bytes on disk (log + checkpoint), for status. */
	diskBytes(): number {
		let n = 0;
		for (const p of [this.logPath, this.checkpointPath]) {
			const st = lstatOrUndefined(p);
			if (st?.isFile()) n += st.size;
		}
		return n;
	}

	/** Refuse the owner when its folder leads outside its territory, or is not a folder. */
	checkRoot(): void {
		if (realChain(this.root)) return;
		checkContained(this.root, realOrSelfOf(this.base), OWNER_NAME[this.owner]);
		isRealDirOrLink(this.root);
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
		return this.read().tail.find((r) => r.id === id)?.seq;
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
	 * Current history, synchronously; never creates anything. Throws "corrupt"/"io" for damaged
	 * or unsafe stores. When the log is still the very file this process last read in full and
	 * unchanged (same device, inode, size, mtime and ctime), the history comes from memory: no
	 * byte is read, so the folder's containment is not resolved again. Every read of bytes
	 * and every write checks it first.
	 */
	read(): OwnerHistory {
		this.checkBroken();
		const c = this.cache;
		if (c?.verified !== undefined && sameStamp(c.verified, lstatOrUndefined(this.logPath))) return c.history;
		return this.readChecked();
	}

	/** `read` with the containment check (unless the caller just made it) and a fresh look at the log. */
	private readChecked(rootChecked = false): OwnerHistory {
		if (!rootChecked) this.checkRoot();
		const c = this.cache;
		// This machine's mark before the log: a writer marks only after its append is durable, so a
		// mark read first can lag what the log holds, never lead it. Only a read with nothing cached
		// can end in a check here; `fullLoad` reads it for itself, an appended read needs none.
		const mark = c === undefined ? { value: this.seen?.read(this.root) } : undefined;
		const st = this.statLog();
		if (c !== undefined) c.verified = undefined;
		if (st === undefined) {
			if (c === undefined) return this.loadWithoutLog(mark);
			if (c.ino === 0) return c.history;
			// A removed folder is a deliberate fresh start (`git clean -X`); a log gone from its folder is not.
			if (lstatOrUndefined(this.root) !== undefined) {
				this.refuse(this.logPath, `it is gone although this process read ${c.history.seq} transition(s) from it`);
			}
			this.reset();
			return this.loadWithoutLog(mark);
		}
		if (c !== undefined && c.ino === st.ino) {
			if (st.size < c.offset) {
				this.refuse(
					this.logPath,
					`it is ${st.size} bytes long, shorter than the ${c.offset} bytes of complete records this process already read (records were cut off or removed)`,
				);
			}
			if (c.size === st.size && c.mtimeMs === st.mtimeMs) {
				// Bytes after the last complete record stay explained only while a writer's lock (or crash marker) is there.
				if (c.size > c.offset) this.checkTorn(c.size, c.offset, st.size);
				return this.verified(c, st);
			}
			if (this.fdIno === st.ino) {
				this.readAppended(c, st);
				return this.verified(c, st);
			}
		}
		return this.fullLoad(c, mark);
	}

	/** The cache is exactly the log as `st` describes it (no torn tail): later reads may answer from memory while it stays so. */
	private verified(c: Cache, st: Stats): OwnerHistory {
		if (c.size === c.offset && c.size === st.size && c.mtimeMs === st.mtimeMs) c.verified = statStamp(st);
		return c.history;
	}

	/** Damage seen earlier stays until the store folder is replaced (moved aside by `state-flow doctor`, or deleted). */
	private checkBroken(): void {
		const b = this.broken;
		if (b === undefined) return;
		const st = lstatOrUndefined(this.root);
		if (st !== undefined && st.ino === b.rootIno) throw b.error;
		this.broken = undefined;
		this.reset();
	}

	/** Report damage that the files may no longer show by themselves, and refuse the owner from now on. */
	private refuse(file: string, what: string): never {
		try {
			damaged(file, what);
		} catch (e) {
			this.broken = { error: e, rootIno: lstatOrUndefined(this.root)?.ino ?? 0 };
			this.closeFds();
			throw e;
		}
	}

	private statLog(): Stats | undefined {
		const st = lstatOrUndefined(this.logPath);
		if (st !== undefined && !st.isFile()) unsafePath(this.logPath, kindOf(st), "a regular file");
		return st;
	}

	private readCheckpoint(): { seq: number; state: OwnerState; legacy?: boolean } {
		const bytes = readRegular(this.checkpointPath);
		if (bytes === undefined) return { seq: 0, state: emptyState() };
		return parseCheckpoint(bytes.toString("utf8"), this.checkpointPath, this.owner);
	}

	/** `mark`: this machine's mark as read before the log was looked at (undefined: not read, nothing to compare). */
	private loadWithoutLog(mark: { value: SeenMark | undefined } | undefined): OwnerHistory {
		const cp = this.readCheckpoint();
		// No folder at all is a deliberate fresh start (`git clean -X`, `doctor --move-aside`); a folder without its log is not.
		if (mark?.value !== undefined && lstatOrUndefined(this.root) !== undefined) this.checkSeen(mark.value, cp.seq, [], "it is missing");
		const history = cp.seq === 0 ? newHistory(this.owner, this.retention) : this.build(cp, []);
		this.closeFds();
		this.cache = { ...emptyCache(), diskCheckpointSeq: cp.seq, legacy: cp.legacy === true, history };
		return history;
	}

	private build(cp: { seq: number; state: OwnerState }, records: TransitionRecord[]): OwnerHistory {
		try {
			return historyFrom(this.owner, cp.state, cp.seq, records, this.retention);
		} catch (e) {
			if (isStateError(e) && e.code === "corrupt") damaged(this.logPath, `its records do not continue the checkpoint (${e.message})`);
			throw e;
		}
	}

	/** Read the log first, then the checkpoint: compaction writes them in the opposite order, so the pair is always consistent. */
	private fullLoad(prev: Cache | undefined, read: { value: SeenMark | undefined } | undefined): OwnerHistory {
		this.closeFds();
		const mark = read ?? { value: this.seen?.read(this.root) };
		const fd = openFile(this.logPath, constants.O_RDONLY);
		if (fd === undefined) return this.loadWithoutLog(mark);
		let st: Stats;
		let buf: Buffer;
		try {
			st = fstatSync(fd);
			buf = readFrom(fd, 0, st.size);
		} catch (e) {
			closeSync(fd);
			ioFail(this.logPath, "read", e);
		}
		let history: OwnerHistory;
		let parsed: Parsed;
		let cp: { seq: number; state: OwnerState; legacy?: boolean };
		try {
			cp = this.readCheckpoint();
			parsed = parseLines(buf, 0, this.logPath, this.owner);
			this.checkTorn(buf.length, parsed.offset, st.size);
			history = this.build(cp, this.afterCheckpoint(parsed.records, cp.seq));
			if (prev !== undefined && prev.ino !== 0) this.checkNotBehind(prev.history, history);
			this.checkSeen(mark.value, history.seq, history.tail);
		} catch (e) {
			closeSync(fd);
			throw e;
		}
		this.readFd = fd;
		this.fdIno = st.ino;
		const prefix = createHash("sha256").update(buf.subarray(0, parsed.offset));
		this.cache = {
			ino: st.ino,
			size: buf.length,
			mtimeMs: st.mtimeMs,
			offset: parsed.offset,
			lastStart: parsed.lastStart,
			lastLine: Buffer.from(buf.subarray(parsed.lastStart, parsed.offset)),
			prefix,
			missingNewline: parsed.missingNewline,
			diskCheckpointSeq: cp.seq,
			legacy: parsed.legacy || cp.legacy === true,
			history,
		};
		return this.verified(this.cache, st);
	}

	/** The log's records after the checkpoint; the log must reach the checkpoint and continue without gaps. */
	private afterCheckpoint(records: TransitionRecord[], cpSeq: number): TransitionRecord[] {
		let previous: TransitionRecord | undefined;
		for (const r of records) {
			if (previous !== undefined) expectNext(previous.seq, r, (what) => damaged(this.logPath, what));
			previous = r;
		}
		const last = records[records.length - 1];
		if (last !== undefined && last.seq < cpSeq) {
			damaged(
				this.logPath,
				`its last record has seq ${last.seq}, behind checkpoint \`${this.checkpointPath}\` at seq ${cpSeq} (the checkpoint does not match the log)`,
			);
		}
		const first = records[0];
		if (first !== undefined && first.seq > cpSeq + 1) {
			damaged(
				this.logPath,
				`its first record has seq ${first.seq} but checkpoint \`${this.checkpointPath}\` ends at seq ${cpSeq} (records are missing between them)`,
			);
		}
		return records.filter((r) => r.seq > cpSeq);
	}

	/** A history re-read from the files must not lose what this process already saw. */
	private checkNotBehind(seen: OwnerHistory, now: OwnerHistory): void {
		const last = seen.tail[seen.tail.length - 1];
		const gone = lost({ seq: seen.seq, ...(last !== undefined ? { id: last.id } : {}) }, now.seq, now.tail);
		if (gone === "behind")
			this.refuse(this.logPath, `the store went back from seq ${seen.seq}, which this process read, to seq ${now.seq} (acknowledged transitions are missing)`);
		if (gone !== undefined)
			this.refuse(
				this.logPath,
				`seq ${seen.seq} now holds transition \`${spellId(gone.id)}\`, but this process read \`${spellId(String(last?.id))}\` there (the store was replaced)`,
			);
	}

	/**
	 * A fresh look at the files must not lose what a writer on this machine made durable
	 * (its seen mark): what a process that never read the lost records cannot know by itself.
	 * Not kept as `broken`: the files and the mark show it, and `doctor --accept-store` ends it.
	 */
	private checkSeen(mark: SeenMark | undefined, seq: number, tail: readonly TransitionRecord[], found = `it ends at seq ${seq}`): void {
		if (mark === undefined) return;
		const gone = lost(mark, seq, tail);
		if (gone === undefined) return;
		// Read before the log, the mark could lead it only if that read caught a writer's in-place
		// update half-done: what is evidence must read the same again.
		const again = this.seen?.read(this.root);
		if (again?.seq !== mark.seq || again.id !== mark.id) return;
		const fix = `Restore the newer copy of ${this.root} if you have one, or run \`state-flow doctor --accept-store ${this.owner}\` to go on from the store as it is`;
		if (gone === "behind") {
			damaged(
				this.logPath,
				`${found}, but a writer on this machine committed seq ${mark.seq}${mark.id === undefined ? "" : ` (transition \`${spellId(mark.id)}\`)`} to it: acknowledged transitions are missing (the file was cut short or the folder replaced by an older copy). ${fix}`,
			);
		}
		damaged(
			this.logPath,
			`seq ${mark.seq} holds transition \`${spellId(gone.id)}\`, but a writer on this machine committed \`${spellId(String(mark.id))}\` there: the folder was replaced by another history. ${fix}`,
		);
	}

	/**
	 * Bytes after the last complete record are a writer's line in flight, or what a crashed
	 * writer left: either way its lock file is there. Without one they are damage (a record
	 * cut short by a truncation), unless the log grew meanwhile (the writer just finished).
	 */
	private checkTorn(size: number, offset: number, statSize: number): void {
		if (size === offset) return;
		if (lstatOrUndefined(this.lockPath) !== undefined) return;
		const now = lstatOrUndefined(this.logPath);
		if (now !== undefined && (now.size !== statSize || crashEvidence(this.lockPath, now.mtimeMs))) return;
		damaged(
			this.logPath,
			`it ends in ${size - offset} byte(s) after its last complete record that are not a complete record, and no writer holds or left its lock: the file was cut short (a transition may be lost) or the machine lost power during a write. \`state-flow doctor --cut-torn ${this.owner}\` cuts those bytes if you know pi crashed`,
		);
	}

	/**
	 * Apply only what another process appended since the cached offset: O(appended bytes)
	 * plus the last record this process read, which is checked to be unchanged. The same
	 * size with a new mtime is a change in place: the bytes already read are verified.
	 */
	private readAppended(c: Cache, st: Stats): void {
		const fd = this.readFd as number;
		let buf: Buffer;
		try {
			if (st.size === c.size) {
				if (
					createHash("sha256")
						.update(readFrom(fd, 0, c.offset))
						.digest("hex") !== c.prefix.copy().digest("hex")
				) {
					this.refuse(this.logPath, "bytes this process already read were changed in place (same size, new content)");
				}
				// Without torn bytes nothing else can have changed; with them, a repair plus an append may keep the size.
				if (c.size === c.offset) {
					c.mtimeMs = st.mtimeMs;
					return;
				}
			}
			buf = readFrom(fd, c.lastStart, st.size);
		} catch (e) {
			if (isStateError(e)) throw e;
			ioFail(this.logPath, "read", e);
		}
		const seen = c.offset - c.lastStart;
		if (!buf.subarray(0, seen).equals(c.lastLine)) this.refuse(this.logPath, `the record at byte ${c.lastStart}, which this process already read, was changed`);
		let from = seen;
		// The line end a dropped-newline repair (or the writer of an in-flight line) wrote after the last record.
		if (c.missingNewline && buf[from] === 10) from++;
		const appended = buf.subarray(from);
		const parsed = parseLines(appended, c.offset + (from - seen), this.logPath, this.owner);
		const h = c.history;
		try {
			for (const r of parsed.records) {
				expectNext(h.seq, r, (what) => damaged(this.logPath, what));
				applyDurable(h, r);
			}
		} catch (e) {
			// Part of the batch may be applied: forget the cache so the next load starts from the files.
			this.reset();
			throw e;
		}
		const old = c.lastStart;
		c.prefix.update(buf.subarray(seen, parsed.offset - old));
		if (parsed.records.length > 0) {
			c.lastStart = parsed.lastStart;
			c.lastLine = Buffer.from(buf.subarray(parsed.lastStart - old, parsed.offset - old));
			c.missingNewline = parsed.missingNewline;
		} else if (from > seen) c.missingNewline = false;
		c.offset = parsed.offset;
		c.size = st.size;
		c.mtimeMs = st.mtimeMs;
		this.checkTorn(old + buf.length, c.offset, st.size);
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
				damaged(
					this.logPath,
					`it ends in ${c.size - c.offset} byte(s) after its last complete record that are not a complete record, and no crashed writer left them: the file was cut short (a transition may be lost) or the machine lost power during a write. \`state-flow doctor --cut-torn ${this.owner}\` cuts those bytes if you know pi crashed`,
				);
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
	 * Under the lock, after the in-memory apply: when the on-disk tail exceeds R + slack,
	 * write the in-memory checkpoint (state R transitions back) first, then a log holding
	 * only the retained tail. A crash between the two leaves a loadable pair.
	 */
	compactLocked(): boolean {
		const c = this.cache;
		if (c === undefined || c.ino === 0) return false;
		const h = c.history;
		if (!compactionDue(h.seq, c.diskCheckpointSeq, this.retention)) return false;
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

	/** Under the lock, after a commit: compact when due. The transition is committed either way; a failed compaction is retried at the next commit. */
	compactAfterCommit(): void {
		try {
			this.compactLocked();
		} catch {
			this.reset();
		}
	}

	/** Drop the cache and file handles (tests, and after an unexpected error). */
	reset(): void {
		this.closeFds();
		this.cache = undefined;
	}

	private closeFds(): void {
		for (const fd of [this.readFd, this.writeFd]) {
			if (fd !== undefined) {
				try {
					closeSync(fd);
				} catch {
					// Already closed.
				}
			}
		}
		this.readFd = undefined;
		this.writeFd = undefined;
		this.fdIno = 0;
		this.seen?.close(this.root);
	}
}
