/**
 * The artifact compiler: runs under the owner locks inside `Stores.commit` (as `prepare`),
 * validates every touched `artifacts` entry, rewrites the patch with compiler-owned fields
 * (fingerprints, hashes, where a Skill compiled to) and returns the file effects to run
 * with the commit. It has no side effects itself: a refusal leaves every byte unchanged.
 * Whether recorded artifacts still match the disk is `stale.ts`.
 */
import { existsSync } from "node:fs";
import { lstatOrUndefined } from "../fs-util.js";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fail, messageOf } from "../../core/errors.js";
import { getOwn, isPlainObject, setOwn } from "../../core/json.js";
import { applyMergePatch, mergeDiff } from "../../core/merge.js";
import type { CanonicalPatch, Json, JsonObject, Owner, OwnerHistory, PlanePatch } from "../../core/types.js";
import { ARTIFACT_COMPILER_FIELDS, OWNERS, isOneOf } from "../../core/types.js";
import {
	type ArtifactRoots,
	EXEC_FILE_MODE,
	type FileOp,
	contentHashOf,
	checkoutMark,
	fingerprintOf,
	ownerRoot,
	readCompiled,
	readIfFile,
	realOrSelf,
	resolveArtifactKey,
	SKILL_FOLDER_LIMITS,
	isFolderPath,
	runFileOps,
	sha256,
	skillFolderFiles,
} from "./files.js";
import type { KeyLens } from "../../core/artifact-keys.js";
import { type FrontmatterParser, renderSkill, simpleFrontmatter, skillDescriptionProblem, skillKey, skillKeys, skillNameProblem } from "./skill-format.js";

/** What `prepare` hands back to `Stores.commit`: the patch to stage and its file effects. */
export interface PreparedEffects {
	patch: CanonicalPatch;
	/** Runs after staging succeeded, before the durable write. Rolls itself back if it fails. */
	apply(): void;
	/** Undoes `apply` when the durable write fails. */
	revert(): void;
	/** Human-readable notes (e.g. a compiled Skill left in place because it was edited). */
	notes: string[];
	/** One entry per touched artifact, for `details.artifacts`: `{ owner, key, action, compiledTo? }`. */
	artifacts: JsonObject[];
	/**
	 * True when `apply` has file work even if the staged patch turns out to be a no-op (a
	 * compiled Skill deleted by hand and patched again): the commit should still run `apply`.
	 */
	hasEffects: boolean;
}

export { type ArtifactRoots, SKILL_FOLDER_LIMITS } from "./files.js";

export interface ArtifactCompilerOptions {
	/** pi's `parseFrontmatter`, so acquired Skills are read exactly as pi reads them. */
	parseFrontmatter?: FrontmatterParser;
	/** How messages spell CWD and Session keys: as the model wrote them (the folder pi runs in). */
	lens?: KeyLens;
}

export function own(obj: JsonObject | undefined, key: string): Json | undefined {
	return obj === undefined ? undefined : getOwn(obj, key);
}

export const isObj = (v: Json | undefined): v is JsonObject => isPlainObject(v);

/** What a compiled artifact owns on disk: the file it wrote and the hash of what it wrote. */
export interface Compiled {
	abs: string;
	hash: string;
	/** The owner's folder the compiled file must stay in. */
	root: string;
	/** The Skill's own folder (`…/skills/<name>`): removing its last file removes it. */
	folder: string;
}

/** A file copied beside an acquired Skill's `SKILL.md` (`compiledFiles`): its place in the Skill's folder and mode. */
export interface CompiledFile extends Compiled {
	/** `/`-separated path inside the Skill's folder. */
	rel: string;
	executable: boolean;
}

/**
 * The files an acquired Skill's compiled copy holds besides `SKILL.md`, from `compiledFiles`.
 * Only well-formed paths inside the compiled Skill's own folder count: a forged entry can never
 * aim a write or a deletion elsewhere.
 */
