/**
 * What every doctor step writes to and reads from: the report (its lines and whether every store
 * is healthy) and whether something is at a path. The steps import this module only, and
 * `index.ts` imports the steps, so the doctor's files form no cycle.
 */
import { lstatOrUndefined } from "../../storage/fs-util.js";

/** What doctor says, line by line, and whether every store is healthy. */
export interface Report {
	lines: string[];
	healthy: boolean;
}

/** True when something (anything, also a dangling link) is at `path`. */
export function present(path: string): boolean {
	return lstatOrUndefined(path) !== undefined;
}
