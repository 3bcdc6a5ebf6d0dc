/**
 * The identity of a repository without an `origin` remote: a random token (`local:<uuid>`) that
 * State Flow writes into the git common dir when the user links a checkout of it. The common dir
 * moves with a moved or renamed checkout and is shared by every worktree; a clone never copies
 * it. The token is not a secret and grants nothing by itself: only the user's own config maps a
 * token to a project (`repoLinks`), so a token that came with a repository's content (an archive
 * that ships `.git/`) links nothing unless the user linked that very repository on this machine.
 * Read as untrusted input: a regular file owned by this user, small, in the exact format; a link,
 * a folder, another user's file or other text is ignored (and named by `state-flow doctor`).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { createOnce } from "../fs-util.js";
import { gitFile, ownFolder } from "./git-files.js";
import type { Project } from "./project.js";

/** The token's file name in the git common dir (git ignores files it does not know there). */
export const TOKEN_FILE = "state-flow-repository";

/** A token as State Flow writes it (and the only form a `repoLinks` key of one may take). */
const TOKEN = /^local:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Largest token file read: the token and a newline, with room to spare; larger is not ours. */
const MAX_TOKEN_FILE = 128;

/** True for a repository token as State Flow writes it. */
export function isLocalToken(s: string): boolean {
	return TOKEN.test(s);
}

/** The token file of a project's repository, when State Flow follows its git common dir (`projectOf`). */
export function tokenFileOf(p: Project): string | undefined {
	return p.git === undefined ? undefined : join(p.git.commonDir, TOKEN_FILE);
}

/** What the token file holds: the token, nothing (`{}`), or why it is ignored. Never throws, never follows a link (the one safe reader). */
export function readToken(file: string): { token?: string; problem?: string } {
	const read = gitFile(file, MAX_TOKEN_FILE);
	if ("absent" in read) return {};
	if ("problem" in read) return { problem: read.problem };
	const token = read.text.endsWith("\n") ? read.text.slice(0, -1) : read.text;
	return isLocalToken(token) ? { token } : { problem: "it does not hold a State Flow repository token (`local:<uuid>`)" };
}

/** The token of a project's repository, or undefined (none, or one that is ignored). */
export function tokenOf(p: Project): string | undefined {
	const file = tokenFileOf(p);
	return file === undefined ? undefined : readToken(file).token;
}

/**
 * The token of a project's repository, made now if it has none (at link time only: the user's
 * consent is what writes it). Created once, atomically, mode 0600, never over anything (a link
 * or any other file there is left alone), and only in a common dir that is a real folder of
 * this user's. A token that another link wrote first is the one used. Returns the token, or
 * why the repository gets none (its checkouts are then linked by path only).
 */
export function ensureToken(p: Project): { token: string } | { problem: string } {
	const file = tokenFileOf(p);
	if (file === undefined || p.git === undefined) return { problem: "State Flow does not follow this checkout's git dir" };
	if (ownFolder(p.git.commonDir) === undefined) return { problem: `its git common dir ${p.git.commonDir} is not a folder of yours` };
	const found = readToken(file);
	if (found.token !== undefined) return { token: found.token };
	if (found.problem !== undefined) return { problem: `${file} is ignored: ${found.problem}; remove it to let State Flow write its own` };
	const token = `local:${randomUUID()}`;
	try {
		if (createOnce(file, Buffer.from(`${token}\n`))) return { token };
	} catch (e) {
		return { problem: `${file} could not be written (${e instanceof Error ? e.message : String(e)})` };
	}
	// Another link wrote one first: use that one, if it is a token.
	const raced = readToken(file);
	return raced.token !== undefined ? { token: raced.token } : { problem: `${file} is ignored: ${raced.problem ?? "it vanished"}` };
}

/** Why the token file of a project's repository is ignored, in words (`state-flow doctor`); undefined when it is fine or absent. */
export function tokenProblemOf(p: Project): string | undefined {
	const file = tokenFileOf(p);
	const problem = file === undefined ? undefined : readToken(file).problem;
	return problem === undefined
		? undefined
		: `the repository token ${file} is ignored (${problem}), so links by it do not apply; remove it if you did not make it, and \`state-flow link\` writes a new one`;
}
