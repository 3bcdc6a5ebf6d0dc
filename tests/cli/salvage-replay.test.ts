/**
 * Salvage keeps every intact transition (issue 33). A fast-check property: for any single damaged
 * record in a log of N, salvage keeps the effects of the other N − 1 (its state equals replaying
 * them all), names the lost seq, and keeps every other record. Through the real binary on real
 * files: the issue's case (40 bytes overwritten in record 15 of 32, a 320-tactic import at #25
 * kept), later records that no longer apply without the lost one (a change inside what it made, a
 * reference to it) named and left out, a damaged checkpoint falling back to the log, and a damaged
 * log tail keeping what precedes it.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { planSalvage } from "../../lib/cli/doctor/salvage.js";
import { newHistory, replay } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { emptyState } from "../../lib/core/state.js";
import type { CanonicalPatch, Json, TransitionRecord } from "../../lib/core/types.js";
import { checkpointText, recordLine } from "../../lib/storage/format.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "./run.js";
import { assertProperty } from "../helpers/seed.js";

const by = { kind: "system", reason: "t" } as const;
const files = { log: "log.jsonl", checkpoint: "checkpoint.json" };
const at = (i: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, i)).toISOString();

/** Records as the file store writes them (the same stage and `recordLine`), for the patches that change something. */
function recordsOf(patches: CanonicalPatch[]): TransitionRecord[] {
	const histories = { cwd: newHistory("cwd", 1000) };
	const out: TransitionRecord[] = [];
	patches.forEach((patch, i) => {
		const staged = stage(histories, patch, { id: `r${i}-${"x".repeat(i % 3)}`, at: at(i), by });
		if (staged.noop) return;
		commitStaged(histories, staged);
		out.push(staged.records.cwd as TransitionRecord);
	});
	return out;
}

/** A log's bytes, and the byte range of each record's line (without its line break). */
function logOf(records: readonly TransitionRecord[]): { log: Buffer; lines: Array<[number, number]> } {
	const lines: Array<[number, number]> = [];
	let text = "";
	for (const r of records) {
		const line = recordLine(r);
		const start = Buffer.byteLength(text);
		text += `${line}\n`;
		lines.push([start, start + Buffer.byteLength(line)]);
	}
	return { log: Buffer.from(text), lines };
}

