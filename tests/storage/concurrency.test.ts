/**
 * No lost writes: 8 child processes x 100 commits into one CWD store, each writing its own
 * keys and the shared keys `tactics.last` and `lazy.counts`. Every commit must be in the
 * log exactly once, seqs must continue, and the final state must equal a sequential replay
 * of the log; a second run with a small retention also compacts under contention.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/core/merge.js";
import { emptyState } from "../../lib/core/state.js";
import { parseRecordLine } from "../../lib/storage/format.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild } from "./children/spawn.js";

const PROCS = 8;
const COMMITS = 100;

async function runWriters(dir: string, retention: number): Promise<void> {
	const agentDir = join(dir, "agent");
	const cwd = join(dir, "proj");
	const runs = Array.from({ length: PROCS }, (_, p) => runChild("commit-child", [agentDir, cwd, `p${p}`, String(COMMITS), String(retention)]));
	for (const r of runs) {
		const res = await r.done;
		assert.equal(res.code, 0, `writer failed: ${res.stderr}`);
	}
}

describe("concurrent writers", () => {
	it("8 processes x 100 commits: every commit exactly once and the state equals a sequential replay", async (t) => {
		const dir = tempDir(t);
		// Retention above the total, so the log keeps every record for the exactly-once check.
		await runWriters(dir, 1000);
		const stores = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 1000 });
		const log = join(stores.identity().cwdRoot, "log.jsonl");
		const records = readFileSync(log, "utf8")
			.split("\n")
			.slice(0, -1)
			.map((l) => parseRecordLine(l, log, "line"));
		assert.equal(records.length, PROCS * COMMITS);
		assert.deepEqual(
			records.map((r) => r.seq),
			records.map((_, i) => i + 1),
		);
		const ids = new Set(records.map((r) => r.id));
		assert.equal(ids.size, PROCS * COMMITS, "a commit appears twice");
		for (let p = 0; p < PROCS; p++) for (let i = 0; i < COMMITS; i++) assert.ok(ids.has(`p${p}-${i}`), `commit p${p}-${i} is lost`);
		const replayed = emptyState();
		for (const r of records) applyPatch(replayed, r.patch);
		const h = await stores.load("cwd");
		assert.deepEqual(h.state, replayed);
		assert.equal(h.state.tactics.last, records.at(-1)?.id, "the shared key holds the last committed writer's value");
		for (let p = 0; p < PROCS; p++) assert.equal((h.state.lazy.counts as Record<string, number>)[`p${p}`], COMMITS);
	});

	it("keeps every commit while compacting under contention (retention 5)", async (t) => {
		const dir = tempDir(t);
		await runWriters(dir, 5);
		const h = await openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 5 }).load("cwd");
		assert.equal(h.seq, PROCS * COMMITS);
		for (let p = 0; p < PROCS; p++) for (let i = 0; i < COMMITS; i++) assert.equal(h.state.tactics[`p${p}-${i}`], i, `commit p${p}-${i} is lost`);
		assert.equal(h.tail.length, 5);
	});
});
