/**
 * A repository's identity that survives a move, a rename, a second clone and a new worktree: its
 * `origin` remote URL, normalised (`github.com/acme/api`), read from the git common dir's `config`
 * (which a clone writes from the URL the user typed; it is never cloned itself). Links are keyed
 * by it once the user has linked one checkout (`repoLinks`, docs/shared-memory.md): a repository
 * alone never links. Credentials in a URL are dropped, never kept or shown. A repository without
 * an `origin` is given one when the user links a checkout of it: a random token in its git common
 * dir (`repo-token.ts`), and its root's path is recorded too, so that a clone of it (whose
 * `origin` is that path) follows the link.
 */
import { join } from "node:path";
import { inline, shellWord } from "../../core/printable.js";
import { configValues } from "./git-config.js";
import { GIT_FILE_MAX, readGitFile } from "./git-files.js";
import { type Project, projectOf } from "./project.js";
import { TOKEN_FILE, ensureToken, isLocalToken, tokenOf } from "./repo-token.js";

/** Longest identity kept (a URL longer than this is not a remote's). */
export const MAX_REPOSITORY = 1000;

/** The `url` of `[remote "origin"]` in a git config's text (the first, as fetch takes it), or undefined. */
export function originUrl(configText: string): string | undefined {
	const url = configValues(configText, "remote", "url", "origin")[0];
	return typeof url !== "string" || url.trim() === "" ? undefined : url.trim();
}

/**
 * A remote URL as one identity: host (lower case, no user, password or port) and path (no
 * trailing `/` or `.git`), so `git@github.com:acme/api.git`, `https://tok@github.com/acme/api`
 * and `ssh://git@github.com:22/acme/api/` are one repository; a local path stays a path.
 * Undefined when the URL has a control character or is too long.
 */
export function normalRemote(url: string): string | undefined {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: a control character is the refusal.
	if (url.length > MAX_REPOSITORY || /[\u0000-\u001f\u007f]/.test(url)) return undefined;
	const tidy = (path: string) =>
		path
			.replace(/\/+$/, "")
			.replace(/\.git$/, "")
			.replace(/\/+$/, "");
	const withScheme = /^([a-z][a-z0-9+.-]*):\/\/([^/]*)(\/.*)?$/i.exec(url);
	if (withScheme !== null) {
		const scheme = (withScheme[1] as string).toLowerCase();
		const path = tidy(withScheme[3] ?? "");
		if (scheme === "file") return path === "" ? undefined : path;
		const host = (withScheme[2] as string).replace(/^.*@/, "").replace(/:\d*$/, "").toLowerCase();
		return host === "" ? undefined : `${host}${path}`;
	}
	// scp-like `user@host:path` (git's rule: a colon before any slash).
	const scp = /^(?:[^@/]*@)?([^:/]+):(.+)$/.exec(url);
	if (scp !== null) return `${(scp[1] as string).toLowerCase()}/${tidy((scp[2] as string).replace(/^\/+/, ""))}`;
	const path = tidy(url);
	return path === "" ? undefined : path;
}

/** The normalised `origin` of a project's repository, or undefined. Never throws. */
export function originOf(p: Project): string | undefined {
	if (p.git === undefined) return undefined;
	const text = readGitFile(join(p.git.commonDir, "config"), GIT_FILE_MAX.config);
	const url = text === undefined ? undefined : originUrl(text);
	return url === undefined ? undefined : normalRemote(url);
}

/** The identity of a project's repository: its `origin`, else its token (see the header), or undefined. Never throws. */
export function repositoryOfProject(p: Project): string | undefined {
	return originOf(p) ?? tokenOf(p);
}

/** The identity of the repository holding `cwd` (the project rule's), or undefined. */
export function repositoryOf(cwd: string): string | undefined {
	return repositoryOfProject(projectOf(cwd));
}

/**
 * Every `repoLinks` key a checkout is linked by, most telling first: its `origin`, then its
 * token (a repository linked before it had an `origin` stays linked). Read lazily: the token
 * only when the `origin` links nothing.
 */
export function* identitiesOf(p: Project): Generator<string> {
	const origin = originOf(p);
	if (origin !== undefined) yield origin;
	const token = tokenOf(p);
	if (token !== undefined) yield token;
}

/** The project root's path as a clone's `origin` names it (`git clone <path>`), for a git checkout. */
function rootAsRemote(p: Project): string | undefined {
	return p.git === undefined ? undefined : normalRemote(p.root);
}

/** What linking a checkout records for its repository: the keys, and why a no-origin repository got no token. */
export interface RepositoryLink {
	keys: string[];
	/** The identity shown to the user (the `origin`, or the token). */
	identity?: string;
	/** Why a repository without `origin` has no token (its moves are then not followed). */
	problem?: string;
}

/**
 * The repository keys to record when the user links a checkout (their consent is what may
 * write a token): its `origin`; or, without one, its token (made now if needed) and its root's
 * path, so that a moved checkout, its worktrees and a `git clone <path>` of it follow.
 */
export function repositoryLinkOf(cwd: string): RepositoryLink {
	const p = projectOf(cwd);
	const origin = originOf(p);
	if (origin !== undefined) return { keys: [origin], identity: origin };
	if (p.git === undefined) return { keys: [] };
	const path = rootAsRemote(p);
	const made = ensureToken(p);
	const paths = path === undefined ? [] : [path];
	return "token" in made ? { keys: [made.token, ...paths], identity: made.token } : { keys: paths, problem: made.problem };
}

/** Every repository key an unlink there removes: its `origin`, its token and its root's path. Writes nothing. */
export function repositoryKeysOf(cwd: string): string[] {
	const p = projectOf(cwd);
	const path = rootAsRemote(p);
	return [...identitiesOf(p), ...(path === undefined ? [] : [path])];
}

/** What a link means for the repository's other checkouts, in one sentence (`state-flow link`, `/state link`). */
export function repositoryWords(r: RepositoryLink, root: string): string {
	// Shown, never obeyed: a path or reason with a line break or control stays on this line, and the command pastes as one word.
	const clone = `\`git clone ${shellWord(inline(root))}\``;
	if (r.identity !== undefined && !isLocalToken(r.identity))
		return `Every checkout of repository ${r.identity} on this machine (moved, renamed, another clone or worktree) follows this link.`;
	if (r.identity !== undefined)
		return `This repository has no \`origin\` remote: State Flow gave it an identity in its git common dir (${TOKEN_FILE}), so a moved or renamed checkout and its worktrees follow this link, and so does a ${clone} of it.`;
	if (r.problem !== undefined)
		return `This repository has no \`origin\` remote and got no identity (${inline(r.problem)}): a moved or renamed checkout is not linked until linked again${r.keys.length > 0 ? `; a ${clone} of it follows this link` : ""}.`;
	return "This folder is not a git checkout State Flow follows: it is linked by its path only, so a moved or renamed folder is not linked until linked again.";
}
