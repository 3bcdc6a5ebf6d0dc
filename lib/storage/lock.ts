/**
 * Cross-process write lock. Each process keeps one holder file per lock,
 * `<lock>.holders/<token>`, holding `{pid, host, ns, boot, token, startedAt}`, and takes the
 * lock with `link(holder, lock)`: the lock appears complete or not at all (EEXIST = held).
 * Release unlinks the lock only while it is still our holder's inode. A holder that died is
 * detected (same host: its pid is gone or it ran before this boot; other hosts: age) and its
 * lock is broken under a second `O_EXCL` lock. Where `link()` is refused, the lock file is
 * created with `O_CREAT|O_EXCL` and then written (git's `index.lock` pattern).
 */
import { randomBytes } from "node:crypto";
import {
	closeSync,
	fstatSync,
	linkSync,
	lstatSync,
	mkdirSync,
	openSync,
	readFileSync,
	readdirSync,
	readlinkSync,
	statSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import type { Stats } from "node:fs";
import { hostname, uptime } from "node:os";
import { fail } from "../core/errors.js";

/** What a lock file holds. */
export interface LockHolder {
	pid: number;
	host: string;
	startedAt: number;
	token: string;
	/** The holder's pid namespace (Linux): containers that share a hostname do not share pids. */
	ns?: string;
	/** The holder machine's boot id (Linux): a lock from an earlier boot is stale. */
	boot?: string;
}

/** How long a lock held by another host may live before it is considered stale. */
export const FOREIGN_STALE_MS = 60_000;
/** A lock file that stays empty/unparsable this long was left by a crash between open and write. */
const EMPTY_STALE_MS = 2_000;
/** A break lock older than this was left by a breaker that crashed. */
const BREAK_STALE_MS = 5_000;

const HOST = hostname();
const PID_NS = orUndefined(() => readlinkSync("/proc/self/ns/pid"));
const BOOT = orUndefined(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());

function orUndefined(read: () => string): string | undefined {
	try {
		return read();
	} catch {
		return undefined;
	}
}

/** Same host and pid namespace: the holder's pid can be checked here. A record without `ns` counts as ours. */
function local(holder: LockHolder): boolean {
	return holder.host === HOST && (holder.ns === undefined || holder.ns === PID_NS);
}

function holderRecord(token = newToken()): LockHolder {
	return { pid: process.pid, host: HOST, startedAt: Date.now(), token, ...(PID_NS === undefined ? {} : { ns: PID_NS }), ...(BOOT === undefined ? {} : { boot: BOOT }) };
}
let counter = 0;
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Random once per process, a counter per lock: unique tokens without a crypto call on the hot path. */
const TOKEN_PREFIX = `${process.pid}-${randomBytes(6).toString("hex")}`;
function newToken(): string {
	counter++;
	return `${TOKEN_PREFIX}-${counter}`;
}

function errno(e: unknown): string | undefined {
	return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** This process's holder file for one lock path; `held` while it is linked as the lock. */
interface Holder {
	file: string;
	ino: number;
	dev: number;
	token: string;
	held: boolean;
}

/** Per lock path: our holder file, or "unsupported" where `link()` is refused (O_EXCL fallback). */
const holders = new Map<string, Holder | "unsupported">();

function holdersDir(path: string): string {
	return `${path}.holders`;
}

/**
 * Our holder file for `path`, created on first use (the first use also sweeps holder files
 * left by dead processes). Undefined when it cannot be created here (the store folder is
 * missing, or `link()` was refused before): the caller uses the O_EXCL path, which reports
 * a missing folder.
 */
function holderFor(path: string): Holder | undefined {
	const known = holders.get(path);
	if (known !== undefined) return known === "unsupported" ? undefined : known;
	const dir = holdersDir(path);
	try {
		mkdirSync(dir, { mode: 0o700 }); // Not recursive: a store folder moved aside is not re-created.
	} catch (e) {
		if (errno(e) !== "EEXIST") return undefined;
	}
	sweep(dir);
	const token = newToken();
	const file = `${dir}/${token}`;
	let st: Stats;
	try {
		const fd = openSync(file, "wx", 0o600);
		try {
			writeSync(fd, JSON.stringify(holderRecord(token)));
			st = fstatSync(fd);
		} finally {
			closeSync(fd);
		}
	} catch {
		safeUnlinkQuiet(file);
		return undefined;
	}
	const h: Holder = { file, ino: st.ino, dev: st.dev, token, held: false };
	holders.set(path, h);
	cleanupAtExit();
	return h;
}

/** Forget our holder file for `path` (removed); `unsupported` keeps later attempts on O_EXCL. */
function dropHolder(path: string, h: Holder, unsupported: boolean): void {
	safeUnlinkQuiet(h.file);
	if (unsupported) holders.set(path, "unsupported");
	else holders.delete(path);
}

let exitHook = false;
function cleanupAtExit(): void {
	if (exitHook) return;
	exitHook = true;
	process.once("exit", () => {
		for (const h of holders.values()) if (h !== "unsupported") safeUnlinkQuiet(h.file);
	});
}

/** link() errors that mean "this file system has no hard links": use the O_EXCL path. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

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
		const code = errno(e);
		if (code === "EEXIST") return false;
		if (code === "ENOENT" || NO_LINKS.has(code ?? "")) {
			dropHolder(path, h, code !== "ENOENT");
			return "unsupported";
		}
		fail("io", `Cannot create the lock file \`${path}\` (${code ?? String(e)}). Check that its folder is writable.`, [], e);
	}
}

/**
 * Is the lock at `path` our holder file? One `lstat` when it is the inode we created. Our
 * holder file may have been replaced by a copy (a store folder restored from a backup): the
 * lock then is ours when it is the holder file's current inode, which we adopt.
 */
function sameFile(path: string, h: Holder): boolean {
	try {
		const st = lstatSync(path);
		if (st.ino === h.ino && st.dev === h.dev) return true;
		const now = statSync(h.file);
		if (now.ino !== st.ino || now.dev !== st.dev) return false;
		h.ino = now.ino;
		h.dev = now.dev;
		return true;
	} catch {
		return false;
	}
}

/** Tokens are `<pid>-<hex>-<n>`; anything else is not a holder file name we made. */
function removeHolderFile(path: string, token: string): void {
	if (/^[\w-]+$/.test(token)) safeUnlinkQuiet(`${holdersDir(path)}/${token}`);
}

/**
 * Remove holder files that can never be used again: of a dead pid on this host (or of an
 * earlier boot / an earlier process with our pid), and unreadable ones older than
 * FOREIGN_STALE_MS (a creator that died between create and write). Holder files of other
 * hosts are left alone: their age cannot be judged here.
 */
function sweep(dir: string): void {
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return;
	}
	for (const name of names) {
		const file = `${dir}/${name}`;
		const h = readHolder(file);
		if (h === "missing") continue;
		const dead = h === "unreadable" ? ageMs(file) > FOREIGN_STALE_MS : local(h) && isStale(file, h);
		if (dead) safeUnlinkQuiet(file);
	}
}

function safeUnlinkQuiet(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// Gone already, or not ours to remove: it is only garbage.
	}
}

