/**
 * No lost updates on PostgreSQL: 8 real processes x 100 commits into one shared CWD owner,
 * each re-staging under the row lock. Every commit is stored exactly once, the seqs continue,
 * and the state a fresh reader loads equals a sequential replay of the stored rows.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { applyPatch } from "../../lib/core/merge.js";
import { emptyState } from "../../lib/core/state.js";
import type { TransitionRecord } from "../../lib/core/types.js";
import { PgDatabase } from "../../lib/storage/pg/database.js";
import { serverForFile, runPgWriters, testDatabase } from "../helpers/pg-server.js";

const PROCS = 8;
const COMMITS = 100;

const server = serverForFile(testDatabase);

describe("PostgreSQL: concurrent writers", () => {
	it("8 processes x 100 commits on one owner: every commit exactly once, state equals a sequential replay", async () => {
		const schema = server.schema();
		await runPgWriters(server.url, schema, "shared", PROCS, COMMITS);
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		let rows: Array<{ seq: string; id: string; body: string }>;
		try {
			rows = (await c.query(`SELECT seq, id, body FROM "${schema}".transitions ORDER BY seq`)).rows;
		} finally {
			await c.end();
		}
		assert.equal(rows.length, PROCS * COMMITS);
		assert.deepEqual(
			rows.map((r) => Number(r.seq)),
			rows.map((_, i) => i + 1),
		);
		assert.equal(new Set(rows.map((r) => r.id)).size, PROCS * COMMITS);
		const replayed = emptyState();
		for (const r of rows) applyPatch(replayed, (JSON.parse(r.body) as TransitionRecord).patch);
		const db = new PgDatabase({ url: server.url, schema });
		try {
			const h = await db.store("cwd", "shared", 1000).load();
			assert.equal(h.seq, PROCS * COMMITS);
			assert.deepEqual(h.state, replayed);
			for (let p = 0; p < PROCS; p++) {
				assert.equal(h.state.lazy.counts && (h.state.lazy.counts as Record<string, number>)[`p${p}`], COMMITS);
				for (let i = 0; i < COMMITS; i++) assert.equal(h.state.tactics[`p${p}-${i}`], i);
			}
		} finally {
			await db.close();
		}
	});
});
