/**
 * Whether git tracks anything under a folder of the work tree, read from git's index file
 * itself: State Flow never runs git in a repository (a repository's config can make git run
 * commands, `core.fsmonitor`). Used to tell a store the repository CARRIES (committed, so every
 * clone gets it) from one this machine made (`project.ts`). On a file system that folds case
 * (`foldsCase`) a path counts in any spelling it takes for the folder's (`.PI/state-flow`); a
 * path above it counts too (a link or a submodule at `.pi`). The index lists paths sorted by their bytes, so the
 * scan stops past the last spelling that could be the folder's; `.pi/…` sorts early, and only
 * the first bytes of the index are read (at most `MAX_SCAN`). Formats 2, 3 and 4, SHA-1 and
 * SHA-256 repositories (the object format from the common dir's `config`), a split index's
 * shared part (`sharedindex.*`) and a sparse index's folder entries are understood (git's
 * Documentation/gitformat-index.txt). What cannot be read to a verdict is `unknown`, and the
 * caller treats it as carried: a repository never hands a clone its memory by making its index
 * hard to read.
 */
import { closeSync, constants, fstatSync, lstatSync, readdirSync, readSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { openFile } from "../fs-util.js";
import { configValue } from "./git-config.js";
import { GIT_FILE_MAX, gitFile, gitFileProblem } from "./git-files.js";

export type Tracked = "yes" | "no" | "unknown";

/** Most bytes of one index file read for a verdict (an index is a few KB before `.pi/`). */
export const MAX_SCAN = 4 * 1024 * 1024;
/** First read; doubled until a verdict, the file's end or `MAX_SCAN`. */
const FIRST_READ = 64 * 1024;

/** The fixed part of an entry before its object id: ctime, mtime, dev, ino, mode, uid, gid, size. */
const STAT_BYTES = 40;
const EXTENDED = 0x4000;
const NAME_MASK = 0xfff;

type Step = Tracked | "more";

/**
 * A name as a case-insensitive file system (macOS's default) may take it: `.PI/State-Flow` and
 * `.pi/ſtate-ﬂow` are checked out where `.pi/state-flow` is opened. Folding more than the file
 * system does only ever finds more to be carried.
 */
function fold(text: string): string {
	return text.toUpperCase().toLowerCase();
}

/** For each ASCII letter, the largest first byte of a character folding to a text that starts with it (built once). */
let leads: Map<string, number> | undefined;
function largestLead(letter: string): number {
	if (leads === undefined) {
		leads = new Map();
		for (let cp = 0x80; cp <= 0xffff; cp++) {
			if (cp >= 0xd800 && cp <= 0xdfff) continue;
			const ch = String.fromCharCode(cp);
			const first = fold(ch)[0];
			if (first !== undefined && first >= "a" && first <= "z") leads.set(first, Math.max(leads.get(first) ?? 0, Buffer.from(ch)[0] as number));
		}
	}
	return Math.max(letter.charCodeAt(0), leads.get(letter) ?? 0);
}

/** The paths standing for a folder of the work tree, and where in git's byte order they end. */
interface Folder {
	/**
	 * `yes` for a path in the folder, the folder itself (a file or link there) or a path above it
	 * (a link or a submodule there); `unknown` for a sparse index's folder entry above it (git
	 * tracks something in that folder, maybe not this); undefined for any other path.
	 */
	covers(name: Buffer): Tracked | undefined;
	/** Every path at or after this one in byte order is none of those. */
	past: Buffer;
}

function folderOf(path: string, foldCase: boolean): Folder {
	const spell = foldCase ? fold : (text: string) => text;
	const want = spell(path.replace(/\/+$/, ""));
	const covers = (name: Buffer): Tracked | undefined => {
		const text = spell(name.toString("utf8"));
		const f = text.replace(/\/+$/, "");
		if (f === want || f.startsWith(`${want}/`)) return "yes";
		if (!want.startsWith(`${f}/`)) return undefined;
		return text.endsWith("/") ? "unknown" : "yes";
	};
	// Names sort by their bytes: every spelling of the folder starts with what comes before its
	// first letter, then a byte no greater than the largest one a spelling of that letter starts with.
	const i = foldCase ? want.search(/[a-z]/) : -1;
	const before = Buffer.from(i < 0 ? want : want.slice(0, i), "utf8");
	const past = i < 0 ? Buffer.concat([before, Buffer.from([0x30])]) : Buffer.concat([before, Buffer.from([largestLead(want[i] as string) + 1])]);
	return { covers, past };
}

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

/** A scan's outcome, and the shared index a split index names (its `link` extension), when read to the end. */
interface Scanned {
	step: Step;
	link?: string;
	/** `MAX_SCAN` bytes were read without a verdict. */
	tooLong?: true;
}

/**
 * Scan the entries in `buf` (the first `buf.length` bytes of an index; `whole` when that is the
 * file) for a path that `folder` covers, taking object ids of `hashBytes`. `more` when the bytes
 * end before a verdict; `unknown` when they are not an index of this shape. With `toEnd` every
 * entry is read (none sorts past the folder's in a split index's own part), then the extensions.
 */
function scan(buf: Buffer, whole: boolean, folder: Folder, hashBytes: number, toEnd: boolean): Scanned {
	const step = (s: Step): Scanned => ({ step: s });
	if (buf.length < 12) return step(whole ? "unknown" : "more");
	if (buf.toString("latin1", 0, 4) !== "DIRC") return step("unknown");
	const version = buf.readUInt32BE(4);
	if (version < 2 || version > 4) return step("unknown");
	const count = buf.readUInt32BE(8);
	let at = 12;
	let previous: Buffer = Buffer.alloc(0);
	for (let n = 0; n < count; n++) {
		const flagsAt = at + STAT_BYTES + hashBytes;
		if (flagsAt + 2 > buf.length) return step(whole ? "unknown" : "more");
		const flags = buf.readUInt16BE(flagsAt);
		const extended = (flags & EXTENDED) !== 0;
		if (extended && version < 3) return step("unknown");
		const nameAt = flagsAt + 2 + (extended ? 2 : 0);
		let name: Buffer;
		let next: number;
		if (version === 4) {
			const strip = varint(buf, nameAt);
			if (strip === undefined) return step(whole ? "unknown" : "more");
			if (strip.value > previous.length) return step("unknown");
			const end = buf.indexOf(0, strip.next);
			if (end < 0) return step(whole ? "unknown" : "more");
			name = Buffer.concat([previous.subarray(0, previous.length - strip.value), buf.subarray(strip.next, end)]);
			next = end + 1;
		} else {
			const end = buf.indexOf(0, nameAt);
			if (end < 0) return step(whole ? "unknown" : "more");
			name = buf.subarray(nameAt, end);
			// Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
			next = at + ((nameAt - at + name.length + 8) & ~7);
			if (next > buf.length) return step(whole ? "unknown" : "more");
			for (let i = end; i < next; i++) if (buf[i] !== 0) return step("unknown");
		}
		// The length git recorded must be the name's: a wrong object id size never lines up.
		if ((flags & NAME_MASK) !== Math.min(name.length, NAME_MASK)) return step("unknown");
		const covered = folder.covers(name);
		if (covered !== undefined) return step(covered);
		if (!toEnd && Buffer.compare(name, folder.past) >= 0) return step("no");
		previous = name;
		at = next;
	}
	if (!toEnd) return step("no");
	if (!whole) return step("more");
	// Extensions follow the entries up to the trailing checksum: a 4-byte signature, a 4-byte size.
	for (let at2 = at; at2 + 8 <= buf.length - hashBytes; ) {
		const size = buf.readUInt32BE(at2 + 4);
		if (buf.toString("latin1", at2, at2 + 4) === "link") {
			return size < hashBytes ? step("unknown") : { step: "no", link: buf.toString("hex", at2 + 8, at2 + 8 + hashBytes) };
		}
		at2 += 8 + size;
	}
	return step("no");
}

/**
 * Scans by index file, kept while the file is the same one: git writes an index by renaming a
 * new file into place, so its inode changes with every write (a check before each prompt then
 * costs one `fstat`).
 */
const scans = new Map<string, { file: string; scanned: Scanned }>();
const MAX_SCANS = 32;

/**
 * One index file's scan, reading no more of it than needed (never through a link, never a FIFO,
 * never another user's: `unknown`); `absent` when there is no such file.
 */
function scanned(file: string, folder: Folder, key: string, hashBytes: number, toEnd: boolean, absent: Tracked): Scanned {
	let fd: number | undefined;
	try {
		fd = openFile(file, constants.O_RDONLY);
	} catch {
		return { step: "unknown" };
	}
	if (fd === undefined) return { step: absent };
	try {
		const st = fstatSync(fd);
		// The rule of every git file (`git-files.ts`): another user's index says nothing about this user's store.
		if (gitFileProblem(st) !== undefined) return { step: "unknown" };
		const at = `${file}\0${key}\0${hashBytes}\0${toEnd}`;
		const same = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
		const known = scans.get(at);
		if (known?.file === same) return known.scanned;
		const result = scanFile(fd, folder, hashBytes, toEnd);
		if (scans.size >= MAX_SCANS) scans.clear();
		scans.set(at, { file: same, scanned: result });
		return result;
	} catch {
		return { step: "unknown" };
	} finally {
		closeSync(fd);
	}
}

/** Read an open index from its start, doubling the bytes read until a verdict (at most `MAX_SCAN`). */
function scanFile(fd: number, folder: Folder, hashBytes: number, toEnd: boolean): Scanned {
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
		const result = scan(buf, whole, folder, hashBytes, toEnd);
		if (result.step !== "more") return result;
		if (whole) return { step: "unknown" };
		if (size >= MAX_SCAN) return { step: "unknown", tooLong: true };
	}
}

