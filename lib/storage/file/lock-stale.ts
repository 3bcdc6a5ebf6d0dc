/**
 * When a lock can never be released by its holder (stale), and how to describe a lock to a
 * user: same host → its pid is gone, it ran before this boot, or it is an earlier process
 * with our pid; other hosts → age; empty/unparsable → age. One place for these rules, used
 * by acquisition, breaking and `state-flow doctor`.
 */
import { uptime } from "node:os";
import { BOOT, HOST as HOST_OF_THIS, local, mine } from "./lock-holder.js";
import type { LockHolder, ReadHolder } from "./lock-holder.js";
import { errnoOf, lstatOrUndefined } from "../fs-util.js";

/** How long a lock held by another host may live before it is considered stale. */
export const FOREIGN_STALE_MS = 60_000;
/** A lock file that stays empty/unparsable this long was left by a crash between open and write. */
export const EMPTY_STALE_MS = 2_000;
/** A break lock older than this was left by a breaker that crashed. */
export const BREAK_STALE_MS = 5_000;

export function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return errnoOf(e) !== "ESRCH";
	}
}

/** Age of a file by its mtime (never follows a link); 0 when it is gone. */
export function ageMs(path: string): number {
	const st = lstatOrUndefined(path);
	return st === undefined ? 0 : Date.now() - st.mtimeMs;
}

/** A lock taken before this machine booted: its pid may be reused, its holder is gone. Slack covers clock adjustments. */
function beforeBoot(holder: LockHolder): boolean {
	return holder.startedAt < Date.now() - uptime() * 1000 - FOREIGN_STALE_MS;
}

/** How long the lock has been held: a linked holder file was linked at its ctime; an O_EXCL lock was taken at `startedAt`. */
export function lockAgeMs(path: string, holder: LockHolder): number {
	const st = lstatOrUndefined(path);
	if (st === undefined) return 0;
	return Date.now() - (st.nlink > 1 ? st.ctimeMs : holder.startedAt);
}

/** Is the lock (or holder file) at `path` held by someone who can never release it? */
export function isStale(path: string, holder: LockHolder | "unreadable"): boolean {
	if (holder === "unreadable") return ageMs(path) > EMPTY_STALE_MS;
	if (local(holder)) {
		// Our own pid with a foreign token: an earlier process with this pid (a restarted container) died holding it.
		if (holder.pid === process.pid) return !mine(holder);
		if (holder.boot !== undefined && BOOT !== undefined && holder.boot !== BOOT) return true;
		return !pidAlive(holder.pid) || beforeBoot(holder);
	}
	return lockAgeMs(path, holder) > FOREIGN_STALE_MS;
}

/** A holder file that can never be used again (swept at first use of a lock). Other hosts' files are left alone. */
export function deadHolderFile(file: string, h: LockHolder | "unreadable"): boolean {
	return h === "unreadable" ? ageMs(file) > FOREIGN_STALE_MS : local(h) && isStale(file, h);
}

export function isStaleBreak(path: string, holder: ReadHolder): boolean {
	if (typeof holder === "object" && local(holder) && holder.pid !== process.pid && !pidAlive(holder.pid)) return true;
	return ageMs(path) > BREAK_STALE_MS;
}

/** Who holds a lock, in words, with what makes it odd (another host, a time in the future) and when it is given up. */
export function describeHolder(path: string, h: LockHolder | "unreadable"): string {
	if (h === "unreadable")
		return `an unknown process (the lock file holds no readable holder record; it is treated as abandoned ${EMPTY_STALE_MS / 1000} s after its last change)`;
	const who = `pid ${h.pid} on ${h.host}`;
	if (local(h)) return who;
	const age = lockAgeMs(path, h);
	const future = age < -FOREIGN_STALE_MS / 4 ? `; its time lies ${Math.round(-age / 1000)} s in the future (clock skew between hosts)` : "";
	return `${who} (another host${h.host === HOST_OF_THIS ? " or pid namespace" : ""}: treated as abandoned ${FOREIGN_STALE_MS / 1000} s after it was taken${future})`;
}
