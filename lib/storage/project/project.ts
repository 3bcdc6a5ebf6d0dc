/**
 * Which project a folder belongs to, and so where its CWD memory lives: the one rule, used by
 * pi, the CLI and the branch watch (docs/storage-format.md, "The project"). From the folder
 * started in, walk up to the nearest `.git` (folder or file) and never above it: that work
 * tree's root is the checkout. All worktrees of one repository share one store, in its git
 * common dir's `state-flow/` (`placed`), or the main worktree's `.pi/state-flow` where an older
 * build made it (it keeps working with no step). Outside git the folder itself is the project: no
 * ancestor's store is ever adopted (one holding memory is named). A repository is untrusted
 * input: a `.git` not owned by this user, or one in the home folder seen from below, is not
 * followed; a `.git` FILE is followed only where git agrees and the target names this checkout
 * back (a worktree entry git made in the common dir naming this `.git`; a git dir inside the
 * checkout, or whose `core.worktree` names it), never to this checkout or a folder above it,
 * never to another user's. git's files are read by the one safe reader (`git-files.ts`).
 * Synchronous and a handful of small reads (and, for a root store, the first KB of git's index,
 * kept per index file): resolved per session and cwd, again before each prompt, never per call.
 */
import { lstatSync, realpathSync } from "node:fs";
import type { Stats } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type KeyLens, SAME_KEYS, keyLens } from "../../core/artifact-keys.js";
import { inline, printable, shellWord } from "../../core/printable.js";
import { inside, ownedByMe, realOrSelf } from "../fs-util.js";
import { configValue } from "./git-config.js";
import { GIT_FILE_MAX, gitdirOf, ownFolder, pathLine, readGitFile } from "./git-files.js";
import { foldsCase, tracksUnder } from "./git-index.js";
import { holdsState } from "./moved-marker.js";

/** The per-checkout git dir (HEAD) and the common dir (refs, worktrees), as git resolves them. */
export interface GitDirs {
	gitDir: string;
	commonDir: string;
}

/**
 * Why the project is where it is (shown by `/state` and `state-flow show`): a folder outside git,
 * a git root, a linked worktree, a repository's common dir, or a git work tree whose `.git` file
 * is not followed (`unfollowed`: its own folder keeps its memory, `note` says why).
 */
export type ProjectVia = "folder" | "git-root" | "worktree" | "common-dir" | "unfollowed";

export interface Project {
	/** The folder started in (real path). */
	start: string;
	/** The checkout's root: its git work tree root, or the start folder outside git (real path). */
	checkout: string;
	/** The project's root: the main worktree's root for a worktree, else the checkout. */
	root: string;
	/** The CWD store folder. */
	store: string;
	via: ProjectVia;
	/** The checkout's git dirs, when it is a git work tree State Flow follows. */
	git?: GitDirs;
	/** Why a `.git` on the way was not followed, or that a folder above holds memory (shown with the project). */
	note?: string;
	/**
	 * The root's `.pi/state-flow` when the repository carries it (git tracks it, so every clone
	 * has it): never read as the project's memory, which is then kept in the common dir
	 * (`placed`); a store apart the user may adopt. (An index that cannot be read to tell is
	 * treated alike, and said in `note`.)
	 */
	carried?: string;
	/**
	 * Why the CWD store here is not read at all: it sits in a git work tree State Flow does not
	 * follow (`note`), and git tracks it there, or cannot be asked, or it is another user's
	 * (`guarded`). Every read and write of it then fails with this, naming it.
	 */
	refused?: string;
	/**
	 * For a root store an older build made: the common dir's store that takes over from it once it
	 * exists (`placed`). A process that resolved the root store refuses to use it from then on.
	 */
	supersededBy?: string;
}

/** The CWD store folder inside a project root (where every build has kept it). */
export function storeInRoot(root: string): string {
	return join(root, ".pi", "state-flow");
}

