/**
 * `state-flow doctor --salvage <owner>`: rebuild a damaged Global or CWD file store from what is
 * intact in it. The base is the checkpoint (or the empty state, when the log reaches back to
 * transition 1); every record that parses and passes its integrity check is kept while the seqs
 * continue. A damaged stretch of the log is repaired only where its own integrity checks prove
 * the repair: one changed byte whose correction makes every record there pass its 64-bit SHA-256
 * sum again. Anything else damaged — and every record after it, which cannot be replayed without
 * it — is reported and left out (kept in the old folder), never guessed. The result is written as a
 * new store, read back and compared, and the old folder is moved aside, deleting nothing.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { messageOf } from "../../core/errors.js";
import { jsonEqual } from "../../core/json.js";
import { replay } from "../../core/history.js";
import { emptyState } from "../../core/state.js";
import type { OwnerState, TransitionRecord } from "../../core/types.js";
import { CHECKPOINT_FILE, FileOwnerStore, LOG_FILE } from "../../storage/file/owner-store.js";
import { checkpointText, parseCheckpoint, parseLogLine, recordLine } from "../../storage/format.js";
import { DIR_MODE, FILE_MODE, fsyncDir, readRegular } from "../../storage/fs-util.js";
import { readLockHolder } from "../../storage/file/lock.js";
import type { SeenMarks } from "../../storage/file/seen.js";

/** A damaged stretch is searched for a one-byte repair only up to this size (each try is a parse and a SHA-256). */
export const MAX_REPAIR_BYTES = 8 * 1024;

/** One stretch of the log (or the checkpoint) that did not read as intact records. */
export interface DamagedPart {
	/** Where: `log.jsonl bytes 120–340 (lines 2–3)` or `checkpoint.json`. */
	where: string;
	/** Repaired: the byte and its proven value; otherwise why it stays out. */
	repaired?: { offset: number; was: number; now: number };
	why?: string;
}

/** What salvage finds in a store's bytes: the base, the records kept, and what is left out. */
export interface SalvagePlan {
	base: { seq: number; state: OwnerState };
	kept: TransitionRecord[];
	damaged: DamagedPart[];
	/** Intact records that cannot be replayed: a record before them is damaged or missing. */
	unreplayed: TransitionRecord[];
	/** Records at or before the checkpoint (already folded into it), whole or not: not needed. */
	folded: number;
}

/** Records a byte range reads as, when every line in it is a record that passes its check; undefined otherwise. */
function recordsIn(text: string, file: string, proven: boolean): TransitionRecord[] | undefined {
	const lines = text.split("\n");
	const out: TransitionRecord[] = [];
	for (const [i, line] of lines.entries()) {
		if (line === "" && i === lines.length - 1) continue;
		try {
			const parsed = parseLogLine(line, file, "a line");
			// A repair must be proven by the record's own sum: a legacy record has none.
			if (proven && parsed.legacy) return undefined;
			out.push(parsed.record);
		} catch {
			return undefined;
		}
	}
	return out;
}

/**
 * Whether a line can be a record whose sum matches, without parsing it: State Flow writes a record
 * as `JSON.stringify` of the value with `sum` last, so the value's text is the line without
 * `,"sum":"…"` and its SHA-256 must start with the sum. Cheap enough to try every byte value at
 * every position; a match is then read in full.
 */
function sumMatches(line: string): boolean {
	const tail = SUM_TAIL.exec(line);
	if (tail === null) return false;
	return (
		createHash("sha256")
			.update(`${line.slice(0, tail.index)}}`)
			.digest("hex")
			.slice(0, 16) === tail[1]
	);
}

const SUM_TAIL = /,"sum":"([0-9a-f]{16})"\}$/;

const BYTES = Array.from({ length: 256 }, (_, i) => Buffer.of(i));

/** Bytes at the end of a line where its `,"sum":"…"}` tail lies (with room for a changed byte). */
const TAIL_BYTES = 40;

/**
 * The one-byte change that makes `bytes` read as records, each proven by its sum, or undefined.
 * A byte inside a record's value is found by hashing: the hash of the bytes before it is kept and
 * copied for each of the 255 other values, so each try hashes only the rest of the line. A changed
 * line break, or a byte in the sum itself, is tried through a full read of the stretch.
 */
