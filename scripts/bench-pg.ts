/**
 * PostgreSQL section of the bench, measured in one run against its floor: a minimal
 * transaction of the same shape as a commit (lock one row, update it, insert one row, commit)
 * on the same connection, interleaved with real commits so both see the same server and disk.
 * `benchPg()` returns the keys for bench-results.json; run directly, it prints them.
 * Uses `STATE_FLOW_TEST_DATABASE_URL` when set, else starts an embedded server.
 */
import { fileURLToPath } from "node:url";
import { stage } from "../lib/core/stage.js";
import type { OwnerHistory } from "../lib/core/types.js";
import { recordLine } from "../lib/storage/format.js";
import { PgDatabase } from "../lib/storage/pg/database.js";
import { TEST_DATABASE_ENV, runPgWriters, startEmbeddedPostgres } from "../tests/helpers/pg-server.js";
import { p50 } from "./bench/shared.js";

export interface PgBench {
	pg_commit_p50_ms: number;
	pg_floor_p50_ms: number;
	pg_commit_vs_floor: number;
	pg_read_p50_ms: number;
	pg_read_both_p50_ms: number;
	pg_concurrent_commits_per_s: number;
	pg_lost_commits: number;
}

const ROUNDS = 300;
const WARMUP = 30;
const READS = 2000;
const PROCS = 8;
const PER_PROC = 100;

const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

export async function benchPg(): Promise<PgBench> {
	const external = process.env[TEST_DATABASE_ENV];
	const server = external ? undefined : await startEmbeddedPostgres();
	const url = external ?? (server?.url as string);
	const schema = `sf_bench_${process.pid}`;
	const db = new PgDatabase({ url, schema });
	try {
		const store = db.store("cwd", "bench", 20);
		await store.load();
		const by = { kind: "system", reason: "bench" } as const;
		let n = 0;
		const commit = async (): Promise<number> => {
			const id = `b-${++n}`;
			const t0 = performance.now();
			await db.commitTogether([store], ([h]) => {
				const r = stage(
					{ cwd: h as OwnerHistory },
					{ cwd: { tactics: { [`k${n % 50}`]: { step: n, note: "a short tactic" } } } },
					{ id, at: new Date().toISOString(), by },
				);
				return { records: [r.noop ? undefined : r.records.cwd], value: undefined };
			});
			return performance.now() - t0;
		};
		// The floor's row carries a body of the same size as a commit's record.
		await commit();
		const body = recordLine((await store.load()).tail.at(-1) as never);
		await db.run("bench floor", async (c) => {
			await c.query(`CREATE TABLE IF NOT EXISTS "${schema}".floor_head (id int PRIMARY KEY, seq bigint NOT NULL)`);
			await c.query(`CREATE TABLE IF NOT EXISTS "${schema}".floor_rows (seq bigint PRIMARY KEY, body text NOT NULL)`);
			await c.query(`INSERT INTO "${schema}".floor_head VALUES (1, 0) ON CONFLICT DO NOTHING`);
		});
		let floorSeq = 0;
		const floor = (): Promise<number> =>
			db.run("bench floor", async (c) => {
				const t0 = performance.now();
				const seq = ++floorSeq;
				await c.query("BEGIN");
				await c.query({ name: "floor-lock", text: `SELECT seq FROM "${schema}".floor_head WHERE id = 1 FOR UPDATE` });
				await c.query({ name: "floor-update", text: `UPDATE "${schema}".floor_head SET seq = $1 WHERE id = 1`, values: [seq] });
				await c.query({ name: "floor-insert", text: `INSERT INTO "${schema}".floor_rows VALUES ($1, $2)`, values: [seq, body] });
				await c.query("COMMIT");
				return performance.now() - t0;
			});
		const commits: number[] = [];
		const floors: number[] = [];
		for (let i = 0; i < WARMUP + ROUNDS; i++) {
			const c = await commit();
			const f = await floor();
			if (i >= WARMUP) {
				commits.push(c);
				floors.push(f);
			}
		}
		const reads: number[] = [];
		for (let i = 0; i < READS; i++) {
			const t0 = performance.now();
			await store.load();
			reads.push(performance.now() - t0);
		}
		// Global and CWD as one snapshot (a head render or read of both shared owners): one statement when nothing moved.
		const global = db.store("global", "bench", 20);
		const both: number[] = [];
		for (let i = 0; i < READS; i++) {
			const t0 = performance.now();
			await db.loadTogether([global, store]);
			both.push(performance.now() - t0);
		}
		const windows = await runPgWriters(url, schema, "shared", PROCS, PER_PROC);
		const seconds = (Math.max(...windows.map((w) => w.end)) - Math.min(...windows.map((w) => w.start))) / 1000;
		const shared = await db.store("cwd", "shared", 1000).load();
		const stored = new Set(shared.tail.map((r) => r.id)).size;
		const commitP50 = p50(commits);
		const floorP50 = p50(floors);
		return {
			pg_commit_p50_ms: round(commitP50),
			pg_floor_p50_ms: round(floorP50),
			pg_commit_vs_floor: round(commitP50 / floorP50, 2),
			pg_read_p50_ms: round(p50(reads)),
			pg_read_both_p50_ms: round(p50(both)),
			pg_concurrent_commits_per_s: round((PROCS * PER_PROC) / seconds, 0),
			pg_lost_commits: PROCS * PER_PROC - stored,
		};
	} finally {
		await db.run("bench cleanup", (c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).catch(() => undefined);
		await db.close();
		await server?.stop();
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	process.stdout.write(`${JSON.stringify(await benchPg(), null, 2)}\n`);
}
