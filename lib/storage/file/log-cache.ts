/**
 * The pure parts of a file owner's read cache: what it remembers of the log, how a log's bytes
 * parse into records, how a stat tells the same unchanged file, and the cheap containment proof.
 * No state of its own; `owner-store.ts` keeps one `Cache` per store.
 */
import type { Hash } from "node:crypto";
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { dirname } from "node:path";
import { isJsonText } from "../../core/json.js";
import type { OwnerHistory, SharedOwner, TransitionRecord } from "../../core/types.js";
import { damaged, parseLogLine } from "../format.js";
import { isRealDir, kindOf, lstatOrUndefined, realOrSelf, unsafePath } from "../fs-util.js";
import type { SeenMark } from "./seen.js";
import { expectNext } from "../owner-log.js";

export const NEWLINE = Buffer.from("\n");

export interface Cache {
	/** Identity of the log file the history was read from (ino 0: no log file). */
	ino: number;
	size: number;
	mtimeMs: number;
	/** Bytes of complete records consumed; bytes past it are a torn or in-flight line. */
	offset: number;
	/** Start of the last complete record and its bytes: re-checked when the log grows. */
	lastStart: number;
	lastLine: Buffer;
	/** SHA-256 of bytes [0, offset): tells an in-place change (same size, new mtime) from a touch. */
	prefix: Hash;
	/** The last complete record lacks its newline (a dropped line end): the next append writes it first. */
	missingNewline: boolean;
	/** Seq of the checkpoint file on disk (records <= it in the log are skipped). */
	diskCheckpointSeq: number;
	/** Some of the files are in the 0.1.0 format: the next writer rewrites them (migration). */
	legacy: boolean;
	history: OwnerHistory;
	/**
	 * `statStamp` of the log when a full, contained read last found `history` to be exactly
	 * its bytes (no torn tail); while the log's `lstat` still gives this stamp, `read` answers
	 * from memory without the containment check (docs/security.md, "Reads served from memory").
	 */
	verified?: StatStamp;
}

/** What `parseLines` consumed. */
export interface Parsed {
	records: TransitionRecord[];
	offset: number;
	lastStart: number;
	missingNewline: boolean;
	legacy: boolean;
}

/**
 * Parse complete records of `buf`; `base` is the file offset of buf[0]. The bytes after
 * the last newline are a record only when they are one complete, valid record (a dropped
 * line end); otherwise they are a line in flight or torn, and stay unread.
 */
export function parseLines(buf: Buffer, base: number, logPath: string, owner: SharedOwner): Parsed {
	const records: TransitionRecord[] = [];
	let start = 0;
	let lastStart = 0;
	let legacy = false;
	const take = (text: string, at: number) => {
		const { record, legacy: old } = parseLogLine(text, logPath, `the record at byte ${base + at}`);
		if (!record.owners.includes(owner)) damaged(logPath, `the record at byte ${base + at} belongs to owners ${record.owners.join(", ")}`);
		records.push(record);
		legacy ||= old;
		lastStart = at;
	};
	for (;;) {
		const nl = buf.indexOf(10, start);
		if (nl < 0) break;
		take(buf.toString("utf8", start, nl), start);
		start = nl + 1;
	}
	if (start < buf.length && buf[buf.length - 1] === 0x7d /* } */ && isJsonText(buf.toString("utf8", start))) {
		take(buf.toString("utf8", start), start);
		return { records, offset: base + buf.length, lastStart: base + lastStart, missingNewline: true, legacy };
	}
	return { records, offset: base + start, lastStart: base + (records.length > 0 ? lastStart : start), missingNewline: false, legacy };
}

/**
 * What a history (`seq`, retained `tail`) lacks of a point seen before — a seq and, when known,
 * the transition there: `"behind"` when it ends earlier, the transition now at that seq when
 * it is another (a replaced store), undefined when it still holds it (or that seq was folded).
 */
export function lost(seen: SeenMark, seq: number, tail: readonly TransitionRecord[]): "behind" | TransitionRecord | undefined {
	if (seq < seen.seq) return "behind";
	const there = seen.id === undefined ? undefined : tail.find((r) => r.seq === seen.seq);
	return there !== undefined && there.id !== seen.id ? there : undefined;
}

/** What tells that the log is the same file with the same bytes, without reading them. */
export interface StatStamp {
	dev: number;
	ino: number;
	size: number;
	mtimeMs: number;
	ctimeMs: number;
}

/** The stamp of a regular file; undefined for anything else. */
export function statStamp(st: Stats): StatStamp | undefined {
	return st.isFile() ? { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs } : undefined;
}

/** Compared field by field: no text is built on the read path. */
export function sameStamp(a: StatStamp, st: Stats | undefined): boolean {
	return st !== undefined && st.isFile() && a.ino === st.ino && a.size === st.size && a.mtimeMs === st.mtimeMs && a.ctimeMs === st.ctimeMs && a.dev === st.dev;
}

export function emptyCache(): Omit<Cache, "history" | "diskCheckpointSeq" | "legacy"> {
	return { ino: 0, size: 0, mtimeMs: 0, offset: 0, lastStart: 0, lastLine: Buffer.alloc(0), prefix: createHash("sha256"), missingNewline: false };
}

/**
 * Containment proved by two `lstat`s: when the store folder and its parent are real folders (no
 * link), the folder's real path is its territory's real path plus those two names, inside it
 * whatever lies above. Anything else (a link on the way, a missing folder) takes the full walk
 * (two `realpath`), which was most of a commit's work outside its fsync (docs/security.md).
 */
export function realChain(root: string): boolean {
	return lstatOrUndefined(root)?.isDirectory() === true && lstatOrUndefined(dirname(root))?.isDirectory() === true;
}

/** True when `dir` is a folder (a link to one is judged by `checkContained`); false when absent; refused otherwise. */
export function isRealDirOrLink(dir: string): boolean {
	const st = lstatOrUndefined(dir);
	if (st === undefined) return false;
	if (st.isSymbolicLink()) return isRealDir(realOrSelf(dir));
	if (!st.isDirectory()) unsafePath(dir, kindOf(st), "a folder");
	return true;
}

/** The log's records after the checkpoint; the log must reach the checkpoint and continue without gaps. */
export function afterCheckpoint(records: TransitionRecord[], cpSeq: number, logPath: string, checkpointPath: string): TransitionRecord[] {
	let previous: TransitionRecord | undefined;
	for (const r of records) {
		if (previous !== undefined) expectNext(previous.seq, r, (what) => damaged(logPath, what));
		previous = r;
	}
	const last = records[records.length - 1];
	if (last !== undefined && last.seq < cpSeq) {
		damaged(logPath, `its last record has seq ${last.seq}, behind checkpoint \`${checkpointPath}\` at seq ${cpSeq} (the checkpoint does not match the log)`);
	}
	const first = records[0];
	if (first !== undefined && first.seq > cpSeq + 1) {
		damaged(logPath, `its first record has seq ${first.seq} but checkpoint \`${checkpointPath}\` ends at seq ${cpSeq} (records are missing between them)`);
	}
	return records.filter((r) => r.seq > cpSeq);
}