function oneByteRepair<T>(bytes: Buffer, read: (text: string) => T | undefined): { offset: number; was: number; now: number; records: T } | undefined {
	if (bytes.length > MAX_REPAIR_BYTES) return undefined;
	const copy = Buffer.from(bytes);
	const full = (offset: number, now: number) => {
		const was = copy[offset] as number;
		copy[offset] = now;
		const text = copy.toString("utf8");
		copy[offset] = was;
		const lines = text.split("\n").filter((l, i, all) => l !== "" || i < all.length - 1);
		if (lines.length === 0 || !lines.every(sumMatches)) return undefined;
		const records = read(text);
		return records !== undefined ? { offset, was, now, records } : undefined;
	};
	const firstBreak = copy.indexOf(10);
	const oneLine = firstBreak < 0 || firstBreak === copy.length - 1;
	const lineEnd = firstBreak < 0 ? copy.length : firstBreak;
	const tail = oneLine ? SUM_TAIL.exec(copy.subarray(0, lineEnd).toString("latin1")) : null;
	// The value's bytes (the line up to its sum tail) and the sum they must hash to.
	const bodyEnd = tail === null ? -1 : tail.index;
	const sumBytes = Buffer.from(tail?.[1] ?? "", "hex");
	const prefix = createHash("sha256");
	for (let offset = 0; offset < copy.length; offset++) {
		const was = copy[offset] as number;
		const nearEnd = oneLine && offset >= lineEnd - TAIL_BYTES;
		for (let now = 0; now < 256; now++) {
			// State Flow's JSON text never holds a raw control character but the line break: no original byte was one.
			if (now === was || (now < 0x20 && now !== 10)) continue;
			if (offset < bodyEnd && now !== 10) {
				const h = prefix.copy();
				h.update(BYTES[now] as Buffer);
				h.update(copy.subarray(offset + 1, bodyEnd));
				h.update("}");
				if (!h.digest().subarray(0, 8).equals(sumBytes)) continue;
				const found = full(offset, now);
				if (found) return found;
				continue;
			}
			if (now !== 10 && was !== 10 && !nearEnd) continue;
			const found = full(offset, now);
			if (found) return found;
		}
		if (offset < bodyEnd) prefix.update(copy.subarray(offset, offset + 1));
	}
	return undefined;
}

/** Line number (1-based) of a byte offset. */
function lineAt(bytes: Buffer, offset: number): number {
	let n = 1;
	for (let i = 0; i < offset && i < bytes.length; i++) if (bytes[i] === 10) n++;
	return n;
}

/**
 * Read the log's bytes into intact records and damaged stretches (a run of lines that do not
 * parse, with the line break after it), each stretch repaired when one byte proves it.
 */
function readLog(log: Buffer, file: string): { records: TransitionRecord[]; damaged: DamagedPart[] } {
	const records: TransitionRecord[] = [];
	const damaged: DamagedPart[] = [];
	let bad: { start: number; end: number } | undefined;
	const settle = () => {
		if (bad === undefined) return;
		const stretch = log.subarray(bad.start, bad.end);
		const where = `${LOG_FILE} bytes ${bad.start}–${bad.end - 1} (line${lineAt(log, bad.start) === lineAt(log, bad.end - 1) ? ` ${lineAt(log, bad.start)}` : `s ${lineAt(log, bad.start)}–${lineAt(log, bad.end - 1)}`})`;
		const fix = oneByteRepair(stretch, (text) => {
			const records = recordsIn(text, file, true);
			return records !== undefined && records.length > 0 ? records : undefined;
		});
		if (fix !== undefined) {
			records.push(...fix.records);
			damaged.push({ where, repaired: { offset: bad.start + fix.offset, was: fix.was, now: fix.now } });
		} else {
			damaged.push({
				where,
				why:
					stretch.length > MAX_REPAIR_BYTES
						? "not intact records, too long to search for a one-byte repair"
						: "not intact records, and no one-byte repair makes them pass their integrity checks",
			});
		}
		bad = undefined;
	};
	let start = 0;
	while (start < log.length) {
		const nl = log.indexOf(10, start);
		const end = nl < 0 ? log.length : nl + 1;
		const line = log.subarray(start, nl < 0 ? log.length : nl).toString("utf8");
		const one = recordsIn(line, file, false);
		if (one !== undefined && one.length === 1) {
			settle();
			records.push(one[0] as TransitionRecord);
		} else if (line !== "" || bad !== undefined) {
			bad = bad === undefined ? { start, end } : { start: bad.start, end };
		}
		start = end;
	}
	settle();
	return { records, damaged };
}

