/**
 * What a reader that already read a file owner's log refuses when the files change behind it
 * (storage/file/log-reader.ts): a log cut shorter than what it read, a log gone from its folder,
 * bytes it read changed in place, the last record it read changed; such damage stays refused
 * until the folder is replaced, and the reader keeps no file open after it. And what it must
 * accept: another writer's appends, read one after another, and a log touched without a change.
 * (Written against the survivors of the mutation run on log-reader.ts, docs/decisions.md.)
 */
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
	appendFileSync,
	closeSync,
	existsSync,
	mkdirSync,
	openSync,
	readFileSync,
	lstatSync,
	readdirSync,
	readlinkSync,
	renameSync,
	rmSync,
	statSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { openWorld, storeWorld } from "../helpers/store-world.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("lr", "2026-12-01T00:00:00.000Z", by);

const world = (t: { after(fn: () => void): void }) => storeWorld(t, "state-flow-log-reader-");
const open = openWorld;

/** A refusal of kind `corrupt` naming `file` and saying `words`. */
function damage(file: string, words: string) {
	return (e: unknown) => {
		assert.ok(isStateError(e), `a StateError, got ${String(e)}`);
		assert.equal(e.code, "corrupt", e.message);
		assert.ok(e.message.includes(`\`${file}\` is damaged: ${words}`), e.message);
		return true;
	};
}

/** Overwrite bytes of `file` at `at`, keeping its inode and size, and give it a later mtime. */
function patchInPlace(file: string, at: number, bytes: string): void {
	const fd = openSync(file, "r+");
	try {
		writeSync(fd, Buffer.from(bytes), 0, bytes.length, at);
	} finally {
		closeSync(fd);
	}
	const later = new Date(Date.now() + 10_000);
	utimesSync(file, later, later);
}

/** A store of two transitions this process has read: its world, the store, its log and the log's text. */
async function twoRead(t: { after(fn: () => void): void }): Promise<{ w: ReturnType<typeof world>; s: ReturnType<typeof open>; log: string; text: string }> {
	const w = world(t);
	const s = open(w);
	await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
	await s.commit({ cwd: { tactics: { b: 2 } } }, meta());
	const log = join(s.identity().cwdRoot, "log.jsonl");
	await s.load("cwd");
	return { w, s, log, text: readFileSync(log, "utf8") };
}

/** A reader with no seen marks (as doctor's repairs open one): a log cut back by hand is no loss to it. */
const unmarked = (root: string) => new FileOwnerStore({ owner: "cwd", root, retention: 20, gitignore: true });

/**
 * Three transitions committed, the log then cut back to the first two (the third's line kept), and
 * an unmarked reader that read those two.
 */
async function cutBack(t: { after(fn: () => void): void }): Promise<{ reader: FileOwnerStore; root: string; log: string; lines: string[] }> {
	const s = open(world(t));
	for (const k of ["a", "b", "c"]) await s.commit({ cwd: { tactics: { [k]: 1 } } }, meta());
	const root = s.identity().cwdRoot;
	const log = join(root, "log.jsonl");
	const lines = readFileSync(log, "utf8").split("\n").slice(0, 3);
	writeFileSync(log, `${lines[0]}\n${lines[1]}\n`);
	const reader = unmarked(root);
	assert.equal((await reader.load()).seq, 2);
	return { reader, root, log, lines };
}
const idOf = (line: string | undefined) => (JSON.parse(line as string) as { id: string }).id;

