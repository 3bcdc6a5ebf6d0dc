/**
 * Holder records and holder files of the cross-process lock: who this process is
 * (`{pid, host, ns, boot, token, startedAt}`), this process's holder file per lock
 * (`<lock>.holders/<token>`, linked as the lock), reading a lock or holder file without
 * following links or blocking on a FIFO, and sweeping holder files of dead processes.
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { DIR_MODE, FILE_MODE, errnoOf, lstatOrUndefined, readRegular } from "../fs-util.js";

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

export const HOST = hostname();
export const PID_NS = orUndefined(() => readlinkSync("/proc/self/ns/pid"));
export const BOOT = orUndefined(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());

function orUndefined(read: () => string): string | undefined {
	try {
		return read();
	} catch {
		return undefined;
	}
}

/** Same host and pid namespace: the holder's pid can be checked here. A record without `ns` counts as ours. */
export function local(holder: LockHolder): boolean {
	return holder.host === HOST && (holder.ns === undefined || holder.ns === PID_NS);
}

let counter = 0;
/** Random once per process, a counter per lock: unique tokens without a crypto call on the hot path. */
export const TOKEN_PREFIX = `${process.pid}-${randomBytes(6).toString("hex")}`;
function newToken(): string {
	counter++;
	return `${TOKEN_PREFIX}-${counter}`;
}

export function holderRecord(token = newToken()): LockHolder {
	return {
		pid: process.pid,
		host: HOST,
		startedAt: Date.now(),
		token,
		...(PID_NS === undefined ? {} : { ns: PID_NS }),
		...(BOOT === undefined ? {} : { boot: BOOT }),
	};
}

/** A lock of this very process (not of an earlier process that had the same pid). */
export function mine(holder: ReadHolder): boolean {
	return typeof holder === "object" && local(holder) && holder.pid === process.pid && holder.token.startsWith(`${TOKEN_PREFIX}-`);
}

/** A lock or holder file as read: the record, nothing there, or something State Flow cannot have written completely. */
export type ReadHolder = LockHolder | "missing" | "unreadable";

/** Read a lock or holder file; never follows a link, never blocks on a FIFO (both are "unreadable"). */
export function readHolder(path: string): ReadHolder {
	let text: string;
	try {
		const bytes = readRegular(path);
		if (bytes === undefined) return "missing";
		text = bytes.toString("utf8");
	} catch {
		return "unreadable";
	}
	try {
		const v = JSON.parse(text) as Partial<LockHolder>;
		if (typeof v.pid === "number" && typeof v.host === "string" && typeof v.token === "string" && typeof v.startedAt === "number") {
			return v as LockHolder;
		}
	} catch {
		// An empty or half-written lock file: judged by age.
	}
	return "unreadable";
}

/** Create `path` exclusively (never through a link) and write the holder record; false when something is there. */
export function createHolderFile(path: string, holder: LockHolder): { ino: number; dev: number } | false {
	let fd: number;
	try {
		fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE);
	} catch (e) {
		if (errnoOf(e) === "EEXIST") return false;
		throw e;
	}
	try {
		writeSync(fd, JSON.stringify(holder));
		const st = fstatSync(fd);
		return { ino: st.ino, dev: st.dev };
	} finally {
		closeSync(fd);
	}
}

/** This process's holder file for one lock path; `held` while it is linked as the lock. */
export interface Holder {
	file: string;
	ino: number;
	dev: number;
	token: string;
	held: boolean;
}

export function holdersDir(lockPath: string): string {
	return `${lockPath}.holders`;
}

/**
 * Make the holders folder (not recursive: a store folder moved aside is not re-created).
 * False when it cannot exist here, or something else is in its place (a link is never
 * followed): the lock then uses the O_EXCL path, and `state-flow doctor` reports the oddity.
 */
export function ensureHoldersDir(lockPath: string): boolean {
	const dir = holdersDir(lockPath);
	try {
		mkdirSync(dir, { mode: DIR_MODE });
	} catch (e) {
		if (errnoOf(e) !== "EEXIST") return false;
	}
	return lstatOrUndefined(dir)?.isDirectory() === true;
}

/** Tokens are `<pid>-<hex>-<n>`; anything else is not a holder file name we made. */
export function holderFileOf(lockPath: string, token: string): string | undefined {
	return /^[\w-]+$/.test(token) ? `${holdersDir(lockPath)}/${token}` : undefined;
}

export function unlinkQuiet(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// Gone already, or not ours to remove: it is only garbage.
	}
}

/**
 * Remove the holder files that `dead` judges unusable. Only regular files and links are
 * removed (unlink removes a link itself, never its target); folders are left alone.
 */
export function sweep(dir: string, dead: (file: string, holder: LockHolder | "unreadable") => boolean): void {
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return;
	}
	for (const name of names) {
		const file = `${dir}/${name}`;
		const st = lstatOrUndefined(file);
		if (st === undefined || st.isDirectory()) continue;
		const h = readHolder(file);
		if (h === "missing") continue;
		if (dead(file, h)) unlinkQuiet(file);
	}
}