function lstatOf(path: string): Stats | undefined {
	try {
		return lstatSync(path);
	} catch {
		return undefined;
	}
}

function realOf(path: string): string | undefined {
	try {
		return realpathSync.native(path);
	} catch {
		return undefined;
	}
}

/** The git dirs a `.git` file names: its `gitdir:`, and that dir's `commondir` (worktrees); read as git reads them. */
function dirsOfFile(checkout: string, dotGit: string): GitDirs | undefined {
	const named = gitdirOf(readGitFile(dotGit) ?? "");
	if (named === undefined) return undefined;
	const gitDir = resolve(checkout, named);
	const common = pathLine(readGitFile(join(gitDir, "commondir")) ?? "");
	return { gitDir, commonDir: common === undefined ? gitDir : resolve(gitDir, common) };
}

/** The nearest work tree root at or above `start` (a real path) and its `.git`'s kind; never above it. */
function nearestGit(start: string): { root: string; dotGit: string; st: Stats } | undefined {
	for (let dir = start; ; ) {
		const dotGit = join(dir, ".git");
		const st = lstatOf(dotGit);
		if (st !== undefined && (st.isDirectory() || st.isFile())) return { root: dir, dotGit, st };
		const up = dirname(dir);
		if (up === dir) return undefined;
		dir = up;
	}
}

/** A checkout whose `.git` file is not followed: its own folder keeps its memory (`guarded` decides whether it is read), saying why. */
function unfollowed(start: string, checkout: string, note: string): Project {
	return { start, checkout, root: checkout, store: storeInRoot(checkout), via: "unfollowed", note };
}

/** Why a git dir cannot be the checkout's: the checkout itself or a folder above it (its store would be made outside the checkout). */
function aboveProblem(checkout: string, dir: string, what: string): string | undefined {
	return inside(checkout, dir) ? `${what} \`${dir}\` is this checkout or a folder above it, never a git dir State Flow keeps memory in` : undefined;
}

/**
 * The project of a checkout whose `.git` is a file: followed only where git itself agrees and
 * the target names this checkout back (a planted `.git` file may name any folder of the user's).
 * A git dir that is this checkout or above it, missing, not a folder of this user's, or that
 * does not name the checkout back leaves the checkout on its own folder, saying why.
 */
function fileProject(start: string, root: string, dotGit: string): Project {
	const dirs = dirsOfFile(root, dotGit);
	if (dirs === undefined) return unfollowed(start, root, `\`${dotGit}\` names no git dir`);
	const gitDir = realOf(dirs.gitDir);
	if (gitDir === undefined) {
		// A worktree entry that is gone: its repository moved (or the worktree was pruned).
		return basename(dirname(dirs.gitDir)) === "worktrees"
			? unfollowed(start, root, `its repository's worktree entry \`${dirs.gitDir}\` is gone; if the repository moved, ${repair(root, "in the repository")}`)
			: unfollowed(start, root, `its git dir \`${dirs.gitDir}\` is missing`);
	}
	const above = aboveProblem(root, gitDir, "its git dir");
	if (above !== undefined) return unfollowed(start, root, above);
	if (ownFolder(gitDir) === undefined) return unfollowed(start, root, `its git dir \`${gitDir}\` is not a folder of yours`);
	// A submodule or a separate git dir: this checkout is its repository's main worktree.
	if (realOf(dirs.commonDir) === gitDir) return ownGitDir(start, root, gitDir);
	return worktreeProject(start, root, gitDir, dirs.commonDir);
}

/** The command that mends a moved worktree's link to its repository, the path as one shell word. */
function repair(checkout: string, where: string): string {
	return `\`git worktree repair ${shellWord(inline(checkout))}\` run ${where} mends it`;
}

/**
 * A linked worktree's store: the main worktree's, when the common dir is a folder of this
 * user's (not this checkout nor above it), the worktree entry is one git made in it
 * (`worktrees/<name>`) and names this checkout back (a planted `.git` file cannot point into
 * another repository); the main worktree is the common dir's parent when that is a `.git`
 * folder, else (bare, separate git dir) the common dir keeps the store itself.
 */