export function compiledFilesOf(owner: Owner, value: Json | undefined, roots: ArtifactRoots): CompiledFile[] {
	const c = compiledOf(owner, value, roots);
	const files = isObj(value) ? own(value, "compiledFiles") : undefined;
	if (c === undefined || !isObj(files)) return [];
	const out: CompiledFile[] = [];
	for (const rel of Object.keys(files)) {
		const f = files[rel];
		const hash = isObj(f) ? own(f, "hash") : undefined;
		if (typeof hash !== "string" || !isFolderPath(rel)) continue;
		out.push({ rel, abs: join(c.folder, ...rel.split("/")), hash, root: c.root, folder: c.folder, executable: isObj(f) && own(f, "executable") === true });
	}
	return out;
}

/** Every file a compiled artifact owns: the files beside it first, then its `SKILL.md` (the order removal needs). */
function ownedFiles(owner: Owner, value: Json | undefined, roots: ArtifactRoots): Compiled[] {
	const c = compiledOf(owner, value, roots);
	return c === undefined ? [] : [...compiledFilesOf(owner, value, roots), c];
}

/** Where a compiled Skill artifact's file is and the hash State Flow wrote there; undefined for anything else. */
export function compiledOf(owner: Owner, value: Json | undefined, roots: ArtifactRoots): Compiled | undefined {
	if (owner === "session" || !isObj(value)) return undefined;
	const to = own(value, "compiledTo");
	const hash = own(value, "compiledHash");
	if (typeof to !== "string" || typeof hash !== "string") return undefined;
	// Recompute the place from the owner's Skill folder: a forged `compiledTo` can never point elsewhere.
	const m = /^(?:\.pi\/|\.agents\/)?skills\/([a-z0-9-]+)\/SKILL\.md$/.exec(to);
	if (!m || !skillKeys(owner, m[1] as string).includes(to)) return undefined;
	const abs = resolve(ownerRoot(owner, roots), to);
	return { abs, hash, root: ownerRoot(owner, roots), folder: dirname(abs) };
}

/** Per-commit planning context: the file operations and the Skill targets already claimed. */
interface Plan {
	ops: FileOp[];
	claimed: Map<string, string>;
	notes: string[];
	report: JsonObject[];
}

/** What happened to one artifact, in words an operator and the model both understand. */
function actionOf(owner: Owner, value: JsonObject): string {
	if (value.kind === "file") return "recorded";
	if (owner === "session") return "kept in session";
	if (value.body !== undefined) return "compiled";
	return value.compiledHash === undefined ? "tracked in place" : "acquired";
}

/** Build the artifact compiler `Stores.commit` calls as `prepare`. */
export function createArtifactCompiler(
	roots: ArtifactRoots,
	options: ArtifactCompilerOptions = {},
): (patch: CanonicalPatch, histories: Partial<Record<Owner, OwnerHistory>>) => PreparedEffects {
	const parse = options.parseFrontmatter ?? simpleFrontmatter;
	return (patch, histories) => {
		const plan: Plan = { ops: [], claimed: new Map(), notes: [], report: [] };
		const out: CanonicalPatch = {};
		for (const owner of OWNERS) {
			const planes = patch[owner];
			if (planes === undefined) continue;
			const ap = planes.artifacts;
			if (ap === undefined || Object.keys(ap).length === 0) {
				out[owner] = planes;
				continue;
			}
			const current = histories[owner]?.state.artifacts ?? {};
			const rewritten: JsonObject = {};
			for (const key of Object.keys(ap)) {
				const pv = ap[key] as Json;
				const cur = own(current, key);
				if (pv === null) {
					const deleted = removeOwned(ownedFiles(owner, cur, roots), plan);
					setOwn(rewritten, key, null);
					if (cur !== undefined) plan.report.push({ owner, key, action: deleted ? "removed with its compiled Skill" : "removed" });
					continue;
				}
				const merged = applyMergePatch(cur, pv);
				const spell = owner === "global" || options.lens === undefined ? (k: string) => k : options.lens.toModel;
				const field = `\`${owner}.artifacts[${JSON.stringify(spell(key))}]\``;
				const desired = compileEntry({ owner, key, field, spell, path: [owner, "artifacts", key], current, roots, parse, plan }, merged);
				// Files the old value owned and the new one does not (a renamed Skill, a file gone from an
				// acquired Skill's folder) are deleted while still State Flow's; a key naming its own compiled
				// file (turned into a file artifact) keeps it.
				const kept = new Set([...ownedFiles(owner, desired, roots).map((f) => f.abs), resolve(ownerRoot(owner, roots), key)]);
				removeOwned(
					ownedFiles(owner, cur, roots).filter((f) => !kept.has(f.abs)),
					plan,
				);
				const entry: JsonObject = { owner, key, action: actionOf(owner, desired) };
				if (typeof desired.compiledTo === "string") entry.compiledTo = desired.compiledTo;
				plan.report.push(entry);
				const d = mergeDiff(cur, desired);
				if (cur === undefined || !isObj(d) || Object.keys(d).length > 0) setOwn(rewritten, key, d);
			}
			out[owner] = { ...planes, artifacts: rewritten } satisfies PlanePatch;
		}
		const ops = plan.ops;
		let undo: (() => void) | undefined;
		return {
			patch: out,
			notes: plan.notes,
			artifacts: plan.report,
			hasEffects: ops.length > 0,
			apply() {
				undo = runFileOps(ops);
			},
			revert() {
				undo?.();
				undo = undefined;
			},
		};
	};
}

