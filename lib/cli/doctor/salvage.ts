/**
 * `state-flow doctor --salvage <owner>`: rebuild a damaged Global or CWD file store from what is
 * intact in it. The base is the checkpoint (or the empty state, when the log reaches back to
 * transition 1, or when the checkpoint is damaged: then what it held is lost and the log is
 * replayed over the empty state). A damaged stretch of the log is repaired only where its own
 * integrity checks prove the repair: one changed byte whose correction makes every record there
 * pass its 64-bit SHA-256 sum again. Anything else damaged loses only what its records wrote
 * (issue 33): every intact record after it is replayed over the salvaged state
 * (`salvage-replay.ts`), and what no longer applies is named and left out, never guessed. The
 * result is written as a new store, read back and compared, and the old folder is moved aside,
 * deleting nothing.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { messageOf } from "../../core/errors.js";
import { inline } from "../../core/printable.js";
import { jsonEqual } from "../../core/json.js";
import { emptyState } from "../../core/state.js";
import type { Limits, OwnerState, TransitionRecord } from "../../core/types.js";
import { CHECKPOINT_FILE, FileOwnerStore, LOG_FILE } from "../../storage/file/owner-store.js";
import { checkpointText, parseCheckpoint, parseLogLine, recordLine } from "../../storage/format.js";
import { atomicWrite, DIR_MODE, fsyncDir, readRegular } from "../../storage/fs-util.js";
import { readLockHolder } from "../../storage/file/lock.js";
import type { SeenMarks } from "../../storage/file/seen.js";
import { type LogEntry, type LostInfo, type LostTransition, lostLine, replayLog } from "./salvage-replay.js";

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

/** What salvage finds in a store's bytes: the base, the records the new store holds, and what is lost. */
export interface SalvagePlan {
	base: { seq: number; state: OwnerState };
	/** The new store's records after the base: the intact ones (replayed) and a marker for each lost seq. */
	kept: TransitionRecord[];
	/** The owner's state after them. */
	state: OwnerState;
	damaged: DamagedPart[];
	/** Transitions whose effects the new store does not have: damaged ones, and intact ones that no longer apply. */
	lost: LostTransition[];
	/** Damaged lines at the log's end: lost, with no seq kept. */
	tail: LostInfo[];
	/** The damaged checkpoint held transitions up to this seq, now lost (the log was replayed over the empty state). */
	lostBase?: number;
	/** Intact records that repeat a seq already placed: left out. */
	repeated: TransitionRecord[];
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
 * parse, with the line break after it), in order, each stretch repaired when one byte proves it.
 */
function readLog(log: Buffer, file: string): { entries: LogEntry[]; damaged: DamagedPart[] } {
	const entries: LogEntry[] = [];
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
			for (const record of fix.records) entries.push({ record });
			damaged.push({ where, repaired: { offset: bad.start + fix.offset, was: fix.was, now: fix.now } });
		} else {
			// Its lines, for what their bytes still say (the lost transitions' ids and entries).
			entries.push({
				damaged: stretch
					.toString("utf8")
					.split("\n")
					.filter((l) => l !== ""),
			});
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
			entries.push({ record: one[0] as TransitionRecord });
		} else if (line !== "" || bad !== undefined) {
			bad = bad === undefined ? { start, end } : { start: bad.start, end };
		}
		start = end;
	}
	settle();
	return { entries, damaged };
}

/** Plan a salvage from a store's bytes (pure but for hashing): nothing is written. `stamp` names the salvage in its markers. */
export function planSalvage(
	owner: FileOwnerStore["owner"],
	log: Buffer,
	checkpoint: Buffer | undefined,
	files: { log: string; checkpoint: string },
	opts: { stamp?: string; at?: string; limits?: Limits } = {},
): SalvagePlan {
	const { entries, damaged } = readLog(log, files.log);
	const records = entries.flatMap((e) => ("record" in e ? [e.record] : []));
	let base: { seq: number; state: OwnerState } = { seq: 0, state: emptyState() };
	let lostBase: number | undefined;
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
			} else {
				// The log is replayed over the empty state from its first record: what only the checkpoint held is
				// lost. With no record after it, its seq is kept where its bytes still say it.
				const first = records[0]?.seq;
				const fromStart = first === 1;
				if (!fromStart) {
					const held = first !== undefined ? first - 1 : Number(/"seq":(\d{1,15})[,}]/.exec(checkpoint.toString("latin1"))?.[1] ?? 0);
					base = { seq: held, state: emptyState() };
					lostBase = held;
				}
				damaged.unshift({
					where: CHECKPOINT_FILE,
					why: fromStart
						? `${messageOf(e).split(": ").slice(1).join(": ") || "damaged"}; not needed: the log reaches back to transition 1`
						: "damaged, and no one-byte repair makes it pass its integrity check",
				});
			}
		}
	}
	const stamp = opts.stamp ?? "salvage";
	const replayed = replayLog({
		owner,
		base,
		entries,
		stamp,
		at: opts.at ?? new Date(0).toISOString(),
		...(lostBase !== undefined ? { lostBefore: "unknown" as const } : {}),
		...(opts.limits !== undefined ? { limits: opts.limits } : {}),
	});
	return {
		base,
		kept: replayed.records,
		state: replayed.state,
		damaged,
		lost: replayed.lost,
		tail: replayed.tail,
		...(lostBase !== undefined ? { lostBase } : {}),
		repeated: replayed.repeated,
		folded: replayed.folded,
	};
}

const GITIGNORE = "# State Flow's local store: never commit it by accident.\n*\n";

/** At most this many lost records are named one by one. */
const LISTED = 10;

