/**
 * Cross-process write lock: acquisition, release and breaking. Each process keeps one
 * holder file per lock (`lock-holder.ts`) and takes the lock with `link(holder, lock)`: the
 * lock appears complete or not at all (EEXIST = held). Release unlinks the lock only while
 * it is still our holder's inode. A holder that can never release its lock (`lock-stale.ts`)
 * is broken under a second `O_EXCL` lock. Where `link()` is refused, the lock file is
 * created with `O_CREAT|O_EXCL` and then written (git's `index.lock` pattern). Anything at
 * the lock path that State Flow cannot have made (a folder, a link, a FIFO) is refused at
 * once with a message saying what it is and how to clear it: nothing waits on it.
 */
import { linkSync, unlinkSync } from "node:fs";
import { fail } from "../../core/errors.js";
import { errnoOf, ioFail, kindOf, lstatOrUndefined } from "../fs-util.js";
import { createHolderFile, ensureHoldersDir, holderFileOf, holderRecord, holdersDir, mine, readHolder, sweep, unlinkQuiet } from "./lock-holder.js";
import type { Holder, LockHolder, ReadHolder } from "./lock-holder.js";
import { EMPTY_STALE_MS, FOREIGN_STALE_MS, ageMs, deadHolderFile, describeHolder, isStale, isStaleBreak } from "./lock-stale.js";

export type { LockHolder } from "./lock-holder.js";
export { FOREIGN_STALE_MS } from "./lock-stale.js";

/** Per lock path: our holder file, or "unsupported" where `link()` is refused (O_EXCL fallback). */
const holders = new Map<string, Holder | "unsupported">();
/** Lock paths whose stale lock this process broke: the next holder here recovers a crashed writer's leftovers. */
const recovered = new Set<string>();

/**
 * Our holder file for `path`, created on first use (the first use also sweeps holder files
 * left by dead processes). Undefined when it cannot be created here (the store folder is
 * missing, or `link()` was refused before): the caller uses the O_EXCL path, which reports
 * a missing folder.
 */
function holderFor(path: string): Holder | undefined {
	const known = holders.get(path);
	if (known !== undefined) return known === "unsupported" ? undefined : known;
	if (!ensureHoldersDir(path)) return undefined;
	const dir = holdersDir(path);
	sweep(dir, deadHolderFile);
	const record = holderRecord();
	const file = `${dir}/${record.token}`;
	let made: ReturnType<typeof createHolderFile>;
	try {
		made = createHolderFile(file, record);
	} catch {
		unlinkQuiet(file);
		return undefined;
	}
	if (made === false) return undefined;
	const h: Holder = { file, ino: made.ino, dev: made.dev, token: record.token, held: false };
	holders.set(path, h);
	cleanupAtExit();
	return h;
}

/** Forget our holder file for `path` (removed); `unsupported` keeps later attempts on O_EXCL. */
function dropHolder(path: string, h: Holder, unsupported: boolean): void {
	unlinkQuiet(h.file);
	if (unsupported) holders.set(path, "unsupported");
	else holders.delete(path);
}

let exitHook = false;
function cleanupAtExit(): void {
	if (exitHook) return;
	exitHook = true;
	process.once("exit", () => {
		for (const h of holders.values()) if (h !== "unsupported") unlinkQuiet(h.file);
	});
}

/** link() errors that mean "this file system has no hard links": use the O_EXCL path. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

function cannotCreate(path: string, e: unknown): never {
	if (errnoOf(e) === "ENOTDIR") ioFail(path, "create the lock file", e); // names what blocks the way
	fail("io", `Cannot create the lock file \`${path}\` (${errnoOf(e) ?? String(e)}). Check that its folder is writable.`, [], e);
}

/**
 * Link our holder file as the lock: the lock is complete the moment it exists. The holder
 * file is written once and never changed, so the lock's ctime (set by `link`) is the time
 * it was taken. "unsupported" sends the caller to the O_EXCL path (also when our holder
 * file vanished: a fresh one is made on the next attempt).
 */
function tryLink(h: Holder, path: string): boolean | "unsupported" {
	try {
		linkSync(h.file, path);
		return true;
	} catch (e) {
		const code = errnoOf(e);
		if (code === "EEXIST") return false;
		// ENOENT/ENOTDIR: our holder file (or its folder) is gone; a fresh one is made next time.
		if (code === "ENOENT" || code === "ENOTDIR" || NO_LINKS.has(code ?? "")) {
			dropHolder(path, h, NO_LINKS.has(code ?? ""));
			return "unsupported";
		}
		cannotCreate(path, e);
	}
}

/**
 * Is the lock at `path` our holder file? One `lstat` when it is the inode we created. Our
 * holder file may have been replaced by a copy (a store folder restored from a backup): the
 * lock then is ours when it is the holder file's current inode, which we adopt.
 */
