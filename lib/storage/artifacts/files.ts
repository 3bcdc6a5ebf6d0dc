/**
 * The artifact compiler's file side: where an artifact key points (territory checks,
 * symlinks resolved), stat fingerprints, hashes, and the commit's file effects, each
 * written atomically (temp file, fsync, rename) and undone in reverse on failure.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readdirSync, rmdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fail, isStateError, messageOf } from "../../core/errors.js";
import type { JsonObject, Owner, SharedOwner } from "../../core/types.js";
import {
	SHARED_DIR_MODE,
	SHARED_FILE_MODE,
	atomicWrite,
	checkContained,
	createOnce,
	ensureDirIn,
	inside,
	kindOf,
	lstatOrUndefined,
	readFrom,
	readRegular,
	realOrSelf,
	removeFile,
	unsafePath,
} from "../fs-util.js";
import { type Project, projectOf } from "../project/project.js";

export { inside, realOrSelf } from "../fs-util.js";

/**
 * The folders artifact keys are relative to: CWD (and Session) → `cwd`, Global → `agentDir`.
 * `cwd` is the checkout's root (`artifactRootsFor`), not the folder pi runs in: a session in
 * `src/` and one at the root name `src/a.ts` alike, each worktree its own copy of the files,
 * and a Skill compiles where pi finds it for the whole repository (docs/artifacts.md).
 */
export interface ArtifactRoots {
	cwd: string;
	agentDir: string;
}

/** The artifact roots of a session or command started in `cwd`: its checkout's root (`projectOf`) and the agent directory. */
export function artifactRootsFor(cwd: string, agentDir: string, project: Project = projectOf(cwd)): ArtifactRoots {
	return { cwd: project.checkout, agentDir };
}

/** The root an owner's artifact keys are relative to. */
export function ownerRoot(owner: Owner, roots: ArtifactRoots): string {
	return owner === "global" ? roots.agentDir : roots.cwd;
}

/** The owner whose territory an absolute path lies in (the most specific root), if any. */
export function territoryOf(absPath: string, roots: ArtifactRoots): SharedOwner | undefined {
	const real = realOrSelf(absPath);
	const g = realOrSelf(resolve(roots.agentDir));
	const c = realOrSelf(resolve(roots.cwd));
	const inG = inside(real, g);
	const inC = inside(real, c);
	if (inG && inC) return g.length >= c.length ? "global" : "cwd";
	return inG ? "global" : inC ? "cwd" : undefined;
}

const ROOT_NAME: Record<Owner, string> = { global: "the agent directory", cwd: "the checkout's root", session: "the checkout's root" };

/** Resolve an artifact key to an absolute path, refusing keys outside the owner's territory. */
export function resolveArtifactKey(owner: Owner, key: string, roots: ArtifactRoots, field = `\`${owner}.artifacts[${JSON.stringify(key)}]\``): string {
	const path = [owner, "artifacts", key];
	if (key === "" || key.includes("\0")) fail("artifact", `${field}: an artifact key must be the path of a file inside ${ROOT_NAME[owner]}.`, path);
	const root = resolve(ownerRoot(owner, roots));
	const abs = isAbsolute(key) ? resolve(key) : resolve(root, key);
	if (!inside(abs, root) || abs === root) fail("artifact", `${field} is outside ${ROOT_NAME[owner]} (${root}); use the path of a file inside it.`, path);
	if (!inside(realOrSelf(abs), realOrSelf(root)))
		fail("artifact", `${field} leads outside ${ROOT_NAME[owner]} through a symbolic link; track the link target's real path from its own owner instead.`, path);
	const territory = territoryOf(abs, roots);
	const expected = owner === "session" ? "cwd" : owner;
	if (territory !== expected && territory !== undefined)
		fail("artifact", `${field} lies in ${territory === "global" ? "Global" : "CWD"}'s territory; record it as a \`${territory}\` artifact instead.`, path);
	return abs;
}