/** How many of this process's open files are `file` (by the path each descriptor names). */
function fdsOn(file: string): number {
	let n = 0;
	for (const fd of readdirSync("/proc/self/fd")) {
		const link = lstatSync(`/proc/self/fd/${fd}`, { throwIfNoEntry: false });
		// The descriptor `readdirSync` itself used is closed by now: nothing to name.
		if (link !== undefined && readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
	}
	return n;
}

describe("a reader refuses what changed behind its back", () => {
	it("a log cut shorter than what it read: refused, still refused with the bytes back, and over once the folder is replaced", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		await s.commit({ cwd: { tactics: { b: 2 } } }, meta());
		const root = s.identity().cwdRoot;
		const log = join(root, "log.jsonl");
		assert.equal((await s.load("cwd")).seq, 2);
		assert.ok(fdsOn(log) > 0, "the reader holds its log open");
		const bytes = readFileSync(log);
		const first = bytes.indexOf(10) + 1;
		writeFileSync(log, bytes.subarray(0, first));
		const cut = damage(log, `it is ${first} bytes long, shorter than the ${bytes.length} bytes of complete records this process already read`);
		await assert.rejects(s.load("cwd"), cut);
		assert.equal(fdsOn(log), 0, "the refused reader holds no log open");
		// The damage was seen: the whole log back in the same folder does not end it.
		writeFileSync(log, bytes);
		await assert.rejects(s.load("cwd"), cut);
		// A folder put in its place does (here: the same files, moved aside and copied back).
		renameSync(root, `${root}.old`);
		mkdirSync(root);
		writeFileSync(log, bytes);
		assert.equal((await s.load("cwd")).seq, 2);
	});

	it("a log gone from its folder after it was read is refused naming what was read", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const log = join(s.identity().cwdRoot, "log.jsonl");
		await s.load("cwd");
		rmSync(log);
		const gone = damage(log, "it is gone although this process read 1 transition(s) from it");
		await assert.rejects(s.load("cwd"), gone);
		await assert.rejects(s.load("cwd"), gone);
		// The whole folder removed (`git clean -X`) is a deliberate fresh start, also after the refusal.
		rmSync(dirname(log), { recursive: true });
		assert.equal((await s.load("cwd")).seq, 0);
	});

	it("bytes it read changed in place (same size, a new mtime) are refused", async (t) => {
		const { s, log, text } = await twoRead(t);
		patchInPlace(log, text.indexOf('"a":1'), '"a":3');
		await assert.rejects(s.load("cwd"), damage(log, "bytes this process already read were changed in place (same size, new content)"));
	});

	it("the last record it read changed while the log grew is refused naming its byte", async (t) => {
		const { s, log, text } = await twoRead(t);
		const last = text.slice(0, -1).lastIndexOf("\n") + 1;
		patchInPlace(log, text.indexOf('"b":2'), '"b":7');
		// Appended bytes of any kind: the record already read is compared before anything new is parsed.
		appendFileSync(log, '{"appended":true}\n');
		await assert.rejects(s.load("cwd"), damage(log, `the record at byte ${last}, which this process already read, was changed`));
	});

	it("appended records that do not continue what it read: refused at the first that does not, again on the next read", async (t) => {
		const { reader, log, lines } = await cutBack(t);
		appendFileSync(log, `${lines[2]}\n${lines[1]}\n`);
		const gap = damage(log, `record \`${idOf(lines[1])}\` has seq 2 where 4 was expected`);
		await assert.rejects(reader.load(), gap);
		await assert.rejects(reader.load(), gap);
	});

	it("the last record it read changed while a line in flight after it was completed is refused", async (t) => {
		const { reader, root, log, lines } = await cutBack(t);
		const third = lines[2] as string;
		writeFileSync(join(root, "lock"), "");
		appendFileSync(log, third.slice(0, 10));
		assert.equal((await reader.load()).seq, 2);
		const second = (lines[0] as string).length + 1;
		patchInPlace(log, second + (lines[1] as string).indexOf('"b":1'), '"b":7');
		appendFileSync(log, `${third.slice(10)}\n`);
		await assert.rejects(reader.load(), damage(log, `the record at byte ${second}, which this process already read, was changed`));
	});

	it("an empty line appended after the records it read is refused, as a fresh reader refuses it", async (t) => {
		const { w, s, log, text } = await twoRead(t);
		appendFileSync(log, "\n");
		const empty = damage(log, `the record at byte ${text.length} is not valid JSON`);
		await assert.rejects(s.load("cwd"), empty);
		await assert.rejects(open(w).load("cwd"), empty);
	});
});

