/**
 * Whether recorded artifacts still match the disk (for the head, tool results and `/state`):
 * a file changed or gone, an acquired Skill's source or folder changed, a compiled copy edited
 * or missing. Read-only and bounded (hashes cached per stat fingerprint); split from the
 * compiler (`artifacts.ts`), which writes, so each stays one concept.
 */
import { dirname } from "node:path";
import { messageOf } from "../../core/errors.js";
import { jsonEqual } from "../../core/json.js";
import { inline } from "../../core/printable.js";
import type { JsonObject, Owner, OwnerState, StaleArtifact } from "../../core/types.js";
import {
	type ArtifactRoots,
	checkoutMark,
	compiledHashNow,
	contentHashOf,
	SKILL_FOLDER_LIMITS,
	fingerprintOf,
	isFolderPath,
	readCompiled,
	resolveArtifactKey,
	sha256,
	skillFolderListing,
	stillInside,
} from "./files.js";
import { compiledFilesOf, compiledOf, isObj, own } from "./compiler.js";

/** Artifacts whose file changed or disappeared since they were recorded (for the head and tool results). */
export function staleArtifacts(owner: Owner, state: OwnerState, roots: ArtifactRoots): StaleArtifact[] {
	const out: StaleArtifact[] = [];
	for (const key of Object.keys(state.artifacts)) {
		const value = state.artifacts[key];
		if (!isObj(value)) continue;
		try {
			const note = staleNote(owner, key, value, roots);
			if (note !== undefined) out.push({ owner, key, note });
		} catch {
			// A key that no longer resolves (e.g. a root moved) is not worth crashing a head render for.
		}
	}
	return out;
}

function staleNote(owner: Owner, key: string, value: JsonObject, roots: ArtifactRoots): string | undefined {
	const recorded = own(value, "fingerprint");
	if (isObj(recorded)) {
		const abs = resolveArtifactKey(owner, key, roots);
		const now = fingerprintOf(abs);
		if (!jsonEqual(now, recorded)) {
			// Recorded in another worktree of the project (which shares the store): this one's copy differs, nothing "changed".
			const mark = own(value, "checkout");
			const elsewhere = owner === "cwd" && typeof mark === "string" && mark !== checkoutMark(roots.cwd);
			if (now.missing === true) return elsewhere ? "file is not in this worktree" : "file is gone since it was recorded";
			if (recorded.missing === true) return "file exists now; patch the artifact to record it";
			// Another checkout or machine, or a `git checkout`, gives the same bytes another mtime:
			// where the content's hash was recorded (acquired Skills, files up to 4 MiB), the bytes decide.
			const hash = own(value, "sourceHash");
			if (typeof hash !== "string" || now.size !== recorded.size || contentHashOf(abs, now) !== hash) {
				const sizes = `(size ${String(recorded.size)} → ${String(now.size)})`;
				if (own(value, "kind") === "skill") return "source Skill changed since it was acquired; patch the artifact again to recompile";
				return elsewhere ? `file differs in this worktree ${sizes}` : `file changed since it was recorded ${sizes}`;
			}
		}
	}
	return sourceFolderNote(owner, key, value, roots) ?? compiledNote(owner, value, roots);
}

/** The folder of an acquired Skill's source in this checkout: where its key leads (territory-checked). */
export function sourceFolderOf(owner: Owner, key: string, roots: ArtifactRoots): string {
	return dirname(resolveArtifactKey(owner, key, roots));
}

/** Changes named in one note, at most; the rest are counted. */
const FOLDER_CHANGES_SHOWN = 3;

/**
 * What changed beside `SKILL.md` in the source folder of a Skill acquired with its folder: files
 * added, removed or edited since, judged against the hashes recorded for the copies (copied byte
 * for byte from there). Read as acquiring reads it: regular files only, no link followed.
 */
function sourceFolderNote(owner: Owner, key: string, value: JsonObject, roots: ArtifactRoots): string | undefined {
	// Only an acquired Skill's copy has a source folder to fall behind (`sourceHash`, with a compiled
	// copy): a Skill tracked where pi finds it is its own source, an inline one's is the state.
	if (typeof own(value, "sourceHash") !== "string" || compiledOf(owner, value, roots) === undefined) return undefined;
	const dir = sourceFolderOf(owner, key, roots);
	const listing = skillFolderListing(dir, SKILL_FOLDER_LIMITS);
	if (listing.excess !== undefined) return `source Skill's folder now holds ${listing.excess} besides SKILL.md; slim it, then patch the artifact again`;
	const recorded = new Map(compiledFilesOf(owner, value, roots).map((f) => [f.rel, f.hash]));
	const changes: string[] = [];
	for (const e of listing.entries) {
		if (!isFolderPath(e.rel)) continue;
		const hash = recorded.get(e.rel);
		// Hashed once per stat fingerprint in this process: an unchanged folder is not read again.
		if (hash === undefined) changes.push(`${e.rel} added`);
		else if (!stillInside(e, dir) || hash !== contentHashOf(e.abs, { size: e.size, mtimeMs: e.mtimeMs })) changes.push(`${e.rel} edited`);
		recorded.delete(e.rel);
	}
	for (const rel of recorded.keys()) changes.push(`${rel} removed`);
	if (changes.length === 0) return undefined;
	const more = changes.length > FOLDER_CHANGES_SHOWN ? ` and ${changes.length - FOLDER_CHANGES_SHOWN} more` : "";
	// File names come from the disk: a control character or line break in one is spelled out (it reaches the head).
	return `source Skill changed since it was acquired (${inline(changes.slice(0, FOLDER_CHANGES_SHOWN).join(", "))}${more}); patch the artifact again to recompile`;
}

/** What is wrong with the compiled copy of a Skill artifact, if anything. */
function compiledNote(owner: Owner, value: JsonObject, roots: ArtifactRoots): string | undefined {
	const compiled = compiledOf(owner, value, roots);
	if (compiled) {
		let bytes: Buffer | undefined;
		try {
			// Never through a link, nor from a FIFO: what is there instead is the note.
			bytes = readCompiled(compiled.abs, compiled.root);
		} catch (e) {
			return `compiled Skill ${String(value.compiledTo)} cannot be checked: ${messageOf(e)}`;
		}
		if (bytes === undefined) return `compiled Skill ${String(value.compiledTo)} is gone; patch the same artifact again to recompile it`;
		if (sha256(bytes) !== compiled.hash) return editedNote(value);
		for (const f of compiledFilesOf(owner, value, roots)) {
			let now: string | undefined;
			try {
				now = compiledHashNow(f.abs, f.root);
			} catch (e) {
				return `compiled Skill ${String(value.compiledTo)}: ${f.rel} cannot be checked: ${messageOf(e)}`;
			}
			if (now === undefined) return `compiled Skill ${String(value.compiledTo)} is missing its ${f.rel}; patch the same artifact again to recompile it`;
			if (now !== f.hash) return `compiled Skill ${String(value.compiledTo)}: ${f.rel} was edited outside State Flow`;
		}
	}
	return undefined;
}

/** The head's note for a compiled Skill whose file holds other bytes than State Flow wrote (or would write). */
export function editedNote(value: JsonObject): string {
	return `compiled Skill ${String(value.compiledTo)} was edited outside State Flow`;
}
