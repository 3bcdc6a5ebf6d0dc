/**
 * Crash safety of multi-owner commits: child processes writing Global + CWD + a
 * file-backed Session are SIGKILLed at every fault point of the commit path and at random
 * moments (drawn from the run's seed: `STATE_FLOW_SEED` replays the plan and the delays, the
 * scheduler does the rest); after each kill the next access must show every transition whole in all of
 * its owners or absent from all of them, and replay must equal the current state.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { replay } from "../../lib/core/history.js";
import { applyPatch } from "../../lib/core/merge.js";
import { emptyState } from "../../lib/core/state.js";
import type { Owner, OwnerHistory, OwnerState } from "../../lib/core/types.js";
import { FAULT_POINTS } from "../../lib/storage/fault.js";
import type { FaultPoint } from "../../lib/storage/fault.js";
import { parseCheckpoint, parseRecordLine } from "../../lib/storage/format.js";
import { tempDir } from "../helpers/temp-dir.js";
import { jsonlSession } from "./children/jsonl-session.js";
import { runChild } from "./children/spawn.js";
import { randomInt, replayable } from "../helpers/seed.js";

const RETENTION = 3;

interface Lane {
	agentDir: string;
	cwd: string;
	sessionFile: string;
	/** Ids of every transition any child of this lane attempted, with the owners it names. */
	attempted: Map<string, Owner[]>;
	kills: number;
	runs: number;
}

function newLane(dir: string): Lane {
	return { agentDir: join(dir, "agent"), cwd: join(dir, "proj"), sessionFile: join(dir, "session.jsonl"), attempted: new Map(), kills: 0, runs: 0 };
}

/** Independent replay straight from the files: checkpoint + every log record after it. */
function diskReplay(root: string, owner: Owner): OwnerState {
	const cpPath = join(root, "checkpoint.json");
	const cp = existsSync(cpPath) ? parseCheckpoint(readFileSync(cpPath, "utf8"), cpPath, owner) : { seq: 0, state: emptyState() };
	const logPath = join(root, "log.jsonl");
	const state = cp.state;
	if (!existsSync(logPath)) return state;
	for (const line of readFileSync(logPath, "utf8").split("\n").slice(0, -1)) {
		const r = parseRecordLine(line, logPath, "line");
		if (r.seq > cp.seq) applyPatch(state, r.patch);
	}
	return state;
}

async function checkLane(lane: Lane, label: string): Promise<void> {
	const stores = openStoresAt({ agentDir: lane.agentDir, cwd: lane.cwd, session: jsonlSession(lane.sessionFile), retention: RETENTION });
	const hs: Record<Owner, OwnerHistory> = { global: await stores.load("global"), cwd: await stores.load("cwd"), session: await stores.load("session") };
	for (const [id, owners] of lane.attempted) {
		const present = owners.filter((o) => hs[o].state.tactics[id] !== undefined);
		assert.ok(
			present.length === 0 || present.length === owners.length,
			`${label}: transition ${id} is torn: present in ${present.join(",")} of ${owners.join(",")}`,
		);
	}
	for (const o of ["global", "cwd", "session"] as const) {
		assert.deepEqual(replay(hs[o].checkpoint, hs[o].tail), hs[o].state, `${label}: ${o} replay(checkpoint, tail) differs from state`);
	}
	const ids = stores.identity();
	assert.deepEqual(diskReplay(ids.globalRoot, "global"), hs.global.state, `${label}: global disk replay differs`);
	assert.deepEqual(diskReplay(ids.cwdRoot, "cwd"), hs.cwd.state, `${label}: cwd disk replay differs`);
	const journalDir = join(lane.agentDir, "state-flow", "journal");
	const left = existsSync(journalDir) ? readdirSync(journalDir).filter((n) => n.endsWith(".json")) : [];
	assert.deepEqual(left, [], `${label}: journals left after roll-forward`);
}

async function crashRun(lane: Lane, count: number, fault: string | undefined, randomKill: boolean): Promise<void> {
	const tag = `r${lane.runs++}`;
	for (let i = 0; i < count; i++) lane.attempted.set(`${tag}-${i}`, i % 3 === 2 ? ["cwd"] : ["global", "cwd", "session"]);
	const child = runChild(
		"crash-child",
		[lane.agentDir, lane.cwd, lane.sessionFile, tag, String(count), String(RETENTION)],
		fault ? { STATE_FLOW_FAULT: fault } : {},
	);
	if (randomKill) {
		await child.ready;
		// Kill timing from the run's seed (tests/helpers/seed.ts): the same seed replays the same delays.
		await new Promise((r) => setTimeout(r, randomInt("crash kill delay ms", 0, 25)));
		child.proc.kill("SIGKILL");
	}
	const res = await child.done;
	if (res.signal === "SIGKILL") lane.kills++;
	else assert.equal(res.code, 0, `child ${tag} (${fault ?? "random"}) failed: ${res.stderr}`);
	if (fault && !randomKill) assert.equal(res.signal, "SIGKILL", `fault ${fault} was never reached (stdout ${res.stdout})`);
	await checkLane(lane, `${tag} ${fault ?? "random kill"}`);
}

/** Fault points of the multi-owner and single-owner commit path (compaction is separate). */
// The file backend's commit path (the database's points are exercised in tests/pg).
const COMMIT_POINTS = FAULT_POINTS.filter((p) => !p.startsWith("mid-compaction") && !p.startsWith("pg-"));

describe("crash safety (SIGKILL at fault points and at random)", () => {
	it("keeps every transition whole or absent across 200+ kills, and replay equals state", (t) =>
		replayable(async () => {
			const dirs = [tempDir(t), tempDir(t), tempDir(t), tempDir(t)];
			const lanes = dirs.map(newLane);
			// Each lane runs its children one after the other (a check after every kill); the lanes run in parallel.
			const plan: Array<{ count: number; fault?: string; random: boolean }> = [];
			for (let round = 0; round < 5; round++) {
				for (const p of COMMIT_POINTS) for (const n of [1, 2, 3]) plan.push({ count: 10, fault: hitFor(p, n), random: false });
			}
			for (let i = 0; i < 55; i++) plan.push({ count: 30, random: true });
			shuffle(plan);
			await Promise.all(
				lanes.map(async (lane, li) => {
					for (let i = li; i < plan.length; i += lanes.length) {
						const step = plan[i] as { count: number; fault?: string; random: boolean };
						await crashRun(lane, step.count, step.fault, step.random);
					}
				}),
			);
			const kills = lanes.reduce((n, l) => n + l.kills, 0);
			assert.ok(kills >= 200, `only ${kills} kills happened`);
		}));

	it("recovers from kills in the middle of compaction (checkpoint written, log not yet replaced)", async (t) => {
		const lane = newLane(tempDir(t));
		// RETENTION 3 compacts once the on-disk tail exceeds 3 + 64 records: 100 commits get there in one child.
		for (const p of ["mid-compaction", "mid-compaction-log"] as FaultPoint[]) {
			await crashRun(lane, 100, p, false);
			await crashRun(lane, 4, undefined, false);
		}
		assert.equal(lane.kills, 2);
	});
});

/**
 * The n-th hit of a point that is reached once per commit lands in commit n; points that a
 * multi-owner commit never reaches (`after-append`: single-owner only) are reached by the
 * cwd-only third commit.
 */
function hitFor(point: FaultPoint, n: number): string {
	return `${point}@${n}`;
}

function shuffle<T>(xs: T[]): void {
	for (let i = xs.length - 1; i > 0; i--) {
		const j = randomInt("crash plan order", 0, i);
		[xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
	}
}
