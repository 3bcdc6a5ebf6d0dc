/**
 * Compiled Skills in this checkout: the state of a shared owner (another machine, another
 * checkout, a restored store) can name a compiled Skill whose file is not here. When the host
 * loads the owner, each such file is written where it is missing — never over a file that
 * holds other bytes, never through a link — and what cannot be written is reported with the
 * head's stale-artifact notes. Never a transition: the state already says what the file is.
 *
 * The cost per load is bounded by what changed: `CompiledSkills` remembers each owner's seq
 * and looks again only at the artifacts the transitions since touched (all of them when the
 * history cannot tell), plus the few it could not settle last time.
 */
import { messageOf } from "../../core/errors.js";
import { getOwn, isPlainObject } from "../../core/json.js";
import type { Json, JsonObject, OwnerHistory, SharedOwner, StaleArtifact } from "../../core/types.js";
import { dirname, join } from "node:path";
import {
	type ArtifactRoots,
	EXEC_FILE_MODE,
	inside,
	readCompiled,
	readIfFile,
	realOrSelf,
	resolveArtifactKey,
	sha256,
	writeCompiledIfMissing,
} from "./files.js";
import { type Compiled, type CompiledFile, compiledFilesOf, compiledOf } from "./compiler.js";
import { editedNote, sourceFolderOf } from "./stale.js";
import { renderSkill } from "./skill-format.js";

/** What one compiled Skill artifact looks like in this checkout after materialising it. */
export type Materialised = { status: "present" | "written"; abs: string } | { status: "problem"; note: string };

/**
 * The bytes the compiled file must hold, rebuilt from the state (inline Skill) or copied from
 * the acquired source in this checkout; a note when they cannot be had with the recorded hash.
 */
function expectedBytes(owner: SharedOwner, key: string, value: JsonObject, roots: ArtifactRoots, c: Compiled): Buffer | string {
	const { name, description, body } = value;
	if (body !== undefined) {
		const ok = typeof name === "string" && typeof description === "string" && typeof body === "string";
		const bytes = ok ? Buffer.from(renderSkill(owner, key, name, description, body), "utf8") : undefined;
		if (bytes !== undefined && sha256(bytes) === c.hash) return bytes;
		return `compiled Skill ${String(value.compiledTo)} is missing and its text here differs from the recorded compiledHash (another State Flow version wrote it?); patch the same artifact again to recompile it`;
	}
	const source = readIfFile(resolveArtifactKey(owner, key, roots));
	if (source !== undefined && sha256(source) === c.hash) return source;
	return `compiled Skill ${String(value.compiledTo)} is missing and its source here is missing or differs from the one acquired; patch the same artifact again once this checkout holds the source`;
}

/**
 * Make one artifact's compiled Skill present in this checkout: undefined when the artifact
 * compiled nothing State Flow wrote (a file, a Session Skill, a Skill tracked in place).
 */
export function materialiseCompiled(owner: SharedOwner, key: string, value: Json | undefined, roots: ArtifactRoots): Materialised | undefined {
	const c = compiledOf(owner, value, roots);
	if (c === undefined || !isPlainObject(value)) return undefined;
	try {
		const skill = materialiseSkill(owner, key, value, roots, c);
		if (skill.status === "problem") return skill;
		// The files beside an acquired Skill's copy, from the same source folder, each under its recorded hash.
		for (const f of compiledFilesOf(owner, value, roots)) {
			const note = materialiseFile(owner, key, value, roots, f);
			if (note !== undefined) return { status: "problem", note };
		}
		return skill;
	} catch (e) {
		return { status: "problem", note: `compiled Skill ${String(getOwn(value, "compiledTo"))} was not written: ${messageOf(e)}` };
	}
}

function materialiseSkill(owner: SharedOwner, key: string, value: JsonObject, roots: ArtifactRoots, c: Compiled): Materialised {
	for (let attempt = 0; attempt < 2; attempt++) {
		const found = readCompiled(c.abs, c.root);
		if (found !== undefined) return sha256(found) === c.hash ? { status: "present", abs: c.abs } : { status: "problem", note: editedNote(value) };
		const bytes = expectedBytes(owner, key, value, roots, c);
		if (typeof bytes === "string") return { status: "problem", note: bytes };
		// The place passes the territory checks of any key first (a Skill folder linked elsewhere is refused).
		resolveArtifactKey(owner, String(getOwn(value, "compiledTo")), roots);
		// Another process may write it first: then judge what it wrote, like any file found there.
		if (writeCompiledIfMissing(c.abs, c.root, bytes)) return { status: "written", abs: c.abs };
	}
	return { status: "problem", note: editedNote(value) };
}

