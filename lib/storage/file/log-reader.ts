/**
 * The read side of a file owner: its paths, the in-process cache validated by `lstat` (only
 * bytes other processes appended are read), the containment check, and every damage check a
 * fresh look at the files makes. `FileOwnerStore` (owner-store.ts) adds the locked writes.
 */
import { inline } from "../../core/printable.js";
import { closeSync, constants, fstatSync, type Stats } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fail, isStateError } from "../../core/errors.js";
import { historyFrom, newHistory } from "../../core/history.js";
import { emptyState } from "../../core/state.js";
import type { OwnerHistory, OwnerState, SharedOwner, TransitionRecord } from "../../core/types.js";
import { crashEvidence } from "./lock.js";
import { applyDurable, expectNext } from "../owner-log.js";
import type { SeenMark, SeenMarks } from "./seen.js";
import { behindWords, seenLossWords, tornWords } from "./log-damage.js";
import { damaged, parseCheckpoint } from "../format.js";
import type { Cache, Parsed } from "./log-cache.js";
import { afterCheckpoint, emptyCache, isRealDirOrLink, lost, parseLines, realChain, sameStamp, statStamp } from "./log-cache.js";
import { checkContained, ioFail, kindOf, lstatOrUndefined, openFile, readFrom, readRegular, realOrSelf as realOrSelfOf, unsafePath } from "../fs-util.js";

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
	/** Why this folder is not to be read or written at all (`Project.refused`): every access fails with it. */
	refused?: string;
	/** The folder that takes over from this one once it exists (`Project.supersededBy`): from then on every access fails, naming it. */
	supersededBy?: string;
}

export const OWNER_NAME: Record<SharedOwner, string> = { global: "The Global store folder", cwd: "The CWD store folder" };

export class FileLogReader {
	readonly owner: SharedOwner;
	readonly root: string;
	/** The owner's territory (real path): the store folder must lie inside it. */
	readonly base: string;
	readonly logPath: string;
	readonly checkpointPath: string;
	readonly lockPath: string;
	retention: number;
	protected readonly seen: SeenMarks | undefined;
	protected cache: Cache | undefined;
	protected readFd: number | undefined;
	protected writeFd: number | undefined;
	protected fdIno = 0;
	/** Damage this process saw that the files alone no longer show (they went back): refused until the folder is replaced. */
	private broken: { error: unknown; rootIno: number } | undefined;
	private readonly refused: string | undefined;
	private readonly supersededBy: string | undefined;

	constructor(opts: FileStoreOptions) {
		this.owner = opts.owner;
		this.root = opts.root;
		this.base = dirname(dirname(opts.root));
		this.retention = opts.retention;
		this.seen = opts.seen;
		this.refused = opts.refused;
		this.supersededBy = opts.supersededBy;
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

	/** Refuse the owner when its folder is not to be touched, leads outside its territory, or is not a folder. */
	checkRoot(): void {
		if (this.refused !== undefined) fail("unavailable", `${this.refused}.`);
		this.checkSuperseded();
		if (realChain(this.root)) return;
		checkContained(this.root, realOrSelfOf(this.base), OWNER_NAME[this.owner]);
		isRealDirOrLink(this.root);
	}

	/**
	 * Refuse a store another has taken over from since this one was opened (one `lstat`): a
	 * process that resolved the project's memory earlier never writes beside the processes after it.
	 */
	private checkSuperseded(): void {
		if (this.supersededBy === undefined || lstatOrUndefined(this.supersededBy)?.isDirectory() !== true) return;
		fail(
			"unavailable",
			`${OWNER_NAME[this.owner]} \`${inline(this.root)}\` is no longer where this project's memory is kept: it moved to \`${inline(this.supersededBy)}\` after this process started, and nothing was written here. The next prompt (or a new command) uses it.`,
		);
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
		this.checkSuperseded();
		const c = this.cache;
		if (c?.verified !== undefined && sameStamp(c.verified, lstatOrUndefined(this.logPath))) return c.history;
		return this.readChecked();
	}

	/** `read` with the containment check (unless the caller just made it) and a fresh look at the log. */
	protected readChecked(rootChecked = false): OwnerHistory {
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
	protected checkBroken(): void {
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

	/** `records` continue `cp` without a gap (`afterCheckpoint`); the checkpoint was parsed for this history alone, which keeps it (no copy). */
	private build(cp: { seq: number; state: OwnerState }, records: TransitionRecord[]): OwnerHistory {
		return historyFrom(this.owner, cp.state, cp.seq, records, this.retention, true);
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
			history = this.build(cp, afterCheckpoint(parsed.records, cp.seq, this.logPath, this.checkpointPath));
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

	/** A history re-read from the files must not lose what this process already saw. */
	private checkNotBehind(seen: OwnerHistory, now: OwnerHistory): void {
		const why = behindWords(seen, now);
		if (why !== undefined) this.refuse(this.logPath, why);
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
		damaged(this.logPath, seenLossWords(mark, gone, found, this.root, this.owner));
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
		damaged(this.logPath, tornWords(size - offset, "no writer holds or left its lock", this.owner));
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
		// A record read without its line end: writers write that line end first, so other bytes run on into it (a fresh read refuses that line).
		if (c.missingNewline && buf[seen] !== 10)
			damaged(this.logPath, `the record at byte ${c.lastStart}, read without a line end, runs on into bytes appended after it`);
		const from = c.missingNewline ? seen + 1 : seen;
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
		} else if (from > seen) {
			// Only the line end came (before a line in flight, or as a repair): the last record now ends with it.
			c.missingNewline = false;
			c.lastLine = Buffer.from(buf.subarray(0, from));
		}
		c.offset = parsed.offset;
		c.size = st.size;
		c.mtimeMs = st.mtimeMs;
		this.checkTorn(old + buf.length, c.offset, st.size);
	}

	/** Drop the cache and file handles (tests, and after an unexpected error). */
	reset(): void {
		this.closeFds();
		this.cache = undefined;
	}

	protected closeFds(): void {
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