function worktreeProject(start: string, checkout: string, gitDir: string, named: string): Project {
	const common = realOf(named);
	if (common === undefined)
		return unfollowed(start, checkout, `its git common dir \`${named}\` is gone; if the repository moved, ${repair(checkout, "in the repository")}`);
	const above = aboveProblem(checkout, common, "its git common dir");
	if (above !== undefined) return unfollowed(start, checkout, above);
	if (ownFolder(common) === undefined) return unfollowed(start, checkout, `its git common dir \`${common}\` is not a folder of yours`);
	// The entry must be one git made in the common dir (`worktrees/<name>`): a git dir the
	// repository ships itself names any common dir and names itself back.
	if (dirname(gitDir) !== join(common, "worktrees")) return unfollowed(start, checkout, `\`${gitDir}\` is not a worktree entry of \`${common}\``);
	const back = pathLine(readGitFile(join(gitDir, "gitdir")) ?? "");
	if (back === undefined || realOf(resolve(gitDir, back)) !== realOf(join(checkout, ".git"))) {
		return unfollowed(start, checkout, `\`${gitDir}\` does not name this worktree back; if this worktree was moved, ${repair(checkout, "here")}`);
	}
	const git = { gitDir, commonDir: common };
	const main = dirname(common);
	if (basename(common) === ".git" && realOf(join(main, ".git")) === common) {
		return { start, checkout, root: main, store: storeInRoot(main), via: "worktree", git };
	}
	return { start, checkout, root: checkout, store: storeInCommonDir(common), via: "common-dir", git };
}

/**
 * A checkout whose `.git` file names its repository's own git dir (`gitDir`, real, a folder of
 * the user's): followed when that git dir lies inside the checkout (its own content, as a
 * `.git` folder is), or when its config's `core.worktree` names this checkout (what git writes
 * for a submodule). A separate git dir elsewhere names no checkout (`git init
 * --separate-git-dir` writes no back-pointer), and any folder may name it: it is not followed,
 * so a planted `.git` file never takes on another repository's memory or identity (its
 * `origin`, its token), nor writes there.
 */
function ownGitDir(start: string, root: string, gitDir: string): Project {
	const followed: Project = { start, checkout: root, root, store: storeInRoot(root), via: "git-root", git: { gitDir, commonDir: gitDir } };
	if (inside(gitDir, root)) return followed;
	const worktree = configValue(readGitFile(join(gitDir, "config"), GIT_FILE_MAX.config) ?? "", "core", "worktree");
	if (worktree !== undefined && realOf(resolve(gitDir, worktree)) === root) return followed;
	const holder = dirname(gitDir);
	if (basename(gitDir) === ".git" && realOf(join(holder, ".git")) === gitDir) {
		return unfollowed(start, root, `its \`.git\` file names the git dir of another checkout, \`${holder}\``);
	}
	return unfollowed(
		start,
		root,
		`its git dir \`${gitDir}\` is outside this checkout and names no work tree of its own, so it may be another repository's; \`git --git-dir=${shellWord(inline(gitDir))} config core.worktree ${shellWord(inline(root))}\` names this checkout there (as git does for a submodule)`,
	);
}

/** The CWD store folder in a git common dir: never in a work tree, never cloned. */
function storeInCommonDir(commonDir: string): string {
	return join(commonDir, "state-flow");
}

/**
 * Where a repository's memory is kept: `<common dir>/state-flow/` (never in a work tree, so
 * never committed, never cloned, never overwritten or deleted by git's checkout or clean, shared
 * by every worktree), except the root's `.pi/state-flow` that an older build made there, which
 * keeps working with no step — unless the repository carries it (git tracks it, so every clone
 * has it: its author's memory, not this user's) or its index cannot be read to tell. Once the
 * common dir holds the store it is the store for good: a checkout or pull that brings a root
 * store later never switches memories. Only when the root holds a store and the common dir
 * does not is the index read (`git-index.ts`, a few KB, kept per index file).
 */
