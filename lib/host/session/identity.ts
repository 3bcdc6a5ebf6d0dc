/**
 * Where the state physically lives for a session, computed once per change: every event and
 * tool call asks, a realpath per ask is the largest host cost of a read, and admission compares
 * identities by reference.
 */
import { storePaths } from "../../storage/project/paths.js";
import { type Project, projectOf } from "../../storage/project/project.js";
import type { StoresIdentity } from "../../storage/stores.js";
import type { Identity } from "./admission.js";

export class IdentityCache {
	/** The last cwd resolved and its project. */
	#realCwd: { cwd: string; real: string; project: Project } | undefined;
	/** The last identity computed and the stores' identity it was made from. */
	#identity: { roots: StoresIdentity | undefined; value: Identity } | undefined;

	/** The project of a cwd (`project.ts`), resolved once per cwd string. */
	project(cwd: string): Project {
		// pi keeps one cwd per session; a new cwd string is resolved again. Re-pointing a symlink
		// under a running session is not followed (the stores opened on the old target anyway).
		if (this.#realCwd?.cwd !== cwd) {
			const project = projectOf(cwd);
			this.#realCwd = { cwd, real: project.start, project };
		}
		return this.#realCwd.project;
	}

	/**
	 * Resolve the project of `cwd` again (before a prompt: a few `lstat`s, the index read only
	 * when its file changed): the project before and after when its store moved or its refusal
	 * changed, else undefined.
	 */
	refresh(cwd: string): { before: Project; after: Project } | undefined {
		const before = this.project(cwd);
		const after = projectOf(cwd);
		if (after.store === before.store && after.refused === before.refused) return undefined;
		this.#realCwd = { cwd, real: after.start, project: after };
		return { before, after };
	}

	/** The identity of a session in `cwd`; `roots` are the open stores' own (what a commit writes to), if any. */
	identity(agentDir: string, cwdText: string, sessionId: string, roots: StoresIdentity | undefined): Identity {
		const cwd = this.project(cwdText).start;
		// The same object while nothing it is made of moved: the host's key compares references on every event.
		const known = this.#identity;
		if (known !== undefined && known.roots === roots && known.value.sessionId === sessionId && known.value.cwd === cwd) return known.value;
		const value = {
			sessionId,
			cwd,
			// Before the stores exist, the computed roots.
			globalRoot: roots?.globalRoot ?? storePaths(agentDir, cwd).globalRoot,
			cwdRoot: roots?.cwdRoot ?? this.project(cwdText).store,
		};
		this.#identity = { roots, value };
		return value;
	}
}
