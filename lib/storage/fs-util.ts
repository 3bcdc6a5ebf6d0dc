/**
 * Small synchronous file-system steps shared by the stores and the journal: atomic
 * replace (temp + fsync + rename + folder fsync), folder fsync, private folder creation,
 * and the mapping of unexpected OS errors to StateError "io".
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import { fail } from "../core/errors.js";
import { fault } from "./fault.js";
import type { FaultPoint } from "./fault.js";

/** Mode of every file State Flow creates (private to the user). */
export const FILE_MODE = 0o600;
/** Mode of every folder State Flow creates. */
export const DIR_MODE = 0o700;

export function errnoOf(e: unknown): string | undefined {
	return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Rethrow an OS error as StateError "io" naming the file and what to do. */
export function ioFail(file: string, action: string, e: unknown): never {
	fail("io", `Cannot ${action} \`${file}\` (${errnoOf(e) ?? String(e)}). Check permissions and free disk space; nothing was changed.`, [], e);
}

/** fsync a folder so that a create/rename/unlink inside it is durable. */
export function fsyncDir(dir: string): void {
	const fd = openSync(dir, "r");
	try {
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
}

/** Create `dir` (and missing parents) with private mode; no-op when it exists. */
export function ensureDir(dir: string): void {
	try {
		mkdirSync(dir, { recursive: true, mode: DIR_MODE });
	} catch (e) {
		ioFail(dir, "create the folder", e);
	}
}

/** Write all of `buf` at the end of `fd` (O_APPEND); loops on a short write. */
export function writeAll(fd: number, buf: Buffer): void {
	let off = 0;
	while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/**
 * Replace `path` atomically: readers see the old or the new content, never a mix, also
 * across a crash. `midFault` names the crash point between the durable temp and the rename.
 */
export function atomicReplace(path: string, text: string, midFault?: FaultPoint): void {
	const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
	let fd: number | undefined;
	try {
		fd = openSync(tmp, "wx", FILE_MODE);
		writeAll(fd, Buffer.from(text));
		fsyncSync(fd);
		closeSync(fd);
		fd = undefined;
		if (midFault) fault(midFault);
		renameSync(tmp, path);
		fsyncDir(dirname(path));
	} catch (e) {
		if (fd !== undefined) closeSync(fd);
		try {
			unlinkSync(tmp);
		} catch {
			// Already renamed or never created.
		}
		ioFail(path, "write", e);
	}
}
