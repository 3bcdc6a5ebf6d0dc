/**
 * A local CWD store whose memory was moved to a shared project (`state-flow migrate`, issue 25):
 * the files stay, and a small `moved-to` file in the store folder names the project. A checkout
 * that reads these files while it is not linked (moved, renamed, a fresh worktree of an old
 * build's link) would otherwise read stale memory silently; `/state` and `state-flow show` say so
 * instead. `unlink` and `migrate --to-files` remove it: the files are in use again. A linked
 * checkout whose local files hold state of their own is said loudly too (`movedLine`).
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { printable, shellWord } from "../../core/printable.js";
import { CHECKPOINT_FILE, LOG_FILE } from "../file/owner-store.js";
import { atomicWrite, readRegular, removeFile } from "../fs-util.js";

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

/** Whether a store folder holds state (a non-empty log or a checkpoint): two `lstat`s, nothing read. */
export function holdsState(storeDir: string): boolean {
	const size = (name: string) => {
		try {
			return lstatSync(join(storeDir, name), { throwIfNoEntry: false })?.size ?? 0;
		} catch {
			return 0;
		}
	};
	return size(LOG_FILE) > 0 || size(CHECKPOINT_FILE) > 0;
}

/**
 * The loud line when a checkout's link and its local files disagree, never read silently: an
 * unlinked checkout reading files whose memory was moved to a project, or a linked one whose
 * local files hold state that is not that project's past (`link --force`, a repository linked
 * on this machine while this clone had its own memory).
 */
export function movedLine(storeDir: string, linked: string | undefined): string | undefined {
	const to = movedTo(storeDir);
	if (linked !== undefined) {
		if (to === linked || !holdsState(storeDir)) return undefined;
		return `warning: this checkout is linked to project \`${printable(linked)}\`, whose memory is read, but its local files in ${storeDir} hold state of their own that is NOT read; run \`state-flow unlink\` to use them again, or move them aside when the project has what they hold.`;
	}
	if (to === undefined) return undefined;
	return `warning: the memory in ${storeDir} was moved to project \`${to}\`, but this checkout is not linked (moved, renamed or a new clone?), so these older local files are read; run \`state-flow link ${shellWord(to)}\` to use the project's memory, or \`state-flow unlink\` to keep using these files.`;
}