function placed(p: Project): Project {
	if (p.git === undefined) return guarded(p);
	if (p.store !== storeInRoot(p.root)) return p;
	const inCommon = { ...p, store: storeInCommonDir(p.git.commonDir) };
	if (lstatOf(inCommon.store)?.isDirectory() === true || lstatOf(p.store) === undefined) return inCommon;
	const tracked = tracksUnder(p.git.commonDir, ROOT_STORE, p.git.commonDir, foldsCase(p.store));
	if (tracked === "yes") return { ...inCommon, carried: p.store };
	if (tracked === "unknown") {
		const why = `git's index in \`${p.git.commonDir}\` cannot be read to tell whether the repository carries \`${ROOT_STORE}\`, so it is not read as this project's memory`;
		return { ...inCommon, note: p.note === undefined ? why : `${p.note}; ${why}` };
	}
	// The root store, until the common dir holds one: a process that resolved it refuses to go on
	// using it from then on (`FileStoreOptions.supersededBy`), so two stores are never written.
	return { ...p, supersededBy: inCommon.store };
}

/**
 * A store in a work tree whose `.git` is not followed: there is no git dir of ours to keep memory
 * in. A store of another user's is never read. Under a `.git` FILE of the user's that is not
 * followed (a worktree moved without `git worktree repair`, a repository moved from under its
 * worktree, a `.git` file naming nothing) the store is read only when that work tree's index
 * does not track it; one it tracks, or whose index cannot be read, is refused. A `.git` folder
 * that is not followed (another user's, the home folder's repository seen from below) says
 * nothing about a store of the user's below it: another user's `/tmp/.git` or a large dotfiles
 * index never switches the user's memory off.
 */
function guarded(p: Project): Project {
	const st = lstatOf(p.store);
	const found = st === undefined ? undefined : nearestGit(p.start);
	if (st === undefined || found === undefined) return p;
	const refuse = (why: string): Project => ({
		...p,
		refused: `State Flow does not read \`${inline(p.store)}\`: ${why}. Nothing was read or written; the other owners keep working`,
	});
	if (!ownedByMe(st)) return refuse("it belongs to another user");
	if (!found.st.isFile() || !ownedByMe(found.st)) return p;
	const dirs = dirsOfFile(found.root, found.dotGit);
	const path = relative(found.root, p.store).split(sep).join("/");
	const tracked = dirs === undefined ? "unknown" : tracksUnder(dirs.gitDir, path, dirs.commonDir, foldsCase(p.store));
	if (tracked === "no") return p;
	const where = `the work tree at \`${inline(found.root)}\``;
	return refuse(
		tracked === "yes"
			? `git tracks it in ${where}: it is that repository's content, not your memory`
			: `${where} is not followed (${inline(p.note ?? "its git dir cannot be read")}), so whether it is the repository's content cannot be told; if it is a moved worktree, \`git worktree repair ${shellWord(inline(found.root))}\` run in its repository mends it`,
	);
}

/** The root store's path in the work tree, as git's index names it. */
const ROOT_STORE = ".pi/state-flow";

/** The project of a folder (see the header); never throws, touches nothing. */
export function projectOf(cwd: string): Project {
	return placed(foundProject(cwd));
}

/** The project by the walk to the checkout alone, its store at the root (`placed` decides the store). */
function foundProject(cwd: string): Project {
	const start = realOrSelf(cwd);
	const alone = (note?: string): Project => {
		const notes = [note, memoryAbove(start)].filter((n) => n !== undefined);
		return { start, checkout: start, root: start, store: storeInRoot(start), via: "folder", ...(notes.length > 0 ? { note: notes.join("; ") } : {}) };
	};
	const found = nearestGit(start);
	if (found === undefined) return alone();
	const { root, dotGit, st } = found;
	if (root !== start && root === realOrSelf(homedir())) return alone("the home folder's repository is not the project of every folder below it");
	if (!ownedByMe(st)) return alone(`\`${dotGit}\` belongs to another user`);
	if (st.isDirectory()) return { start, checkout: root, root, store: storeInRoot(root), via: "git-root", git: { gitDir: dotGit, commonDir: dotGit } };
	return fileProject(start, root, dotGit);
}