/** Plan a salvage from a store's bytes (pure but for hashing): nothing is written. */
export function planSalvage(
	owner: FileOwnerStore["owner"],
	log: Buffer,
	checkpoint: Buffer | undefined,
	files: { log: string; checkpoint: string },
): SalvagePlan {
	const { records, damaged } = readLog(log, files.log);
	let base: { seq: number; state: OwnerState } = { seq: 0, state: emptyState() };
	if (checkpoint !== undefined) {
		const read = (text: string) => {
			const cp = parseCheckpoint(text, files.checkpoint, owner);
			return cp.legacy ? undefined : cp;
		};
		try {
			const cp = parseCheckpoint(checkpoint.toString("utf8"), files.checkpoint, owner);
			base = { seq: cp.seq, state: cp.state };
		} catch (e) {
			const fix = oneByteRepair(checkpoint, (text) => {
				try {
					return read(text);
				} catch {
					return undefined;
				}
			});
			if (fix !== undefined) {
				base = { seq: fix.records.seq, state: fix.records.state };
				damaged.unshift({ where: CHECKPOINT_FILE, repaired: { offset: fix.offset, was: fix.was, now: fix.now } });
				return chain(base, records, damaged);
			}
			const fromStart = records[0]?.seq === 1;
			damaged.unshift({
				where: CHECKPOINT_FILE,
				why: fromStart
					? `${messageOf(e).split(": ").slice(1).join(": ") || "damaged"}; not needed: the log reaches back to transition 1`
					: `damaged, and the log does not reach back to transition 1 to replay without it`,
			});
			if (!fromStart) return { base, kept: [], damaged, unreplayed: records.filter((r) => r.seq > 0), folded: 0 };
		}
	}
	return chain(base, records, damaged);
}

/** The records that replay from `base`, seq after seq, and the intact ones after a gap. */
function chain(base: SalvagePlan["base"], records: readonly TransitionRecord[], damaged: DamagedPart[]): SalvagePlan {
	const kept: TransitionRecord[] = [];
	const unreplayed: TransitionRecord[] = [];
	let folded = 0;
	// The seqs decide: a damaged stretch that held a needed record leaves a gap, and nothing after a gap replays.
	let broken = false;
	for (const r of records) {
		if (r.seq <= base.seq) {
			folded++;
			continue;
		}
		if (!broken && r.seq === base.seq + kept.length + 1) kept.push(r);
		else {
			broken = true;
			unreplayed.push(r);
		}
	}
	return { base, kept, damaged, unreplayed, folded };
}

const GITIGNORE = "# State Flow's local store: never commit it by accident.\n*\n";

/** At most this many left-out records are named one by one. */
const LISTED = 10;

function hex(n: number): string {
	return `0x${n.toString(16).padStart(2, "0")}`;
}

/** What a plan keeps and leaves out, in lines for doctor's report. */
export function describeSalvage(o: string, plan: SalvagePlan): string[] {
	const lines: string[] = [];
	for (const d of plan.damaged) {
		if (d.repaired !== undefined) {
			const r = d.repaired;
			lines.push(`${o}: repaired ${d.where}: byte ${r.offset} was ${hex(r.was)}, is ${hex(r.now)} again (proven by the records' integrity checks).`);
		} else lines.push(`${o}: left out ${d.where}: ${d.why}.`);
	}
	for (const r of plan.unreplayed.slice(0, LISTED)) {
		lines.push(`${o}: left out #${r.seq} ${r.id} (${r.at}): intact, but it cannot be replayed without the damaged part before it.`);
	}
	if (plan.unreplayed.length > LISTED) lines.push(`${o}: left out ${plan.unreplayed.length - LISTED} more intact transitions after it.`);
	const head = plan.base.seq + plan.kept.length;
	lines.push(
		`${o}: keeps ${plan.kept.length} transition${plan.kept.length === 1 ? "" : "s"} after ${plan.base.seq === 0 ? "the empty state" : `the checkpoint at #${plan.base.seq}`} (the owner at #${head}).`,
	);
	return lines;
}

