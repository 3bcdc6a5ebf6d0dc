/**
 * The storage part: a seeded file store, the commit against its physical floor (one append +
 * fsync of a record line of the same size) and against SQLite writing the same line with the same
 * durability (`sqlite.ts`), the share of a commit outside fsync, warm reads, the cold load after
 * a crash, and 8 writer processes committing to one store at once.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { spawn } from "node:child_process";
import fs, { closeSync, constants, fstatSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JsonObject } from "../../lib/core/types.js";
import type { Stores } from "../../lib/storage/stores.js";
import { recordLine } from "../../lib/storage/format.js";
import { BY, ITER, WARMUP, ms, newId, p50, value } from "./shared.js";
import type { SqliteAnchor } from "./sqlite.js";

/** The entry point, which runs `child` when given `--child`: each writer process loads what a bench run loads. */
const SELF = fileURLToPath(new URL("../bench.js", import.meta.url));
const CONC_PROCS = 8;
const CONC_COMMITS = 100;

/**
 * A CWD store holding `entries` entries of ~200 B, retention 100 (or `retention`). The agent directory exists, as
 * in a pi session, so every commit also writes this machine's seen mark (without it there are no
 * marks, and a commit here skipped a write that every commit in pi makes).
 */
export async function seeded(dir: string, entries: number, retention = 100): Promise<Stores> {
	mkdirSync(join(dir, "agent"), { recursive: true });
	const stores = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention });
	for (let i = 0; i < entries; i += 500) {
		const tactics: JsonObject = {};
		for (let k = i; k < Math.min(entries, i + 500); k++) tactics[`k${k}`] = value(k);
		await stores.commit({ cwd: { tactics } }, { by: BY, id: newId(), at: new Date().toISOString() });
	}
	return stores;
}

/** The three operations of the commit-versus-floor comparison, each run once per call with a fresh key. */
export interface StorageOps {
	small(i: number): Promise<unknown>;
	big(i: number): Promise<unknown>;
	/** The raw floor: one append + fsync of a record line of the same size, in the 2 MB store's folder. */
	raw(i: number): void;
	/** The raw floor plus the other system calls a commit's guarantees make, and nothing else (`guaranteeFloor`). */
	guarded(i: number): void;
	/** The anchor: the same line upserted into SQLite, `synchronous=FULL` and `NORMAL`; absent where better-sqlite3 cannot load. */
	sqlite?: { full(i: number): void; normal(i: number): void };
	close(): void;
}

/**
 * The system calls of a file commit that its guarantees need, made on files of their own beside
 * the raw floor's, with no State Flow code between them (docs/decisions.md, "Close to the
 * floor"): the containment `lstat`s of the store folder and its parent, the lock taken by `link`,
 * the journal folder's `stat`, the log's `lstat`, the append and its fsync, the log's `fstat`,
 * the seen mark's `fstat` and `pwrite`, the lock's `lstat` and `unlink`. What a commit costs
 * beyond this is State Flow's own work.
 */
