/**
 * Whether git tracks anything under a folder of the work tree, read from git's index file
 * itself: State Flow never runs git in a repository (a repository's config can make git run
 * commands, `core.fsmonitor`). Used to tell a store the repository CARRIES (committed, so every
 * clone gets it) from one this machine made (`project.ts`). The index lists paths sorted by
 * their bytes, so the scan stops at the first path past the folder; `.pi/…` sorts early, and
 * only the first bytes of the index are read (at most `MAX_SCAN`). Formats 2, 3 and 4, SHA-1
 * and SHA-256 repositories (the object format from the common dir's `config`), a split index's shared part (`sharedindex.*`) and a sparse index's
 * folder entries are understood (git's Documentation/gitformat-index.txt). What cannot be read
 * to a verdict is `unknown`, and the caller treats it as carried: a repository never hands a
 * clone its memory by making its index hard to read.
 */
import { closeSync, constants, fstatSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import { openFile, readRegular } from "./fs-util.js";

export type Tracked = "yes" | "no" | "unknown";

/** Most bytes of one index file read for a verdict (an index is a few KB before `.pi/`). */
export const MAX_SCAN = 4 * 1024 * 1024;
/** First read; doubled until a verdict, the file's end or `MAX_SCAN`. */
const FIRST_READ = 64 * 1024;
/** Most shared index files of a split index looked at. */
const MAX_SHARED = 8;

/** The fixed part of an entry before its object id: ctime, mtime, dev, ino, mode, uid, gid, size. */
const STAT_BYTES = 40;
const MODE_AT = 24;
const EXTENDED = 0x4000;
const NAME_MASK = 0xfff;
/** A sparse index's folder entry (`mode` 040000). */
const SPARSE_DIR_MODE = 0o040000;

type Step = Tracked | "more";

/** git's varint (varint.c): 7 bits a byte, high bit "more", each continuation adds one. */
function varint(buf: Buffer, at: number): { value: number; next: number } | undefined {
	let i = at;
	if (i >= buf.length) return undefined;
	let c = buf[i++] as number;
	let value = c & 127;
	while (c & 128) {
		if (i >= buf.length || value > 2 ** 40) return undefined;
		value += 1;
		c = buf[i++] as number;
		value = value * 128 + (c & 127);
	}
	return { value, next: i };
}

/**
 * Scan the entries in `buf` (the first `buf.length` bytes of an index; `whole` when that is the
 * file) for a path under `prefix` (which ends in `/`), taking object ids of `hashBytes`.
 * `more` when the bytes end before a verdict; `unknown` when they are not an index of this shape.
 */
function scan(buf: Buffer, whole: boolean, prefix: Buffer, hashBytes: number): Step {
	if (buf.length < 12) return whole ? "unknown" : "more";
	if (buf.toString("latin1", 0, 4) !== "DIRC") return "unknown";
	const version = buf.readUInt32BE(4);
	if (version < 2 || version > 4) return "unknown";
	const count = buf.readUInt32BE(8);
	let at = 12;
	let previous: Buffer = Buffer.alloc(0);
	for (let n = 0; n < count; n++) {
		const flagsAt = at + STAT_BYTES + hashBytes;
		if (flagsAt + 2 > buf.length) return whole ? "unknown" : "more";
		const mode = buf.readUInt32BE(at + MODE_AT);
		const flags = buf.readUInt16BE(flagsAt);
		const extended = (flags & EXTENDED) !== 0;
		if (extended && version < 3) return "unknown";
		const nameAt = flagsAt + 2 + (extended ? 2 : 0);
		let name: Buffer;
		let next: number;
		if (version === 4) {
			const strip = varint(buf, nameAt);
			if (strip === undefined) return whole ? "unknown" : "more";
			if (strip.value > previous.length) return "unknown";
			const end = buf.indexOf(0, strip.next);
			if (end < 0) return whole ? "unknown" : "more";
			name = Buffer.concat([previous.subarray(0, previous.length - strip.value), buf.subarray(strip.next, end)]);
			next = end + 1;
		} else {
			const end = buf.indexOf(0, nameAt);
			if (end < 0) return whole ? "unknown" : "more";
			name = buf.subarray(nameAt, end);
			// Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
			next = at + ((nameAt - at + name.length + 8) & ~7);
			if (next > buf.length) return whole ? "unknown" : "more";
			for (let i = end; i < next; i++) if (buf[i] !== 0) return "unknown";
		}
		// The length git recorded must be the name's: a wrong object id size never lines up.
		if ((flags & NAME_MASK) !== Math.min(name.length, NAME_MASK)) return "unknown";
		if (name.subarray(0, prefix.length).equals(prefix)) return "yes";
		// The folder's own path tracked (a file or a link there), or a sparse index's folder entry
		// above it, which stands for everything in it.
		const above = name.length < prefix.length && prefix.subarray(0, name.length).equals(name);
		if (above && (name.length === prefix.length - 1 || (mode & 0o170000) === SPARSE_DIR_MODE)) return "yes";
		if (Buffer.compare(name, prefix) > 0) return "no";
		previous = name;
		at = next;
	}
	return "no";
}

/**
 * Verdicts by index file, kept while the file is the same one: git writes an index by renaming a
 * new file into place, so its inode changes with every write (a check before each prompt then
 * costs one `fstat`).
 */
const verdicts = new Map<string, { file: string; verdict: Tracked }>();
const MAX_VERDICTS = 32;

/** One index file's verdict, reading no more of it than needed (never through a link, never a FIFO). */
function trackedIn(file: string, prefix: Buffer, hashBytes: number): Tracked {
	let fd: number | undefined;
	try {
		fd = openFile(file, constants.O_RDONLY);
	} catch {
		return "unknown";
	}
	if (fd === undefined) return "no";
	try {
		const st = fstatSync(fd);
		const key = `${file}\0${prefix.toString("utf8")}\0${hashBytes}`;
		const same = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
		const known = verdicts.get(key);
		if (known?.file === same) return known.verdict;
		const verdict = scanFile(fd, prefix, hashBytes);
		if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
		verdicts.set(key, { file: same, verdict });
		return verdict;
	} catch {
		return "unknown";
	} finally {
		closeSync(fd);
	}
}

/** Read an open index from its start, doubling the bytes read until a verdict (at most `MAX_SCAN`). */
function scanFile(fd: number, prefix: Buffer, hashBytes: number): Tracked {
	let buf: Buffer = Buffer.alloc(0);
	for (let want = FIRST_READ; ; want *= 2) {
		const size = Math.min(want, MAX_SCAN);
		const grown = Buffer.allocUnsafe(size);
		buf.copy(grown);
		let got = buf.length;
		while (got < size) {
			const n = readSync(fd, grown, got, size - got, got);
			if (n === 0) break;
			got += n;
		}
		buf = grown.subarray(0, got);
		const whole = got < size;
		const step = scan(buf, whole, prefix, hashBytes);
		if (step !== "more") return step;
		if (whole || size >= MAX_SCAN) return "unknown";
	}
}

/** Largest git `config` read for its object format. */
const MAX_CONFIG = 64 * 1024;

/**
 * The size of the repository's object ids: 32 bytes when its config says
 * `[extensions] objectFormat = sha256`, else 20 (SHA-1); undefined when the config cannot be read.
 */
function objectIdBytes(gitDir: string): number | undefined {
	let text: string;
	try {
		const bytes = readRegular(join(gitDir, "config"));
		if (bytes === undefined) return 20;
		if (bytes.length > MAX_CONFIG) return undefined;
		text = bytes.toString("utf8");
	} catch {
		return undefined;
	}
	let section = "";
	for (const raw of text.split(/\r?\n/)) {
		const line = raw.replace(/[#;].*$/, "").trim();
		const head = /^\[\s*([A-Za-z0-9.-]+)\s*\]/.exec(line);
		if (head !== null) section = (head[1] as string).toLowerCase();
		else if (section === "extensions" && /^objectformat\s*=\s*"?sha256"?$/i.test(line)) return 32;
	}
	return 20;
}

/**
 * Whether the index of the work tree whose git dir is `gitDir` tracks a path under `folder` (a
 * path relative to the work tree's root, `/`-separated): `yes`, `no`, or `unknown` when an index
 * is there but cannot be read to a verdict. No index is `no` (nothing is tracked yet).
 */
export function tracksUnder(gitDir: string, folder: string): Tracked {
	const prefix = Buffer.from(`${folder.replace(/\/+$/, "")}/`, "utf8");
	const files = ["index"];
	try {
		files.push(
			...readdirSync(gitDir)
				.filter((f) => /^sharedindex\.[0-9a-f]{40,64}$/.test(f))
				.slice(0, MAX_SHARED),
		);
	} catch {
		return "unknown";
	}
	const hashBytes = objectIdBytes(gitDir);
	if (hashBytes === undefined) return "unknown";
	let out: Tracked = "no";
	for (const f of files) {
		const one = trackedIn(join(gitDir, f), prefix, hashBytes);
		if (one === "yes") return "yes";
		if (one === "unknown") out = "unknown";
	}
	return out;
}