/** sha256 of bytes, hex. */
export function sha256(bytes: Buffer | string): string {
	return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Which checkout a CWD file artifact was recorded in (`checkout`): a short hash of its root's
 * real path, compared only for equality (worktrees share one store; no path is shared with it).
 */
export function checkoutMark(checkout: string): string {
	return sha256(realOrSelf(checkout)).slice(0, 12);
}

/** Hashes of files this process read, by path and stat fingerprint (bounded: oldest dropped first). */
const hashes = new Map<string, string>();
const MAX_HASHES = 512;

/**
 * sha256 of the file at `abs` as it is now (`fingerprint` is its stat fingerprint), or undefined
 * when it is not a regular file of at most `maxBytes` — a link (even to a file inside the root),
 * a FIFO or a device is never read for a hash: the fingerprint alone judges it. Read once per
 * path and fingerprint in this process, so a check that finds the same fingerprint again reads nothing.
 */
export function contentHashOf(abs: string, fingerprint: JsonObject, maxBytes?: number): string | undefined {
	const key = `${abs}\0${String(fingerprint.size)}\0${String(fingerprint.mtimeMs)}`;
	const known = hashes.get(key);
	if (known !== undefined) return known;
	const bytes = readIfFile(abs, { followLink: false, ...(maxBytes === undefined ? {} : { maxBytes }) });
	if (bytes === undefined) return undefined;
	const hash = sha256(bytes);
	hashes.set(key, hash);
	if (hashes.size > MAX_HASHES) hashes.delete(hashes.keys().next().value as string);
	return hash;
}

/** A stat fingerprint, or `{ missing: true }` when nothing is there. */
export function fingerprintOf(abs: string): JsonObject {
	try {
		const st = statSync(abs);
		return { size: st.size, mtimeMs: st.mtimeMs };
	} catch {
		return { missing: true };
	}
}

/**
 * The bytes of a regular file, or undefined when there is none (a FIFO or device is never opened
 * for long: O_NONBLOCK). `followLink: false` refuses a link as the last component; `maxBytes`
 * refuses a larger file without reading it.
 */
export function readIfFile(abs: string, opts: { followLink?: boolean; maxBytes?: number } = {}): Buffer | undefined {
	let fd: number;
	try {
		fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK | (opts.followLink === false ? constants.O_NOFOLLOW : 0));
	} catch {
		return undefined;
	}
	try {
		const st = fstatSync(fd);
		return st.isFile() && st.size <= (opts.maxBytes ?? Number.POSITIVE_INFINITY) ? readFrom(fd, 0, st.size) : undefined;
	} catch {
		return undefined;
	} finally {
		closeSync(fd);
	}
}

/**
 * One planned file effect of a commit; `root` is the owner's folder the file must stay in
 * (checked again when it runs). A write's `mode` defaults to a plain shared file; a delete
 * removes the folders it leaves empty, from the file's own up to `emptyDirsUpTo`.
 */
export type FileOp =
	| { op: "write"; abs: string; root: string; bytes: Buffer; mode?: number }
	| { op: "delete"; abs: string; root: string; emptyDirsUpTo: string };

/** Mode of a copied file whose source anyone may execute (a Skill's scripts keep working). */
export const EXEC_FILE_MODE = 0o755;

/** Write a Skill file through the one atomic-write primitive, so pi never discovers a half-written Skill. */
function writeSkill(abs: string, bytes: Buffer, mode = SHARED_FILE_MODE): void {
	atomicWrite(abs, bytes, { mode });
}

/**
 * The folder of a file effect must still lead inside the owner's folder when the effect
 * runs (a link planted since staging would otherwise send a write or a delete elsewhere).
 */
function checkOpFolder(op: FileOp): string {
	const root = realOrSelf(op.root);
	checkContained(dirname(op.abs), root, "The Skill folder");
	return root;
}