function sameFile(path: string, h: Holder): boolean {
	try {
		const st = lstatOrUndefined(path);
		if (st === undefined || !st.isFile()) return false;
		if (st.ino === h.ino && st.dev === h.dev) return true;
		const now = lstatOrUndefined(h.file);
		if (now === undefined || now.ino !== st.ino || now.dev !== st.dev) return false;
		h.ino = now.ino;
		h.dev = now.dev;
		return true;
	} catch {
		return false;
	}
}

/** Create `path` exclusively and write the holder record; false when it already exists. */
function tryCreate(path: string, holder: LockHolder): boolean {
	try {
		return createHolderFile(path, holder) !== false;
	} catch (e) {
		cannotCreate(path, e);
	}
}

/** Who holds a lock, and whether that holder can never release it (for `state-flow doctor` and messages). */
export interface LockStatus {
	/** The holder record; absent when the file is empty or unparsable (a crash between create and write). */
	holder?: LockHolder;
	/** "pid N on host", or a description of an unreadable or odd lock file. */
	who: string;
	/** True when the next writer breaks the lock (its holder died). */
	stale: boolean;
	/** Set when the lock path holds something State Flow never makes there (a folder, a link, a FIFO): it must be cleared by hand. */
	odd?: string;
}

/** What is odd about the lock path, with how to clear it; undefined for a regular file or nothing. */
function oddLock(path: string): string | undefined {
	const st = lstatOrUndefined(path);
	if (st === undefined || st.isFile()) return undefined;
	const what = kindOf(st);
	const clear = st.isDirectory() ? `rm -r '${path}'` : `rm '${path}'`;
	return `the lock path \`${path}\` is ${what}, which State Flow never creates there (it may have come with the repository); no writer can take this lock until it is removed: if you did not make it, remove it (\`${clear}\`) and retry`;
}

/** The state of the lock file at `path`; undefined when nobody holds it. Reads only. */
export function readLockHolder(path: string): LockStatus | undefined {
	const odd = oddLock(path);
	if (odd !== undefined) return { who: odd, stale: false, odd };
	const h = readHolder(path);
	if (h === "missing") return undefined;
	if (h === "unreadable") return { who: describeHolder(path, h), stale: isStale(path, h) };
	return { holder: h, who: describeHolder(path, h), stale: isStale(path, h) };
}

/**
 * Break a stale lock. Serialised through `<path>.break` (O_EXCL) and re-verified there:
 * only the holder we judged stale is removed, never a fresh lock taken meanwhile.
 * Residual race (documented): a breaker that stalls for more than BREAK_STALE_MS while
 * holding the break lock can have it broken too; both then re-verify the token, so the
 * worst case is a retry, not two holders, unless the stall falls between re-check and unlink.
 */
function breakStale(path: string, judged: LockHolder | "unreadable"): void {
	const breakPath = `${path}.break`;
	const oddBreak = oddLock(breakPath);
	if (oddBreak !== undefined) fail("busy", `Cannot break the abandoned lock \`${path}\`: ${oddBreak}.`);
	if (!tryCreate(breakPath, holderRecord())) {
		const other = readHolder(breakPath);
		if (other !== "missing" && isStaleBreak(breakPath, other)) safeUnlink(breakPath);
		return;
	}
	try {
		const now = readHolder(path);
		// An empty file is re-judged by its age here: it may be a fresh lock whose holder is still writing.
		const same =
			now === "unreadable"
				? judged === "unreadable" && ageMs(path) > EMPTY_STALE_MS
				: now !== "missing" && judged !== "unreadable" && now.token === judged.token;
		if (same) {
			safeUnlink(path);
			recovered.add(path);
			markCrash(path, now);
			const file = judged === "unreadable" ? undefined : holderFileOf(path, judged.token);
			if (file !== undefined) unlinkQuiet(file);
		}
	} finally {
		safeUnlink(breakPath);
	}
}

/** Where a breaker records that a writer died holding the lock (read by `crashEvidence`). */
export function crashMarkerPath(lockPath: string): string {
	return `${lockPath}.broken`;
}

/**
 * Record that the lock's holder died: bytes it left after the last complete record of its
 * log (older than this marker) are a crashed write, not a truncation. Best effort: without
 * the marker such bytes are reported as damage instead of being cut.
 */
function markCrash(path: string, holder: ReadHolder): void {
	try {
		const marker = crashMarkerPath(path);
		const st = lstatOrUndefined(marker);
		if (st !== undefined && !st.isFile()) return;
		unlinkQuiet(marker);
		createHolderFile(marker, typeof holder === "object" ? holder : holderRecord());
	} catch {
		// Only evidence for a later repair; the lock itself is broken.
	}
}

/** Did a writer die holding this lock after `sinceMs` (the time of the bytes in question)? */
export function crashEvidence(lockPath: string, sinceMs: number): boolean {
	const st = lstatOrUndefined(crashMarkerPath(lockPath));
	return st !== undefined && st.isFile() && st.mtimeMs >= sinceMs;
}

function safeUnlink(path: string): void {
	try {
		unlinkSync(path);
	} catch (e) {
		if (errnoOf(e) !== "ENOENT") throw e;
	}
}