function hex(n: number): string {
	return `0x${n.toString(16).padStart(2, "0")}`;
}

/** What a plan keeps and loses, in lines for doctor's report. */
export function describeSalvage(o: string, plan: SalvagePlan): string[] {
	const lines: string[] = [];
	for (const d of plan.damaged) {
		if (d.repaired !== undefined) {
			const r = d.repaired;
			lines.push(`${o}: repaired ${d.where}: byte ${r.offset} was ${hex(r.was)}, is ${hex(r.now)} again (proven by the records' integrity checks).`);
		} else lines.push(`${o}: left out ${d.where}: ${d.why}.`);
	}
	if (plan.lostBase !== undefined) {
		const upTo = plan.lostBase > 0 ? ` (transitions up to #${plan.lostBase})` : "";
		lines.push(`${o}: lost what the checkpoint held${upTo}: the log's records after it are replayed over the empty state.`);
	}
	for (const l of plan.lost.slice(0, LISTED)) lines.push(lostLine(o, l));
	if (plan.lost.length > LISTED)
		lines.push(`${o}: lost ${plan.lost.length - LISTED} more transitions (each keeps its seq as an empty transition that names it).`);
	for (const r of plan.repeated.slice(0, LISTED))
		lines.push(`${o}: left out #${r.seq} ${inline(r.id)} (${r.at}): intact, but its seq repeats one already placed.`);
	if (plan.tail.length > 0) {
		const ids = plan.tail.flatMap((t) => (t.id === undefined ? [] : [inline(t.id)]));
		lines.push(
			`${o}: lost the log's last ${plan.tail.length} line${plan.tail.length === 1 ? "" : "s"} (damaged${ids.length > 0 ? `; ids as their bytes read: ${ids.slice(0, LISTED).join(", ")}` : ""}): what they wrote is lost; the owner ends before them.`,
		);
	}
	const head = plan.base.seq + plan.kept.length;
	const intact = plan.kept.length - plan.lost.length;
	lines.push(
		`${o}: keeps ${intact} of ${plan.kept.length} transition${plan.kept.length === 1 ? "" : "s"} after ${plan.base.seq === 0 ? "the empty state" : `${plan.lostBase === undefined ? "the checkpoint" : "the empty state"} at #${plan.base.seq}`} (the owner at #${head})${plan.lost.length > 0 ? "; each lost one keeps its seq as an empty transition that names it" : ""}.`,
	);
	return lines;
}

/**
 * `--salvage <owner>`: plan from the store's bytes, write the kept part as a new store beside it,
 * read it back and compare, then move the old folder to `<root>.damaged-<time>` and the new one in
 * its place. Refused while a live writer holds the lock. A store that reads whole is left alone.
 */
export async function salvageStore(
	store: FileOwnerStore,
	seen: SeenMarks,
	dryRun: boolean,
	now = new Date(),
	limits?: Limits,
): Promise<{ lines: string[]; healthy: boolean }> {
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
	const stamp = now.toISOString().replace(/[:.]/g, "-");
	const plan = planSalvage(
		o,
		log,
		checkpoint,
		{ log: store.logPath, checkpoint: store.checkpointPath },
		{ stamp, at: now.toISOString(), ...(limits ? { limits } : {}) },
	);
	if (plan.damaged.length === 0 && plan.lost.length === 0 && plan.repeated.length === 0 && plan.tail.length === 0) {
		return { lines: [`${o}: every record of ${store.root} is intact; nothing to salvage (doctor reports any other problem).`], healthy: true };
	}
	const lines = describeSalvage(o, plan);
	const aside = `${store.root}.damaged-${stamp}`;
	if (dryRun) {
		lines.push(`${o}: would write them as a new store at ${store.root} and move the old one to ${aside} (kept, not deleted).`);
		return { lines, healthy: false };
	}
	const fresh = `${store.root}.salvage-${stamp}`;
	const head = plan.base.seq + plan.kept.length;
	try {
		mkdirSync(fresh, { mode: DIR_MODE });
		// The one atomic write (`fs-util.ts`): each file whole or absent, fsynced with its folder.
		if (plan.base.seq > 0 || checkpoint !== undefined) atomicWrite(`${fresh}/${CHECKPOINT_FILE}`, checkpointText(o, plan.base.seq, plan.base.state));
		atomicWrite(`${fresh}/${LOG_FILE}`, plan.kept.map((r) => `${recordLine(r)}\n`).join(""));
		if (o === "cwd") atomicWrite(`${fresh}/.gitignore`, GITIGNORE, { mode: 0o644 });
		// Read back through the store's own reader before anything is moved: what it loads is what was planned.
		const check = new FileOwnerStore({ owner: o, root: fresh, retention: store.retention, gitignore: false });
		const read = await check.load();
		await check.close();
		if (read.seq !== head || !jsonEqual(read.state, plan.state)) throw new Error("it does not read back as planned");
	} catch (e) {
		rmSync(fresh, { recursive: true, force: true });
		return { lines: [...lines, `${o}: not salvaged: the new store could not be written (${messageOf(e)}); nothing was moved.`], healthy: false };
	}
	renameSync(store.root, aside);
	renameSync(fresh, store.root);
	fsyncDir(dirname(store.root));
	// This machine's mark of what its writers committed would call a shorter store behind (a lost
	// tail): the salvage is a deliberate new start. Lost seqs in the middle keep their place.
	const mark = seen.read(store.root);
	if (mark !== undefined && mark.seq > head) seen.clear(store.root);
	lines.push(`${o}: wrote the salvaged store at ${store.root}; the damaged one is kept at ${aside} (nothing deleted).`);
	return { lines, healthy: true };
}