/** Run the file operations in order; on failure undo what ran and rethrow. Returns the undo. */
export function runFileOps(ops: readonly FileOp[]): () => void {
	const undos: Array<() => void> = [];
	const undoAll = () => {
		for (const u of undos.reverse()) {
			try {
				u();
			} catch {
				// Best effort: the durable store is what counts, and it was not written.
			}
		}
		undos.length = 0;
	};
	try {
		for (const op of ops) {
			const root = checkOpFolder(op);
			const st = lstatOrUndefined(op.abs);
			if (st !== undefined && !st.isFile()) unsafePath(op.abs, kindOf(st), "a regular file");
			const previous = st?.isFile() ? readIfFile(op.abs) : undefined;
			const previousMode = st === undefined ? undefined : st.mode & 0o777;
			if (op.op === "write") {
				const made = ensureDirIn(dirname(op.abs), root, "The Skill folder", SHARED_DIR_MODE, SHARED_DIR_MODE);
				if (made !== undefined) undos.push(() => removeEmptyDirs(dirname(op.abs), made));
				writeSkill(op.abs, op.bytes, op.mode);
				undos.push(() => (previous === undefined ? removeFile(op.abs) : writeSkill(op.abs, previous, previousMode)));
			} else if (previous !== undefined) {
				removeFile(op.abs);
				undos.push(() => {
					ensureDirIn(dirname(op.abs), root, "The Skill folder", SHARED_DIR_MODE, SHARED_DIR_MODE);
					writeSkill(op.abs, previous, previousMode);
				});
				removeEmptyDirs(dirname(op.abs), op.emptyDirsUpTo);
			}
		}
	} catch (e) {
		undoAll();
		if (isStateError(e) && e.code === "corrupt") throw e;
		fail("io", `Could not write the compiled Skill files (${messageOf(e)}); nothing was committed.`, [], e);
	}
	return undoAll;
}

/** Remove `dir` and its parents up to and including `top` while they are empty real folders. */
function removeEmptyDirs(dir: string, top: string): void {
	for (let d = dir; inside(d, top); d = dirname(d)) {
		if (!lstatOrUndefined(d)?.isDirectory() || readdirSync(d).length > 0) return;
		rmdirSync(d);
		if (d === top) return;
	}
}

/**
 * A compiled Skill as found at its place: its bytes, or undefined when nothing is there. A
 * link, folder or FIFO there is refused (`unsafePath`), never followed.
 */
export function readCompiled(abs: string, root: string): Buffer | undefined {
	checkContained(dirname(abs), realOrSelf(root), "The Skill folder");
	return readRegular(abs);
}

/**
 * Write a compiled Skill only where nothing is (`createOnce`: nothing is ever replaced or
 * followed, and pi never sees a half-written Skill). The folder is created inside `root` only
 * (the checks the commit's file effects use), and removed again when the write fails. False
 * when something was already there.
 */
export function writeCompiledIfMissing(abs: string, root: string, bytes: Buffer, mode = SHARED_FILE_MODE): boolean {
	const dir = dirname(abs);
	const made = ensureDirIn(dir, realOrSelf(root), "The Skill folder", SHARED_DIR_MODE, SHARED_DIR_MODE);
	try {
		return createOnce(abs, bytes, mode);
	} catch (e) {
		if (made !== undefined) {
			try {
				removeEmptyDirs(dir, made);
			} catch {
				// Best effort: an empty folder left behind is harmless.
			}
		}
		throw e;
	}
}

/**
 * The hash of a compiled file as it is now: undefined when nothing is there, "other" when what
 * is there is not a regular file State Flow could have written (a link, a folder, a FIFO). Its
 * folder must lead inside `root`. Read once per stat fingerprint in this process, so the checks
 * behind every tool call do not hash a Skill's files again while they stay the same.
 */
export function compiledHashNow(abs: string, root: string): string | undefined {
	checkContained(dirname(abs), realOrSelf(root), "The Skill folder");
	const st = lstatOrUndefined(abs);
	if (st === undefined) return undefined;
	return (st.isFile() ? contentHashOf(abs, { size: st.size, mtimeMs: st.mtimeMs }) : undefined) ?? "other";
}

/** A file of a Skill's folder besides its `SKILL.md`, as read from the source. */
export interface FolderFile {
	/** Path inside the folder, `/`-separated. */
	rel: string;
	bytes: Buffer;
	executable: boolean;
}

/** How much of a Skill's folder an acquisition copies at most. */
export interface FolderLimits {
	files: number;
	bytes: number;
	depth: number;
}

/** Names never copied from a Skill's folder: hidden entries (`.git`, editor files) and installed packages. */
export function isLeftOut(name: string): boolean {
	return name.startsWith(".") || name === "node_modules";
}

/** A regular file of a Skill's folder as listed: where it is, its stat fingerprint and executable bit. */
export interface FolderEntry {
	/** Path inside the folder, `/`-separated. */
	rel: string;
	abs: string;
	size: number;
	mtimeMs: number;
	executable: boolean;
}