/**
 * Plan deleting files a compiled artifact owns, each with the folders it leaves empty up to its
 * Skill's folder; true when the last one (a `SKILL.md`, see `ownedFiles`) will be deleted.
 */
function removeOwned(files: readonly Compiled[], plan: Plan): boolean {
	let deleted = false;
	for (const c of files) {
		// A Skill folder leading outside, or a link, folder or FIFO where the file was written, is refused: never followed or read.
		const bytes = readCompiled(c.abs, c.root);
		deleted = false;
		if (bytes === undefined) continue;
		// Only delete what State Flow wrote: an edited or foreign file stays.
		if (sha256(bytes) === c.hash) {
			plan.ops.push({ op: "delete", abs: c.abs, root: c.root, emptyDirsUpTo: c.folder });
			deleted = true;
		} else plan.notes.push(`Left ${c.abs} in place: it changed after State Flow compiled it.`);
	}
	return deleted;
}

/** One artifact being compiled: where it lives, how errors name it, and the commit's context. */
interface Entry {
	owner: Owner;
	key: string;
	/** `` `cwd.artifacts["key"]` `` for messages, and any key of this owner, in the writer's spelling. */
	field: string;
	spell: (key: string) => string;
	/** The error path of the entry. */
	path: string[];
	/** The owner's artifacts before this commit. */
	current: JsonObject;
	roots: ArtifactRoots;
	parse: FrontmatterParser;
	plan: Plan;
}

/** File artifacts up to this size record `sourceHash`; larger ones are judged by their fingerprint alone. */
export const MAX_HASHED_FILE_BYTES = 4 * 1024 * 1024;

function compileEntry(e: Entry, merged: Json): JsonObject {
	const abs = resolveArtifactKey(e.owner, e.key, e.roots, e.field);
	const kind = isObj(merged) ? own(merged, "kind") : undefined;
	if (!isObj(merged) || (kind !== "file" && kind !== "skill"))
		fail("artifact", `${e.field} must be an object with \`kind\` "file" or "skill", e.g. {"kind":"file","note":"why it matters"}.`, e.path);
	const value: JsonObject = {};
	for (const k of Object.keys(merged)) if (!isOneOf(ARTIFACT_COMPILER_FIELDS, k)) setOwn(value, k, merged[k] as Json);
	if (kind === "file") {
		const fingerprint = fingerprintOf(abs);
		value.fingerprint = fingerprint;
		// The bytes' hash tells an unchanged file under another mtime (another checkout or machine,
		// a `git checkout`) from a changed one; the checkout, "changed" from "differs in another worktree".
		const size = fingerprint.size;
		const hash = typeof size === "number" && size <= MAX_HASHED_FILE_BYTES ? contentHashOf(abs, fingerprint, MAX_HASHED_FILE_BYTES) : undefined;
		if (hash !== undefined) value.sourceHash = hash;
		if (e.owner === "cwd") value.checkout = checkoutMark(e.roots.cwd);
		return value;
	}
	return own(value, "body") !== undefined ? compileAuthored(e, abs, value) : compileAcquired(e, abs, value);
}

