/**
 * Reads of several shared owners are one snapshot: a transition another process commits to
 * Global and CWD at once is in both histories of a read or in neither, even when it lands
 * between the reads of the two owners.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { OwnerHistory } from "../../lib/core/types.js";
import type { Stores } from "../../lib/storage/stores.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild } from "./children/spawn.js";

const by = { kind: "system", reason: "snapshot-test" } as const;

function dirs(t: Parameters<typeof tempDir>[0]) {
	const base = tempDir(t);
	const agentDir = join(base, "agent");
	const cwd = join(base, "proj");
	mkdirSync(agentDir);
	mkdirSync(cwd);
	return { agentDir, cwd };
}

/** `tactics.n` of Global and CWD in one read of both. */
async function pair(stores: Stores): Promise<[unknown, unknown]> {
	const [g, c] = await stores.loadEach(["global", "cwd"]);
	const why = [g, c].map((x) => (x !== undefined && "error" in x ? String((x.error as Error).message) : "")).join(" | ");
	assert.ok(g !== undefined && "history" in g && c !== undefined && "history" in c, `both owners read: ${why}`);
	return [g.history.state.tactics.n, c.history.state.tactics.n];
}

describe("snapshot reads of several owners", () => {
	it("a transition committed between the reads of Global and CWD is in both or neither", async (t) => {
		const d = dirs(t);
		const reader = openStoresAt(d);
		const writer = openStoresAt(d);
		await writer.commit({ global: { tactics: { n: 1 } }, cwd: { tactics: { n: 1 } } }, { by, id: "one", at: "2026-12-01T00:00:00.000Z" });
		assert.deepEqual(await pair(reader), [1, 1]);
		// Order the events exactly: the reader has read Global when the other writer commits transition 2,
		// then reads CWD. The stores and files are real; only the moment of the commit is chosen.
		const cwd = (reader as unknown as { shared: { cwd: { load(): Promise<OwnerHistory> } } }).shared.cwd;
		const load = cwd.load.bind(cwd);
		let interleaved = 0;
		cwd.load = async () => {
			if (interleaved++ === 0)
				await writer.commit({ global: { tactics: { n: 2 } }, cwd: { tactics: { n: 2 } } }, { by, id: "two", at: "2026-12-01T00:00:01.000Z" });
			return load();
		};
		assert.deepEqual(await pair(reader), [2, 2], "not Global before and CWD after the transition");
		assert.ok(interleaved >= 2, "the read was made again");
	});

	it("a reader never sees half of another process's transitions while it commits hundreds of them", async (t) => {
		const d = dirs(t);
		const reader = openStoresAt(d);
		const child = runChild("pair-child", [d.agentDir, d.cwd, "200"]);
		await child.ready;
		let reads = 0;
		let ended = false;
		// Ends with the child, also when it fails or runs late (`await child.done` below reports it).
		void child.done.finally(() => (ended = true)).catch(() => undefined);
		const seen = new Set<unknown>();
		while (!ended) {
			const [g, c] = await pair(reader);
			assert.equal(g, c, `read ${reads}: Global at ${String(g)}, CWD at ${String(c)}`);
			seen.add(g);
			// Let the child's exit reach this loop (its reads of cached stores answer without I/O waits).
			if (++reads % 20 === 0) await new Promise((r) => setImmediate(r));
		}
		const res = await child.done;
		assert.equal(res.code, 0, res.stderr);
		assert.deepEqual(await pair(reader), [200, 200]);
		assert.ok(seen.size >= 2, `the reads overlapped the commits (${seen.size} distinct in ${reads} reads)`);
	});
});
