/**
 * The one place where State Flow touches the file system at the level of single system
 * calls: file modes, errno mapping, opening only regular files (never through a symbolic
 * link, never blocking on a FIFO), containment of a folder in its owner's root, folder
 * creation, the one atomic-write primitive every writer uses and its create-only twin
 * (`createOnce`, for files that must never replace anything). A repository is untrusted
 * input (docs/security.md): anything found where State Flow keeps a file may be a link, a
 * folder, a FIFO or a device, and is refused with a message that says what it is.
 */
import {
	closeSync,
	constants,
	fstatSync,
	fsyncSync,
	linkSync,
	lstatSync,
	mkdirSync,
	openSync,
	readSync,
	realpathSync,
	renameSync,
	statSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import type { Stats } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, resolve, sep } from "node:path";
import { fail, isStateError } from "../core/errors.js";
import { fault } from "./fault.js";
import type { FaultPoint } from "./fault.js";

/** Mode of every file State Flow creates (private to the user). */
export const FILE_MODE = 0o600;
/** Mode of every folder State Flow creates. */
export const DIR_MODE = 0o700;
/** Mode of files meant to be read by other tools (the CWD `.gitignore`, compiled Skills). */
export const SHARED_FILE_MODE = 0o644;
/** Mode of folders that belong to pi or the project (`.pi`, Skill folders). */
export const SHARED_DIR_MODE = 0o755;

/** Never follow a link in the last path component; never block opening a FIFO. */
const SAFE = constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Open for reading with `SAFE`: the flags of every read of a file a repository may have planted. */
export const SAFE_READ = constants.O_RDONLY | SAFE;