describe("salvage keeps every intact transition", () => {
	it("property: for any single damaged record in a log of N, the state equals replaying the other N − 1", () => {
		// Whole values per entry (strings, lists, deletions): each record's effect stands without the others.
		const entry = fc.constantFrom("a", "b", "c", "d", "e");
		const value: fc.Arbitrary<Json> = fc.oneof(fc.string({ maxLength: 12 }), fc.array(fc.integer(), { maxLength: 3 }), fc.constant(null));
		const patch = fc.record({ tactics: fc.dictionary(entry, value, { minKeys: 1, maxKeys: 3 }), strategy: fc.dictionary(entry, value, { maxKeys: 2 }) });
		assertProperty(
			fc.property(
				fc.array(patch, { minLength: 3, maxLength: 14 }),
				fc.nat(),
				fc.nat(),
				fc.array(fc.integer({ min: 1, max: 255 }), { minLength: 2, maxLength: 40 }),
				(patches, pick, where, deltas) => {
					const records = recordsOf(patches.map((p) => ({ cwd: p }) as CanonicalPatch));
					fc.pre(records.length >= 2);
					const k = pick % records.length;
					const { log, lines } = logOf(records);
					const [start, end] = lines[k] as [number, number];
					// Several bytes of record k changed (never its line break): no one byte explains them.
					const from = start + (where % Math.max(1, end - start - deltas.length));
					deltas.forEach((d, i) => {
						if (from + i < end) log[from + i] = (log[from + i] as number) ^ d;
					});
					const plan = planSalvage("cwd", log, undefined, files, { stamp: "p", at: at(99) });
					const others = records.filter((_, i) => i !== k);
					assert.deepEqual(plan.state, replay(emptyState(), others));
					// Every other record kept, as written; the lost seq keeps its place (or, at the end, the log ends before it).
					const placed = plan.kept.filter((r) => r.by.kind !== "system" || !r.by.reason.startsWith("salvage:"));
					assert.deepEqual(
						placed.map((r) => [r.seq, r.id, r.patch]),
						others.map((r) => [r.seq, r.id, r.patch]),
					);
					if (k < records.length - 1) {
						assert.deepEqual(
							plan.lost.map((l) => l.seq),
							[k + 1],
						);
						assert.equal(plan.kept.length, records.length);
						assert.deepEqual(plan.kept[k]?.patch, {});
					} else {
						assert.deepEqual(plan.lost, []);
						assert.ok(plan.tail.length >= 1);
						assert.equal(plan.kept.length, records.length - 1);
					}
				},
			),
			{ numRuns: 200 },
		);
	});

	it("the issue's case through the real CLI: 40 bytes overwritten in record 15 of 32 lose only #15; the 320-tactic import at #25 and all after it stay", async (t) => {
		const { cwd, agentDir } = projectDirs(t, "state-flow-salvage33-");
		const stores = openStoresAt({ agentDir, cwd });
		const patches: CanonicalPatch[] = [];
		for (let i = 1; i <= 32; i++) {
			if (i === 25) {
				const tactics: Record<string, string> = {};
				for (let j = 0; j < 320; j++) tactics[`imported-${j}`] = `step ${j} of the migration`;
				patches.push({ cwd: { tactics } });
			} else patches.push({ cwd: { tactics: { [`t${i}`]: `step ${i}` }, strategy: { [`rule${i % 4}`]: `rule set at ${i}` } } });
		}
		for (const [i, p] of patches.entries()) await stores.commit(p, { by, id: `tr-${i + 1}`, at: at(i + 1) });
		await stores.close();
		const logPath = join(cwd, ".pi", "state-flow", "log.jsonl");
		const log = readFileSync(logPath);
		const records = log
			.toString("utf8")
			.split("\n")
			.filter((l) => l !== "")
			.map((l) => JSON.parse(l) as TransitionRecord);
		// 40 bytes of record 15 overwritten, inside its provenance: its id, time and patch still read.
		let lineStart = 0;
		for (let i = 0; i < 14; i++) lineStart = log.indexOf(10, lineStart) + 1;
		const from = log.indexOf('"by":', lineStart);
		log.fill(0x7a, from, from + 40);
		writeFileSync(logPath, log);
		const run = (...args: string[]) => runCli([...args, "--agent-dir", agentDir], { cwd });
		assert.equal(run("show", "cwd").code, 1, "the damaged store is refused");

		const done = run("doctor", "--salvage", "cwd");
		assert.match(unwrapped(done.stdout), /cwd: lost #15 tr-15 \(2026-12-01T10:00:15\.000Z\): its record is damaged; it wrote strategy\.rule3, tactics\.t15\./);
		assert.match(unwrapped(done.stdout), /cwd: keeps 31 of 32 transitions after the empty state \(the owner at #32\)/);
		assert.doesNotMatch(unwrapped(done.stdout), /left out #/, "no intact record is left out");
		assert.match(unwrapped(done.stdout), /All stores are healthy\./);

		const salvaged = await openStoresAt({ agentDir, cwd }).load("cwd");
		assert.equal(salvaged.seq, 32);
		assert.deepEqual(
			salvaged.state,
			replay(
				emptyState(),
				records.filter((r) => r.seq !== 15),
			),
		);
		assert.equal(Object.keys(salvaged.state.tactics).filter((k) => k.startsWith("imported-")).length, 320);
		assert.equal(salvaged.state.tactics.t15, undefined);
		// #15's rule3 is the one #11 wrote until #19 writes it again: what #15 wrote is gone, the rest stands.
		assert.equal(salvaged.state.strategy.rule3, "rule set at 31");
		const next = run("set", "cwd.tactics.after", '"the salvage"');
		assert.equal(next.code, 0, next.stderr);
		assert.equal((await openStoresAt({ agentDir, cwd }).load("cwd")).seq, 33);
	});

	it("a later record that no longer applies without the lost one is named by id and left out; the others stay", async (t) => {
		const { cwd, agentDir } = projectDirs(t, "state-flow-salvage33-dep-");
		const stores = openStoresAt({ agentDir, cwd });
		const steps: CanonicalPatch[] = [
			{ cwd: { tactics: { a: "first" } } },
			{ cwd: { intents: { login: { goal: "fix login" } }, tactics: { t2: { do: "write the test", status: "open" } } } },
			{ cwd: { tactics: { t2: { status: "done" } } } },
			{ cwd: { tactics: { t4: { do: "deploy", for: { $ref: "cwd.intents.login" } } } } },
			{ cwd: { strategy: { s: "independent" } } },
			{ cwd: { tactics: { a: "rewritten", t4: "deploy again" } } },
		];
		for (const [i, p] of steps.entries()) await stores.commit(p, { by, id: `dep-${i + 1}`, at: at(i + 1) });
		await stores.close();
		const logPath = join(cwd, ".pi", "state-flow", "log.jsonl");
		const log = readFileSync(logPath);
		const second = log.indexOf(10) + 1;
		// The second record's patch overwritten: what it wrote is read from its inverse.
		const p = log.indexOf('"patch":', second) + 12;
		log.fill(0x41, p, p + 12);
		writeFileSync(logPath, log);
		const done = runCli(["doctor", "--salvage", "cwd", "--agent-dir", agentDir], { cwd });
		assert.match(unwrapped(done.stdout), /cwd: lost #2 dep-2 \([^)]+\): its record is damaged; it wrote intents\.login, tactics\.t2\./);
		assert.match(
			unwrapped(done.stdout),
			/cwd: left out #3 dep-3 \([^)]+\): intact, but it changes part of tactics\.t2, which is no longer there; it stays in the damaged store\./,
		);
		assert.match(
			unwrapped(done.stdout),
			/cwd: left out #4 dep-4 \([^)]+\): intact, but it refers to cwd\.intents\.login, which the lost transition wrote; it stays/,
		);
		assert.match(unwrapped(done.stdout), /cwd: keeps 3 of 6 transitions/);
		const state = (await openStoresAt({ agentDir, cwd }).load("cwd")).state;
		assert.deepEqual(state.tactics, { a: "rewritten", t4: "deploy again" });
		assert.deepEqual(state.strategy, { s: "independent" });
		assert.deepEqual(state.intents, {});
	});

	it("a damaged checkpoint falls back to the log; a damaged log tail keeps what precedes it", async (t) => {
		const { cwd, agentDir } = projectDirs(t, "state-flow-salvage33-cp-");
		const stores = openStoresAt({ agentDir, cwd });
		await stores.commit({ cwd: { tactics: { a: "one" } } }, { by, id: "a1", at: at(1) });
		await stores.commit({ cwd: { tactics: { b: "two" } } }, { by, id: "b2", at: at(2) });
		await stores.commit({ cwd: { tactics: { c: [3] }, strategy: { r: "three" } } }, { by, id: "c3", at: at(3) });
		await stores.commit({ cwd: { tactics: { d: "four" } } }, { by, id: "d4", at: at(4) });
		await stores.close();
		const root = join(cwd, ".pi", "state-flow");
		const lines = readFileSync(join(root, "log.jsonl"), "utf8")
			.split("\n")
			.filter((l) => l !== "");
		const records = lines.map((l) => JSON.parse(l) as TransitionRecord);
		// Set-up, not the code under test: the files as a compaction after #1 leaves them, then damage.
		const checkpoint = Buffer.from(checkpointText("cwd", 1, replay(emptyState(), records.slice(0, 1))));
		const at0 = checkpoint.indexOf('"one"');
		checkpoint[at0 + 1] = 0x4f;
		checkpoint[at0 + 2] = 0x4e;
		const tail = Buffer.from(lines[3] as string);
		tail.fill(0x21, 30, 60);
		writeFileSync(join(root, "checkpoint.json"), checkpoint);
		writeFileSync(join(root, "log.jsonl"), `${lines.slice(1, 3).join("\n")}\n${tail.toString("latin1")}\n`);
		const done = runCli(["doctor", "--salvage", "cwd", "--agent-dir", agentDir], { cwd });
		assert.match(unwrapped(done.stdout), /cwd: left out checkpoint\.json: damaged, and no one-byte repair makes it pass its integrity check\./);
		assert.match(
			unwrapped(done.stdout),
			/cwd: lost what the checkpoint held \(transitions up to #1\): the log's records after it are replayed over the empty state\./,
		);
		assert.match(
			unwrapped(done.stdout),
			/cwd: lost the log's last 1 line \(damaged; ids as their bytes read: d4\): what they wrote is lost; the owner ends before them\./,
		);
		assert.match(unwrapped(done.stdout), /cwd: keeps 2 of 2 transitions after the empty state at #1 \(the owner at #3\)/);
		const h = await openStoresAt({ agentDir, cwd }).load("cwd");
		assert.equal(h.seq, 3);
		assert.deepEqual(h.state.tactics, { b: "two", c: [3] });
		assert.deepEqual(h.state.strategy, { r: "three" });
	});
});
