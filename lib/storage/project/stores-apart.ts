/**
 * CWD stores that are not the project's (issue 25): older builds kept one per folder pi was
 * started in, so a subfolder or a worktree may hold memory the project rule (`project.ts`) no
 * longer reads. They are never merged, moved or deleted silently: found here, reported by
 * `/state` and `state-flow doctor`, and either adopted into the project's store
 * (`state-flow adopt`) or kept apart on purpose; both leave a marker in the store apart, so
 * it is reported once until the user decided. Only the folders from the start folder up to
 * the checkout's root and each worktree's root are looked at by `/state` and `show` (a few
 * `lstat`s); `doctor` also walks the checkout's subfolders, bounded.
 */
import { type Dirent, lstatSync, readdirSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { inline, shellWord } from "../../core/printable.js";
import { createOnce } from "../fs-util.js";
import { gitdirOf, ownFolder, pathLine, readGitFile } from "./git-files.js";
import { foldsCase, tracksUnder } from "./git-index.js";
import { type Project, storeInRoot } from "./project.js";

/** The marker a decided store apart holds: `kept` or `adopted into <store>`. */
export const APART_MARKER = "apart";

/** Most worktrees looked at for stores apart. */
const MAX_WORKTREES = 64;

export interface StoreApart {
	/** The folder pi was started in when an older build made it (its `.pi/state-flow` is the store). */
	folder: string;
	store: string;
	/** Where it sits: a `subfolder`, a `worktree`'s root, or the repository's `root` (the project's store being in its git dir). */
	where: "subfolder" | "worktree" | "root";
	/** Git tracks it: the repository's content, which every clone has, not memory this user wrote. */
	carried: boolean;
}

function isFile(path: string): boolean {
	try {
		return lstatSync(path).isFile();
	} catch {
		return false;
	}
}

function exists(path: string): boolean {
	try {
		lstatSync(path);
		return true;
	} catch {
		return false;
	}
}

/** A folder holding a store's log or checkpoint, with no decision recorded. */
function undecidedStore(store: string): boolean {
	return (isFile(join(store, "log.jsonl")) || isFile(join(store, "checkpoint.json"))) && !isFile(join(store, APART_MARKER));
}

/**
 * The roots of the repository's linked worktrees and their git dirs, as its common dir lists
 * them (bounded). An entry counts only when it is a folder of this user's whose `gitdir` names
 * a `.git` file that names the entry back: a shipped `worktrees/x/gitdir` naming any folder of
 * the user's (`~/notes/.pi`) never makes that folder's memory a store apart of this repository.
 */
function worktreeRoots(commonDir: string): Array<{ root: string; gitDir: string }> {
	let names: string[];
	try {
		names = readdirSync(join(commonDir, "worktrees")).slice(0, MAX_WORKTREES);
	} catch {
		return [];
	}
	const out: Array<{ root: string; gitDir: string }> = [];
	for (const name of names) {
		const gitDir = join(commonDir, "worktrees", name);
		if (ownFolder(gitDir) === undefined) continue;
		const named = pathLine(readGitFile(join(gitDir, "gitdir")) ?? "");
		if (named === undefined) continue;
		const dotGit = resolve(gitDir, named);
		// The worktree names this entry back (a pruned or moved worktree: nothing to look at).
		const back = gitdirOf(readGitFile(dotGit) ?? "");
		if (basename(dotGit) !== ".git" || back === undefined || realOf(resolve(dirname(dotGit), back)) !== realOf(gitDir)) continue;
		const root = realOf(dirname(dotGit));
		if (root !== undefined) out.push({ root, gitDir });
	}
	return out;
}

function realOf(path: string): string | undefined {
	try {
		return realpathSync.native(path);
	} catch {
		return undefined;
	}
}

/** Folders `doctor` looks through below a checkout's root, and how deep (a bounded walk, never through a link). */
const DEEP_FOLDERS = 5000;
const DEEP_DEPTH = 6;

/** Subfolders of `root` (breadth first, bounded; hidden folders, `node_modules`, links and nested repositories skipped). */
function subfolders(root: string): string[] {
	const out: string[] = [];
	let level = [root];
	for (let depth = 0; depth < DEEP_DEPTH && level.length > 0 && out.length < DEEP_FOLDERS; depth++) {
		const next: string[] = [];
		for (const dir of level) {
			let entries: Dirent[];
			try {
				entries = readdirSync(dir, { withFileTypes: true });
			} catch {
				continue;
			}
			for (const e of entries) {
				if (!e.isDirectory() || e.name.startsWith(".") || e.name === "node_modules") continue;
				if (out.length >= DEEP_FOLDERS) break;
				const sub = join(dir, e.name);
				// A nested repository or submodule is a project of its own: its store is not apart.
				if (exists(join(sub, ".git"))) continue;
				out.push(sub);
				next.push(sub);
			}
		}
		level = next;
	}
	return out;
}

/**
 * The undecided stores apart of a project, nearest first: the folders from the start folder up
 * to the checkout's root and each worktree's root; with `deep` (doctor) also the checkout's
 * subfolders (bounded). Each is marked `carried` when the index of the work tree holding it
 * tracks it (`git-index.ts`, read only when a store was found). Reads only; never throws.
 */
export function storesApart(project: Project, deep = false): StoreApart[] {
	const out: StoreApart[] = [];
	const seen = new Set([project.store]);
	// `gitDir` holds the index of the work tree `tree` the folder is in.
	const add = (folder: string, where: StoreApart["where"], tree: string, gitDir: string | undefined) => {
		const store = storeInRoot(folder);
		if (seen.has(store)) return;
		seen.add(store);
		if (!undecidedStore(store)) return;
		const path = relative(tree, store).split(sep).join("/");
		const carried = gitDir !== undefined && tracksUnder(gitDir, path, project.git?.commonDir, foldsCase(store)) === "yes";
		out.push({ folder, store, where, carried });
	};
	if (project.via === "folder") return out;
	const git = project.git;
	if (git !== undefined && project.via !== "common-dir" && project.store !== storeInRoot(project.root)) add(project.root, "root", project.root, git.commonDir);
	for (let dir = project.start; dir !== project.checkout && dir !== dirname(dir); dir = dirname(dir)) add(dir, "subfolder", project.checkout, git?.gitDir);
	add(project.checkout, "worktree", project.checkout, git?.gitDir);
	if (git !== undefined) for (const w of worktreeRoots(git.commonDir)) add(w.root, "worktree", w.root, w.gitDir);
	if (deep) for (const sub of subfolders(project.checkout)) add(sub, "subfolder", project.checkout, git?.gitDir);
	return out;
}

/** Record the user's decision in a store apart (create-only: an earlier decision is kept). */
export function markApart(store: string, decision: string): void {
	createOnce(join(store, APART_MARKER), Buffer.from(`${decision}\n`, "utf8"));
}

/** A store apart's place, in words. */
const WHERE: Record<StoreApart["where"], string> = {
	subfolder: "subfolder",
	worktree: "worktree",
	root: "the repository's root",
};

/**
 * One line for `/state` and `show` (doctor gives each store apart its own): where the nearest
 * store apart is, the command that decides, and how many more `state-flow doctor` lists. Paths
 * are shown, never obeyed: a control or line break in a folder name is spelled, and the folder
 * is one shell word in the command.
 */
export function apartLine(apart: readonly StoreApart[]): string | undefined {
	if (apart.length === 0) return undefined;
	const first = apart[0] as StoreApart;
	const more = apart.length > 1 ? `; ${apart.length - 1} more: \`state-flow doctor\` lists them` : "";
	const adopt = `\`state-flow adopt ${shellWord(inline(first.folder))}\``;
	if (first.carried) {
		return `a store apart from this project's memory: ${inline(first.store)} (${WHERE[first.where]}; git tracks it: the repository's content, which every clone has; never read as memory); ${adopt} takes it in if you trust what it holds, \`--keep\` keeps it apart${more}`;
	}
	return `a store apart from this project's memory: ${inline(first.store)} (${WHERE[first.where]}); run ${adopt} to move it in, or \`--keep\` to keep it apart${more}`;
}