/** Create `path` exclusively and write the holder record; false when it already exists. */
function tryCreate(path: string, holder: LockHolder): boolean {
	let fd: number;
	try {
		fd = openSync(path, "wx", 0o600);
	} catch (e) {
		if (errno(e) === "EEXIST") return false;
		fail("io", `Cannot create the lock file \`${path}\` (${errno(e) ?? String(e)}). Check that its folder is writable.`, [], e);
	}
	try {
		writeSync(fd, JSON.stringify(holder));
	} finally {
		closeSync(fd);
	}
	return true;
}

function readHolder(path: string): LockHolder | "missing" | "unreadable" {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (e) {
		return errno(e) === "ENOENT" ? "missing" : "unreadable";
	}
	try {
		const v = JSON.parse(text) as Partial<LockHolder>;
		if (typeof v.pid === "number" && typeof v.host === "string" && typeof v.token === "string" && typeof v.startedAt === "number") {
			return v as LockHolder;
		}
	} catch {
		// An empty or half-written lock file: judged by age below.
	}
	return "unreadable";
}

function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return errno(e) !== "ESRCH";
	}
}

function ageMs(path: string): number {
	try {
		return Date.now() - statSync(path).mtimeMs;
	} catch {
		return 0;
	}
}

/** A lock of this very process (not of an earlier process that had the same pid). */
function mine(holder: LockHolder | "unreadable" | "missing"): boolean {
	return typeof holder === "object" && local(holder) && holder.pid === process.pid && holder.token.startsWith(`${TOKEN_PREFIX}-`);
}

/** A lock taken before this machine booted: its pid may be reused, its holder is gone. Slack covers clock adjustments. */
function beforeBoot(holder: LockHolder): boolean {
	return holder.startedAt < Date.now() - uptime() * 1000 - FOREIGN_STALE_MS;
}

/** Is the lock at `path` held by someone who can never release it? */
function isStale(path: string, holder: LockHolder | "unreadable"): boolean {
	if (holder === "unreadable") return ageMs(path) > EMPTY_STALE_MS;
	if (local(holder)) {
		// Our own pid with a foreign token: an earlier process with this pid (a restarted container) died holding it.
		if (holder.pid === process.pid) return !mine(holder);
		if (holder.boot !== undefined && BOOT !== undefined && holder.boot !== BOOT) return true;
		return !pidAlive(holder.pid) || beforeBoot(holder);
	}
	return lockAgeMs(path, holder) > FOREIGN_STALE_MS;
}

