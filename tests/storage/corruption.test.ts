/**
 * Damaged stores: truncated checkpoint, garbage bytes, a future format version, a torn
 * last line, and unreadable files. Each gets a "corrupt"/"io" error naming the file and
 * what to do; no damaged byte is ever overwritten; a torn trailing record is recovered.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { compactionSlack } from "../../lib/storage/owner-log.js";
import type { Stores } from "../../lib/storage/stores.js";
import type { StoresOptions } from "../../lib/storage/stores.js";
import { tempDir } from "../helpers/temp-dir.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("c", "2026-11-30T00:00:00.000Z", by);

function open(dir: string, extra: Partial<StoresOptions> = {}): Stores {
	return openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), ...extra });
}

/** A CWD store with `count` commits; returns its log and checkpoint paths. */
async function seeded(dir: string, count: number, retention = 20): Promise<{ log: string; checkpoint: string }> {
	const s = open(dir, { retention });
	for (let i = 0; i < count; i++) await s.commit({ cwd: { tactics: { [`k${i}`]: i } } }, meta());
	const root = s.identity().cwdRoot;
	return { log: join(root, "log.jsonl"), checkpoint: join(root, "checkpoint.json") };
}

/** A pid no process has now (the kernel's pid space is far below this). */
function deadPid(): number {
	for (let pid = 4_000_000; ; pid--) {
		try {
			process.kill(pid, 0);
		} catch (e) {
			if ((e as NodeJS.ErrnoException).code === "ESRCH") return pid;
		}
	}
}

function isCorrupt(file: string, what?: RegExp) {
	return (e: unknown) => {
		assert.ok(isStateError(e), `expected a StateError, got ${String(e)}`);
		assert.equal(e.code, "corrupt");
		assert.ok(e.message.includes(`\`${file}\``), `message must name the file: ${e.message}`);
		assert.match(e.message, /state-flow doctor|backup|Update/);
		if (what) assert.match(e.message, what);
		return true;
	};
}

/** Reads and writes both refuse, and the damaged file's bytes stay exactly as they were. */
async function refusesAndPreserves(dir: string, file: string, what?: RegExp): Promise<void> {
	const before = readFileSync(file);
	const s = open(dir);
	await assert.rejects(s.load("cwd"), isCorrupt(file, what));
	await assert.rejects(s.commit({ cwd: { tactics: { after: 1 } } }, meta()), isCorrupt(file, what));
	assert.deepEqual(readFileSync(file), before, "the damaged file was modified");
}