describe("bytes after the last complete record", () => {
	const half = '{"v":2,"id":"half';
	const torn = (log: string) =>
		damage(log, `it ends in ${half.length} byte(s) after its last complete record that are not a complete record, and no writer holds or left its lock`);

	it("are read as a line in flight while the lock is there, and refused with their count once it is gone, also when the log is only touched", async (t) => {
		const { w, log } = await twoRead(t);
		const lock = join(dirname(log), "lock");
		appendFileSync(log, half);
		writeFileSync(lock, "");
		const first = open(w);
		const second = open(w);
		for (const r of [first, second, first]) assert.equal((await r.load("cwd")).seq, 2);
		rmSync(lock);
		await assert.rejects(first.load("cwd"), torn(log));
		const later = new Date(Date.now() + 10_000);
		utimesSync(log, later, later);
		await assert.rejects(second.load("cwd"), torn(log));
	});

	it("after appended records they are read as a line in flight, and a touch of the log keeps what was read", async (t) => {
		const { reader, root, log, lines } = await cutBack(t);
		writeFileSync(join(root, "lock"), "");
		appendFileSync(log, `${lines[2]}\n${half}`);
		assert.equal((await reader.load()).seq, 3);
		const later = new Date(Date.now() + 10_000);
		utimesSync(log, later, later);
		assert.equal((await reader.load()).seq, 3);
	});

	it("are what a crashed writer left when its lock's breaker left a marker newer than the log; an older marker explains nothing", async (t) => {
		const { w, log } = await twoRead(t);
		appendFileSync(log, half);
		const marker = join(dirname(log), "lock.broken");
		writeFileSync(marker, "");
		const { mtimeMs } = statSync(log);
		utimesSync(marker, new Date(mtimeMs + 1_000), new Date(mtimeMs + 1_000));
		assert.equal((await open(w).load("cwd")).seq, 2);
		utimesSync(marker, new Date(mtimeMs - 60_000), new Date(mtimeMs - 60_000));
		await assert.rejects(open(w).load("cwd"), torn(log));
	});
});

