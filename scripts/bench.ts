/**
 * `npm run bench`: the single-owner commit path against its physical floor (one append +
 * fsync of the same bytes in the same folder), warm reads, and 8 concurrent writer
 * processes. Prints a table and writes `bench-results.json`.
 */
import { spawn } from "node:child_process";
import { closeSync, constants, fsyncSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Stores } from "../lib/storage/stores.js";
import { recordLine } from "../lib/storage/format.js";
import type { JsonObject } from "../lib/core/types.js";

const SELF = fileURLToPath(import.meta.url);
const BY = { kind: "system", reason: "bench" } as const;
const ITER = 300;
const CONC_PROCS = 8;
const CONC_COMMITS = 100;

let idc = 0;
const newId = (): string => `b${process.pid}-${++idc}`;
const value = (i: number): string => `v${i}-`.padEnd(180, "x");

function p50(xs: number[]): number {
	const s = xs.slice().sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)] as number;
}
function ms(t0: bigint): number {
	return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** A CWD store holding `entries` entries of ~200 B, retention 100. */
async function seeded(dir: string, entries: number): Promise<Stores> {
	const stores = new Stores({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 100 });
	for (let i = 0; i < entries; i += 500) {
		const tactics: JsonObject = {};
		for (let k = i; k < Math.min(entries, i + 500); k++) tactics[`k${k}`] = value(k);
		await stores.commit({ cwd: { tactics } }, { by: BY, id: newId(), at: new Date().toISOString() });
	}
	return stores;
}

/**
 * Interleave the 20 KB commit, the 2 MB commit and the raw append + fsync, so that all
 * three see the same disk conditions (fsync latency drifts with the machine's load).
 */
async function commitVsRaw(small: Stores, big: Stores, rawPath: string): Promise<{ small: number; big: number; raw: number }> {
	const xs = { small: [] as number[], big: [] as number[], raw: [] as number[] };
	const fd = openSync(rawPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
	const at = "2026-01-01T00:00:00.000Z";
	const line = (key: string, i: number): Buffer =>
		Buffer.from(`${recordLine({ id: newId(), at, seq: 1, by: BY, patch: { tactics: { [key]: value(i) } }, undo: { tactics: { [key]: value(i - 1) } }, cascades: [], owners: ["cwd"] })}\n`);
	for (let i = 0; i < ITER + 20; i++) {
		const ks = `k${(i * 7919) % 100}`;
		const kb = `k${(i * 7919) % 10_000}`;
		let t0 = process.hrtime.bigint();
		await small.commit({ cwd: { tactics: { [ks]: value(i + 1_000_000) } } }, { by: BY, id: newId(), at });
		const cs = ms(t0);
		t0 = process.hrtime.bigint();
		await big.commit({ cwd: { tactics: { [kb]: value(i + 1_000_000) } } }, { by: BY, id: newId(), at });
		const cb = ms(t0);
		const buf = line(kb, i + 1_000_000);
		t0 = process.hrtime.bigint();
		writeSync(fd, buf);
		fsyncSync(fd);
		const r = ms(t0);
		if (i >= 20) {
			xs.small.push(cs);
			xs.big.push(cb);
			xs.raw.push(r);
		}
	}
	closeSync(fd);
	return { small: p50(xs.small), big: p50(xs.big), raw: p50(xs.raw) };
}

async function readP50(stores: Stores, entries: number): Promise<number> {
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

async function child(dir: string, tag: string, n: number): Promise<void> {
	const stores = new Stores({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 100 });
	for (let i = 0; i < n; i++) {
		await stores.commit({ cwd: { tactics: { [`${tag}-${i}`]: i, shared: `${tag}-${i}` } } }, { by: BY, id: `${tag}-${i}`, at: new Date().toISOString() });
	}
}

function run(args: string[]): Promise<void> {
	return new Promise((res, rej) => {
		const p = spawn(process.execPath, [...process.execArgv, SELF, ...args], { stdio: "inherit" });
		p.on("exit", (code) => (code === 0 ? res() : rej(new Error(`bench child exited with ${code}`))));
	});
}

async function concurrent(dir: string): Promise<{ perSec: number; lost: number }> {
	// Create the store first so that child start-up is not part of the measurement window.
	const stores = new Stores({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 100 });
	await stores.commit({ cwd: { tactics: { shared: "start" } } }, { by: BY, id: "start", at: "2026-01-01T00:00:00.000Z" });
	const t0 = process.hrtime.bigint();
	await Promise.all(Array.from({ length: CONC_PROCS }, (_, p) => run(["--child", dir, `p${p}`, String(CONC_COMMITS)])));
	const secs = ms(t0) / 1000;
	const fresh = new Stores({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 100 });
	const h = (await fresh.load("cwd"));
	let lost = 0;
	for (let p = 0; p < CONC_PROCS; p++) for (let i = 0; i < CONC_COMMITS; i++) if (h.state.tactics[`p${p}-${i}`] !== i) lost++;
	if (h.seq !== CONC_PROCS * CONC_COMMITS + 1) lost = Math.max(lost, CONC_PROCS * CONC_COMMITS + 1 - h.seq);
	return { perSec: (CONC_PROCS * CONC_COMMITS) / secs, lost };
}

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	if (argv[0] === "--child") return child(argv[1] as string, argv[2] as string, Number(argv[3]));
	const root = mkdtempSync(join(tmpdir(), "state-flow-bench-"));
	try {
		const small = await seeded(join(root, "small"), 100);
		const big = await seeded(join(root, "big"), 10_000);
		const bytes = (await big.load("cwd")).bytes;
		const cmp = await commitVsRaw(small, big, join(root, "big", "proj", ".pi", "state-flow", "raw.jsonl"));
		const read = await readP50(big, 10_000);
		const conc = await concurrent(join(root, "conc"));
		const results = {
			commit_p50_ms_20kb: round(cmp.small),
			commit_p50_ms_2mb: round(cmp.big),
			raw_append_fsync_p50_ms: round(cmp.raw),
			read_p50_ms_2mb: round(read),
			concurrent_commits_per_s: Math.round(conc.perSec),
			lost_commits: conc.lost,
			commit_vs_raw: round(cmp.big / cmp.raw),
			growth: round(cmp.big / cmp.small),
			state_bytes_2mb: bytes,
		};
		const targets: Record<string, string> = { commit_vs_raw: "<= 3", growth: "<= 1.3", read_p50_ms_2mb: "<= 0.2", lost_commits: "= 0" };
		console.log("metric                      value      target");
		for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(28)}${String(v).padEnd(11)}${targets[k] ?? ""}`);
		writeFileSync("bench-results.json", `${JSON.stringify(results, null, 2)}\n`);
		console.log("results written to bench-results.json");
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

function round(x: number): number {
	return Math.round(x * 1000) / 1000;
}

await main();
