/**
 * The one reader of git's small files: `.git` files, `HEAD`, `commondir`, `gitdir`, loose refs,
 * `packed-refs`, reflogs, `config`, the worktree entries, State Flow's repository token. A
 * repository is untrusted input (an archive may ship any `.git/`), so a file is read only when
 * it is a regular file of this user's within its bound: opened without following a link in its
 * last component and without blocking on a FIFO, then judged by `fstat` of the opened handle,
 * so nothing can be swapped between the check and the read. The sync form (project resolution,
 * before each prompt) and the async form (the branch watch) share the rule (`gitFileProblem`). Folders on
 * the way are the caller's to check (`ownFolder`): the project rule checks each one it follows.
 */
import { closeSync, fstatSync, lstatSync, openSync } from "node:fs";
import type { Stats } from "node:fs";
import { open } from "node:fs/promises";
import { SAFE_READ, errnoOf, kindOf, ownedByMe, readFrom } from "../fs-util.js";

/** Largest file of each kind read; a larger one is not git's and is ignored. */
export const GIT_FILE_MAX = {
	/** A `.git` file, `HEAD`, `commondir`, `gitdir`, a loose ref. */
	small: 4096,
	/** A `config` (a repository of many branches and remotes holds a few hundred KB). */
	config: 1024 * 1024,
	/** `packed-refs` (one line per ref: 100k refs are ~8 MB). */
	packedRefs: 8 * 1024 * 1024,
	/** One branch's reflog, read to tell whether it ever moved. */
	reflog: 64 * 1024,
} as const;

/** What reading one of git's files gave: its text, nothing there, or why it is ignored (in words, for doctor). */
export type GitFile = { text: string } | { absent: true } | { problem: string };

/**
 * Why a file git keeps, opened with `SAFE_READ`, is not read (`fstat` of the handle), or
 * undefined when it is: the rule every reader of git's files applies, the object store's too.
 */
export function gitFileProblem(st: Stats, max = Number.POSITIVE_INFINITY): string | undefined {
	if (!st.isFile()) return `it is ${kindOf(st)}`;
	if (!ownedByMe(st)) return "it belongs to another user";
	if (st.size > max) return `it is larger than ${max} bytes`;
	return undefined;
}

/** Why a folder git keeps (`lstat`) is not used: a link, not a folder, another user's; undefined when it is. */
export function gitFolderProblem(st: Stats): string | undefined {
	if (!st.isDirectory()) return `it is ${kindOf(st)}`;
	if (!ownedByMe(st)) return "it belongs to another user";
	return undefined;
}

/** What a failed `SAFE_READ` open means: nothing there, or a link (O_NOFOLLOW), a socket, or an error, in words. */
export function refused(e: unknown): { absent: true } | { problem: string } {
	const code = errnoOf(e);
	if (code === "ENOENT" || code === "ENOTDIR") return { absent: true };
	// Linux says ELOOP for a link opened with O_NOFOLLOW, FreeBSD EMLINK.
	if (code === "ELOOP" || code === "EMLINK") return { problem: "it is a symbolic link" };
	if (code === "ENXIO" || code === "EOPNOTSUPP") return { problem: "it is a socket or a device" };
	return { problem: `it cannot be read (${code ?? String(e)})` };
}

/** A git file of at most `max` bytes (see the header). Never throws. */
export function gitFile(path: string, max: number = GIT_FILE_MAX.small): GitFile {
	let fd: number;
	try {
		fd = openSync(path, SAFE_READ);
	} catch (e) {
		return refused(e);
	}
	try {
		const st = fstatSync(fd);
		const problem = gitFileProblem(st, max);
		return problem !== undefined ? { problem } : { text: readFrom(fd, 0, st.size).toString("utf8") };
	} catch (e) {
		return refused(e);
	} finally {
		closeSync(fd);
	}
}

/** The same as `gitFile`, off the event loop's thread for the reads (the branch watch). Never throws. */
export async function gitFileAsync(path: string, max: number = GIT_FILE_MAX.small): Promise<GitFile> {
	let fh: Awaited<ReturnType<typeof open>>;
	try {
		fh = await open(path, SAFE_READ);
	} catch (e) {
		return refused(e);
	}
	try {
		const st = await fh.stat();
		const problem = gitFileProblem(st, max);
		if (problem !== undefined) return { problem };
		const buf = Buffer.allocUnsafe(st.size);
		let got = 0;
		while (got < st.size) {
			const { bytesRead } = await fh.read(buf, got, st.size - got, got);
			if (bytesRead === 0) break;
			got += bytesRead;
		}
		return { text: buf.subarray(0, got).toString("utf8") };
	} catch (e) {
		return refused(e);
	} finally {
		await fh.close();
	}
}

/** A git file's text, or undefined (absent or ignored). */
export function readGitFile(path: string, max?: number): string | undefined {
	const f = gitFile(path, max);
	return "text" in f ? f.text : undefined;
}

/** A git file's text, or undefined (absent or ignored), asynchronously. */
export async function readGitFileAsync(path: string, max?: number): Promise<string | undefined> {
	const f = await gitFileAsync(path, max);
	return "text" in f ? f.text : undefined;
}

/** A folder git keeps (a git dir, a worktree entry): a real folder, not a link, of this user's; its stats, or undefined. */
export function ownFolder(path: string): Stats | undefined {
	try {
		const st = lstatSync(path, { throwIfNoEntry: false });
		return st !== undefined && gitFolderProblem(st) === undefined ? st : undefined;
	} catch {
		return undefined;
	}
}

/**
 * The path a one-line git file names (`commondir`, a worktree entry's `gitdir`, a `.git` file's
 * text after `gitdir: `), as git reads it: trailing white space and line ends dropped; undefined
 * when empty or when it holds a line break or NUL of its own (git names no such path).
 */
export function pathLine(text: string): string | undefined {
	const path = text.replace(/\s+$/, "");
	return path === "" || /[\n\r\0]/.test(path) ? undefined : path;
}

/** The git dir a `.git` file's text names: it must start with `gitdir: ` (git's `read_gitfile`). */
export function gitdirOf(dotGitText: string): string | undefined {
	return dotGitText.startsWith("gitdir: ") ? pathLine(dotGitText.slice(8)) : undefined;
}