describe("damaged stores", () => {
	it("refuses a garbage line in the log and never overwrites it", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 3);
		const lines = readFileSync(log, "utf8").split("\n");
		lines[1] = "\u0000\u0001garbage{{{";
		writeFileSync(log, lines.join("\n"));
		await refusesAndPreserves(dir, log, /not valid JSON/);
	});

	it("refuses a record with a wrong shape (ajv envelope check)", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 2);
		appendFileSync(log, `${JSON.stringify({ v: 1, id: "x", seq: "three" })}\n`);
		await refusesAndPreserves(dir, log, /not a transition record/);
	});

	it("refuses a record from a future format version, asking to update", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 2);
		const lines = readFileSync(log, "utf8").split("\n");
		lines[1] = (lines[1] ?? "").replace('"v":2', '"v":3');
		writeFileSync(log, lines.join("\n"));
		await refusesAndPreserves(dir, log, /format version 3/);
	});

	it("refuses a format-2 record whose integrity check was removed and whose value was edited", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 3);
		const lines = readFileSync(log, "utf8").split("\n");
		const record = JSON.parse(lines[1] ?? "") as { v: number; sum?: string; patch: { tactics: Record<string, unknown> } };
		assert.equal(record.v, 2);
		delete record.sum;
		record.patch.tactics.k1 = "edited";
		lines[1] = JSON.stringify(record);
		writeFileSync(log, lines.join("\n"));
		await refusesAndPreserves(dir, log, /the record at byte \d+ fails its integrity check/);
	});

	it("refuses a format-2 checkpoint whose integrity check was removed and whose state was edited", async (t) => {
		const dir = tempDir(t);
		const { checkpoint } = await seeded(dir, 2 + compactionSlack(2) + 1, 2);
		const value = JSON.parse(readFileSync(checkpoint, "utf8")) as { v: number; sum?: string; state: { tactics: Record<string, unknown> } };
		assert.equal(value.v, 2);
		delete value.sum;
		value.state.tactics.k0 = "edited";
		writeFileSync(checkpoint, JSON.stringify(value));
		await refusesAndPreserves(dir, checkpoint, /the checkpoint fails its integrity check/);
	});

	it("refuses a truncated checkpoint", async (t) => {
		const dir = tempDir(t);
		const { checkpoint } = await seeded(dir, 2 + compactionSlack(2) + 1, 2);
		const size = readFileSync(checkpoint).length;
		truncateSync(checkpoint, Math.floor(size / 2));
		await refusesAndPreserves(dir, checkpoint, /checkpoint/);
	});

	it("refuses a log whose records do not continue (lost or duplicated lines)", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 4);
		const lines = readFileSync(log, "utf8").split("\n");
		lines.splice(1, 1);
		writeFileSync(log, lines.join("\n"));
		await refusesAndPreserves(dir, log, /seq/);
	});

	it("ignores a torn last line left by a writer that died holding the lock, and cuts it off at the next write", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 3);
		const good = readFileSync(log, "utf8");
		appendFileSync(log, '{"v":2,"id":"torn","at":"x","se');
		// What a writer killed mid-append leaves: its lock, naming a pid that no longer runs.
		writeFileSync(join(dirname(log), "lock"), JSON.stringify({ pid: deadPid(), host: hostname(), startedAt: Date.now(), token: "dead-writer-1" }));
		const reader = open(dir);
		assert.equal((await reader.load("cwd")).seq, 3);
		assert.deepEqual(Object.keys((await reader.load("cwd")).state.tactics), ["k0", "k1", "k2"]);
		await open(dir).commit({ cwd: { tactics: { after: 1 } } }, meta());
		const text = readFileSync(log, "utf8");
		assert.ok(text.startsWith(good), "earlier records are untouched");
		assert.equal(text.split("\n").length, 5, "the torn bytes were replaced by exactly one new record");
		assert.ok(!text.includes("torn"));
		assert.equal((await reader.load("cwd")).seq, 4, "the reader catches up across the repair");
		assert.equal((await reader.load("cwd")).state.tactics.after, 1);
	});

	it("refuses a log that ends in a cut-short record no crashed writer explains (a truncation), for reads and writes", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 3);
		const text = readFileSync(log, "utf8");
		writeFileSync(log, text.slice(0, text.length - 20));
		await refusesAndPreserves(dir, log, /not a complete record[\s\S]*--cut-torn cwd/);
	});

	it("a live reader keeps refusing unexplained bytes after the last record on every read, not only the first", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 2);
		const reader = open(dir);
		assert.equal((await reader.load("cwd")).seq, 2);
		appendFileSync(log, '{"v":2,"id":"cut","at":"x"');
		await assert.rejects(reader.load("cwd"), isCorrupt(log, /not a complete record/));
		await assert.rejects(reader.load("cwd"), isCorrupt(log, /not a complete record/));
	});

	it("reports an unreadable log (a folder where the file should be) naming the file", async (t) => {
		// Tests run as root, where chmod 000 does not deny reads: a folder in place of the file does.
		const dir = tempDir(t);
		const { log } = await seeded(dir, 1);
		renameSync(log, `${log}.moved`);
		mkdirSync(log);
		const s = open(dir);
		await assert.rejects(s.load("cwd"), isCorrupt(log, /is a folder where State Flow keeps a regular file/));
		await assert.rejects(s.commit({ cwd: { tactics: { a: 1 } } }, meta()), isCorrupt(log));
		rmSync(log, { recursive: true });
		renameSync(`${log}.moved`, log);
		assert.equal((await open(dir).load("cwd")).seq, 1, "the store reads again once the file is back");
	});

	it("reports an unreadable checkpoint as damage and leaves it in place", async (t) => {
		const dir = tempDir(t);
		const { checkpoint } = await seeded(dir, 1);
		mkdirSync(checkpoint);
		await assert.rejects(open(dir).load("cwd"), isCorrupt(checkpoint, /is a folder where State Flow keeps a regular file/));
	});

	it("keeps a reader's last good history when the file becomes damaged later", async (t) => {
		const dir = tempDir(t);
		const { log } = await seeded(dir, 2);
		const reader = open(dir);
		const h = await reader.load("cwd");
		appendFileSync(log, "not json\n");
		await assert.rejects(reader.load("cwd"), isCorrupt(log));
		assert.deepEqual(Object.keys(h.state.tactics), ["k0", "k1"], "the history object handed out before stays intact");
	});
});
