/**
 * `state-flow doctor --salvage`: a fast-check property over single-byte damage at every position of
 * a small store (checkpoint and log) — salvage gives back exactly the stored history, the damaged
 * byte proven by the records' own integrity checks, or finds the bytes still intact — and, through
 * the real binary, damage that no byte explains: the damaged record is lost and named, the intact
 * one after it replayed over what is left, the old folder moved aside as it was, the new store
 * readable. (Issue 33's salvage of every intact transition: `salvage-replay.test.ts`.)
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { planSalvage } from "../../lib/cli/doctor/salvage.js";
import { replay } from "../../lib/core/history.js";
import { emptyState } from "../../lib/core/state.js";
import type { TransitionRecord } from "../../lib/core/types.js";
import { checkpointText, parseLogLine } from "../../lib/storage/format.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "./run.js";

const by = { kind: "system", reason: "t" } as const;

/** A store of three transitions: a checkpoint after the first, the log holding the second and third. */
async function smallStore(t: { after(fn: () => void): void }) {
	const { cwd, agentDir } = projectDirs(t, "state-flow-salvage-");
	const stores = openStoresAt({ agentDir, cwd });
	await stores.commit({ cwd: { tactics: { a: "one" } } }, { by, id: "a1", at: "2026-12-01T10:00:00.000Z" });
	await stores.commit({ cwd: { tactics: { b: "two" } } }, { by, id: "b2", at: "2026-12-01T10:00:01.000Z" });
	await stores.commit({ cwd: { tactics: { a: null, c: [3] } } }, { by, id: "c3", at: "2026-12-01T10:00:02.000Z" });
	await stores.close();
	const root = join(cwd, ".pi", "state-flow");
	const lines = readFileSync(join(root, "log.jsonl"), "utf8")
		.split("\n")
		.filter((l) => l !== "");
	const records = lines.map((l) => parseLogLine(l, "log", "line").record);
	const first = records[0] as TransitionRecord;
	// Set-up, not the code under test: the files as a compaction after #1 leaves them.
	const checkpoint = Buffer.from(checkpointText("cwd", 1, replay(emptyState(), [first])));
	const log = Buffer.from(`${lines.slice(1).join("\n")}\n`);
	writeFileSync(join(root, "checkpoint.json"), checkpoint);
	writeFileSync(join(root, "log.jsonl"), log);
	return { cwd, agentDir, root, records, checkpoint, log };
}

const files = { log: "log.jsonl", checkpoint: "checkpoint.json" };