/** A held lock. `release()` is idempotent and never throws for an already-broken lock. */
export class HeldLock {
	private released = false;
	private readonly since = Date.now();
	/** Taken only after waiting for another holder (what was checked before the wait may have changed meanwhile). */
	waited = false;
	constructor(
		readonly path: string,
		readonly token: string,
		private readonly holder?: Holder,
		/** This process broke the lock of a holder that died: what it left half-done may be repaired now. */
		readonly recoveredCrash = false,
	) {}

	release(): void {
		if (this.released) return;
		this.released = true;
		if (this.holder) {
			this.holder.held = false;
			// Only remove our own lock (our holder's inode): if it was broken, leave the new holder alone.
			if (sameFile(this.path, this.holder)) safeUnlink(this.path);
			return;
		}
		// Nobody breaks a live same-host holder, and other hosts wait FOREIGN_STALE_MS: a short hold needs no re-check.
		if (Date.now() - this.since < FOREIGN_STALE_MS / 2) {
			if (lstatOrUndefined(this.path)?.isFile()) safeUnlink(this.path);
			return;
		}
		const holder = readHolder(this.path);
		// Only remove our own lock: if it was broken (we were judged dead), leave the new holder alone.
		if (holder !== "missing" && holder !== "unreadable" && holder.token === this.token) safeUnlink(this.path);
	}
}

/**
 * One attempt: take the lock, or break it when stale and report false. Odd lock paths are
 * refused at once. What is at the path is looked at only when the take failed: `link` and
 * `O_EXCL` never follow, replace or write through anything there, so a taken lock proves the
 * path held nothing (one `lstat` less per commit).
 */
function attempt(path: string): HeldLock | undefined {
	const h = holderFor(path);
	if (h?.held) return refuseOdd(path); // Another `Stores` of this process holds it.
	const linked = h === undefined ? "unsupported" : tryLink(h, path);
	if (linked === true && h !== undefined) {
		h.held = true;
		return new HeldLock(path, h.token, h, recovered.delete(path));
	}
	if (linked === "unsupported") {
		const holder = holderRecord();
		if (tryCreate(path, holder)) return new HeldLock(path, holder.token, undefined, recovered.delete(path));
	}
	refuseOdd(path);
	const current = readHolder(path);
	if (current !== "missing" && isStale(path, current)) breakStale(path, current);
	return undefined;
}

/** Refuse a lock path State Flow cannot have made (nothing waits on it); undefined otherwise. */
function refuseOdd(path: string): undefined {
	const odd = oddLock(path);
	if (odd !== undefined) fail("busy", `The state store cannot be locked: ${odd}.`);
	return undefined;
}

function busy(path: string, timeoutMs: number): never {
	const who = readLockHolder(path)?.who ?? "another process";
	fail(
		"busy",
		`The state store is locked by ${who}: lock file \`${path}\` was not released within ${timeoutMs} ms. Retry shortly; if no pi process is writing, delete the lock file (\`state-flow doctor\` shows who holds it).`,
	);
}

function backoff(tries: number): number {
	// Short first waits (commits take ~0.1 ms), growing to ~8 ms, with jitter against lockstep.
	const base = Math.min(8, 0.25 * 2 ** Math.min(tries, 5));
	return base * (0.5 + Math.random());
}

/** Told when a writer of this process starts waiting for a lock held elsewhere (tests key on the wait itself, not a timer). */
const waitListeners = new Set<(path: string) => void>();

/** Call `listener` with the lock path each time a writer of this process starts waiting for it; returns the way to stop. */
export function onLockWait(listener: (path: string) => void): () => void {
	waitListeners.add(listener);
	return () => {
		waitListeners.delete(listener);
	};
}

/** Take the lock, waiting asynchronously (other work of this process keeps running). */
export async function acquireLock(path: string, timeoutMs: number): Promise<HeldLock> {
	const first = attempt(path);
	if (first) return first;
	for (const l of waitListeners) l(path);
	const deadline = Date.now() + timeoutMs;
	for (let tries = 0; ; tries++) {
		await new Promise((r) => setTimeout(r, backoff(tries)));
		const got = attempt(path);
		if (got) {
			got.waited = true;
			return got;
		}
		if (Date.now() > deadline) busy(path, timeoutMs);
	}
}

/**
 * Take the lock for a roll-forward, waiting asynchronously; undefined at once when this
 * process itself holds it (its unfinished commit completes pending journals itself, and
 * waiting for it from inside that commit would never end).
 */
export async function acquireLockUnlessMine(path: string, timeoutMs: number): Promise<HeldLock | undefined> {
	const deadline = Date.now() + timeoutMs;
	for (let tries = 0; ; tries++) {
		const got = attempt(path);
		if (got) return got;
		if (mine(readHolder(path) as ReadHolder)) return undefined;
		if (Date.now() > deadline) busy(path, timeoutMs);
		await new Promise((r) => setTimeout(r, backoff(tries)));
	}
}
