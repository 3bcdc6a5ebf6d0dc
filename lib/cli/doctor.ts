/**
 * `state-flow doctor`: verify the Global and CWD stores and repair what a crash leaves behind
 * (a dead writer's lock, a torn last record, a committed journal not yet on every owner)
 * through Storage's own repair paths. Damage is reported, never rewritten. Pending journals
 * are listed with what blocks each; `--drop-journal <id>` moves one aside (never deletes it).
 * It never reports a damaged store healthy and never deletes: `--move-aside <owner>` keeps a
 * damaged store in a renamed folder, `--cut-torn <owner>` cuts only bytes that cannot be a
 * complete record. Everything is read through Storage's own checks (no link is followed).
 */
import { inline } from "../core/printable.js";
import { closeSync, constants, fstatSync, readSync, readdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { isStateError, messageOf } from "../core/errors.js";
import { storedRefProblems } from "../core/refs.js";
import { isJsonText } from "../core/json.js";
import { DEFAULT_RETENTION, type OwnerHistory } from "../core/types.js";
import { databaseFor, type Placement, placementFor } from "../storage/backend.js";
import { readConfig } from "../storage/config.js";
import { DEFAULT_LOCK_TIMEOUT_MS, FileOwnerStore } from "../storage/file-store.js";
import { parseJournal } from "../storage/format.js";
import type { Journal, JournalPart } from "../storage/format.js";
import { ensureDirIn, errnoOf, fsyncDir, inside, kindOf, lstatOrUndefined, openFile, readRegular, realOrSelf } from "../storage/fs-util.js";
import { artifactRootsFor, ownerRoot, readIfFile } from "../storage/artifact-files.js";
import { MAX_HASHED_FILE_BYTES } from "../storage/artifacts.js";
import { compiledMarker, skillKey, skillsFolder } from "../storage/skill-format.js";
import { JournalDir } from "../storage/journal.js";
import { lockedParts } from "../storage/recovery.js";
import { acquireLock, crashEvidence, crashMarkerPath, type HeldLock, readLockHolder } from "../storage/lock.js";
import { holdersDir } from "../storage/lock-holder.js";
import { type StorePaths, rootOf, storePaths } from "../storage/paths.js";
import { PgDatabase } from "../storage/pg/store.js";
import { locationKey } from "../storage/port.js";
import { type SeenMarks, seenMarksOf } from "../storage/seen.js";
import { apartLine, storesApart } from "../storage/stores-apart.js";
import { Stores } from "../storage/stores.js";
import { whoAmI } from "../storage/who.js";
import { type Parsed, UsageError } from "./args.js";
import { checkCwd, type Outcome } from "./commands.js";
import { salvageStore } from "./salvage.js";
import { describeLocation } from "./format.js";
import { FILE_OWNERS, type FileOwner, isFileOwner } from "./transfer.js";

/** Bytes after the last newline of a log that are not one complete JSON value (0 when whole; -1: over 1 MiB). */
function tornBytes(logPath: string): number {
	let fd: number | undefined;
	try {
		fd = openFile(logPath, constants.O_RDONLY);
	} catch {
		return 0; // Not a regular file: reported by the store's own load.
	}
	if (fd === undefined) return 0;
	try {
		const size = fstatSync(fd).size;
		const chunk = Math.min(size, 1 << 20);
		const buf = Buffer.alloc(chunk);
		readSync(fd, buf, 0, chunk, size - chunk);
		const nl = buf.lastIndexOf(10);
		const torn = nl < 0 ? (chunk === size ? size : -1) : chunk - nl - 1;
		if (torn > 0 && isJsonText(buf.toString("utf8", chunk - torn))) return 0; // A record whose line end was dropped: kept.
		return torn;
	} finally {
		closeSync(fd);
	}
}

/** True when something (anything, also a dangling link) is at `path`. */
function present(path: string): boolean {
	return lstatOrUndefined(path) !== undefined;
}

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
		h = new FileOwnerStore({ owner: part.owner as FileOwner, root, retention, gitignore: false }).read();
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
			const store = new FileOwnerStore({ owner: part.owner as FileOwner, root: part.root as string, retention, gitignore: false });
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

/** Lines for each lock path that holds something State Flow never makes there, with how to clear it. */
function oddLockFiles(lockPath: string): string[] {
	const out: string[] = [];
	const odd = readLockHolder(lockPath)?.odd;
	if (odd !== undefined) out.push(`${odd}.`);
	const expected: Array<[string, "a folder" | "a regular file"]> = [
		[holdersDir(lockPath), "a folder"],
		[`${lockPath}.break`, "a regular file"],
		[crashMarkerPath(lockPath), "a regular file"],
	];
	for (const [path, kind] of expected) {
		const st = lstatOrUndefined(path);
		if (st === undefined || (kind === "a folder" ? st.isDirectory() : st.isFile())) continue;
		const clear = st.isDirectory() ? `rm -r '${path}'` : `rm '${path}'`;
		out.push(
			`\`${path}\` is ${kindOf(st)} where State Flow keeps ${kind}; it is never followed or changed, but it may have come with the repository: remove it (\`${clear}\`) if you did not make it.`,
		);
	}
	return out;
}

/** A file owner named by a doctor flag; anything else is a usage error. */
function flagOwner(flag: string, value: string | undefined): FileOwner | undefined {
	if (value === undefined) return undefined;
	if (isFileOwner(value)) return value;
	throw new UsageError(`\`${flag}\` takes \`global\` or \`cwd\`, got \`${value}\` (the Session owner lives in the pi session file).`, "doctor");
}

/** `--move-aside`: rename the store folder to `<root>.damaged-<time>`; refused while a live writer holds its lock. */
function moveAside(store: FileOwnerStore, dryRun: boolean): string[] {
	const o = store.owner;
	if (!present(store.root)) return [`${o}: no store at ${store.root}; nothing to move aside.`];
	const holder = readLockHolder(store.lockPath);
	if (holder !== undefined && !holder.stale && holder.odd === undefined) {
		return [`${o}: not moved aside: ${store.lockPath} is held by ${holder.who}, which is writing; retry when it is done.`];
	}
	const dest = `${store.root}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
	if (dryRun) return [`${o}: would move ${store.root} to ${dest} (kept, not deleted); the owner would start afresh.`];
	renameSync(store.root, dest);
	fsyncDir(dirname(store.root));
	return [`${o}: moved ${store.root} to ${dest} (kept, not deleted); the owner starts afresh at its next write.`];
}

/**
 * `--accept-store`: forget this machine's mark of what its writers committed to the store, so
 * the store is used as it is now. Nothing in the store changes; its next write marks it again.
 */
function acceptStore(store: FileOwnerStore, seen: SeenMarks, dryRun: boolean): string[] {
	const o = store.owner;
	const mark = seen.read(store.root);
	if (mark === undefined) return [`${o}: this machine has no record of transitions committed to ${store.root}; nothing to accept.`];
	const what = `that a writer on this machine committed seq ${mark.seq} to ${store.root}`;
	if (dryRun) return [`${o}: would forget ${what}; the store would be used as it is.`];
	if (!seen.clear(store.root)) return [`${o}: could not forget ${what}: ${seen.fileOf(store.root)} cannot be removed (a folder there?); remove it yourself.`];
	return [`${o}: forgot ${what}; the store is used as it is now (transitions it lacks stay lost).`];
}

/**
 * Compiled Skills that State Flow wrote (its marker line names the owner and key) but that no
 * artifact of that owner records: a crash between writing the file and committing, or a store
 * restored from before it. Listed with the way out, never removed (the file may be someone's
 * now); not store damage, so the exit code stays as the stores make it.
 */
function unrecordedSkills(report: Report, verified: Partial<Record<FileOwner, OwnerHistory | "none">>, p: Parsed): void {
	for (const owner of FILE_OWNERS) {
		const h = verified[owner];
		// A store that could not be read is reported above; one that does not exist records nothing.
		if (h === undefined) continue;
		const artifacts = h === "none" ? {} : h.state.artifacts;
		const root = ownerRoot(owner, artifactRootsFor(p.cwd, p.agentDir));
		const dir = join(root, skillsFolder(owner));
		// A Skill folder that leads out of the owner's folder (a link in a repository) is not read.
		if (!inside(realOrSelf(dir), realOrSelf(root))) continue;
		let names: string[];
		try {
			names = readdirSync(dir).sort();
		} catch {
			continue;
		}
		for (const name of names) {
			const key = skillKey(owner, name);
			// Only a real folder is looked into (a link there is not State Flow's, and is never followed); the file itself is opened without following one.
			if (Object.hasOwn(artifacts, key) || !lstatOrUndefined(join(dir, name))?.isDirectory()) continue;
			const bytes = readIfFile(join(root, key), { followLink: false, maxBytes: MAX_HASHED_FILE_BYTES });
			if (bytes === undefined || !bytes.toString("utf8").includes(compiledMarker(owner, key))) continue;
			report.lines.push(
				`${owner}: ${join(root, key)} was compiled by State Flow from ${owner}.artifacts[${JSON.stringify(key)}], which the state does not record (a crash between writing it and committing, or a store restored from before it). Patch that artifact again to adopt the file, or delete the file; doctor leaves it.`,
			);
		}
	}
}

/** What doctor says, line by line, and whether every store is healthy. */
interface Report {
	lines: string[];
	healthy: boolean;
}

/** `state-flow doctor [--dry-run] [--drop-journal <id>]`: exit 0 when every store is healthy after the repairs. */
export async function runDoctor(p: Parsed): Promise<Outcome> {
	checkCwd(p);
	const report: Report = { lines: [], healthy: true };
	const { config, problems } = readConfig(p.agentDir);
	for (const w of problems) report.lines.push(`config: ${w}`);
	const retention = config.retention ?? DEFAULT_RETENTION;
	const placement = placementFor(config, p.cwd);
	const stores = new Stores({
		agentDir: p.agentDir,
		cwd: p.cwd,
		placement,
		who: whoAmI(config.user),
		...(config.retention !== undefined ? { retention } : {}),
	});
	const paths = storePaths(p.agentDir, p.cwd);
	const journalDir = paths.journalDir;
	const seen = seenMarksOf(paths);
	const fileStore = (o: FileOwner, marks?: SeenMarks) =>
		new FileOwnerStore({ owner: o, root: rootOf(paths, o), retention, gitignore: false, ...(marks !== undefined ? { seen: marks } : {}) });
	// Crash repairs (a dead writer's lock, torn bytes) do not depend on this machine's marks: a
	// store behind them is still repaired, then reported by the verification, which checks them.
	const files = { global: fileStore("global"), cwd: fileStore("cwd") };
	// Owners placed in the database are verified there; their local folders are not in use.
	const local = FILE_OWNERS.filter((o) => stores.location(o).backend === "file");

	await reviewJournals(report, journalDir, retention, p, stores, placement);
	const aside = flagOwner("--move-aside", p.moveAside);
	const cut = flagOwner("--cut-torn", p.cutTorn);
	const accept = flagOwner("--accept-store", p.acceptStore);
	if (aside !== undefined) report.lines.push(...moveAside(files[aside], p.dryRun));
	const salvage = flagOwner("--salvage", p.salvage);
	if (salvage !== undefined) report.lines.push(...(await salvageStore(files[salvage], seen, p.dryRun)).lines);
	if (accept !== undefined) report.lines.push(...acceptStore(files[accept], seen, p.dryRun));
	for (const o of local) await repairStore(report, files[o], cut === o, p.dryRun);
	if (!p.dryRun) await rollForward(report, stores, paths, new JournalDir(journalDir));
	const verified: Partial<Record<FileOwner, OwnerHistory | "none">> = {};
	for (const o of FILE_OWNERS) {
		const h = local.includes(o) ? verifyStore(report, fileStore(o, seen)) : await verifyDatabaseOwner(report, stores, placement, o, retention, files[o]);
		if (h !== undefined) verified[o] = h;
	}
	unrecordedSkills(report, verified, p);
	const apart = apartLine(storesApart(paths.project, true));
	if (apart !== undefined) report.lines.push(`cwd: ${apart}.`);
	for (const o of FILE_OWNERS) {
		const h = verified[o];
		if (h === undefined || h === "none") continue;
		for (const why of storedRefProblems(o, h.state)) {
			report.lines.push(
				`${o}: a stored \`$ref\` object is not a reference (kept as an older build wrote it; it refers to nothing, and a patch that touches it is refused until it is fixed): ${why}.`,
			);
		}
	}
	report.lines.push(
		report.healthy
			? p.dryRun
				? "Dry run: nothing was changed."
				: "All stores are healthy."
			: "Some stores need attention (see above); nothing damaged was rewritten.",
	);
	// One line each, whatever a line quotes (a planted id, a file name): stored text never prints a line of its own.
	return { stdout: `${report.lines.map(inline).join("\n")}\n`, stderr: "", code: report.healthy ? 0 : 1 };
}