/**
 * The size of the repository's object ids: 32 bytes when its config says
 * `[extensions] objectFormat = sha256`, else 20 (SHA-1); undefined when the config cannot be
 * read (a link, a FIFO, another user's, too large: the one safe reader, `git-files.ts`).
 */
function objectIdBytes(gitDir: string): number | undefined {
	const read = gitFile(join(gitDir, "config"), GIT_FILE_MAX.config);
	if ("absent" in read) return 20;
	if ("problem" in read) return undefined;
	return configValue(read.text, "extensions", "objectformat")?.toLowerCase() === "sha256" ? 32 : 20;
}

/**
 * Whether the file system holding an existing path folds case in names (macOS's default): the
 * path spelled in upper case is the same file. Then git's `.PI/state-flow` is checked out where
 * `.pi/state-flow` is opened; elsewhere it is another folder.
 */
export function foldsCase(path: string): boolean {
	try {
		const st = lstatSync(path);
		const other = lstatSync(join(dirname(path), basename(path).toUpperCase()));
		return st.ino === other.ino && st.dev === other.dev;
	} catch {
		return false;
	}
}

/**
 * Whether the index of the work tree whose git dir is `gitDir` (a linked worktree's is in its
 * common dir, `commonDir`, which holds the repository's config) tracks a path under `folder` (a
 * path relative to the work tree's root, `/`-separated): `yes`, `no`, or `unknown` when an index
 * is there but cannot be read to a verdict. No index is `no` (nothing is tracked yet).
 */