describe("state-flow doctor --salvage", () => {
	it("property: one changed byte anywhere in checkpoint or log gives back exactly the stored history", async (t) => {
		const s = await smallStore(t);
		const [, second, third] = s.records as [TransitionRecord, TransitionRecord, TransitionRecord];
		const want = replay(emptyState(), s.records);
		const total = s.checkpoint.length + s.log.length;
		assertProperty(
			fc.property(fc.array(fc.integer({ min: 1, max: 255 }), { minLength: total, maxLength: total }), (deltas) => {
				for (let at = 0; at < total; at++) {
					const checkpoint = Buffer.from(s.checkpoint);
					const log = Buffer.from(s.log);
					const inCheckpoint = at < checkpoint.length;
					const buf = inCheckpoint ? checkpoint : log;
					const offset = inCheckpoint ? at : at - checkpoint.length;
					buf[offset] = (buf[offset] as number) ^ (deltas[at] as number);
					const plan = planSalvage("cwd", log, checkpoint, files);
					const where = `byte ${at} xor ${deltas[at]}`;
					assert.equal(plan.base.seq, 1, where);
					assert.deepEqual(plan.kept, [second, third], where);
					assert.deepEqual(replay(plan.base.state, plan.kept), want, where);
					assert.deepEqual(plan.lost, [], where);
					assert.deepEqual(plan.tail, [], where);
					// Either the change was found and undone, proven by a sum, or the bytes still say the same.
					for (const d of plan.damaged) assert.ok(d.repaired, `${where}: ${d.where} ${d.why}`);
					const fixed = plan.damaged[0]?.repaired;
					if (fixed !== undefined) assert.equal(fixed.offset, offset, where);
				}
			}),
			{ numRuns: 1 },
		);
	});

	it("damage no byte explains: the damaged record is lost and named, the one after it kept; the old store moved aside as it was", async (t) => {
		const s = await smallStore(t);
		// Two bytes changed in the second record's value (the log's first line).
		const log = Buffer.from(s.log);
		const at = log.indexOf('"two"');
		log[at + 1] = 0x54;
		log[at + 2] = 0x57;
		writeFileSync(join(s.root, "log.jsonl"), log);
		const run = (...args: string[]) => runCli([...args, "--agent-dir", s.agentDir], { cwd: s.cwd });
		const refused = run("show", "cwd");
		assert.equal(refused.code, 1);
		const dry = run("doctor", "--salvage", "cwd", "--dry-run");
		assert.match(
			unwrapped(dry.stdout),
			/cwd: left out log\.jsonl bytes 0–\d+ \(line 1\): not intact records, and no one-byte repair makes them pass their integrity checks\./,
		);
		// What its bytes still say: its id, time and the entry it wrote.
		assert.match(unwrapped(dry.stdout), /cwd: lost #2 b2 \(2026-12-01T10:00:01\.000Z\): its record is damaged; it wrote tactics\.b\./);
		assert.doesNotMatch(unwrapped(dry.stdout), /c3/, "the intact record after it is kept, not reported");
		assert.match(unwrapped(dry.stdout), /cwd: keeps 1 of 2 transitions after the checkpoint at #1 \(the owner at #3\); each lost one keeps its seq/);
		assert.match(unwrapped(dry.stdout), /would write them as a new store/);
		assert.deepEqual(readFileSync(join(s.root, "log.jsonl")), log, "a dry run changes nothing");
		const done = run("doctor", "--salvage", "cwd");
		assert.match(unwrapped(done.stdout), /wrote the salvaged store at .*; the damaged one is kept at (\S+) \(nothing deleted\)/);
		const aside = /kept at (\S+) \(nothing deleted\)/.exec(unwrapped(done.stdout))?.[1] as string;
		assert.deepEqual(readFileSync(join(aside, "log.jsonl")), log, "the damaged store is kept as it was");
		assert.deepEqual(readFileSync(join(aside, "checkpoint.json")), s.checkpoint);
		assert.match(unwrapped(done.stdout), /All stores are healthy\./);
		const shown = run("show", "cwd");
		assert.equal(shown.code, 0, shown.stderr);
		assert.match(unwrapped(shown.stdout), /\(seq 3,/);
		// #3 deleted `a` and wrote `c` over what is left: its effects are there, #2's are not.
		assert.doesNotMatch(unwrapped(shown.stdout), /"a": "one"|"b":/);
		assert.match(unwrapped(shown.stdout), /"c": \[/);
		// The lost seq keeps its place, as an empty transition that names what was lost.
		const history = run("history", "cwd", "--full");
		assert.match(
			unwrapped(history.stdout),
			/#2 salvage-\S+-2\n\s+at 2026-12-01T10:00:01\.000Z by system salvage: lost #2 b2 \(damaged\); it wrote tactics\.b\n/,
		);
		// The salvaged store takes new transitions on from there.
		const next = run("set", "cwd.tactics.b", '"two again"');
		assert.equal(next.code, 0, next.stderr);
		assert.equal((await openStoresAt({ agentDir: s.agentDir, cwd: s.cwd }).load("cwd")).seq, 4);
		assert.ok(readdirSync(join(s.cwd, ".pi")).some((n) => n.startsWith("state-flow.damaged-")));
	});

	it("a store that reads whole is left alone", async (t) => {
		const s = await smallStore(t);
		const r = runCli(["doctor", "--salvage", "cwd", "--agent-dir", s.agentDir], { cwd: s.cwd });
		assert.equal(r.code, 0, r.stdout);
		assert.match(unwrapped(r.stdout), /cwd: every record of .* is intact; nothing to salvage/);
		assert.deepEqual(readFileSync(join(s.root, "log.jsonl")), s.log);
	});
});
