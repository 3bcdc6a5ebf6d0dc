/**
 * A file-backed SessionLog for crash tests: one custom entry per line, appended with
 * `appendFileSync` like pi's SessionManager, read back root -> leaf (linear). Loads in a
 * few milliseconds, so hundreds of killed child processes stay fast; the real pi
 * SessionManager is proven separately in session-store and pi-session-crash tests.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { SessionLog } from "../../../lib/storage/stores.js";

interface Entry {
	id: string;
	type: string;
	customType?: string;
	data?: unknown;
}

/** Entries of the file; a torn last line (a crash mid-write) is ignored. */
export function readEntries(file: string): Entry[] {
	if (!existsSync(file)) return [];
	const text = readFileSync(file, "utf8");
	const out: Entry[] = [];
	for (const line of text.split("\n").slice(0, -1)) out.push(JSON.parse(line) as Entry);
	return out;
}

export function jsonlSession(file: string, id = "crash-session"): SessionLog {
	const entries = readEntries(file);
	return {
		sessionId: () => id,
		persistent: () => true,
		branch: () => entries,
		append(customType: string, data: unknown): void {
			const e: Entry = { id: `e${entries.length}-${process.pid}`, type: "custom", customType, data };
			appendFileSync(file, `${JSON.stringify(e)}\n`);
			entries.push(e);
		},
	};
}