function guaranteeFloor(dir: string, line: (i: number) => Buffer): (i: number) => void {
	const floor = join(dir, "floor");
	mkdirSync(floor, { recursive: true });
	const log = join(floor, "log.jsonl");
	const lock = join(floor, "lock");
	const holder = join(floor, "holder");
	const fd = openSync(log, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
	const mark = openSync(join(floor, "seen.json"), constants.O_WRONLY | constants.O_CREAT, 0o600);
	closeSync(openSync(holder, constants.O_WRONLY | constants.O_CREAT, 0o600));
	const text = Buffer.from(`${JSON.stringify({ root: floor, seq: 1, id: "x" }).padEnd(127)}\n`);
	return (i) => {
		lstatSync(floor);
		lstatSync(dir);
		linkSync(holder, lock);
		statSync(join(floor, "journal"), { throwIfNoEntry: false });
		lstatSync(log);
		writeSync(fd, line(i));
		fsyncSync(fd);
		fstatSync(fd);
		fstatSync(mark);
		writeSync(mark, text, 0, text.length, 0);
		lstatSync(lock);
		unlinkSync(lock);
	};
}

export function storageOps(small: Stores, big: Stores, rawPath: string, anchor?: SqliteAnchor): StorageOps {
	const fd = openSync(rawPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
	const at = "2026-01-01T00:00:00.000Z";
	const line = (key: string, i: number): Buffer =>
		Buffer.from(
			`${recordLine({ id: newId(), at, seq: 1, by: BY, patch: { tactics: { [key]: value(i) } }, undo: { tactics: { [key]: value(i - 1) } }, cascades: [], owners: ["cwd"] })}\n`,
		);
	return {
		small: (i) => small.commit({ cwd: { tactics: { [`k${(i * 7919) % 100}`]: value(i + 1_000_000) } } }, { by: BY, id: newId(), at }),
		big: (i) => big.commit({ cwd: { tactics: { [`k${(i * 7919) % 10_000}`]: value(i + 1_000_000) } } }, { by: BY, id: newId(), at }),
		raw: (i) => {
			writeSync(fd, line(`k${(i * 7919) % 10_000}`, i + 1_000_000));
			fsyncSync(fd);
		},
		guarded: guaranteeFloor(dirname(dirname(rawPath)), (i) => line(`k${(i * 7919) % 10_000}`, i + 1_000_000)),
		...(anchor === undefined
			? {}
			: {
					sqlite: {
						full: (i: number) => anchor.full(`k${(i * 7919) % 10_000}`, line(`k${(i * 7919) % 10_000}`, i + 1_000_000).toString()),
						normal: (i: number) => anchor.normal(`k${(i * 7919) % 10_000}`, line(`k${(i * 7919) % 10_000}`, i + 1_000_000).toString()),
					},
				}),
		close: () => {
			closeSync(fd);
			anchor?.close();
		},
	};
}

/**
 * The 20 KB commit, the 2 MB commit and the raw append + fsync back to back in a loop of their
 * own (warm caches, one fsync right after another): the storage path at its best, reported as
 * `*_back_to_back`. The figures the ratios use come from inside the tool session (`toolTimes`).
 */
export async function commitVsRawBackToBack(
	ops: StorageOps,
): Promise<{ small: number; big: number; raw: number; guarded: number; full?: number; normal?: number }> {
	const xs = { small: [] as number[], big: [] as number[], raw: [] as number[], guarded: [] as number[], full: [] as number[], normal: [] as number[] };
	for (let i = 0; i < ITER + WARMUP; i++) {
		let t0 = process.hrtime.bigint();
		await ops.small(i);
		const cs = ms(t0);
		t0 = process.hrtime.bigint();
		await ops.big(i);
		const cb = ms(t0);
		t0 = process.hrtime.bigint();
		ops.raw(i);
		const r = ms(t0);
		t0 = process.hrtime.bigint();
		ops.guarded(i);
		const g = ms(t0);
		if (ops.sqlite !== undefined) {
			t0 = process.hrtime.bigint();
			ops.sqlite.full(i);
			const f = ms(t0);
			t0 = process.hrtime.bigint();
			ops.sqlite.normal(i);
			if (i >= WARMUP) {
				xs.normal.push(ms(t0));
				xs.full.push(f);
			}
		}
		if (i >= WARMUP) {
			xs.small.push(cs);
			xs.big.push(cb);
			xs.raw.push(r);
			xs.guarded.push(g);
		}
	}
	const anchor = ops.sqlite === undefined ? {} : { full: p50(xs.full), normal: p50(xs.normal) };
	return { small: p50(xs.small), big: p50(xs.big), raw: p50(xs.raw), guarded: p50(xs.guarded), ...anchor };
}

/**
 * The share of a 2 MB commit spent outside `fsync` (`commit_cpu_share`): `fs.fsyncSync` is timed
 * for this loop only (every module's binding follows it through `syncBuiltinESMExports`), and each
 * commit's fsync time is taken from its own wall time. p50 of the per-commit shares, and p50 of
 * the time outside fsync in ms (`commit_outside_fsync_p50_ms_2mb`): a share falls when the disk
 * is slow, the time does not. The guarantees' floor (`guaranteeFloor`) is timed the same way
 * right after each commit (`guarantee_floor_outside_fsync_p50_ms`): its system calls alone.
 */
export async function commitCpuShare(ops: StorageOps): Promise<{ share: number; outside: number; floorOutside: number }> {
	const original = fs.fsyncSync;
	let inFsync = 0;
	fs.fsyncSync = (fd: number): void => {
		const t0 = process.hrtime.bigint();
		try {
			original(fd);
		} finally {
			inFsync += Number(process.hrtime.bigint() - t0) / 1e6;
		}
	};
	syncBuiltinESMExports();
	const shares: number[] = [];
	const outside: number[] = [];
	const floorOutside: number[] = [];
	try {
		for (let i = 0; i < ITER + WARMUP; i++) {
			inFsync = 0;
			let t0 = process.hrtime.bigint();
			await ops.big(i + 3_000_000);
			const total = ms(t0);
			const commitFsync = inFsync;
			inFsync = 0;
			t0 = process.hrtime.bigint();
			ops.guarded(i + 3_000_000);
			const floor = ms(t0);
			if (i >= WARMUP) {
				shares.push((total - commitFsync) / total);
				outside.push(total - commitFsync);
				floorOutside.push(floor - inFsync);
			}
		}
	} finally {
		fs.fsyncSync = original;
		syncBuiltinESMExports();
	}
	return { share: p50(shares), outside: p50(outside), floorOutside: p50(floorOutside) };
}

/**
 * The cold load of a 2 MB owner after a crash: a fresh process reads the checkpoint and replays
 * the log after it. Timed at the worst point of the compaction cycle, when the log is (within two
 * records) the longest it ever gets — a writer that died there left it so — whatever rule decides
 * when to compact: commits run until a compaction (the log got shorter) and on to the next one,
 * whose log before it is the cycle's peak, then until the log is two records short of that peak.
 * p50 of fresh `Stores` loading the owner (each reads the files in full, checks every record and
 * the seen mark). Retention 100 unless `retention` is given (the retention part compares them).
 */
export async function coldLoadP50(dir: string, entries: number, retention = 100): Promise<{ p50: number; logBytes: number; cycle: number }> {
	const stores = await seeded(dir, entries, retention);
	const log = join(dir, "proj", ".pi", "state-flow", "log.jsonl");
	let n = 0;
	let size = statSync(log).size;
	/** One commit; the log's growth, or -1 when it got shorter (a compaction). */
	const commit = async (): Promise<number> => {
		await stores.commit(
			{ cwd: { tactics: { [`k${(n * 7919) % entries}`]: value(n++ + 4_000_000) } } },
			{ by: BY, id: newId(), at: "2026-01-01T00:00:00.000Z" },
		);
		const before = size;
		size = statSync(log).size;
		return size < before ? -1 : size - before;
	};
	while ((await commit()) >= 0) {}
	let peak = size;
	let cycle = 1;
	let record = 0;
	for (let grew = await commit(); grew >= 0; grew = await commit(), cycle++) {
		peak = size;
		record = Math.max(record, grew);
	}
	while (size < peak - 2 * record) if ((await commit()) < 0) throw new Error("bench cold load: a compaction came earlier than the cycle before");
	const xs: number[] = [];
	for (let i = 0; i < 21; i++) {
		const fresh = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention });
		const t0 = process.hrtime.bigint();
		await fresh.load("cwd");
		xs.push(ms(t0));
	}
	return { p50: p50(xs), logBytes: statSync(log).size, cycle };
}

