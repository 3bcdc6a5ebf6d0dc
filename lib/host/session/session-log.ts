/**
 * The Session store's port onto pi: custom entries appended with `pi.appendEntry` and read
 * back from the current branch (root → leaf), so forks and `/tree` see their own state.
 * In-memory sessions still work: pi keeps their entries in memory, they just never reach disk.
 * `sync()` fsyncs the session file (pi appends without fsync) for multi-owner commits.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { closeSync, fsyncSync, openSync } from "node:fs";
import type { SessionLog } from "../../storage/session/store.js";

/** One session entry as the Session store reads it. */
interface SessionLogEntry {
	id: string;
	type: string;
	customType?: string;
	data?: unknown;
}

/**
 * Adapt pi's API. `context` is read on every call because pi hands out a fresh context per
 * event; the latest one always describes the current session.
 */
export function createSessionLog(pi: Pick<ExtensionAPI, "appendEntry">, context: () => Pick<ExtensionContext, "sessionManager">): SessionLog {
	return {
		sessionId: () => context().sessionManager.getSessionId(),
		persistent: () => context().sessionManager.getSessionFile() !== undefined,
		branch: () =>
			context()
				.sessionManager.getBranch()
				.map((e) => {
					const entry: SessionLogEntry = { id: e.id, type: e.type };
					if (e.type === "custom") {
						entry.customType = e.customType;
						entry.data = e.data;
					}
					return entry;
				}),
		append: (customType, data) => pi.appendEntry(customType, data),
		sync: () => {
			const file = context().sessionManager.getSessionFile();
			if (file !== undefined) fsyncFile(file);
		},
	};
}

/** fsync pi's session file; a file pi has not written yet (no assistant message so far) has nothing to sync. */
function fsyncFile(file: string): void {
	let fd: number;
	try {
		fd = openSync(file, "r");
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
		throw e;
	}
	try {
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
}
