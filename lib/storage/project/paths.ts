/**
 * Where State Flow keeps its files: the one place that decides store folders, the journal
 * folder and the owners that live in files. Everything else asks here.
 *
 *   <agentDir>/state-flow/global/   the Global owner
 *   <agentDir>/state-flow/journal/  multi-owner commit points
 *   <agentDir>/state-flow/seen/     what this machine's writers made durable, per store folder
 *   <project root>/.pi/state-flow/  the CWD owner (`project.ts` decides the project and its store:
 *                                   `<git common dir>/state-flow/` for some repositories)
 */
import { join } from "node:path";
import type { SharedOwner } from "../../core/types.js";
import { realOrSelf } from "../fs-util.js";
import { type Project, projectOf } from "./project.js";

/** The owners kept in files (Global, CWD), in lock order; Session lives in pi's session file. */

export interface StorePaths {
	/** `<agentDir>/state-flow` (real path): Global store and journals. */
	base: string;
	globalRoot: string;
	cwdRoot: string;
	/** The project the CWD owner belongs to (why its store is where it is). */
	project: Project;
	journalDir: string;
	/** This machine's seen marks (`SeenMarks`). */
	seenDir: string;
}

/** State Flow's folder in an agent directory (Global store, journals, config file). */
export function stateFlowDir(agentDir: string): string {
	return join(agentDir, "state-flow");
}

/** The store folders of an agent directory and the project of a folder (`project`: resolved already), through real paths. */
export function storePaths(agentDir: string, cwd: string, project: Project = projectOf(cwd)): StorePaths {
	const base = stateFlowDir(realOrSelf(agentDir));
	return { base, globalRoot: join(base, "global"), cwdRoot: project.store, project, journalDir: join(base, "journal"), seenDir: join(base, "seen") };
}

/** A file owner's store folder. */
export function rootOf(paths: StorePaths, owner: SharedOwner): string {
	return owner === "global" ? paths.globalRoot : paths.cwdRoot;
}