export function errnoOf(e: unknown): string | undefined {
	return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Rethrow an OS error as StateError "io" naming the file and what to do. ENOTDIR means
 * something that is not a folder sits where a folder on the way belongs: that is named.
 */
export function ioFail(file: string, action: string, e: unknown): never {
	if (errnoOf(e) === "ENOTDIR") {
		const blocker = nonFolderAncestor(file);
		if (blocker !== undefined) unsafePath(blocker.path, blocker.kind, "a folder");
	}
	fail("io", `Cannot ${action} \`${file}\` (${errnoOf(e) ?? String(e)}). Check permissions and free disk space; nothing was changed.`, [], e);
}

/** The first path on the way to `path` that is not a folder (nor a link to one). */
function nonFolderAncestor(path: string): { path: string; kind: string } | undefined {
	const parts: string[] = [];
	for (let p = dirname(resolve(path)); dirname(p) !== p; p = dirname(p)) parts.unshift(p);
	for (const p of parts) {
		let st: Stats | undefined;
		try {
			st = lstatSync(p);
		} catch {
			return undefined;
		}
		if (st.isDirectory()) continue;
		const followed = st.isSymbolicLink() ? statSync(p, { throwIfNoEntry: false }) : undefined;
		if (followed?.isDirectory()) continue;
		return { path: p, kind: folderKind(st, followed) };
	}
	return undefined;
}

/** In words, what sits where a folder belongs (a link is described by where it leads). */
function folderKind(st: Stats, followed: Stats | undefined): string {
	if (!st.isSymbolicLink()) return kindOf(st);
	return followed === undefined ? "a symbolic link that leads nowhere" : `a symbolic link to ${kindOf(followed)}`;
}

/** What a path holds, in words (for messages). */
export function kindOf(st: Stats | undefined): string {
	if (st === undefined) return "nothing";
	if (st.isSymbolicLink()) return "a symbolic link";
	if (st.isDirectory()) return "a folder";
	if (st.isFile()) return "a regular file";
	if (st.isFIFO()) return "a FIFO (named pipe)";
	if (st.isSocket()) return "a socket";
	return "a device";
}

/**
 * Whether a file or folder belongs to the user running State Flow: git's own `safe.directory`
 * rule, the one place it is decided (a repository, a link target, a git file of another user's
 * is never followed or read). True where uids do not exist.
 */
export function ownedByMe(st: { uid: number }): boolean {
	const uid = process.getuid?.();
	return uid === undefined || st.uid === uid;
}

export function lstatOrUndefined(path: string): Stats | undefined {
	try {
		// No error object for the common "not there" (building one costs more than the call).
		return lstatSync(path, { throwIfNoEntry: false });
	} catch (e) {
		if (errnoOf(e) === "ENOENT" || errnoOf(e) === "ENOTDIR") return undefined;
		ioFail(path, "inspect", e);
	}
}

/** Refuse a path that holds something State Flow did not make there. Never follows or changes it. */
export function unsafePath(path: string, found: string, expected: "a regular file" | "a folder"): never {
	fail(
		"corrupt",
		`\`${path}\` is ${found} where State Flow keeps ${expected}. State Flow never reads, writes or deletes through it and left it unchanged; nothing was written. It may have come with the repository: remove it if you did not make it, then retry (\`state-flow doctor\` shows what is there).`,
	);
}

/**
 * Open a regular file without following a link and without blocking on a FIFO; anything
 * else at `path` is refused with `unsafePath`. Returns undefined when nothing is there
 * (only without O_CREAT).
 */
export function openFile(path: string, flags: number, mode = FILE_MODE): number | undefined {
	let fd: number;
	try {
		fd = openSync(path, flags | SAFE, mode);
	} catch (e) {
		const code = errnoOf(e);
		if (code === "ENOENT" && (flags & constants.O_CREAT) === 0) return undefined;
		if (code === "ELOOP" || code === "EISDIR" || code === "ENXIO" || code === "EEXIST" || code === "ENOTDIR") {
			const st = lstatOrUndefined(path);
			if (st !== undefined && !st.isFile()) unsafePath(path, kindOf(st), "a regular file");
			if (code === "EEXIST") throw e;
		}
		ioFail(path, (flags & 3) === constants.O_RDONLY ? "read" : "open for writing", e);
	}
	const st = fstatSync(fd);
	if (!st.isFile()) {
		closeSync(fd);
		unsafePath(path, kindOf(st), "a regular file");
	}
	return fd;
}

/** Read all bytes of `fd` from `start` (regular file: up to its size now). */
export function readFrom(fd: number, start: number, size = fstatSync(fd).size): Buffer {
	const len = Math.max(0, size - start);
	const buf = Buffer.allocUnsafe(len);
	let got = 0;
	while (got < len) {
		const n = readSync(fd, buf, got, len - got, start + got);
		if (n === 0) break;
		got += n;
	}
	return buf.subarray(0, got);
}

/** The text of a regular file, or undefined when there is none; links, folders and FIFOs are refused. */
export function readRegular(path: string): Buffer | undefined {
	const fd = openFile(path, constants.O_RDONLY);
	if (fd === undefined) return undefined;
	try {
		return readFrom(fd, 0);
	} catch (e) {
		ioFail(path, "read", e);
	} finally {
		closeSync(fd);
	}
}

/** fsync a folder so that a create/rename/unlink inside it is durable. */
export function fsyncDir(dir: string): void {
	const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
	try {
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
}

/** True when `path` is `root` or below it (both absolute, already resolved). */
export function inside(path: string, root: string): boolean {
	return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest. */
export function realOrSelf(path: string): string {
	let p = resolve(path);
	const rest: string[] = [];
	for (;;) {
		try {
			return resolve(realpathSync.native(p), ...rest);
		} catch {
			const parent = dirname(p);
			if (parent === p) return resolve(path);
			rest.unshift(basename(p));
			p = parent;
		}
	}
}

/**
 * Refuse `dir` when its real path (or its nearest existing ancestor's) lies outside `base`
 * (an already resolved real path): a link in `.pi/` or in the agent directory would
 * otherwise put a store somewhere else without a word.
 */
export function checkContained(dir: string, base: string, what: string): void {
	const real = realOrSelf(dir);
	if (!inside(real, base)) {
		fail(
			"corrupt",
			`${what} \`${dir}\` leads to \`${real}\`, outside \`${base}\` (a symbolic link on the way). State Flow only keeps a store inside its owner's folder, so it refused this owner and left everything unchanged. Remove the link (it may have come with the repository), then retry.`,
		);
	}
}

/**
 * Create `dir` and its missing parents, refusing anything
 * on the way that is not a folder (or a link to one) inside `base`. `mode` is the mode of
 * `dir` itself; parents get `parentMode`. Returns the topmost folder it created.
 */
export function ensureDirIn(dir: string, base: string, what: string, mode = DIR_MODE, parentMode = DIR_MODE): string | undefined {
	checkContained(dir, base, what);
	const missing: string[] = [];
	let p = resolve(dir);
	for (;;) {
		const st = lstatOrUndefined(p);
		if (st !== undefined) {
			// A link to a folder is fine here: where it leads is judged by `checkContained`.
			const followed = st.isSymbolicLink() ? statSync(p, { throwIfNoEntry: false }) : undefined;
			if (!st.isDirectory() && !followed?.isDirectory()) unsafePath(p, folderKind(st, followed), "a folder");
			break;
		}
		missing.unshift(p);
		const parent = dirname(p);
		if (parent === p) break;
		p = parent;
	}
	for (const m of missing) {
		try {
			mkdirSync(m, { mode: m === resolve(dir) ? mode : parentMode });
		} catch (e) {
			if (errnoOf(e) !== "EEXIST") ioFail(m, "create the folder", e);
		}
		const st = lstatOrUndefined(m);
		if (st === undefined || !st.isDirectory()) unsafePath(m, kindOf(st), "a folder");
	}
	checkContained(dir, base, what);
	return missing[0];
}

/** Refuse `dir` unless it is a real folder (or absent: returns false). */
export function isRealDir(dir: string): boolean {
	const st = lstatOrUndefined(dir);
	if (st === undefined) return false;
	if (!st.isDirectory()) unsafePath(dir, kindOf(st), "a folder");
	return true;
}

/** Write all of `buf` at the end of `fd` (O_APPEND); loops on a short write. */
export function writeAll(fd: number, buf: Buffer): void {
	let off = 0;
	while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** Remove a file State Flow made; a missing one is fine. Never follows a link (unlink removes the link itself). */
export function removeFile(path: string): void {
	const st = lstatOrUndefined(path);
	if (st === undefined) return;
	if (st.isDirectory()) unsafePath(path, kindOf(st), "a regular file");
	try {
		unlinkSync(path);
	} catch (e) {
		if (errnoOf(e) !== "ENOENT") ioFail(path, "remove", e);
	}
}

export interface AtomicWriteOptions {
	mode?: number;
	/** Crash point between the durable temp file and the rename (crash tests). */
	midFault?: FaultPoint;
}

/**
 * THE atomic write: readers see the old or the new content, never a mix, also across a
 * crash. The temp file is created with O_EXCL|O_NOFOLLOW next to `path` (so nothing planted
 * under its name is followed), written and fsynced, and renamed over `path` only when that
 * is a regular file or nothing (a link, folder or FIFO there is refused, never replaced or
 * followed); then the folder is fsynced. The temp file is removed on any failure.
 */
export function atomicWrite(path: string, data: string | Buffer, opts: AtomicWriteOptions = {}): void {
	const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
	let fd: number | undefined;
	let created = false;
	try {
		fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, opts.mode ?? FILE_MODE);
		created = true;
		writeAll(fd, typeof data === "string" ? Buffer.from(data) : data);
		fsyncSync(fd);
		closeSync(fd);
		fd = undefined;
		if (opts.midFault) fault(opts.midFault);
		const st = lstatOrUndefined(path);
		if (st !== undefined && !st.isFile()) unsafePath(path, kindOf(st), "a regular file");
		renameSync(tmp, path);
		created = false;
		fsyncDir(dirname(path));
	} catch (e) {
		if (fd !== undefined) closeSync(fd);
		if (created) {
			try {
				unlinkSync(tmp);
			} catch {
				// Already gone.
			}
		}
		if (isStateError(e)) throw e;
		ioFail(path, "write", e);
	}
}

/**
 * Create `path` with `data` only where nothing is; false when anything is there. Like
 * `atomicWrite` the bytes go to an O_EXCL|O_NOFOLLOW temp file next to it and are fsynced,
 * but they are then hard-linked into place, which fails on any entry at `path` — a file, a
 * link, even a dangling one — so nothing is ever replaced or followed, also in a race with
 * another writer. A file system without hard links gets `rename` after one more `lstat`.
 */
export function createOnce(path: string, data: Buffer, mode = FILE_MODE): boolean {
	const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
	try {
		const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
		try {
			writeAll(fd, data);
			fsyncSync(fd);
		} finally {
			closeSync(fd);
		}
		if (!linkOnce(tmp, path)) return false;
		fsyncDir(dirname(path));
		return true;
	} catch (e) {
		if (isStateError(e)) throw e;
		return ioFail(path, "write", e);
	} finally {
		try {
			unlinkSync(tmp);
		} catch {
			// Renamed into place, or never made.
		}
	}
}

/** Hard-link `tmp` to `path` unless something is there (see `createOnce`). */
function linkOnce(tmp: string, path: string): boolean {
	try {
		linkSync(tmp, path);
		return true;
	} catch (e) {
		const code = errnoOf(e);
		if (code === "EEXIST") return false;
		if ((code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP") && lstatOrUndefined(path) === undefined) {
			renameSync(tmp, path);
			return true;
		}
		throw e;
	}
}