/**
 * The regular files a Skill's folder holds besides its top `SKILL.md` (scripts/, references/,
 * assets/), in name order, listed without following links and without reading them. Hidden
 * entries and `node_modules` are left out; links, FIFOs, devices, folders deeper than the limit
 * and folders reached through a swapped-in link are named in `skipped`. `excess` says which limit
 * the folder passes (then `entries` is incomplete and must not be used).
 */
export function skillFolderListing(dir: string, limits: FolderLimits): { entries: FolderEntry[]; skipped: string[]; excess?: string } {
	const top = realOrSelf(dir);
	const entries: FolderEntry[] = [];
	const skipped: string[] = [];
	let bytes = 0;
	const walk = (abs: string, rel: string[], depth: number): string | undefined => {
		// A folder swapped for a link since it was seen is not even listed.
		if (!inside(realOrSelf(abs), top)) {
			skipped.push(`${rel.join("/")}/ (it leads out of the Skill's folder)`);
			return undefined;
		}
		let names: string[];
		try {
			names = readdirSync(abs).sort();
		} catch {
			skipped.push(`${rel.join("/") || "."} (a folder that cannot be listed)`);
			return undefined;
		}
		for (const name of names) {
			if (isLeftOut(name) || (depth === 0 && name === "SKILL.md")) continue;
			const path = join(abs, name);
			const at = [...rel, name];
			const shown = at.join("/");
			const st = lstatOrUndefined(path);
			if (st === undefined) continue; // removed meanwhile
			if (st.isDirectory()) {
				if (depth + 1 >= limits.depth) skipped.push(`${shown}/ (nested deeper than ${limits.depth} levels)`);
				else {
					const over = walk(path, at, depth + 1);
					if (over !== undefined) return over;
				}
				continue;
			}
			if (!st.isFile()) {
				skipped.push(`${shown} (${kindOf(st)})`);
				continue;
			}
			if (entries.length >= limits.files) return `more than ${limits.files} files`;
			if (bytes + st.size > limits.bytes) return `more than ${limits.bytes / (1024 * 1024)} MiB`;
			bytes += st.size;
			entries.push({ rel: shown, abs: path, size: st.size, mtimeMs: st.mtimeMs, executable: (st.mode & 0o111) !== 0 });
		}
		return undefined;
	};
	const excess = walk(dir, [], 0);
	return excess === undefined ? { entries, skipped } : { entries, skipped, excess };
}

/** Whether a listed file's own folder still leads inside the Skill's folder `top` (a folder may be swapped for a link since the listing). */
export function stillInside(e: FolderEntry, top: string): boolean {
	return inside(realOrSelf(dirname(e.abs)), realOrSelf(top));
}

/**
 * The files of `skillFolderListing`, read (what acquiring copies): never through a link, nor
 * through a folder swapped for one since the listing; a file that changed meanwhile is skipped.
 */
export function skillFolderFiles(dir: string, limits: FolderLimits): { files: FolderFile[]; skipped: string[]; excess?: string } {
	const listing = skillFolderListing(dir, limits);
	if (listing.excess !== undefined) return { files: [], skipped: listing.skipped, excess: listing.excess };
	const files: FolderFile[] = [];
	const skipped = [...listing.skipped];
	let bytes = 0;
	for (const e of listing.entries) {
		const read = stillInside(e, dir) ? readIfFile(e.abs, { followLink: false, maxBytes: limits.bytes - bytes }) : undefined;
		if (read === undefined) {
			skipped.push(`${e.rel} (changed while it was read)`);
			continue;
		}
		bytes += read.length;
		files.push({ rel: e.rel, bytes: read, executable: e.executable });
	}
	return { files, skipped };
}

/** At most this much of a Skill's folder is copied besides `SKILL.md`; a larger folder is refused. */
export const SKILL_FOLDER_LIMITS = { files: 64, bytes: 4 * 1024 * 1024, depth: 8 } as const;

/** A path `compiledFiles` may name: relative, `/`-separated, inside the folder, nothing an acquisition never copies. */
export function isFolderPath(rel: string): boolean {
	const parts = rel.split("/");
	return (
		rel.length <= 1024 &&
		parts.length <= SKILL_FOLDER_LIMITS.depth &&
		rel !== "SKILL.md" &&
		parts.every((p) => p !== "" && p !== ".." && !p.includes("\\") && !p.includes("\0") && !isLeftOut(p))
	);
}