/** Make one file beside an acquired Skill's copy present; a note when it cannot be had with its recorded hash. */
function materialiseFile(owner: SharedOwner, key: string, value: JsonObject, roots: ArtifactRoots, f: CompiledFile): string | undefined {
	const skill = String(getOwn(value, "compiledTo"));
	for (let attempt = 0; attempt < 2; attempt++) {
		const found = readCompiled(f.abs, f.root);
		if (found !== undefined) return sha256(found) === f.hash ? undefined : `compiled Skill ${skill}: ${f.rel} was edited outside State Flow`;
		const folder = sourceFolderOf(owner, key, roots);
		const source = join(folder, ...f.rel.split("/"));
		// Never through a link swapped into the source folder: its file must lie inside that folder.
		const bytes = inside(realOrSelf(dirname(source)), realOrSelf(folder)) ? readIfFile(source, { followLink: false }) : undefined;
		if (bytes === undefined || sha256(bytes) !== f.hash)
			return `compiled Skill ${skill} is missing its ${f.rel} and the source here is missing or differs from the one acquired; patch the same artifact again once this checkout holds the source`;
		if (writeCompiledIfMissing(f.abs, f.root, bytes, f.executable ? EXEC_FILE_MODE : undefined)) return undefined;
	}
	return `compiled Skill ${skill}: ${f.rel} was edited outside State Flow`;
}

/** One refresh of an owner: what was written now, what is in place, what could not be settled. */
export interface OwnerSkills {
	written: string[];
	/** Every compiled Skill of the owner present in this checkout with State Flow's bytes. */
	present: string[];
	problems: StaleArtifact[];
	/** Problems not reported by the previous refresh (for telling the user once). */
	newProblems: StaleArtifact[];
}

interface Seen {
	/** Where the owner's state and files live (store identity and root): another place starts over. */
	place: string;
	seq: number;
	/** Id of transition `seq`, when retained: a store replaced under the same seq starts over. */
	id: string | undefined;
	present: Map<string, string>;
	problems: Map<string, string>;
}

/** Artifact keys that transitions after `seen` touched, or undefined when the retained history cannot say. */
function touchedSince(h: OwnerHistory, seen: Seen): Set<string> | undefined {
	if (h.seq < seen.seq) return undefined;
	const from = h.tail.findIndex((r) => r.seq === seen.seq);
	const start = from >= 0 && h.tail[from]?.id === seen.id ? from + 1 : seen.seq === 0 && h.tail[0]?.seq === 1 ? 0 : -1;
	if (start < 0) return undefined;
	const keys = new Set<string>();
	for (const r of h.tail.slice(start)) {
		for (const plane of [r.patch.artifacts, r.undo.artifacts]) if (plane !== undefined) for (const k of Object.keys(plane)) keys.add(k);
	}
	return keys;
}

/** Per-owner memory of the last refresh, keyed by the owner's seq. */
export class CompiledSkills {
	readonly #seen = new Map<SharedOwner, Seen>();

	/** Materialise the owner's compiled Skills that changed since the last refresh (all, the first time). */
	refresh(owner: SharedOwner, h: OwnerHistory, place: string, roots: ArtifactRoots): OwnerSkills {
		const prev = this.#seen.get(owner);
		const id = h.tail.at(-1)?.seq === h.seq ? h.tail.at(-1)?.id : undefined;
		const same = prev !== undefined && prev.place === place;
		const touched = same ? (prev.seq === h.seq && prev.id === id ? new Set<string>() : touchedSince(h, prev)) : undefined;
		const seen: Seen = {
			place,
			seq: h.seq,
			id,
			present: touched === undefined ? new Map() : new Map(prev?.present),
			problems: touched === undefined ? new Map() : new Map(prev?.problems),
		};
		const keys = touched === undefined ? Object.keys(h.state.artifacts) : [...touched, ...seen.problems.keys()];
		const written: string[] = [];
		for (const key of new Set(keys)) {
			seen.present.delete(key);
			seen.problems.delete(key);
			const m = materialiseCompiled(owner, key, getOwn(h.state.artifacts, key), roots);
			if (m === undefined) continue;
			if (m.status === "problem") seen.problems.set(key, m.note);
			else seen.present.set(key, m.abs);
			if (m.status === "written") written.push(m.abs);
		}
		this.#seen.set(owner, seen);
		const problems = [...seen.problems].map(([key, note]) => ({ owner, key, note }));
		const newProblems = problems.filter((p) => prev?.problems.get(p.key) !== p.note);
		return { written, present: [...seen.present.values()], problems, newProblems };
	}
}
