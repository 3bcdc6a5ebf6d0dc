/**
 * What a reader that already read a file owner's log refuses when the files change behind it
 * (storage/file/log-reader.ts): a log cut shorter than what it read, a log gone from its folder,
 * bytes it read changed in place, the last record it read changed; such damage stays refused
 * until the folder is replaced, and the reader keeps no file open after it. And what it must
 * accept: another writer's appends, read one after another, and a log touched without a change.
 * (Written against the survivors of the mutation run on log-reader.ts, docs/decisions.md.)
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { tempDir } from "../helpers/temp-dir.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("lr", "2026-12-01T00:00:00.000Z", by);

function world(t: { after(fn: () => void): void }) {
	const base = tempDir(t, "state-flow-log-reader-");
	const w = { proj: join(base, "proj"), agent: join(base, "agent") };
	mkdirSync(w.proj);
	mkdirSync(w.agent);
	return w;
}
const open = (w: { proj: string; agent: string }) => openStoresAt({ agentDir: w.agent, cwd: w.proj, lockTimeoutMs: 3_000 });

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

/** A store of two transitions this process has read: the store, its log and the log's text. */
async function twoRead(t: { after(fn: () => void): void }): Promise<{ s: ReturnType<typeof open>; log: string; text: string }> {
	const s = open(world(t));
	await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
	await s.commit({ cwd: { tactics: { b: 2 } } }, meta());
	const log = join(s.identity().cwdRoot, "log.jsonl");
	await s.load("cwd");
	return { s, log, text: readFileSync(log, "utf8") };
}

const openFds = () => readdirSync("/proc/self/fd").length;

describe("a reader refuses what changed behind its back", () => {
	it("a log cut shorter than what it read: refused, still refused with the bytes back, and over once the folder is replaced", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		await s.commit({ cwd: { tactics: { b: 2 } } }, meta());
		const root = s.identity().cwdRoot;
		const log = join(root, "log.jsonl");
		const before = openFds();
		assert.equal((await s.load("cwd")).seq, 2);
		const bytes = readFileSync(log);
		const first = bytes.indexOf(10) + 1;
		writeFileSync(log, bytes.subarray(0, first));
		const cut = damage(log, `it is ${first} bytes long, shorter than the ${bytes.length} bytes of complete records this process already read`);
		await assert.rejects(s.load("cwd"), cut);
		assert.ok(openFds() < before + 1, "the refused reader holds no log open");
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
		await assert.rejects(s.load("cwd"), damage(log, "it is gone although this process read 1 transition(s) from it"));
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
