/**
 * Crash safety of compaction when the log's size decides it (issue 37): a state large against
 * its records compacts only once the log since the checkpoint holds `LOG_SHARE` of the state's
 * bytes, long after R + slack records. Writer processes are SIGKILLed in the middle of that
 * compaction (checkpoint written, log not yet replaced; new log written, not yet renamed) and at
 * random moments; after each kill a fresh process must hold every transition the writer
 * acknowledged, and replaying the files must give the state.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { replay } from "../../lib/core/history.js";
import { applyPatch } from "../../lib/core/merge.js";
import { emptyState } from "../../lib/core/state.js";
import type { OwnerState } from "../../lib/core/types.js";
import { parseCheckpoint, parseRecordLine } from "../../lib/storage/format.js";
import { compactionSlack } from "../../lib/storage/owner-log.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild } from "./children/spawn.js";
import { randomInt, replayable } from "../helpers/seed.js";

const RETENTION = 3;

interface Lane {
	agentDir: string;
	cwd: string;
	/** Every transition a writer acknowledged (its commit resolved), with the value it wrote. */
	acked: Map<string, number>;
	runs: number;
}

/** A lane whose CWD state holds ~400 KB in one seed transition: its records are ~300 B, so the log's bytes decide compaction. */
async function seededLane(dir: string): Promise<Lane> {
	const lane: Lane = { agentDir: join(dir, "agent"), cwd: join(dir, "proj"), acked: new Map(), runs: 0 };
	const stores = openStoresAt({ agentDir: lane.agentDir, cwd: lane.cwd, retention: RETENTION });
	const tactics: Record<string, string> = {};
	for (let k = 0; k < 800; k++) tactics[`seed${k}`] = `${k}-`.padEnd(500, "s");
	const by = { kind: "system", reason: "seed" } as const;
	await stores.commit({ cwd: { tactics } }, { by, id: "seed", at: new Date().toISOString() });
	// The seed's own line is as large as the state: compact it away (R + slack small commits), so the log holds small records only.
	for (let i = 0; i <= RETENTION + compactionSlack(RETENTION); i++) {
		await stores.commit({ cwd: { tactics: { [`warm-${i}`]: i } } }, { by, id: `warm-${i}`, at: new Date().toISOString() });
		lane.acked.set(`warm-${i}`, i);
	}
	assert.ok(existsSync(join(stores.identity().cwdRoot, "checkpoint.json")), "the seed was not compacted away");
	return lane;
}

/** Independent replay straight from the files: checkpoint + every log record after it. */
function diskReplay(root: string): { state: OwnerState; checkpointSeq: number } {
	const cpPath = join(root, "checkpoint.json");
	const cp = existsSync(cpPath) ? parseCheckpoint(readFileSync(cpPath, "utf8"), cpPath, "cwd") : { seq: 0, state: emptyState() };
	const logPath = join(root, "log.jsonl");
	for (const line of readFileSync(logPath, "utf8").split("\n").slice(0, -1)) {
		const r = parseRecordLine(line, logPath, "line");
		if (r.seq > cp.seq) applyPatch(cp.state, r.patch);
	}
	return { state: cp.state, checkpointSeq: cp.seq };
}

/** A fresh process's view after the kill: every acknowledged transition is there, and the files replay to the state. */
async function checkLane(lane: Lane, label: string): Promise<{ checkpointSeq: number }> {
	const stores = openStoresAt({ agentDir: lane.agentDir, cwd: lane.cwd, retention: RETENTION });
	const h = await stores.load("cwd");
	for (const [id, value] of lane.acked) assert.equal(h.state.tactics[id], value, `${label}: acknowledged transition ${id} is missing`);
	assert.equal(h.state.tactics.seed0, "0-".padEnd(500, "s"), `${label}: the seed state is gone`);
	assert.deepEqual(replay(h.checkpoint, h.tail), h.state, `${label}: replay(checkpoint, tail) differs from the state`);
	const disk = diskReplay(stores.identity().cwdRoot);
	assert.deepEqual(disk.state, h.state, `${label}: the files replay to another state`);
	return { checkpointSeq: disk.checkpointSeq };
}

/**
 * One writer of `count` commits: killed by a fault point, or by the parent once it acknowledged
 * `killAfter` commits (waited for on its output, not by time). Returns how many it acknowledged.
 */
async function writer(lane: Lane, count: number, opts: { fault?: string; killAfter?: number }): Promise<{ acks: number; killed: boolean }> {
	const tag = `r${lane.runs++}`;
	const child = runChild("ack-child", [lane.agentDir, lane.cwd, tag, String(count), String(RETENTION)], opts.fault ? { STATE_FLOW_FAULT: opts.fault } : {});
	let acks = 0;
	let buffered = "";
	child.proc.stdout?.on("data", (d: Buffer) => {
		buffered += d.toString();
		const lines = buffered.split("\n");
		buffered = lines.pop() ?? "";
		for (const line of lines) {
			if (!line.startsWith("ack ")) continue;
			const id = line.slice(4);
			lane.acked.set(id, Number(id.slice(tag.length + 1)));
			acks++;
			if (opts.killAfter !== undefined && acks === opts.killAfter) child.proc.kill("SIGKILL");
		}
	});
	const res = await child.done;
	const killed = res.signal === "SIGKILL";
	if (!killed) assert.equal(res.code, 0, `writer ${tag} failed: ${res.stderr}`);
	return { acks, killed };
}

describe("crash safety of compaction decided by the log's size", () => {
	it("loses no acknowledged transition when killed inside a compaction that waited for the log's bytes", async (t) => {
		for (const point of ["mid-compaction", "mid-compaction-log"]) {
			// A lane of its own: a kill mid-compaction leaves a long log beside a new checkpoint, which changes when the next one comes.
			const lane = await seededLane(tempDir(t));
			const before = await checkLane(lane, `${point}: before`);
			const run = await writer(lane, 5000, { fault: `${point}@1` });
			assert.ok(run.killed, `${point} was never reached in 5000 commits`);
			// The record count alone (R + slack) would have compacted far earlier: the log's size decided this one.
			assert.ok(run.acks > RETENTION + compactionSlack(RETENTION) + 1, `${point}: compaction came after only ${run.acks} commits`);
			await checkLane(lane, `${point}: after the kill`);
			// The next writer finishes the interrupted compaction (or a later one) and loses nothing either.
			const next = await writer(lane, 3, {});
			assert.equal(next.acks, 3);
			const after = await checkLane(lane, `${point}: after the next writer`);
			assert.ok(after.checkpointSeq > before.checkpointSeq, `${point}: no compaction moved the checkpoint (${after.checkpointSeq})`);
		}
	});

	it("loses no acknowledged transition across kills at random points of long runs", async (t) => {
		const lane = await seededLane(tempDir(t));
		// Kill points from the run's seed: a failure names the seed that replays it.
		await replayable(async () => {
			for (let k = 0; k < 8; k++) {
				const killAfter = randomInt("crash-compaction kill", 1, 400);
				const run = await writer(lane, 5000, { killAfter });
				assert.ok(run.killed, `writer ${k} ended before it was killed`);
				await checkLane(lane, `random kill ${k} after ${killAfter} acks`);
			}
		});
	});
});