function compileAuthored(e: Entry, abs: string, value: JsonObject): JsonObject {
	const { field, path } = e;
	const { name, description, body } = value;
	const nameProblem = skillNameProblem(name);
	if (nameProblem) fail("artifact", `${field}: ${nameProblem}.`, [...path, "name"]);
	const descProblem = skillDescriptionProblem(description);
	if (descProblem) fail("artifact", `${field}: ${descProblem}.`, [...path, "description"]);
	if (typeof body !== "string") fail("artifact", `${field}: \`body\` must be the Skill's Markdown text (a string).`, [...path, "body"]);
	const [expected, ...also] = skillKeys(e.owner, name as string);
	if (e.key !== expected && !also.includes(e.key))
		fail(
			"artifact",
			`${field}: an inline Skill's key is the path it compiles to; for \`name\` "${name as string}" use artifacts[${JSON.stringify(e.spell(expected as string))}]${also.map((k) => ` or artifacts[${JSON.stringify(e.spell(k))}] (found from every subfolder)`).join("")} (the folder must equal the name).`,
			path,
		);
	if (e.owner === "session") return value; // Session Skills stay in the session: validated, never written.
	const text = renderSkill(e.owner, e.key, name as string, description as string, body);
	const back = e.parse(text).frontmatter;
	if (back.name !== name || back.description !== description)
		fail("artifact", `${field}: \`description\` does not survive as Skill frontmatter; remove unusual control characters.`, [...path, "description"]);
	const bytes = Buffer.from(text, "utf8");
	claimTarget(e, abs, bytes);
	value.compiledTo = e.key;
	value.compiledHash = sha256(bytes);
	return value;
}

function compileAcquired(e: Entry, abs: string, value: JsonObject): JsonObject {
	const source = readIfFile(abs);
	if (source === undefined || !e.key.endsWith(".md"))
		fail(
			"artifact",
			`${e.field}: no Skill file there. To acquire a Skill the key is the exact path of an existing SKILL.md; to author one, give \`name\`, \`description\` and \`body\`.`,
			e.path,
		);
	let fm: Record<string, unknown>;
	try {
		fm = e.parse(source.toString("utf8")).frontmatter;
	} catch (err) {
		// pi's YAML parser throws on malformed frontmatter; pi itself would skip such a Skill.
		const why = messageOf(err).split("\n")[0];
		return fail("artifact", `${e.field}: the Skill's frontmatter is not valid YAML (${why}). Fix the file, then patch again.`, e.path);
	}
	const name = typeof fm.name === "string" && fm.name !== "" ? fm.name : basename(dirname(abs));
	const problem = skillNameProblem(name) ?? skillDescriptionProblem(fm.description);
	if (problem) fail("artifact", `${e.field}: the Skill's frontmatter is not valid for pi: ${problem}. Fix the file, then patch again.`, e.path);
	value.name = name;
	value.sourceHash = sha256(source);
	value.fingerprint = fingerprintOf(abs);
	value.provenance = { acquiredFrom: realOrSelf(abs) };
	if (e.owner === "session") return value;
	// A Skill already in one of its places is tracked there; any other is copied to the default place.
	const targetKey = skillKeys(e.owner, name).includes(e.key) ? e.key : skillKey(e.owner, name);
	// The Skill folder itself may be a link out of the root: judge the copy's place like a key.
	const target = resolveArtifactKey(e.owner, targetKey, e.roots);
	value.compiledTo = targetKey;
	if (realOrSelf(target) === realOrSelf(abs)) return value; // already where pi finds it: tracked, not copied
	// An identical copy State Flow did not write is tracked, never owned (an acquired copy has no marker line).
	const existing = readIfFile(target);
	if (existing !== undefined && existing.equals(source) && !ownsFile(e, target, existing)) return value;
	claimTarget(e, target, source);
	value.compiledHash = sha256(source);
	copyFolder(e, abs, target, value);
	return value;
}