/**
 * `--salvage <owner>`: plan from the store's bytes, write the kept part as a new store beside it,
 * read it back and compare, then move the old folder to `<root>.damaged-<time>` and the new one in
 * its place. Refused while a live writer holds the lock. A store that reads whole is left alone.
 */
export async function salvageStore(store: FileOwnerStore, seen: SeenMarks, dryRun: boolean, now = new Date()): Promise<{ lines: string[]; healthy: boolean }> {
	const o = store.owner;
	if (!existsSync(store.root)) return { lines: [`${o}: no store at ${store.root}; nothing to salvage.`], healthy: true };
	const holder = readLockHolder(store.lockPath);
	if (holder !== undefined && !holder.stale && holder.odd === undefined) {
		return { lines: [`${o}: not salvaged: ${store.lockPath} is held by ${holder.who}, which is writing; retry when it is done.`], healthy: false };
	}
	let log: Buffer;
	let checkpoint: Buffer | undefined;
	try {
		log = readRegular(store.logPath) ?? Buffer.alloc(0);
		checkpoint = readRegular(store.checkpointPath);
	} catch (e) {
		return { lines: [`${o}: not salvaged: ${messageOf(e)}`], healthy: false };
	}
	const plan = planSalvage(o, log, checkpoint, { log: store.logPath, checkpoint: store.checkpointPath });
	if (plan.damaged.length === 0 && plan.unreplayed.length === 0) {
		return { lines: [`${o}: every record of ${store.root} is intact; nothing to salvage (doctor reports any other problem).`], healthy: true };
	}
	const lines = describeSalvage(o, plan);
	const stamp = now.toISOString().replace(/[:.]/g, "-");
	const aside = `${store.root}.damaged-${stamp}`;
	if (dryRun) {
		lines.push(`${o}: would write them as a new store at ${store.root} and move the old one to ${aside} (kept, not deleted).`);
		return { lines, healthy: false };
	}
	const fresh = `${store.root}.salvage-${stamp}`;
	try {
		mkdirSync(fresh, { mode: DIR_MODE });
		if (plan.base.seq > 0 || checkpoint !== undefined)
			writeFileSync(`${fresh}/${CHECKPOINT_FILE}`, checkpointText(o, plan.base.seq, plan.base.state), { mode: FILE_MODE, flush: true });
		writeFileSync(`${fresh}/${LOG_FILE}`, plan.kept.map((r) => `${recordLine(r)}\n`).join(""), { mode: FILE_MODE, flush: true });
		if (o === "cwd") writeFileSync(`${fresh}/.gitignore`, GITIGNORE, { mode: 0o644 });
		fsyncDir(fresh);
		// Read back through the store's own reader before anything is moved: what it loads is what was planned.
		const check = new FileOwnerStore({ owner: o, root: fresh, retention: store.retention, gitignore: false });
		const read = await check.load();
		await check.close();
		if (read.seq !== plan.base.seq + plan.kept.length || !jsonEqual(read.state, replay(plan.base.state, plan.kept))) {
			throw new Error("it does not read back as planned");
		}
	} catch (e) {
		rmSync(fresh, { recursive: true, force: true });
		return { lines: [...lines, `${o}: not salvaged: the new store could not be written (${messageOf(e)}); nothing was moved.`], healthy: false };
	}
	renameSync(store.root, aside);
	renameSync(fresh, store.root);
	fsyncDir(dirname(store.root));
	// This machine's mark of what its writers committed would call the shorter store behind: the salvage is a deliberate new start.
	const mark = seen.read(store.root);
	if (mark !== undefined && mark.seq > plan.base.seq + plan.kept.length) seen.clear(store.root);
	lines.push(`${o}: wrote the salvaged store at ${store.root}; the damaged one is kept at ${aside} (nothing deleted).`);
	return { lines, healthy: true };
}
