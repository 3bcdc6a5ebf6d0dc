/**
 * A repository's identity that survives a move, a rename, a second clone and a new worktree: its
 * `origin` remote URL, normalised (`github.com/acme/api`), read from the git common dir's `config`
 * (which a clone writes from the URL the user typed; it is never cloned itself). Links are keyed
 * by it once the user has linked one checkout (`repoLinks`, docs/shared-memory.md): a repository
 * alone never links. Credentials in a URL are dropped, never kept or shown. A repository without
 * an `origin` has no identity: its links stay keyed by its project root's path.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { readRegular } from "./fs-util.js";
import { type Project, projectOf } from "./project.js";

/** Largest git `config` read; a larger one is not a repository's ordinary config. */
const MAX_CONFIG = 64 * 1024;
/** Longest identity kept (a URL longer than this is not a remote's). */
export const MAX_REPOSITORY = 1000;

/** The `url` of `[remote "origin"]` in a git config's text, or undefined. */
export function originUrl(configText: string): string | undefined {
	let inOrigin = false;
	for (const raw of configText.split(/\r?\n/)) {
		const line = raw.trim();
		if (line.startsWith("[")) {
			inOrigin = /^\[\s*remote\s+"origin"\s*\]$/.test(line);
			continue;
		}
		if (!inOrigin) continue;
		const m = /^url\s*=\s*(.*)$/i.exec(line);
		if (m !== null) {
			const value = (m[1] as string).replace(/^"(.*)"$/, "$1").trim();
			return value === "" ? undefined : value;
		}
	}
	return undefined;
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

/** The identity of a project's repository (see the header), or undefined. Never throws. */
export function repositoryOfProject(p: Project): string | undefined {
	if (p.git === undefined) return undefined;
	try {
		const file = join(p.git.commonDir, "config");
		if (lstatSync(file).size > MAX_CONFIG) return undefined;
		const bytes = readRegular(file);
		if (bytes === undefined || bytes.length > MAX_CONFIG) return undefined;
		const url = originUrl(bytes.toString("utf8"));
		return url === undefined ? undefined : normalRemote(url);
	} catch {
		return undefined;
	}
}

/** The identity of the repository holding `cwd` (the project rule's), or undefined. */
export function repositoryOf(cwd: string): string | undefined {
	return repositoryOfProject(projectOf(cwd));
}
