/**
 * One file owner (Global or CWD): an append-only log of transition records plus a
 * checkpoint, read through an in-process cache validated by `stat` (only bytes appended
 * by other processes are read). Write methods (`*Locked`) must run under the owner lock.
 * Damaged files are reported, never rewritten; a torn trailing line is ignored by readers
 * and cut off by the next writer.
 */
import { closeSync, constants, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from "node:fs";
import type { Stats } from "node:fs";
import { dirname, join } from "node:path";
import { isStateError } from "../core/errors.js";
import { commitRecord, historyFrom, newHistory } from "../core/history.js";
import { planPatch } from "../core/merge.js";
import { emptyState } from "../core/state.js";
import type { OwnerHistory, OwnerState, TransitionRecord } from "../core/types.js";
import { crashNow, fault, faultDue } from "./fault.js";
import { checkpointText, damaged, parseCheckpoint, parseRecordLine, recordLine } from "./format.js";
import { FILE_MODE, atomicReplace, ensureDir, errnoOf, fsyncDir, ioFail, writeAll } from "./fs-util.js";

export type FileOwner = "global" | "cwd";

export const LOG_FILE = "log.jsonl";
export const CHECKPOINT_FILE = "checkpoint.json";
export const LOCK_FILE = "lock";

/** Compact when the on-disk tail exceeds R by this slack, so compaction is amortised O(1). */
export function compactionSlack(retention: number): number {
	return Math.max(retention, 64);
}

export interface FileStoreOptions {
	owner: FileOwner;
	/** The owner's folder. */
	root: string;
	retention: number;
	/** Write a `.gitignore` of `*` when the folder is first created (CWD). */
	gitignore: boolean;
}

interface Cache {
	/** Identity of the log file the history was read from (ino 0: no log file). */
	ino: number;
	size: number;
	mtimeMs: number;
	/** Bytes of complete lines consumed; bytes past it are a torn or in-flight line. */
	offset: number;
	/** Seq of the checkpoint file on disk (records <= it in the log are skipped). */
	diskCheckpointSeq: number;
	history: OwnerHistory;
}

export class FileOwnerStore {
	readonly owner: FileOwner;
	readonly root: string;
	readonly logPath: string;
	readonly checkpointPath: string;
	readonly lockPath: string;
	retention: number;
	private readonly gitignore: boolean;
	private cache: Cache | undefined;
	private readFd: number | undefined;
	private writeFd: number | undefined;
	private fdIno = 0;

	constructor(opts: FileStoreOptions) {
		this.owner = opts.owner;
		this.root = opts.root;
		this.retention = opts.retention;
		this.gitignore = opts.gitignore;
		this.logPath = join(opts.root, LOG_FILE);
		this.checkpointPath = join(opts.root, CHECKPOINT_FILE);
		this.lockPath = join(opts.root, LOCK_FILE);
	}

	/** True once the owner has been written (its log exists). */
	exists(): boolean {
		return existsSync(this.logPath);
	}

	/** Cheap variant for the commit path: the cache already saw the log. */
	knownToExist(): boolean {
		return (this.cache !== undefined && this.cache.ino !== 0) || this.exists();
	}

	/** Bytes on disk (log + checkpoint), for status. */
	diskBytes(): number {
		let n = 0;
		for (const p of [this.logPath, this.checkpointPath]) {
			const st = statSync(p, { throwIfNoEntry: false });
			if (st?.isFile()) n += st.size;
		}
		return n;
	}

	/** Current history; never creates anything. Throws "corrupt"/"io" for damaged stores. */
	load(): OwnerHistory {
		const st = this.statLog();
		const c = this.cache;
		if (st === undefined) {
			if (c !== undefined && c.ino === 0) return c.history;
			return this.loadWithoutLog();
		}
		if (c !== undefined && c.ino === st.ino) {
			if (c.size === st.size && c.mtimeMs === st.mtimeMs) return c.history;
			if (st.size >= c.offset && this.fdIno === st.ino) {
				this.readAppended(c, st);
				return c.history;
			}
		}
		return this.fullLoad();
	}

	/** The cached history without touching the disk (undefined before the first load). */
	cached(): OwnerHistory | undefined {
		return this.cache?.history;
	}

	private statLog(): Stats | undefined {
		let st: Stats | undefined;
		try {
			st = statSync(this.logPath, { throwIfNoEntry: false });
		} catch (e) {
			ioFail(this.logPath, "read", e);
		}
		if (st !== undefined && !st.isFile()) damaged(this.logPath, "it is not a regular file");
		return st;
	}

	private readCheckpoint(): { seq: number; state: OwnerState } {
		let text: string;
		try {
			text = readFileSync(this.checkpointPath, "utf8");
		} catch (e) {
			if (errnoOf(e) === "ENOENT") return { seq: 0, state: emptyState() };
			if (errnoOf(e) === "EISDIR") damaged(this.checkpointPath, "it is not a regular file");
			ioFail(this.checkpointPath, "read", e);
		}
		return parseCheckpoint(text, this.checkpointPath, this.owner);
	}

	private loadWithoutLog(): OwnerHistory {
		const cp = this.readCheckpoint();
		const history = cp.seq === 0 ? newHistory(this.owner, this.retention) : this.build(cp, []);
		this.closeFds();
		this.cache = { ino: 0, size: 0, mtimeMs: 0, offset: 0, diskCheckpointSeq: cp.seq, history };
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
	private fullLoad(): OwnerHistory {
		this.closeFds();
		let fd: number;
		try {
			fd = openSync(this.logPath, "r");
		} catch (e) {
			if (errnoOf(e) === "ENOENT") return this.loadWithoutLog();
			ioFail(this.logPath, "read", e);
		}
		let st: Stats;
		let buf: Buffer;
		try {
			st = fstatSync(fd);
			buf = Buffer.allocUnsafe(st.size);
			let got = 0;
			while (got < st.size) {
				const n = readSync(fd, buf, got, st.size - got, got);
				if (n === 0) break;
				got += n;
			}
			buf = buf.subarray(0, got);
		} catch (e) {
			closeSync(fd);
			ioFail(this.logPath, "read", e);
		}
		const cp = this.readCheckpoint();
		const { records, offset } = this.parseLines(buf, 0);
		const after = records.filter((r) => r.seq > cp.seq);
		const history = this.build(cp, after);
		this.readFd = fd;
		this.fdIno = st.ino;
		this.cache = { ino: st.ino, size: buf.length, mtimeMs: st.mtimeMs, offset, diskCheckpointSeq: cp.seq, history };
		return history;
	}

	/** Parse complete lines of `buf`; `base` is the file offset of buf[0]. */
	private parseLines(buf: Buffer, base: number): { records: TransitionRecord[]; offset: number } {
		const records: TransitionRecord[] = [];
		let start = 0;
		for (;;) {
			const nl = buf.indexOf(10, start);
			if (nl < 0) break;
			const text = buf.toString("utf8", start, nl);
			const rec = parseRecordLine(text, this.logPath, `the record at byte ${base + start}`);
			if (!rec.owners.includes(this.owner)) damaged(this.logPath, `the record at byte ${base + start} belongs to owners ${rec.owners.join(", ")}`);
			records.push(rec);
			start = nl + 1;
		}
		return { records, offset: base + start };
	}

	/** Apply only what another process appended since the cached offset. O(appended bytes). */
	private readAppended(c: Cache, st: Stats): void {
		const len = st.size - c.offset;
		const buf = Buffer.allocUnsafe(len);
		let got = 0;
		try {
			while (got < len) {
				const n = readSync(this.readFd as number, buf, got, len - got, c.offset + got);
				if (n === 0) break;
				got += n;
			}
		} catch (e) {
			ioFail(this.logPath, "read", e);
		}
		const { records, offset } = this.parseLines(buf.subarray(0, got), c.offset);
		const h = c.history;
		try {
			for (const r of records) {
				if (r.seq !== h.seq + 1) damaged(this.logPath, `record \`${r.id}\` has seq ${r.seq} where ${h.seq + 1} was expected`);
				applyDurable(h, r);
			}
		} catch (e) {
			// Part of the batch may be applied: forget the cache so the next load starts from the files.
			this.reset();
			throw e;
		}
		c.offset = offset;
		c.size = st.size;
		c.mtimeMs = st.mtimeMs;
	}

	/** Under the lock: catch up, cut a torn trailing line left by a crashed writer. */
	catchUpLocked(): OwnerHistory {
		const h = this.load();
		const c = this.cache as Cache;
		if (c.ino !== 0 && c.size > c.offset) {
			const fd = this.openWrite();
			try {
				ftruncateSync(fd, c.offset);
				fsyncSync(fd);
			} catch (e) {
				ioFail(this.logPath, "repair the torn last record of", e);
			}
			this.refreshStat(fd);
		}
		return h;
	}

	/** Create the owner's folder (and `.gitignore`) on the first write. */
	ensureRoot(): void {
		if (existsSync(this.root)) return;
		if (this.gitignore) ensureDirPlain(dirname(this.root));
		ensureDir(this.root);
		if (this.gitignore) {
			const path = join(this.root, ".gitignore");
			const tmp = `${path}.tmp-${process.pid}`;
			writeFileSync(tmp, "# State Flow's local store: never commit it by accident.\n*\n", { mode: 0o644 });
			renameSync(tmp, path);
		}
	}

	private openWrite(): number {
		if (this.writeFd !== undefined) return this.writeFd;
		try {
			this.writeFd = openSync(this.logPath, constants.O_WRONLY | constants.O_APPEND);
		} catch (e) {
			ioFail(this.logPath, "open for writing", e);
		}
		return this.writeFd;
	}

	private refreshStat(fd: number): void {
		const st = fstatSync(fd);
		const c = this.cache as Cache;
		c.size = st.size;
		c.mtimeMs = st.mtimeMs;
		c.offset = st.size;
	}

	/** Create the log on the first write (under the lock): the folder must exist. */
	private createLog(): void {
		let fd: number;
		try {
			fd = openSync(this.logPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, FILE_MODE);
			fsyncDir(this.root);
		} catch (e) {
			ioFail(this.logPath, "create", e);
		}
		const st = fstatSync(fd);
		const prev = this.cache;
		this.closeFds();
		this.writeFd = fd;
		this.readFd = openSync(this.logPath, "r");
		this.fdIno = st.ino;
		const history = prev?.history ?? newHistory(this.owner, this.retention);
		this.cache = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, offset: st.size, diskCheckpointSeq: prev?.diskCheckpointSeq ?? 0, history };
	}

	/**
	 * Under the lock, after `catchUpLocked`: make one record durable with ONE write of the
	 * whole line and one fsync. The caller then applies it in memory (`commitRecord`).
	 */
	appendLocked(record: TransitionRecord): void {
		if (this.cache === undefined || this.cache.ino === 0) this.createLog();
		const c = this.cache as Cache;
		const fd = this.openWrite();
		const buf = Buffer.from(`${recordLine(record)}\n`);
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
				// The next writer cuts any torn remainder.
			}
			ioFail(this.logPath, "append to", e);
		}
		this.refreshStat(fd);
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
		if (h.seq - c.diskCheckpointSeq <= this.retention + compactionSlack(this.retention)) return false;
		atomicReplace(this.checkpointPath, checkpointText(this.owner, h.checkpointSeq, h.checkpoint));
		fault("mid-compaction");
		const lines = h.tail.map((r) => `${recordLine(r)}\n`).join("");
		atomicReplace(this.logPath, lines, "mid-compaction-log");
		this.closeFds();
		const fd = openSync(this.logPath, "r");
		const st = fstatSync(fd);
		this.readFd = fd;
		this.fdIno = st.ino;
		this.cache = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, offset: st.size, diskCheckpointSeq: h.checkpointSeq, history: h };
		return true;
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
	}
}

/** Create pi's own `.pi` folder with ordinary permissions if missing; only our folder is private. */
function ensureDirPlain(dir: string): void {
	try {
		mkdirSync(dir, { recursive: true, mode: 0o755 });
	} catch (e) {
		ioFail(dir, "create the folder", e);
	}
}

/** Apply a record already durable on disk to an in-memory history, keeping `bytes` O(patch). */
export function applyDurable(h: OwnerHistory, record: TransitionRecord): void {
	commitRecord(h, record, h.bytes + planPatch(h.owner, h.state, record.patch).bytesDelta);
}