/**
 * Outside git, when this folder holds no memory of its own: the nearest folder above holding
 * some, in words (`/state`, `show`), so that a subfolder's empty store is not taken for that
 * folder's memory being lost. Two `lstat`s per folder up to the file system's root.
 */
function memoryAbove(start: string): string | undefined {
	if (holdsState(storeInRoot(start))) return undefined;
	for (let dir = dirname(start); ; dir = dirname(dir)) {
		if (holdsState(storeInRoot(dir)))
			return `a folder above, \`${dir}\`, has State Flow memory; this folder starts its own (outside git each folder is a project of its own)`;
		if (dirname(dir) === dir) return undefined;
	}
}

/** The git dirs of the checkout holding `cwd` (the project rule's, so the branch watch agrees with the store). */
export function gitDirsOf(cwd: string): GitDirs | undefined {
	return projectOf(cwd).git;
}

/** Widest line `projectLine` gives. */
const LINE_WIDTH = 80;

/** A path shortened from the left (`…/tail`) so that it fits `room` characters. */
function fitPath(path: string, room: number): string {
	const home = realOrSelf(homedir());
	const shown = path === home || path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
	return shown.length <= room ? shown : `…${shown.slice(shown.length - Math.max(room - 1, 1))}`;
}

/** Why the project is where it is, in `projectLine`'s words. */
const VIA_WORDS: Record<ProjectVia, (p: Project) => string> = {
	folder: () => "this folder, not in git",
	"git-root": (p) => (p.start === p.root ? "git root" : "git root above"),
	worktree: (p) => (p.checkout === p.root ? "main worktree" : `worktree ${basename(p.checkout)}`),
	"common-dir": () => "repository's common dir",
	// A git work tree whose `.git` is not followed (a moved worktree, a `.git` file naming another repository): not a git root.
	unfollowed: () => "its .git is not followed",
};

/**
 * Which project this is and why, in one line of at most 80 characters (`/state`, the browser,
 * `state-flow show`): `project /x (git root)`, `(worktree of /x)`, `(link acme/api)`, …
 */
export function projectLine(p: Project, link?: string): string {
	const why = link !== undefined ? `link ${link}` : VIA_WORDS[p.via](p);
	const where = p.via === "common-dir" && link === undefined ? p.store : p.root;
	const fixed = `project  (${why})`;
	// Folder names and link ids are shown, never obeyed: a newline or a control in one never ends the line.
	return printable(`project ${fitPath(where, LINE_WIDTH - fixed.length)} (${why})`.replace(/\n/g, "\\n")).slice(0, LINE_WIDTH);
}

/** Why the project is not what its folders suggest (a `.git` not followed, an index not read), for `/state`, `show` and `doctor`. */
export function projectNote(p: Project): string | undefined {
	return p.note === undefined ? undefined : `note: ${inline(p.note)}.`;
}

/**
 * How the model is shown CWD and Session artifact keys in a session started at `project.start`:
 * relative to that folder, so each is a path pi's tools take as it is (`core/artifact-keys.ts`).
 */
export function keyLensFor(project: Project): KeyLens {
	let lens = lenses.get(project);
	if (lens === undefined) {
		const base = relative(project.checkout, project.start);
		lens = base === "" || base === ".." || base.startsWith(`..${sep}`) || isAbsolute(base) ? SAME_KEYS : keyLens(base.split(sep).join("/"));
		lenses.set(project, lens);
	}
	return lens;
}
/** One lens per resolved project (the host resolves a project once per folder). */
const lenses = new WeakMap<Project, KeyLens>();
