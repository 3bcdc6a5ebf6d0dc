/**
 * The artifact compiler's file side: where an artifact key points (territory checks,
 * symlinks resolved), stat fingerprints, hashes, and the commit's file effects, each
 * written atomically (temp file, fsync, rename) and undone in reverse on failure.
 */
import { createHash } from "node:crypto";
import {
	closeSync,
	fsyncSync,
	mkdirSync,
	openSync,
	readdirSync,
	readFileSync,
	realpathSync,
	renameSync,
	rmdirSync,
	statSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { basename, dirname, isAbsolute, resolve, sep } from "node:path";
import { fail } from "../core/errors.js";
import type { JsonObject, Owner } from "../core/types.js";

/** The folders artifact keys are relative to: CWD (and Session) → `cwd`, Global → `agentDir`. */
export interface ArtifactRoots {
	cwd: string;
	agentDir: string;
}

/** The root an owner's artifact keys are relative to. */
export function ownerRoot(owner: Owner, roots: ArtifactRoots): string {
	return owner === "global" ? roots.agentDir : roots.cwd;
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest. */
export function realOrSelf(path: string): string {
	// Resolve symlinks through the nearest existing ancestor, so a new file below a link is judged by the link's target.
	let p = path;
	const rest: string[] = [];
	for (;;) {
		try {
			return resolve(realpathSync(p), ...rest);
		} catch {
			const parent = dirname(p);
			if (parent === p) return path;
			rest.unshift(basename(p));
			p = parent;
		}
	}
}

/** True when `path` is `root` or below it (both absolute, already resolved). */
export function inside(path: string, root: string): boolean {
	return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The owner whose territory an absolute path lies in (the most specific root), if any. */
export function territoryOf(absPath: string, roots: ArtifactRoots): "global" | "cwd" | undefined {
	const real = realOrSelf(absPath);
	const g = realOrSelf(resolve(roots.agentDir));
	const c = realOrSelf(resolve(roots.cwd));
	const inG = inside(real, g);
	const inC = inside(real, c);
	if (inG && inC) return g.length >= c.length ? "global" : "cwd";
	return inG ? "global" : inC ? "cwd" : undefined;
}

const ROOT_NAME: Record<Owner, string> = { global: "the agent directory", cwd: "the project directory", session: "the project directory" };

/** Resolve an artifact key to an absolute path, refusing keys outside the owner's territory. */
export function resolveArtifactKey(owner: Owner, key: string, roots: ArtifactRoots): string {
	const path = [owner, "artifacts", key];
	const field = `\`${owner}.artifacts[${JSON.stringify(key)}]\``;
	if (key === "" || key.includes("\0")) fail("artifact", `${field}: an artifact key must be a file path relative to ${ROOT_NAME[owner]}.`, path);
	const root = resolve(ownerRoot(owner, roots));
	const abs = isAbsolute(key) ? resolve(key) : resolve(root, key);
	if (!inside(abs, root) || abs === root)
		fail("artifact", `${field} is outside ${ROOT_NAME[owner]} (${root}); use a path inside it, relative to it.`, path);
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

/** A stat fingerprint, or `{ missing: true }` when nothing is there. */
export function fingerprintOf(abs: string): JsonObject {
	try {
		const st = statSync(abs);
		return { size: st.size, mtimeMs: st.mtimeMs };
	} catch {
		return { missing: true };
	}
}

/** The bytes of a regular file, or undefined when there is none. */
export function readIfFile(abs: string): Buffer | undefined {
	try {
		return statSync(abs).isFile() ? readFileSync(abs) : undefined;
	} catch {
		return undefined;
	}
}

/** One planned file effect of a commit. */
export type FileOp = { op: "write"; abs: string; bytes: Buffer } | { op: "delete"; abs: string; removeEmptyDir: boolean };

/** Write through a temp file, fsync and rename, so pi never discovers a half-written Skill. */
function atomicWrite(abs: string, bytes: Buffer): void {
	const tmp = `${abs}.${process.pid}.${Date.now()}.tmp`;
	const fd = openSync(tmp, "w");
	try {
		writeSync(fd, bytes);
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
	renameSync(tmp, abs);
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
			const previous = readIfFile(op.abs);
			if (op.op === "write") {
				const made = mkdirSync(dirname(op.abs), { recursive: true });
				if (made !== undefined) undos.push(() => removeEmptyDirs(dirname(op.abs), made));
				atomicWrite(op.abs, op.bytes);
				undos.push(() => (previous === undefined ? unlinkSync(op.abs) : atomicWrite(op.abs, previous)));
			} else if (previous !== undefined) {
				unlinkSync(op.abs);
				undos.push(() => {
					mkdirSync(dirname(op.abs), { recursive: true });
					atomicWrite(op.abs, previous);
				});
				if (op.removeEmptyDir) removeEmptyDirs(dirname(op.abs), dirname(op.abs));
			}
		}
	} catch (e) {
		undoAll();
		fail("io", `Could not write the compiled Skill files (${e instanceof Error ? e.message : String(e)}); nothing was committed.`, [], e);
	}
	return undoAll;
}

/** Remove `dir` and its parents up to and including `top` while they are empty. */
function removeEmptyDirs(dir: string, top: string): void {
	for (let d = dir; inside(d, top); d = dirname(d)) {
		if (readdirSync(d).length > 0) return;
		rmdirSync(d);
		if (d === top) return;
	}
}
