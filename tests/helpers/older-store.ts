/**
 * A CWD store written straight into `<folder>/.pi/state-flow`, as an older build kept it (or as a
 * repository's author writes one to commit): one transition per patch, each adding new keys.
 */
import assert from "node:assert/strict";
import type { PlanePatch } from "../../lib/core/types.js";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { storeInRoot } from "../../lib/storage/project/project.js";

const by = { kind: "system", reason: "older build" } as const;

export async function storeAt(folder: string, patches: readonly PlanePatch[], idPrefix = "older"): Promise<void> {
	const store = new FileOwnerStore({ owner: "cwd", root: storeInRoot(folder), retention: 20, gitignore: true });
	for (const [i, patch] of patches.entries()) {
		const undo = Object.fromEntries(Object.entries(patch).map(([plane, keys]) => [plane, Object.fromEntries(Object.keys(keys ?? {}).map((k) => [k, null]))]));
		const record = { id: `${idPrefix}-${i + 1}`, seq: i + 1, at: "2026-01-01T00:00:00.000Z", by, patch, undo, cascades: [], owners: ["cwd" as const] };
		assert.equal((await store.commit(record, i)).kind, "committed");
	}
}
