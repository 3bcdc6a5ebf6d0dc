/**
 * Doctor's repairs of a file store, each one a user asked for or a crash left: a dead writer's
 * lock cleared, torn bytes at the log's end reported (cut only with `--cut-torn`), odd files where
 * the lock lives named, a store moved aside or accepted against this machine's seen marks.
 */
import { closeSync, constants, fstatSync, readSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import { messageOf } from "../../core/errors.js";
import { isJsonText } from "../../core/json.js";
import type { FileOwnerStore } from "../../storage/file/owner-store.js";
import { fsyncDir, kindOf, lstatOrUndefined, openFile } from "../../storage/fs-util.js";
import { acquireLock, crashEvidence, crashMarkerPath, readLockHolder } from "../../storage/file/lock.js";
import { holdersDir } from "../../storage/file/lock-holder.js";
import type { SeenMarks } from "../../storage/file/seen.js";
import { present, type Report } from "./report.js";

/** Bytes after the last newline of a log that are not one complete JSON value (0 when whole; -1: over 1 MiB). */
function tornBytes(logPath: string): number {
	let fd: number | undefined;
	try {
		fd = openFile(logPath, constants.O_RDONLY);
	} catch {
		return 0; // Not a regular file: reported by the store's own load.
	}
	if (fd === undefined) return 0;
	try {
		const size = fstatSync(fd).size;
		const chunk = Math.min(size, 1 << 20);
		const buf = Buffer.alloc(chunk);
		readSync(fd, buf, 0, chunk, size - chunk);
		const nl = buf.lastIndexOf(10);
		const torn = nl < 0 ? (chunk === size ? size : -1) : chunk - nl - 1;
		if (torn > 0 && isJsonText(buf.toString("utf8", chunk - torn))) return 0; // A record whose line end was dropped: kept.
		return torn;
	} finally {
		closeSync(fd);
	}
}

/** Lines for each lock path that holds something State Flow never makes there, with how to clear it. */
function oddLockFiles(lockPath: string): string[] {
	const out: string[] = [];
	const odd = readLockHolder(lockPath)?.odd;
	if (odd !== undefined) out.push(`${odd}.`);
	const expected: Array<[string, "a folder" | "a regular file"]> = [
		[holdersDir(lockPath), "a folder"],
		[`${lockPath}.break`, "a regular file"],
		[crashMarkerPath(lockPath), "a regular file"],
	];
	for (const [path, kind] of expected) {
		const st = lstatOrUndefined(path);
		if (st === undefined || (kind === "a folder" ? st.isDirectory() : st.isFile())) continue;
		const clear = st.isDirectory() ? `rm -r '${path}'` : `rm '${path}'`;
		out.push(
			`\`${path}\` is ${kindOf(st)} where State Flow keeps ${kind}; it is never followed or changed, but it may have come with the repository: remove it (\`${clear}\`) if you did not make it.`,
		);
	}
	return out;
}

/** `--move-aside`: rename the store folder to `<root>.damaged-<time>`; refused while a live writer holds its lock. */
export function moveAside(store: FileOwnerStore, dryRun: boolean): string[] {
	const o = store.owner;
	if (!present(store.root)) return [`${o}: no store at ${store.root}; nothing to move aside.`];
	const holder = readLockHolder(store.lockPath);
	if (holder !== undefined && !holder.stale && holder.odd === undefined) {
		return [`${o}: not moved aside: ${store.lockPath} is held by ${holder.who}, which is writing; retry when it is done.`];
	}
	const dest = `${store.root}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
	if (dryRun) return [`${o}: would move ${store.root} to ${dest} (kept, not deleted); the owner would start afresh.`];
	renameSync(store.root, dest);
	fsyncDir(dirname(store.root));
	return [`${o}: moved ${store.root} to ${dest} (kept, not deleted); the owner starts afresh at its next write.`];
}

/**
 * `--accept-store`: forget this machine's mark of what its writers committed to the store, so
 * the store is used as it is now. Nothing in the store changes; its next write marks it again.
 */
export function acceptStore(store: FileOwnerStore, seen: SeenMarks, dryRun: boolean): string[] {
	const o = store.owner;
	const mark = seen.read(store.root);
	if (mark === undefined) return [`${o}: this machine has no record of transitions committed to ${store.root}; nothing to accept.`];
	const what = `that a writer on this machine committed seq ${mark.seq} to ${store.root}`;
	if (dryRun) return [`${o}: would forget ${what}; the store would be used as it is.`];
	if (!seen.clear(store.root)) return [`${o}: could not forget ${what}: ${seen.fileOf(store.root)} cannot be removed (a folder there?); remove it yourself.`];
	return [`${o}: forgot ${what}; the store is used as it is now (transitions it lacks stay lost).`];
}

/**
 * One file store's crash leftovers: an unsafe root or odd lock files (reported, untouched), a
 * lock held by a dead writer (broken), a torn last record (cut when a crash explains it or
 * `cutTorn` asks), then a catch-up under the lock.
 */
export async function repairStore(report: Report, store: FileOwnerStore, cutTorn: boolean, dryRun: boolean): Promise<void> {
	const o = store.owner;
	try {
		store.checkRoot();
	} catch (e) {
		report.healthy = false;
		report.lines.push(`${o}: UNSAFE: ${messageOf(e)}`);
		return;
	}
	if (!present(store.root)) {
		report.lines.push(`${o}: no store at ${store.root} (nothing written yet).`);
		return;
	}
	const odd = oddLockFiles(store.lockPath);
	if (odd.length > 0) {
		report.healthy = false;
		report.lines.push(...odd.map((line) => `${o}: ${line}`));
		return;
	}
	const holder = readLockHolder(store.lockPath);
	if (holder !== undefined) {
		report.lines.push(
			`${o}: ${store.lockPath} is held by ${holder.who}${holder.stale ? `, which no longer runs (a crash); ${dryRun ? "would break it" : "breaking it"}` : "; waiting for it"}.`,
		);
	}
	const torn = tornBytes(store.logPath);
	const logTime = lstatOrUndefined(store.logPath)?.mtimeMs ?? 0;
	const explained = holder !== undefined || crashEvidence(store.lockPath, logTime);
	const cutting = torn !== 0 && (explained || cutTorn);
	if (torn !== 0) {
		const size = torn < 0 ? "over 1 MiB" : `${torn} bytes`;
		if (explained)
			report.lines.push(
				`${o}: ${store.logPath} ends in a record cut short by a crash (${size}, its writer died); it was never committed; ${dryRun ? "would cut it off" : "cutting it off"}.`,
			);
		else if (cutTorn)
			report.lines.push(
				`${o}: ${store.logPath} ends in ${size} that are not a complete record; cutting them as asked (--cut-torn); every complete record stays.`,
			);
		else {
			report.healthy = false;
			report.lines.push(
				`${o}: DAMAGED: ${store.logPath} ends in ${size} that are not a complete record, and no crashed writer left them: the file was cut short (a transition may be lost) or the machine lost power during a write. Nothing was changed. Restore the file from a backup, or run \`state-flow doctor --cut-torn ${o}\` to cut those bytes (complete records stay), or \`state-flow doctor --move-aside ${o}\` to keep the store aside and start afresh.`,
			);
		}
	}
	if (!dryRun && (cutting || holder !== undefined)) {
		// acquireLock breaks a dead holder's lock and waits (bounded) for a live one.
		try {
			const lock = await acquireLock(store.lockPath, 10_000);
			try {
				store.catchUpLocked(lock.recoveredCrash || cutting);
			} finally {
				lock.release();
			}
		} catch (e) {
			report.healthy = false;
			report.lines.push(`${o}: ${messageOf(e)}`);
		}
	}
}
