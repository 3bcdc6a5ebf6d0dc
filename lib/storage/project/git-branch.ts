/**
 * The checkout's git branch, for intents that know their branch (docs/model-surface.md,
 * "Branches"). `.git/HEAD` is read once per prompt (one small file, asynchronously, by the one
 * safe reader, `git-files.ts`); whether a branch recorded by intents was merged into the default
 * branch or deleted is computed from the refs (files), and only when a tip changed from git's
 * object files (`git-ancestry.ts`: bounded in time and bytes, never blocking pi's event loop),
 * cached by the pair. git itself is never run: a repository's config can make it run any
 * command. Non-git folders, detached HEADs and anything unreadable give no branch: the head
 * then behaves as without git; an ancestry that cannot be told is not called merged.
 */
import { join } from "node:path";
import { BRANCHED_OWNERS, intentBranch, isBranchName } from "../../core/intent-branch.js";
import type { Json, Owner, OwnerHistory } from "../../core/types.js";
import type { GitView } from "../../core/intent-branch.js";
import { isAncestor } from "./git-ancestry.js";
import { GIT_FILE_MAX, readGitFileAsync } from "./git-files.js";
import { type GitDirs, gitDirsOf } from "./project.js";

export type { GitDirs } from "./project.js";

/** Most branches checked per prompt; the rest are judged at a later prompt. */
const MAX_CHECKS = 8;
const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The git dirs of the checkout holding `cwd`, by the project rule (`storage/project/project.ts`): the branch is the store's checkout's. */
export async function findGitDirs(cwd: string): Promise<GitDirs | undefined> {
	return gitDirsOf(cwd);
}

/** The branch HEAD names, or undefined (detached, unreadable, not a branch name). */
export async function readBranch(dirs: GitDirs): Promise<string | undefined> {
	const head = await readGitFileAsync(join(dirs.gitDir, "HEAD"));
	const m = /^ref: refs\/heads\/(\S+)\s*$/.exec(head ?? "");
	return m !== null && isBranchName(m[1]) ? m[1] : undefined;
}

/** The commit a ref points to: its loose file, else its line in `packed-refs`; undefined when it does not exist. */
async function refSha(dirs: GitDirs, ref: string, packed: () => Promise<string>): Promise<string | undefined> {
	const loose = (await readGitFileAsync(join(dirs.commonDir, ref)))?.trim();
	if (loose !== undefined && SHA.test(loose)) return loose;
	for (const line of (await packed()).split("\n")) {
		const [sha, name] = line.trim().split(" ");
		if (name === ref && sha !== undefined && SHA.test(sha)) return sha;
	}
	return undefined;
}

/** The default branch: what `origin/HEAD` names, else `main`, else `master` (when it exists). */
async function defaultBranch(dirs: GitDirs, packed: () => Promise<string>): Promise<{ name: string; sha: string } | undefined> {
	const origin = /^ref: refs\/remotes\/origin\/(\S+)\s*$/.exec((await readGitFileAsync(join(dirs.commonDir, "refs/remotes/origin/HEAD"))) ?? "");
	const candidates = origin !== null && isBranchName(origin[1]) ? [origin[1]] : ["main", "master"];
	for (const name of candidates) {
		const sha = (await refSha(dirs, `refs/heads/${name}`, packed)) ?? (await refSha(dirs, `refs/remotes/origin/${name}`, packed));
		if (sha !== undefined) return { name, sha };
	}
	return undefined;
}

/**
 * Whether a branch never moved since it was created (its reflog holds the creation only): it has
 * no commits of its own, so its tip being in the default branch says nothing about a merge.
 */
async function neverMoved(dirs: GitDirs, branch: string): Promise<boolean> {
	const log = await readGitFileAsync(join(dirs.commonDir, "logs/refs/heads", branch), GIT_FILE_MAX.reflog);
	return log !== undefined && log.trim().split("\n").length === 1;
}

/**
 * The git branch of one pi session's checkout: refreshed before each prompt's head, read by the
 * tools when they stamp new intents. Ancestry answers are cached by (branch tip, default tip).
 */
export class GitBranchWatch {
	#view: GitView = {};
	readonly #ancestry = new Map<string, boolean>();

	/** The view of the latest refresh (empty before the first, and outside git). */
	get view(): GitView {
		return this.#view;
	}

	/** The branch the checkout was on at the latest refresh. */
	get branch(): string | undefined {
		return this.#view.branch;
	}

	/**
	 * Read the branch, and what became of `recorded` branches (those intents name): deleted when
	 * their ref is gone, merged when their tip is in the default branch, differs from its tip and
	 * the branch moved since it was created (a branch without commits of its own is not called
	 * merged). Never throws.
	 */
	async refresh(cwd: string, recorded: Iterable<string> = []): Promise<GitView> {
		try {
			this.#view = await this.#read(cwd, recorded);
		} catch {
			this.#view = {};
		}
		return this.#view;
	}

	async #read(cwd: string, recorded: Iterable<string>): Promise<GitView> {
		const dirs = await findGitDirs(cwd);
		if (dirs === undefined) return {};
		const branch = await readBranch(dirs);
		if (branch === undefined) return {};
		let packedText: Promise<string> | undefined;
		const packed = (): Promise<string> => {
			packedText ??= readGitFileAsync(join(dirs.commonDir, "packed-refs"), GIT_FILE_MAX.packedRefs).then((t) => t ?? "");
			return packedText;
		};
		const others = [...new Set(recorded)].filter((b) => b !== branch && isBranchName(b)).sort();
		if (others.length === 0) return { branch };
		const def = await defaultBranch(dirs, packed);
		const gone: Record<string, "merged" | "deleted"> = {};
		let checks = 0;
		for (const b of others) {
			const sha = await refSha(dirs, `refs/heads/${b}`, packed);
			if (sha === undefined) {
				gone[b] = "deleted";
				continue;
			}
			if (def === undefined || b === def.name || sha === def.sha || (await neverMoved(dirs, b))) continue;
			const key = `${sha}:${def.sha}`;
			let merged = this.#ancestry.get(key);
			if (merged === undefined && checks < MAX_CHECKS) {
				checks++;
				merged = await isAncestor(dirs.commonDir, sha, def.sha);
				if (merged !== undefined) this.#ancestry.set(key, merged);
			}
			if (merged === true) gone[b] = "merged";
		}
		return { branch, ...(def !== undefined ? { defaultBranch: def.name } : {}), ...(Object.keys(gone).length > 0 ? { gone } : {}) };
	}
}

/** The branches the branched owners' intents record (what `refresh` judges). */
export function recordedBranches(histories: Partial<Record<Owner, OwnerHistory>>): Set<string> {
	const out = new Set<string>();
	for (const owner of BRANCHED_OWNERS) {
		const intents = histories[owner]?.state.intents ?? {};
		for (const key of Object.keys(intents)) {
			const b = intentBranch(intents[key] as Json);
			if (b !== undefined) out.add(b);
		}
	}
	return out;
}