/**
 * Copy what an acquired Skill's folder holds besides `SKILL.md` (scripts/, references/, assets/)
 * into the copy's folder, executable files staying executable, each recorded in `compiledFiles`
 * with its hash. What is not a regular file is not copied, and the result says so.
 */
function copyFolder(e: Entry, source: string, target: string, value: JsonObject): void {
	const folder = skillFolderFiles(dirname(source), SKILL_FOLDER_LIMITS);
	if (folder.excess !== undefined)
		fail(
			"artifact",
			`${e.field}: the Skill's folder holds ${folder.excess} besides SKILL.md; acquiring copies the whole folder (at most ${SKILL_FOLDER_LIMITS.files} files, 4 MiB). Slim the folder, then patch again.`,
			e.path,
		);
	const files: JsonObject = {};
	const skipped = [...folder.skipped];
	for (const f of folder.files) {
		if (!isFolderPath(f.rel)) {
			skipped.push(`${f.rel} (a name State Flow does not copy)`);
			continue;
		}
		claimTarget(e, join(dirname(target), ...f.rel.split("/")), f.bytes, f.executable);
		setOwn(files, f.rel, f.executable ? { hash: sha256(f.bytes), executable: true } : { hash: sha256(f.bytes) });
	}
	if (Object.keys(files).length > 0) value.compiledFiles = files;
	if (skipped.length > 0) e.plan.notes.push(`${e.field}: not copied from the Skill's folder (regular files only): ${skipped.join(", ")}.`);
}

/** True when this key's earlier version wrote exactly these bytes to `target` (its `SKILL.md` or a file beside it). */
function ownsFile(e: Entry, target: string, bytes: Buffer): boolean {
	const hash = sha256(bytes);
	return ownedFiles(e.owner, own(e.current, e.key), e.roots).some((c) => c.abs === target && c.hash === hash);
}

/**
 * Plan writing `bytes` to `target` (`executable` for a copied script), refusing a path another
 * artifact or a foreign file holds.
 */
function claimTarget(e: Entry, target: string, bytes: Buffer, executable?: boolean): void {
	const { field, path, spell } = e;
	const rel = relative(ownerRoot(e.owner, e.roots), target);
	const prior = e.plan.claimed.get(target);
	if (prior !== undefined) fail("artifact", `${field} and artifacts[${JSON.stringify(spell(prior))}] both compile to \`${rel}\`; rename one Skill.`, path);
	for (const k of Object.keys(e.current)) {
		if (k === e.key) continue;
		if (ownedFiles(e.owner, e.current[k], e.roots).some((c) => c.abs === target))
			fail(
				"artifact",
				`${field}: \`${rel}\` is already compiled from artifacts[${JSON.stringify(e.spell(k))}]; remove that artifact first or use another name.`,
				path,
			);
	}
	const existing = readIfFile(target);
	// A file byte-identical to this compile (marker included) is adopted: e.g. a clone with the compiled Skill in git.
	if (existing !== undefined && !existing.equals(bytes) && !ownsFile(e, target, existing))
		fail(
			"artifact",
			executable === undefined
				? `${field}: \`${rel}\` already exists and State Flow did not write it (or it was edited since). Acquire it instead with artifacts[${JSON.stringify(e.spell(rel.split(sep).join("/")))}] = {"kind":"skill"}, or move it away first.`
				: `${field}: \`${rel}\` (a file of the Skill's folder) already exists and State Flow did not write it (or it was edited since); move it away first.`,
			path,
		);
	if (existsSync(target) && existing === undefined) fail("artifact", `${field}: \`${rel}\` exists and is not a file; move it away first.`, path);
	e.plan.claimed.set(target, e.key);
	// Same bytes under another executable bit (the source was made executable since) are written again.
	const modeMoved = executable !== undefined && existing !== undefined && (((lstatOrUndefined(target)?.mode ?? 0) & 0o111) !== 0) !== executable;
	if (existing === undefined || !existing.equals(bytes) || modeMoved)
		e.plan.ops.push({ op: "write", abs: target, root: ownerRoot(e.owner, e.roots), bytes, ...(executable ? { mode: EXEC_FILE_MODE } : {}) });
}