describe("a reader accepts what other writers did", () => {
	it("appends read one after another, then a log touched without a change: the same history as a fresh reader's", async (t) => {
		const w = world(t);
		const reader = open(w);
		const writer = open(w);
		await writer.commit({ cwd: { tactics: { a: 1 } } }, meta());
		assert.equal((await reader.load("cwd")).seq, 1);
		for (let i = 2; i <= 4; i++) {
			await writer.commit({ cwd: { tactics: { [`k${i}`]: i } } }, meta());
			assert.equal((await reader.load("cwd")).seq, i);
		}
		const log = join(reader.identity().cwdRoot, "log.jsonl");
		const later = new Date(Date.now() + 10_000);
		utimesSync(log, later, later);
		const touched = await reader.load("cwd");
		assert.deepEqual(touched.state, (await open(w).load("cwd")).state);
		assert.equal(touched.seq, 4);
		// And the reader still sees the next append, and writes after it.
		await writer.commit({ cwd: { tactics: { e: 5 } } }, meta());
		assert.equal((await reader.load("cwd")).seq, 5);
		await reader.commit({ cwd: { tactics: { f: 6 } } }, meta());
		assert.equal((await open(w).load("cwd")).seq, 6);
	});

	it("another writer's append is read although the log's mtime did not move (a coarse clock)", async (t) => {
		const { w, s, log } = await twoRead(t);
		// A whole second, so that setting it again gives the very mtime this reader saw.
		const second = new Date(Math.floor(Date.now() / 1_000) * 1_000 - 5_000);
		utimesSync(log, second, second);
		assert.equal((await s.load("cwd")).seq, 2);
		await open(w).commit({ cwd: { tactics: { c: 3 } } }, meta());
		utimesSync(log, second, second);
		assert.deepEqual((await s.load("cwd")).state.tactics, { a: 1, b: 2, c: 3 });
	});

	it("a reader that only read answers from memory while the log is that file unchanged, even with its folder moved out and linked back", async (t) => {
		const w = world(t);
		await open(w).commit({ cwd: { tactics: { a: 1 } } }, meta());
		const reader = open(w);
		assert.deepEqual((await reader.load("cwd")).state.tactics, { a: 1 });
		const root = reader.identity().cwdRoot;
		const moved = join(w.base, "moved-store");
		renameSync(root, moved);
		symlinkSync(moved, root);
		assert.deepEqual((await reader.load("cwd")).state.tactics, { a: 1 });
		// A process that has not read it yet resolves the folder, and refuses it.
		await assert.rejects(open(w).load("cwd"), /outside/);
	});

	it("a last record without its line end, then another writer's append (which writes that line end first): read in order", async (t) => {
		const { w, log, text } = await twoRead(t);
		writeFileSync(log, text.slice(0, -1));
		const reader = open(w);
		assert.equal((await reader.load("cwd")).seq, 2);
		await open(w).commit({ cwd: { tactics: { c: 3 } } }, meta());
		assert.deepEqual((await reader.load("cwd")).state.tactics, { a: 1, b: 2, c: 3 });
		await open(w).commit({ cwd: { tactics: { d: 4 } } }, meta());
		assert.deepEqual((await reader.load("cwd")).state.tactics, { a: 1, b: 2, c: 3, d: 4 });
	});

	it("a last record without its line end, then that line end and part of a line in flight: read as such, then the whole line", async (t) => {
		const { root, log, lines } = await cutBack(t);
		const third = lines[2] as string;
		writeFileSync(log, `${lines[0]}\n${lines[1]}`);
		const fresh = unmarked(root);
		assert.equal((await fresh.load()).seq, 2);
		writeFileSync(join(root, "lock"), "");
		appendFileSync(log, `\n${third.slice(0, 10)}`);
		assert.equal((await fresh.load()).seq, 2);
		appendFileSync(log, `${third.slice(10)}\n`);
		rmSync(join(root, "lock"));
		assert.deepEqual((await fresh.load()).state.tactics, { a: 1, b: 1, c: 1 });
	});

	it("a record appended straight after a last record without its line end runs on into it: refused, as a fresh reader refuses the line", async (t) => {
		const { root, log, lines } = await cutBack(t);
		writeFileSync(log, `${lines[0]}\n${lines[1]}`);
		const reader = unmarked(root);
		assert.equal((await reader.load()).seq, 2);
		appendFileSync(log, `${lines[2]}\n`);
		const second = (lines[0] as string).length + 1;
		await assert.rejects(reader.load(), damage(log, `the record at byte ${second}, read without a line end, runs on into bytes appended after it`));
		await assert.rejects(unmarked(root).load(), damage(log, `the record at byte ${second} is not valid JSON`));
	});

	it("a line after a last record without its line end is numbered from where it starts", async (t) => {
		const { w, log, text } = await twoRead(t);
		writeFileSync(log, text.slice(0, -1));
		const reader = open(w);
		assert.equal((await reader.load("cwd")).seq, 2);
		appendFileSync(log, "\n{not a record}\n");
		await assert.rejects(reader.load("cwd"), damage(log, `the record at byte ${text.length} is not valid JSON`));
	});

	it("a writer that read a log of today's format appends to that very file and writes no checkpoint", async (t) => {
		const { w, log } = await twoRead(t);
		const writer = open(w);
		await writer.load("cwd");
		const { ino } = statSync(log);
		await writer.commit({ cwd: { tactics: { c: 3 } } }, meta());
		assert.equal(statSync(log).ino, ino);
		assert.equal(existsSync(join(dirname(log), "checkpoint.json")), false);
	});

	it("a log of format 1 is read and rewritten in today's format by the next writer", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		await s.commit({ cwd: { tactics: { b: 2 } } }, meta());
		const log = join(s.identity().cwdRoot, "log.jsonl");
		const legacy = readFileSync(log, "utf8")
			.split("\n")
			.filter((l) => l !== "")
			.map((l) => {
				const { sum: _sum, ...rest } = JSON.parse(l) as Record<string, unknown>;
				return `${JSON.stringify({ ...rest, v: 1 })}\n`;
			})
			.join("");
		writeFileSync(log, legacy);
		const fresh = open(w);
		assert.deepEqual((await fresh.load("cwd")).state.tactics, { a: 1, b: 2 });
		await fresh.commit({ cwd: { tactics: { c: 3 } } }, meta());
		const lines = readFileSync(log, "utf8")
			.split("\n")
			.filter((l) => l !== "");
		assert.equal(lines.length, 3);
		for (const l of lines) assert.equal((JSON.parse(l) as { v: number }).v, 2, l);
	});
});