export async function readP50(stores: Stores, entries: number): Promise<number> {
	const xs: number[] = [];
	let sink = 0;
	for (let i = 0; i < 2000; i++) {
		const t0 = process.hrtime.bigint();
		const v = (await stores.load("cwd")).state.tactics[`k${(i * 31) % entries}`];
		xs.push(ms(t0));
		if (typeof v === "string") sink += v.length;
	}
	if (sink === 0) throw new Error("bench read found nothing");
	return p50(xs.slice(200));
}

export async function child(dir: string, tag: string, n: number): Promise<void> {
	const stores = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 100 });
	const start = performance.timeOrigin + performance.now();
	for (let i = 0; i < n; i++) {
		await stores.commit({ cwd: { tactics: { [`${tag}-${i}`]: i, shared: `${tag}-${i}` } } }, { by: BY, id: `${tag}-${i}`, at: new Date().toISOString() });
	}
	// The commit loop's window (ms since the epoch), so the parent measures commits, not process start-up.
	process.stdout.write(`${start} ${performance.timeOrigin + performance.now()}\n`);
}

function run(args: string[]): Promise<{ start: number; end: number }> {
	return new Promise((res, rej) => {
		const p = spawn(process.execPath, [...process.execArgv, SELF, ...args], { stdio: ["ignore", "pipe", "inherit"] });
		let out = "";
		p.stdout.on("data", (d: Buffer) => (out += d.toString()));
		p.on("exit", (code) => {
			const [start, end] = out.trim().split(" ").map(Number);
			if (code === 0 && start !== undefined && end !== undefined) res({ start, end });
			else rej(new Error(`bench child exited with ${code}`));
		});
	});
}

export async function concurrent(dir: string): Promise<{ perSec: number; lost: number }> {
	// Create the store first so that child start-up is not part of the measurement window.
	const stores = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 100 });
	await stores.commit({ cwd: { tactics: { shared: "start" } } }, { by: BY, id: "start", at: "2026-01-01T00:00:00.000Z" });
	// From the first writer's first commit to the last writer's last one, as the PostgreSQL section
	// measures it: loading node and the modules in 8 processes on 2 cores is not commit throughput.
	const windows = await Promise.all(Array.from({ length: CONC_PROCS }, (_, p) => run(["--child", dir, `p${p}`, String(CONC_COMMITS)])));
	const secs = (Math.max(...windows.map((w) => w.end)) - Math.min(...windows.map((w) => w.start))) / 1000;
	const fresh = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 100 });
	const h = await fresh.load("cwd");
	let lost = 0;
	for (let p = 0; p < CONC_PROCS; p++) for (let i = 0; i < CONC_COMMITS; i++) if (h.state.tactics[`p${p}-${i}`] !== i) lost++;
	if (h.seq !== CONC_PROCS * CONC_COMMITS + 1) lost = Math.max(lost, CONC_PROCS * CONC_COMMITS + 1 - h.seq);
	return { perSec: (CONC_PROCS * CONC_COMMITS) / secs, lost };
}
