/**
 * Root data on real files (docs/spec.md §12): records and checkpoints carrying the `roots`
 * namespace pass the format's validation and integrity checks, survive compaction and a
 * reload by a process that has no gate (a State Flow without the extension: dormant), and
 * are never rewritten by writes to the planes.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RootGate } from "../../lib/core/types.js";
import { tempDir } from "../helpers/temp-dir.js";

const at = "2026-11-30T00:00:00.000Z";
const gate: RootGate = () => undefined;

describe("root data in the file stores", () => {
	it("round-trips through records, compaction and reload; plane writes without a gate leave it untouched", async (t) => {
		const dir = tempDir(t);
		const open = () => openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 1 });
		const s = open();
		for (let i = 0; i < 4; i++) {
			await s.commit(
				{ cwd: { roots: { todos: { [`k${i}`]: { text: `t${i}` } } } } },
				{ by: { kind: "extension", extension: "todo" }, id: `r${i}`, at, roots: gate },
			);
		}
		const stored = (await s.load("cwd")).state.roots;
		assert.deepEqual(Object.keys((stored?.todos ?? {}) as object), ["k0", "k1", "k2", "k3"]);
		// A process without the extension (no gate): reads it, writes planes, cannot write the root.
		const other = open();
		assert.deepEqual((await other.load("cwd")).state.roots, stored);
		await other.commit({ cwd: { tactics: { next: "x" } } }, { by: { kind: "system", reason: "t" }, id: "p1", at });
		await assert.rejects(other.commit({ cwd: { roots: { todos: { k0: null } } } }, { by: { kind: "system", reason: "t" }, id: "p2", at }), /registered root/);
		const third = open();
		const h = await third.load("cwd");
		assert.deepEqual(h.state.roots, stored);
		assert.equal(h.state.tactics.next, "x");
		assert.equal(h.bytes, JSON.stringify(h.state).length);
	});
});
