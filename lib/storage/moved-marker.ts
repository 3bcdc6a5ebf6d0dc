/**
 * A local CWD store whose memory was moved to a shared project (`state-flow migrate`, issue 25):
 * the files stay, and a small `moved-to` file in the store folder names the project. A checkout
 * that reads these files while it is not linked (moved, renamed, a fresh worktree of an old
 * build's link) would otherwise read stale memory silently; `/state` and `state-flow show` say so
 * instead. `unlink` and `migrate --to-files` remove it: the files are in use again.
 */
import { join } from "node:path";
import { printable } from "../core/printable.js";
import { atomicWrite, readRegular, removeFile } from "./fs-util.js";

export const MOVED_MARKER = "moved-to";

/** Record that the store in `storeDir` was moved to `project` (the folder exists: it held the store). */
export function markMoved(storeDir: string, project: string): void {
	atomicWrite(join(storeDir, MOVED_MARKER), `${project}\n`);
}

/** The files are in use again: forget where they were moved. */
export function clearMoved(storeDir: string): void {
	try {
		removeFile(join(storeDir, MOVED_MARKER));
	} catch {
		// Not a regular file: left for doctor; the warning keeps showing.
	}
}

/** The project the store was moved to, or undefined. Never throws. */
export function movedTo(storeDir: string): string | undefined {
	try {
		const text = readRegular(join(storeDir, MOVED_MARKER))?.toString("utf8").trim();
		return text === undefined || text === "" ? undefined : printable(text.split("\n")[0] as string).slice(0, 200);
	} catch {
		return undefined;
	}
}

/** The loud line when an unlinked checkout reads files whose memory was moved to a project. */
export function movedLine(storeDir: string, linked: string | undefined): string | undefined {
	const to = movedTo(storeDir);
	if (to === undefined || linked !== undefined) return undefined;
	return `warning: the memory in ${storeDir} was moved to project \`${to}\`, but this checkout is not linked (moved, renamed or a new clone?), so these older local files are read; run \`state-flow link ${to}\` to use the project's memory, or \`state-flow unlink\` to keep using these files.`;
}