export function tracksUnder(gitDir: string, folder: string, commonDir = gitDir, foldCase = true): Tracked {
	const wanted = folderOf(folder, foldCase);
	const hashBytes = objectIdBytes(commonDir);
	if (hashBytes === undefined) return "unknown";
	let split: boolean;
	try {
		split = readdirSync(gitDir).some((f) => /^sharedindex\.[0-9a-f]{40,64}$/.test(f));
	} catch {
		return "unknown";
	}
	// A split index (`core.splitIndex`) keeps most entries in the shared index its `link`
	// extension names; its own part is small and read whole to reach that extension. Entries the
	// shared part marks deleted are still counted: that errs towards "carried".
	const key = `${folder}\0${foldCase}`;
	let main = scanned(join(gitDir, "index"), wanted, key, hashBytes, split, "no");
	// Too long to be a split index's own part: a stale `sharedindex.*` from when it was split
	// (git leaves them behind); read as the whole index it is.
	if (main.tooLong === true) main = scanned(join(gitDir, "index"), wanted, key, hashBytes, false, "no");
	if (main.step !== "no" || main.link === undefined) return main.step as Tracked;
	return scanned(join(gitDir, `sharedindex.${main.link}`), wanted, key, hashBytes, false, "unknown").step as Tracked;
}
