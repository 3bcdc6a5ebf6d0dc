/**
 * A PostgreSQL test file whose server never started must fail, not pass with its tests unrun:
 * node's runner counts a file whose process exits with code 0 as passed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

describe("serverForFile", () => {
	it("fails a file whose server start-up ended the process before its tests ran, saying why", () => {
		const file = fileURLToPath(new URL(`./children/server-never-starts${EXT}`, import.meta.url));
		// A runner of its own, as CI runs the file (inside a test, node would otherwise report to this one).
		const { NODE_TEST_CONTEXT: _, ...env } = process.env;
		const run = spawnSync(process.execPath, [...process.execArgv, "--test", file], { encoding: "utf8", env });
		assert.notEqual(run.status, 0, `the run must fail:\n${run.stdout}`);
		assert.match(run.stdout + run.stderr, /The test PostgreSQL server never started in this file, so its tests did not run\./);
		assert.doesNotMatch(run.stdout, /^ok 1 - uses the server/m);
	});
});
