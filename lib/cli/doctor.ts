/**
 * `state-flow doctor`: verify the Global and CWD stores and repair what a crash leaves behind
 * (a dead writer's lock, a torn last record, a committed journal not yet on every owner)
 * through Storage's own repair paths. Damage is reported, never rewritten.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { isStateError } from "../core/errors.js";
import { DEFAULT_RETENTION } from "../core/types.js";
import { readConfig } from "../storage/config.js";
import { FileOwnerStore } from "../storage/file-store.js";
import { JournalDir } from "../storage/journal.js";
import { acquireLock, readLockHolder } from "../storage/lock.js";
import { Stores } from "../storage/stores.js";
import type { Parsed } from "./args.js";
import { checkCwd, type Outcome, rootOf } from "./commands.js";
import { FILE_OWNERS, type FileOwner } from "./transfer.js";

/** Bytes after the last newline of a log: a record cut short by a crash (0 when whole). */
function tornBytes(logPath: string): number {
	if (!existsSync(logPath)) return 0;
	const fd = openSync(logPath, "r");
	try {
		const size = fstatSync(fd).size;
		const chunk = Math.min(size, 1 << 20);
		const buf = Buffer.alloc(chunk);
		readSync(fd, buf, 0, chunk, size - chunk);
		const nl = buf.lastIndexOf(10);
		return nl < 0 ? (chunk === size ? size : -1) : chunk - nl - 1;
	} finally {
		closeSync(fd);
	}
}

/** `state-flow doctor [--dry-run]`: exit 0 when every store is healthy after the repairs. */
export async function runDoctor(p: Parsed): Promise<Outcome> {
	checkCwd(p);
	const report: string[] = [];
	let healthy = true;
	const { config, problems } = readConfig(p.agentDir);
	for (const w of problems) report.push(`config: ${w}`);
	const retention = config.retention;
	const stores = new Stores({ agentDir: p.agentDir, cwd: p.cwd, ...(retention !== undefined ? { retention } : {}) });
	const journal = new JournalDir(join(stores.identity().globalRoot, "..", "journal"));
	const files = Object.fromEntries(
		FILE_OWNERS.map((o) => [o, new FileOwnerStore({ owner: o, root: rootOf(stores, o), retention: retention ?? DEFAULT_RETENTION, gitignore: false })]),
	) as Record<FileOwner, FileOwnerStore>;

	let pending: ReturnType<JournalDir["pending"]> = [];
	try {
		pending = journal.pending();
	} catch (e) {
		healthy = false;
		report.push(`journal: ${message(e)}`);
	}
	for (const j of pending) {
		const where = j.parts.map((part) => (part.owner === "session" ? `session ${part.sessionId}` : `${part.owner} ${part.root}`)).join(", ");
		report.push(`journal: transition ${j.id} is committed but not yet on every owner (${where}); ${p.dryRun ? "would roll forward" : "rolling forward"}.`);
	}
	for (const o of FILE_OWNERS) {
		const store = files[o];
		if (!existsSync(store.root)) {
			report.push(`${o}: no store at ${store.root} (nothing written yet).`);
			continue;
		}
		const holder = readLockHolder(store.lockPath);
		if (holder !== undefined) {
			report.push(`${o}: ${store.lockPath} is held by ${holder.who}${holder.stale ? `, which no longer runs (a crash); ${p.dryRun ? "would break it" : "breaking it"}` : "; waiting for it"}.`);
		}
		const torn = tornBytes(store.logPath);
		if (torn !== 0) {
			report.push(`${o}: ${store.logPath} ends in a record cut short by a crash (${torn < 0 ? "over 1 MiB" : `${torn} bytes`}); it was never committed; ${p.dryRun ? "would cut it off" : "cutting it off"}.`);
		}
		if (!p.dryRun && (torn !== 0 || holder !== undefined)) {
			// acquireLock breaks a dead holder's lock and waits (bounded) for a live one.
			try {
				const lock = await acquireLock(store.lockPath, 10_000);
				try {
					store.catchUpLocked();
				} finally {
					lock.release();
				}
			} catch (e) {
				healthy = false;
				report.push(`${o}: ${message(e)}`);
			}
		}
	}
	// Loading rolls pending journals forward under the locks (Stores' own recovery path).
	if (!p.dryRun) {
		for (const o of FILE_OWNERS) {
			try {
				stores.load(o);
			} catch {
				// Reported by the verification below.
			}
		}
		const left = safePending(journal);
		for (const j of left) {
			const waiting = j.parts.filter((part) => part.owner === "session" || (part.root !== rootOf(stores, "global") && part.root !== rootOf(stores, "cwd")));
			report.push(`journal: transition ${j.id} still waits for ${waiting.map((w) => (w.owner === "session" ? `session ${w.sessionId} (completed when that pi session is next opened)` : `${w.owner} ${w.root} (run doctor with --cwd there)`)).join(", ")}.`);
		}
	}
	for (const o of FILE_OWNERS) {
		const store = new FileOwnerStore({ owner: o, root: rootOf(stores, o), retention: retention ?? DEFAULT_RETENTION, gitignore: false });
		if (!existsSync(store.root)) continue;
		try {
			const h = store.load();
			report.push(`${o}: ok, seq ${h.seq}, ${h.tail.length} retained transition(s), ${store.diskBytes()} bytes on disk.`);
		} catch (e) {
			healthy = false;
			report.push(`${o}: DAMAGED: ${message(e)}`);
		}
	}
	report.push(healthy ? (p.dryRun ? "Dry run: nothing was changed." : "All stores are healthy.") : "Some stores need attention (see above); nothing damaged was rewritten.");
	return { stdout: `${report.join("\n")}\n`, stderr: "", code: healthy ? 0 : 1 };
}

function safePending(j: JournalDir): ReturnType<JournalDir["pending"]> {
	try {
		return j.pending();
	} catch {
		return [];
	}
}

function message(e: unknown): string {
	return isStateError(e) || e instanceof Error ? e.message : String(e);
}