/**
 * A database owner read afresh on a connection of its own (no cache): every retained row and
 * the checkpoint are verified. Unreachable or unconfigured: reported, and unhealthy.
 */
async function verifyDatabaseOwner(
	report: Report,
	stores: Stores,
	placement: Placement,
	o: FileOwner,
	retention: number,
	files: FileOwnerStore,
): Promise<OwnerHistory | undefined> {
	const where = stores.location(o);
	const db = placement.database;
	if (where.backend !== "postgres" || db === undefined) {
		report.healthy = false;
		report.lines.push(`${o}: UNAVAILABLE: ${(await stores.status(o)).error ?? "its database is not configured."}`);
		return undefined;
	}
	const fresh = new PgDatabase({ url: db.url, schema: db.schema });
	let verified: OwnerHistory | undefined;
	try {
		const h = await fresh.store(o, where.key, retention).load();
		verified = h;
		const folded = h.checkpointSeq > 0 ? `, checkpoint at seq ${h.checkpointSeq}` : "";
		report.lines.push(`${o}: ok, ${describeLocation(where)}, seq ${h.seq}, ${h.tail.length} retained transition(s)${folded}, every row verified.`);
	} catch (e) {
		report.healthy = false;
		const unavailable = isStateError(e) && e.code === "unavailable";
		report.lines.push(`${o}: ${unavailable ? "UNAVAILABLE" : "DAMAGED"}: ${messageOf(e)}`);
	} finally {
		await fresh.close();
	}
	if (present(files.root)) {
		report.lines.push(
			`${o}: the local folder ${files.root} is not used while this owner lives in the database (left by \`state-flow migrate\` or \`link --force\`); it was not checked.`,
		);
	}
	return verified;
}

