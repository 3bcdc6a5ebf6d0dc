/** Journals as a writer that died at the commit point leaves them, for recovery and doctor tests. */
import assert from "node:assert/strict";
import { stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Owner, OwnerHistory, TransitionRecord } from "../../lib/core/types.js";
import type { JournalPart } from "../../lib/storage/format.js";
import { JournalDir } from "../../lib/storage/file/journal.js";
import type { Stores } from "../../lib/storage/stores.js";

const by = { kind: "system", reason: "test" } as const;

/** Stage a transition on the stores' current histories and write only its journal into `journalDir`. */
export async function leaveJournal(stores: Stores, journalDir: string, patch: CanonicalPatch, id: string, sessionId?: string): Promise<void> {
	const owners = Object.keys(patch) as Owner[];
	const histories: Partial<Record<Owner, OwnerHistory>> = {};
	for (const o of owners) histories[o] = await stores.load(o);
	const result = stage(histories, patch, { id, at: "2026-11-30T00:00:00.000Z", by });
	assert.equal(result.noop, false);
	if (result.noop) return;
	const roots = stores.identity();
	const parts: JournalPart[] = owners.map((o) => {
		const record = result.records[o] as TransitionRecord;
		if (o === "session") return { owner: o, sessionId: sessionId as string, persistent: true, record };
		return { owner: o, root: o === "global" ? roots.globalRoot : roots.cwdRoot, record };
	});
	new JournalDir(journalDir).write({ id, parts });
}
