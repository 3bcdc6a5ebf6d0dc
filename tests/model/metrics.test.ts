/**
 * `npm run metrics` as a real child process (the compiled script under `npm test`, the
 * TypeScript source under tsx): it writes metrics.json with all 14 rows and beats every
 * context-budget target of issue 5 with margin.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { tempDir } from "../helpers/temp-dir.js";

// The same extension as this file: .ts under tsx, .js once compiled to dist/.
const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
const script = fileURLToPath(new URL(`../../scripts/metrics${ext}`, import.meta.url));

interface Metrics {
	declarations_bytes_max: number;
	protocol_bytes_max: number;
	head_overhead_ratio: number;
	rows: Array<{ selection: string; mode: string; head_bytes: number; protocol_bytes: number }>;
}

describe("metrics script", () => {
	it("writes metrics.json for 7 selections × 2 modes, within the targets with margin", (t) => {
		const cwd = tempDir(t, "state-flow-metrics-");
		const run = spawnSync(process.execPath, [...process.execArgv, script], { cwd, encoding: "utf8", timeout: 60_000 });
		assert.equal(run.status, 0, run.stderr);
		assert.match(run.stdout, /declarations_bytes_max \d+/);
		const m = JSON.parse(readFileSync(join(cwd, "metrics.json"), "utf8")) as Metrics;
		assert.equal(m.rows.length, 14);
		assert.deepEqual(new Set(m.rows.map((r) => r.mode)), new Set(["active", "passive"]));
		assert.equal(new Set(m.rows.map((r) => r.selection)).size, 7);
		assert.ok(m.rows.every((r) => r.head_bytes > 0 && r.protocol_bytes > 0));
		assert.ok(m.declarations_bytes_max <= 1800 * 0.8, `declarations ${m.declarations_bytes_max} B`);
		assert.ok(m.protocol_bytes_max <= 2500 * 0.8, `protocol ${m.protocol_bytes_max} B`);
		assert.ok(m.head_overhead_ratio <= 1.15 * 0.9, `head ratio ${m.head_overhead_ratio}`);
	});
});