/** How long the lock has been held: a linked holder file was linked at its ctime; an O_EXCL lock was taken at `startedAt`. */
function lockAgeMs(path: string, holder: LockHolder): number {
	try {
		const st = statSync(path);
		return Date.now() - (st.nlink > 1 ? st.ctimeMs : holder.startedAt);
	} catch {
		return 0;
	}
}

/** Who holds a lock, and whether that holder can never release it (for `state-flow doctor` and messages). */
export interface LockStatus {
	/** The holder record; absent when the file is empty or unparsable (a crash between create and write). */
	holder?: LockHolder;
	/** "pid N on host", or a description of an unreadable lock file. */
	who: string;
	/** True when the next writer breaks the lock (its holder died). */
	stale: boolean;
}

/** The state of the lock file at `path`; undefined when nobody holds it. Reads only. */
export function readLockHolder(path: string): LockStatus | undefined {
	const h = readHolder(path);
	if (h === "missing") return undefined;
	if (h === "unreadable") return { who: "an unknown process (the lock file holds no readable holder record)", stale: isStale(path, h) };
	return { holder: h, who: `pid ${h.pid} on ${h.host}`, stale: isStale(path, h) };
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
	const me = holderRecord();
	if (!tryCreate(breakPath, me)) {
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
			if (judged !== "unreadable") removeHolderFile(path, judged.token);
		}
	} finally {
		safeUnlink(breakPath);
	}
}

function isStaleBreak(path: string, holder: LockHolder | "unreadable"): boolean {
	if (holder !== "unreadable" && local(holder) && holder.pid !== process.pid && !pidAlive(holder.pid)) return true;
	return ageMs(path) > BREAK_STALE_MS;
}

function safeUnlink(path: string): void {
	try {
		unlinkSync(path);
	} catch (e) {
		if (errno(e) !== "ENOENT") throw e;
	}
}

/** A held lock. `release()` is idempotent and never throws for an already-broken lock. */
export class HeldLock {
	private released = false;
	private readonly since = Date.now();
	constructor(
		readonly path: string,
		readonly token: string,
		private readonly holder?: Holder,
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
			safeUnlink(this.path);
			return;
		}
		const holder = readHolder(this.path);
		// Only remove our own lock: if it was broken (we were judged dead), leave the new holder alone.
		if (holder !== "missing" && holder !== "unreadable" && holder.token === this.token) safeUnlink(this.path);
	}
}

/** One attempt: take the lock, or break it when stale and report false. */
function attempt(path: string): HeldLock | undefined {
	const h = holderFor(path);
	if (h?.held) return undefined; // Another `Stores` of this process holds it.
	const linked = h === undefined ? "unsupported" : tryLink(h, path);
	if (linked === true && h !== undefined) {
		h.held = true;
		return new HeldLock(path, h.token, h);
	}
	if (linked === "unsupported") {
		const holder = holderRecord();
		if (tryCreate(path, holder)) return new HeldLock(path, holder.token);
	}
	const current = readHolder(path);
	if (current !== "missing" && isStale(path, current)) breakStale(path, current);
	return undefined;
}

function busy(path: string, timeoutMs: number): never {
	const who = readLockHolder(path)?.who ?? "another process";
	fail(
		"busy",
		`The state store is locked by ${who}: lock file \`${path}\` was not released within ${timeoutMs} ms. Retry shortly; if no pi process is writing, delete the lock file.`,
	);
}

function backoff(tries: number): number {
	// Short first waits (commits take ~0.1 ms), growing to ~8 ms, with jitter against lockstep.
	const base = Math.min(8, 0.25 * 2 ** Math.min(tries, 5));
	return base * (0.5 + Math.random());
}

/** Take the lock, waiting asynchronously (other work of this process keeps running). */
export async function acquireLock(path: string, timeoutMs: number): Promise<HeldLock> {
	const first = attempt(path);
	if (first) return first;
	const deadline = Date.now() + timeoutMs;
	for (let tries = 0; ; tries++) {
		await new Promise((r) => setTimeout(r, backoff(tries)));
		const got = attempt(path);
		if (got) return got;
		if (Date.now() > deadline) busy(path, timeoutMs);
	}
}

/**
 * Take the lock, blocking the thread. Only for short synchronous roll-forward in `load()`;
 * returns undefined at once when this process itself holds the lock (it will roll forward).
 */
export function acquireLockSync(path: string, timeoutMs: number): HeldLock | undefined {
	const deadline = Date.now() + timeoutMs;
	for (let tries = 0; ; tries++) {
		const got = attempt(path);
		if (got) return got;
		if (mine(readHolder(path))) return undefined;
		if (Date.now() > deadline) busy(path, timeoutMs);
		Atomics.wait(sleepCell, 0, 0, backoff(tries));
	}
}