/** What each pending journal's database part says (asked under the owner's row lock, so an in-flight writer has finished). */
async function askDatabases(listed: readonly ListedJournal[], stores: Stores, placement: Placement, retention: number): Promise<DatabaseAnswers> {
	const answers: DatabaseAnswers = new Map();
	const db = placement.database;
	for (const l of listed) {
		const part = l.journal?.parts.find((x) => x.database !== undefined);
		if (part === undefined) continue;
		const owner = FILE_OWNERS.find((o) => locationKey(stores.location(o)) === part.database);
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
async function reviewJournals(report: Report, journalDir: string, retention: number, p: Parsed, stores: Stores, placement: Placement): Promise<void> {
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

/**
 * One file store's crash leftovers: an unsafe root or odd lock files (reported, untouched), a
 * lock held by a dead writer (broken), a torn last record (cut when a crash explains it or
 * `cutTorn` asks), then a catch-up under the lock.
 */
async function repairStore(report: Report, store: FileOwnerStore, cutTorn: boolean, dryRun: boolean): Promise<void> {
	const o = store.owner;
	try {
		store.checkRoot();
	} catch (e) {
		report.healthy = false;
		report.lines.push(`${o}: UNSAFE: ${messageOf(e)}`);
		return;
	}
	if (!present(store.root)) {
		report.lines.push(`${o}: no store at ${store.root} (nothing written yet).`);
		return;
	}
	const odd = oddLockFiles(store.lockPath);
	if (odd.length > 0) {
		report.healthy = false;
		report.lines.push(...odd.map((line) => `${o}: ${line}`));
		return;
	}
	const holder = readLockHolder(store.lockPath);
	if (holder !== undefined) {
		report.lines.push(
			`${o}: ${store.lockPath} is held by ${holder.who}${holder.stale ? `, which no longer runs (a crash); ${dryRun ? "would break it" : "breaking it"}` : "; waiting for it"}.`,
		);
	}
	const torn = tornBytes(store.logPath);
	const logTime = lstatOrUndefined(store.logPath)?.mtimeMs ?? 0;
	const explained = holder !== undefined || crashEvidence(store.lockPath, logTime);
	const cutting = torn !== 0 && (explained || cutTorn);
	if (torn !== 0) {
		const size = torn < 0 ? "over 1 MiB" : `${torn} bytes`;
		if (explained)
			report.lines.push(
				`${o}: ${store.logPath} ends in a record cut short by a crash (${size}, its writer died); it was never committed; ${dryRun ? "would cut it off" : "cutting it off"}.`,
			);
		else if (cutTorn)
			report.lines.push(
				`${o}: ${store.logPath} ends in ${size} that are not a complete record; cutting them as asked (--cut-torn); every complete record stays.`,
			);
		else {
			report.healthy = false;
			report.lines.push(
				`${o}: DAMAGED: ${store.logPath} ends in ${size} that are not a complete record, and no crashed writer left them: the file was cut short (a transition may be lost) or the machine lost power during a write. Nothing was changed. Restore the file from a backup, or run \`state-flow doctor --cut-torn ${o}\` to cut those bytes (complete records stay), or \`state-flow doctor --move-aside ${o}\` to keep the store aside and start afresh.`,
			);
		}
	}
	if (!dryRun && (cutting || holder !== undefined)) {
		// acquireLock breaks a dead holder's lock and waits (bounded) for a live one.
		try {
			const lock = await acquireLock(store.lockPath, 10_000);
			try {
				store.catchUpLocked(lock.recoveredCrash || cutting);
			} finally {
				lock.release();
			}
		} catch (e) {
			report.healthy = false;
			report.lines.push(`${o}: ${messageOf(e)}`);
		}
	}
}

/** Loading rolls pending journals forward under the locks (Stores' own recovery path); what still waits is listed. */
async function rollForward(report: Report, stores: Stores, paths: StorePaths, journal: JournalDir): Promise<void> {
	for (const o of FILE_OWNERS) {
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

/**
 * Read a store afresh through every check: `ok` with its size, or DAMAGED with the way out.
 * Returns its history, "none" when there is no store, undefined when it cannot be read.
 */
function verifyStore(report: Report, store: FileOwnerStore): OwnerHistory | "none" | undefined {
	const o = store.owner;
	if (!present(store.root)) return "none";
	try {
		const h = store.read();
		report.lines.push(`${o}: ok, seq ${h.seq}, ${h.tail.length} retained transition(s), ${store.diskBytes()} bytes on disk.`);
		return h;
	} catch (e) {
		report.healthy = false;
		report.lines.push(
			`${o}: DAMAGED: ${messageOf(e)}${/move-aside/.test(messageOf(e)) ? "" : ` To rebuild it from its intact transitions: \`state-flow doctor --salvage ${o}\`; to keep it aside and start afresh: \`state-flow doctor --move-aside ${o}\` (either renames ${store.root}, deletes nothing).`}`,
		);
		return undefined;
	}
}

function safePending(j: JournalDir): ReturnType<JournalDir["pending"]> {
	try {
		return j.pending();
	} catch {
		return [];
	}
}
