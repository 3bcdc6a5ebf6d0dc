/**
 * Reads served from memory (docs/security.md, "Reads served from memory"): a file owner whose
 * log is still the very file this process last read, unchanged, answers without resolving its
 * folder again; anything that changes the log, and every write, goes through the full checks.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, renameSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/temp-dir.js";
import { makeSentinel, snapshot } from "../security/hostile.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("rc", "2026-12-01T00:00:00.000Z", by);

function world(t: { after(fn: () => void): void }) {
	const base = tempDir(t, "state-flow-read-cache-");
	const w = { proj: join(base, "proj"), agent: join(base, "agent"), outside: makeSentinel(join(base, "outside")) };
	mkdirSync(w.proj);
	mkdirSync(w.agent);
	return w;
}

const open = (w: { proj: string; agent: string }, retention?: number) =>
	openStoresAt({ agentDir: w.agent, cwd: w.proj, lockTimeoutMs: 3_000, ...(retention === undefined ? {} : { retention }) });

describe("reads served from memory", () => {
	it("a store folder moved out of the project and linked back: reads answer what was read inside it; a change to its log and any write are refused", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const root = s.identity().cwdRoot;
		assert.deepEqual((await s.load("cwd")).state.tactics, { a: 1 });
		const moved = join(w.outside, "moved-store");
		renameSync(root, moved);
		symlinkSync(moved, root);
		const before = snapshot(w.outside);
		// The same log file, unchanged: nothing is read, so the answer is what was read inside the project.
		assert.deepEqual((await s.load("cwd")).state.tactics, { a: 1 });
		await assert.rejects(s.commit({ cwd: { tactics: { b: 1 } } }, meta()), /outside/);
		assert.deepEqual(snapshot(w.outside), before, "a refused write left nothing behind outside");
		// A new mtime is a change: the read goes back to the files and refuses the folder.
		utimesSync(join(moved, "log.jsonl"), new Date(), new Date(Date.now() + 5_000));
		await assert.rejects(s.load("cwd"), /outside/);
		// A fresh process resolves the folder on its first read.
		await assert.rejects(open(w).load("cwd"), /outside/);
	});

	it("another writer's commit, a compaction that replaces the log, and a removed folder are each seen by the next read", async (t) => {
		const w = world(t);
		const reader = open(w, 0);
		const writer = open(w, 0);
		await writer.commit({ cwd: { tactics: { a: 1 } } }, meta());
		assert.deepEqual((await reader.load("cwd")).state.tactics, { a: 1 });
		assert.deepEqual((await reader.load("cwd")).state.tactics, { a: 1 });
		await writer.commit({ cwd: { tactics: { b: 2 } } }, meta());
		assert.deepEqual((await reader.load("cwd")).state.tactics, { a: 1, b: 2 });
		// Retention 0: the 65th transition past the checkpoint rewrites the log (a new file under the same name).
		for (let i = 0; i < 70; i++) await writer.commit({ cwd: { tactics: { c: i } } }, meta());
		const after = await reader.load("cwd");
		assert.equal(after.seq, 72);
		assert.deepEqual(after.state.tactics, { a: 1, b: 2, c: 69 });
		rmSync(open(w).identity().cwdRoot, { recursive: true });
		assert.deepEqual((await reader.load("cwd")).state.tactics, {});
	});

	it("bytes appended behind the log's back are refused, not answered from memory", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		await s.load("cwd");
		appendFileSync(join(s.identity().cwdRoot, "log.jsonl"), '{"not":"a record"}\n');
		await assert.rejects(s.load("cwd"), (e: unknown) => e instanceof Error && /log\.jsonl/.test(e.message));
	});
});
