/**
 * Every stdio MCP host runs one server process per client session, so a memory server is a
 * multi-process writer by construction. Four `state-flow mcp` processes, each driven by its own
 * real client, write 50 times each to one owner at once: every acknowledged write is present.
 * A server killed (SIGKILL, at a commit's fault points) loses nothing it acknowledged, and the
 * next server reads and writes the store.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { FaultPoint } from "../../lib/storage/fault.js";
import { tempDir } from "../helpers/temp-dir.js";
import { call, ok, stdioServer } from "./fixture.js";

const PROCS = 4;
const WRITES = 50;

function dirs(t: { after(fn: () => void): void }): { cwd: string; agentDir: string } {
	const base = tempDir(t, "sf-mcp-conc-");
	const d = { cwd: join(base, "p"), agentDir: join(base, "a") };
	mkdirSync(d.cwd);
	mkdirSync(d.agentDir);
	return d;
}

describe("state-flow mcp, several server processes on one owner", () => {
	it(`${PROCS} servers × ${WRITES} writes: every write present, none lost`, async (t) => {
		const d = dirs(t);
		const servers = await Promise.all(Array.from({ length: PROCS }, () => stdioServer(d)));
		try {
			await Promise.all(
				servers.map(async (s, p) => {
					for (let i = 0; i < WRITES; i++) await ok(s.client, "patch_state", { tactics: { [`p${p}w${i}`]: `process ${p} write ${i}` } });
				}),
			);
			const [first] = servers;
			assert.ok(first);
			const read = await ok(first.client, "read_state", { path: "tactics", projection: "keys" });
			const keys = JSON.parse(read.text.split("\n")[0] as string) as string[];
			const expected = servers.flatMap((_, p) => Array.from({ length: WRITES }, (_, i) => `p${p}w${i}`));
			assert.deepEqual([...keys].sort(), [...expected].sort(), "every acknowledged write is present");
			assert.deepEqual(read.structured?.seen, { cwd: PROCS * WRITES }, "one transition per write");
		} finally {
			await Promise.all(servers.map((s) => s.close()));
		}
	});

	for (const point of ["after-lock", "mid-append", "after-append", "before-unlock"] satisfies FaultPoint[]) {
		it(`a server killed at ${point} of its 4th write loses none of the 3 it acknowledged`, async (t) => {
			const d = dirs(t);
			const doomed = await stdioServer({ ...d, env: { STATE_FLOW_FAULT: `${point}@4` } });
			for (let i = 1; i <= 3; i++) await ok(doomed.client, "patch_state", { tactics: { [`k${i}`]: `acknowledged ${i}` } });
			// The 4th is never acknowledged: the process dies inside the commit.
			await assert.rejects(call(doomed.client, "patch_state", { tactics: { k4: "not acknowledged" } }));
			await doomed.close();
			const next = await stdioServer(d);
			try {
				const read = await ok(next.client, "read_state", { path: "tactics" });
				const tactics = JSON.parse(read.text.split("\n")[0] as string) as Record<string, string>;
				for (let i = 1; i <= 3; i++) assert.equal(tactics[`k${i}`], `acknowledged ${i}`);
				// Written whole or not at all: never half.
				assert.ok(tactics.k4 === undefined || tactics.k4 === "not acknowledged", read.text);
				await ok(next.client, "patch_state", { tactics: { k5: "after the crash" } });
				assert.match((await ok(next.client, "read_state", { path: "tactics.k5" })).text, /after the crash/);
			} finally {
				await next.close();
			}
		});
	}
});
