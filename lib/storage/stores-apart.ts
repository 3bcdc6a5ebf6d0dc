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
import { type Dirent, lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { inline, shellWord } from "../core/printable.js";
import { createOnce } from "./fs-util.js";
import { type Project, storeInRoot } from "./project.js";

/** The marker a decided store apart holds: `kept` or `adopted into <store>`. */
export const APART_MARKER = "apart";

/** Most worktrees looked at for stores apart. */
const MAX_WORKTREES = 64;

export interface StoreApart {
	/** The folder pi was started in when an older build made it (its `.pi/state-flow` is the store). */
	folder: string;
	store: string;
	/**
	 * Where it sits: a `subfolder`, a `worktree`'s root, or the repository's root when the
	 * project's store is in the common dir: `carried` when the repository carries it (`project.ts`).
	 */
	where: "subfolder" | "worktree" | "carried" | "root";
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

/** The roots of the repository's linked worktrees, as its common dir lists them (bounded). */
function worktreeRoots(commonDir: string): string[] {
	let names: string[];
	try {
		names = readdirSync(join(commonDir, "worktrees")).slice(0, MAX_WORKTREES);
	} catch {
		return [];
	}
	const out: string[] = [];
	for (const name of names) {
		try {
			const file = join(commonDir, "worktrees", name, "gitdir");
			if (lstatSync(file).size > 4096) continue;
			out.push(dirname(realpathSync.native(resolve(dirname(file), readFileSync(file, "utf8").trim()))));
		} catch {
			// A pruned or moved worktree: nothing to look at.
		}
	}
	return out;
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
 * subfolders (bounded). Reads only; never throws.
 */
export function storesApart(project: Project, deep = false): StoreApart[] {
	const out: StoreApart[] = [];
	const seen = new Set([project.store]);
	const add = (folder: string, where: StoreApart["where"]) => {
		const store = storeInRoot(folder);
		if (seen.has(store)) return;
		seen.add(store);
		if (undecidedStore(store)) out.push({ folder, store, where });
	};
	if (project.via === "folder") return out;
	if (project.store !== storeInRoot(project.root)) add(project.root, project.carried !== undefined ? "carried" : "root");
	for (let dir = project.start; dir !== project.checkout && dir !== dirname(dir); dir = dirname(dir)) add(dir, "subfolder");
	add(project.checkout, "worktree");
	if (project.git !== undefined) for (const root of worktreeRoots(project.git.commonDir)) add(root, "worktree");
	if (deep) for (const sub of subfolders(project.checkout)) add(sub, "subfolder");
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
	carried: "in the repository's content, so every clone has it",
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
	return `a store apart from this project's memory: ${inline(first.store)} (${WHERE[first.where]}); run \`state-flow adopt ${shellWord(inline(first.folder))}\` to move it in, or \`--keep\` to keep it apart${more}`;
}
