/**
 * Doctor's view of multi-owner journals: each pending journal listed with what every part needs
 * (a file store's seq, a database owner's answer), completed through the stores' own roll-forward,
 * or dropped on request into `journal/dropped/` under every part's lock.
 */
import { readdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { messageOf } from "../../core/errors.js";
import { SHARED_OWNERS, type OwnerHistory, type SharedOwner } from "../../core/types.js";
import type { Placement } from "../../storage/placement/placement.js";
import { databaseFor } from "../../storage/pg/placed.js";
import { DEFAULT_LOCK_TIMEOUT_MS } from "../../storage/file/owner-store.js";
import { openFileStoreIn } from "../../storage/open.js";
import { parseJournal } from "../../storage/format.js";
import type { Journal, JournalPart } from "../../storage/format.js";
import { ensureDirIn, errnoOf, fsyncDir, readRegular, realOrSelf } from "../../storage/fs-util.js";
import type { JournalDir } from "../../storage/file/journal.js";
import { lockedParts } from "../../storage/file/recovery.js";
import { acquireLock, type HeldLock } from "../../storage/file/lock.js";
import type { StorePaths } from "../../storage/project/paths.js";
import { locationKey } from "../../storage/port.js";
import type { Stores } from "../../storage/stores.js";
import { type Parsed, UsageError } from "../args.js";
import { present, type Report } from "./report.js";

/** A journal file as doctor lists it: parsed, or the reason it cannot be. */
interface ListedJournal {
	id: string;
	file: string;
	journal?: Journal;
	error?: string;
}

/** Every journal file in `dir`, each parsed on its own (one damaged file does not hide the others). */
function listJournals(dir: string): ListedJournal[] {
	let names: string[];
	try {
		names = readdirSync(dir).filter((n) => n.endsWith(".json"));
	} catch (e) {
		if (errnoOf(e) === "ENOENT") return [];
		throw e;
	}
	return names.sort().map((name) => {
		const file = join(dir, name);
		const id = name.slice(0, -".json".length);
		try {
			return { id, file, journal: parseJournal((readRegular(file) ?? Buffer.alloc(0)).toString("utf8"), file) };
		} catch (e) {
			return { id, file, error: messageOf(e) };
		}
	});
}

/** Where one journal part stands; `blocks` when no roll-forward can ever complete it, `waits` when it cannot now. */
interface PartStatus {
	text: string;
	blocks: boolean;
	missing: boolean;
	waits?: boolean;
	/** A database part that says the transition never committed: the journal is dropped, not completed. */
	never?: boolean;
}

/**
 * What the database says about a journal's database part (its `locationKey`): the seq holding
 * the transition, undefined when it is not there; `configured` false when that owner is not configured here.
 */
type DatabaseAnswers = Map<string, { seq?: number; error?: string; configured: boolean }>;

function databasePart(part: JournalPart, id: string, answers: DatabaseAnswers): PartStatus {
	const where = `${part.owner} in ${part.database}`;
	const a = answers.get(id);
	if (a === undefined || !a.configured) {
		return {
			text: `${where} (BLOCKED: that database owner is not configured here, so it cannot be asked whether the transition committed; configure it again with \`STATE_FLOW_DATABASE_URL\` or \`database\` and the same link)`,
			blocks: true,
			missing: true,
		};
	}
	if (a.error !== undefined) return { text: `${where} (cannot be asked now: ${a.error})`, blocks: false, missing: true, waits: true };
	if (a.seq === undefined) return { text: `${where} (NOT committed there: the transition never happened)`, blocks: false, missing: false, never: true };
	return { text: `${where} (committed there at seq ${a.seq})`, blocks: false, missing: false };
}

function partStatus(part: JournalPart, id: string, retention: number, answers: DatabaseAnswers): PartStatus {
	if (part.database !== undefined) return databasePart(part, id, answers);
	const seq = part.record.seq;
	if (part.owner === "session") {
		if (part.persistent !== true) return { text: `in-memory session ${part.sessionId} (nothing to complete)`, blocks: false, missing: false };
		return { text: `session ${part.sessionId} (completed when that pi session is next opened)`, blocks: false, missing: true };
	}
	const where = `${part.owner} ${part.root}`;
	const root = part.root as string;
	if (!present(root)) return { text: `${where} (folder gone: nothing to complete there)`, blocks: false, missing: false };
	let h: OwnerHistory;
	try {
		h = openFileStoreIn(part.owner as SharedOwner, root, { retention }).read();
	} catch (e) {
		return { text: `${where} (BLOCKED: the store is damaged: ${messageOf(e)})`, blocks: true, missing: true };
	}
	if (h.seq >= seq) {
		const have = h.tail.find((r) => r.seq === seq);
		if (have !== undefined && have.id !== part.record.id) {
			return {
				text: `${where} (BLOCKED: its seq ${seq} already holds transition ${have.id}; the store was replaced or restored from a backup)`,
				blocks: true,
				missing: true,
			};
		}
		return { text: `${where} (has it)`, blocks: false, missing: false };
	}
	if (h.seq === seq - 1) return { text: `${where} (seq ${seq}, to roll forward)`, blocks: false, missing: true };
	return {
		text: `${where} (BLOCKED: the record continues seq ${seq - 1} but the store is at seq ${h.seq}; it was moved aside or restored to an older copy)`,
		blocks: true,
		missing: true,
	};
}

/** Report lines for the pending journals, with what blocks each and the way out. */
function describeJournals(
	listed: readonly ListedJournal[],
	retention: number,
	dryRun: boolean,
	answers: DatabaseAnswers,
): { lines: string[]; blocked: boolean } {
	const lines: string[] = [];
	let blocked = false;
	for (const l of listed) {
		let blocks = true;
		if (l.journal === undefined) lines.push(`journal: ${l.error}`);
		else {
			const parts = l.journal.parts.map((part) => partStatus(part, l.id, retention, answers));
			blocks = parts.some((s) => s.blocks);
			const text = parts.map((s) => s.text).join("; ");
			if (parts.some((s) => s.never)) {
				lines.push(
					`journal: transition ${l.id} was never committed (${text}); ${dryRun ? "would drop its journal" : "dropping its journal"}: no owner gets it.`,
				);
			} else if (!blocks && parts.some((s) => s.waits)) {
				blocked = true;
				lines.push(`journal: transition ${l.id} may be committed (${text}); it is completed once that database answers: run doctor again then.`);
			} else {
				lines.push(
					`journal: transition ${l.id} is committed but not yet on every owner (${text}); ${blocks ? "it cannot be rolled forward" : dryRun ? "would roll forward" : "rolling forward"}.`,
				);
			}
		}
		if (blocks) {
			blocked = true;
			lines.push(
				`journal: ${l.id} blocks this agent directory's stores. To give up completing it, run \`state-flow doctor --drop-journal ${l.id}\` (the file is moved aside, not deleted).`,
			);
		}
	}
	return { lines, blocked };
}

/**
 * `--drop-journal <id>`: move that journal into `<agentDir>/state-flow/journal-dropped/`
 * after saying what is given up. Unknown ids are a usage error (exit 2). The move happens
 * under the locks of the file owners the journal names: a writer still completing it (or
 * rolling it forward) finishes first, and none starts while it moves.
 */
async function dropJournal(
	dir: string,
	listed: readonly ListedJournal[],
	id: string,
	retention: number,
	dryRun: boolean,
	answers: DatabaseAnswers,
): Promise<string[]> {
	const target = listed.find((l) => l.id === id);
	if (target === undefined) {
		const known = listed.map((l) => `\`${l.id}\``).join(", ");
		throw new UsageError(
			`\`--drop-journal\`: there is no pending journal \`${id}\` in ${dir} (${known === "" ? "none is pending" : `pending: ${known}`}); nothing was changed.`,
			"doctor",
		);
	}
	const droppedDir = join(dir, "..", "journal-dropped");
	const lost =
		target.journal === undefined
			? [`whatever the damaged journal ${target.file} recorded`]
			: target.journal.parts.map((part) => partStatus(part, id, retention, answers)).flatMap((s) => (s.missing ? [s.text] : []));
	const lines = [
		`journal: dropping ${id} gives up completing transition ${id} on: ${lost.length === 0 ? "no owner (every owner has it)" : lost.join("; ")}. Owners that already have it keep it.`,
	];
	if (dryRun) return [...lines, `journal: would move ${target.file} to ${droppedDir}/.`];
	const locks: HeldLock[] = [];
	try {
		// In the order every writer takes the locks; a store folder that is gone has no writer.
		for (const part of target.journal === undefined ? [] : lockedParts(target.journal)) {
			// The lock is taken inside the store folder: like every writer, only while that folder leads inside its owner's.
			const store = openFileStoreIn(part.owner as SharedOwner, part.root as string, { retention });
			store.checkRoot();
			locks.push(await acquireLock(store.lockPath, DEFAULT_LOCK_TIMEOUT_MS));
		}
		// A writer that held a lock may have completed the journal meanwhile: then there is nothing left to give up.
		if (!present(target.file)) return [`journal: ${id} was completed by its writer meanwhile; nothing was dropped.`];
		ensureDirIn(droppedDir, realOrSelf(dirname(dirname(droppedDir))), "The dropped-journal folder");
		let dest = join(droppedDir, `${id}.json`);
		if (present(dest)) dest = join(droppedDir, `${id}-${Date.now()}.json`);
		renameSync(target.file, dest);
		fsyncDir(droppedDir);
		fsyncDir(dir);
		return [...lines, `journal: moved ${target.file} to ${dest}.`];
	} finally {
		for (const l of locks.reverse()) l.release();
	}
}

/** What each pending journal's database part says (asked under the owner's row lock, so an in-flight writer has finished). */
async function askDatabases(listed: readonly ListedJournal[], stores: Stores, placement: Placement, retention: number): Promise<DatabaseAnswers> {
	const answers: DatabaseAnswers = new Map();
	const db = placement.database;
	for (const l of listed) {
		const part = l.journal?.parts.find((x) => x.database !== undefined);
		if (part === undefined) continue;
		const owner = SHARED_OWNERS.find((o) => locationKey(stores.location(o)) === part.database);
		const where = owner === undefined ? undefined : stores.location(owner);
		if (db === undefined || owner === undefined || where?.backend !== "postgres") {
			answers.set(l.id, { configured: false });
			continue;
		}
		try {
			const seq = await databaseFor(db.url, db.schema).store(owner, where.key, retention).outcomeOf(l.id);
			answers.set(l.id, { configured: true, ...(seq !== undefined ? { seq } : {}) });
		} catch (e) {
			answers.set(l.id, { configured: true, error: messageOf(e) });
		}
	}
	return answers;
}

/** Pending journals and what blocks each; `--drop-journal` first moves the named one aside. */
export async function reviewJournals(report: Report, journalDir: string, retention: number, p: Parsed, stores: Stores, placement: Placement): Promise<void> {
	let listed = listJournals(journalDir);
	const answers = await askDatabases(listed, stores, placement, retention);
	if (p.dropJournal !== undefined) {
		report.lines.push(...(await dropJournal(journalDir, listed, p.dropJournal, retention, p.dryRun, answers)));
		if (!p.dryRun) listed = listJournals(journalDir);
	}
	const journals = describeJournals(listed, retention, p.dryRun, answers);
	report.lines.push(...journals.lines);
	if (journals.blocked) report.healthy = false;
}

/** Loading rolls pending journals forward under the locks (Stores' own recovery path); what still waits is listed. */
export async function rollForward(report: Report, stores: Stores, paths: StorePaths, journal: JournalDir): Promise<void> {
	for (const o of SHARED_OWNERS) {
		try {
			await stores.load(o);
		} catch {
			// Reported by the verification after it.
		}
	}
	for (const j of safePending(journal)) {
		// A database part is never replayed: the database's COMMIT decided it (asked above).
		const waiting = j.parts.filter(
			(part) => part.database === undefined && (part.owner === "session" || (part.root !== paths.globalRoot && part.root !== paths.cwdRoot)),
		);
		if (waiting.length === 0) continue; // Blocked here: reported with the journal listing.
		report.lines.push(
			`journal: transition ${j.id} still waits for ${waiting.map((w) => (w.owner === "session" ? `session ${w.sessionId} (completed when that pi session is next opened)` : `${w.owner} ${w.root} (run doctor with --cwd there)`)).join(", ")}.`,
		);
	}
}

function safePending(j: JournalDir): ReturnType<JournalDir["pending"]> {
	try {
		return j.pending();
	} catch {
		return [];
	}
}
