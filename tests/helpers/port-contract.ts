/**
 * The owner-store port's contract (lib/storage/port.ts), one suite for every backend: the file
 * and Session stores run it in tests/storage/port.test.ts, the PostgreSQL store in
 * tests/pg/owner-store.test.ts (it needs a server). Each commits at an expected seq, refuses a
 * stale one as a conflict without writing, is idempotent by transition id, refuses a record
 * whose seq does not follow the expected one with the same error, and reports status.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isStateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory, PlanePatch, TransitionRecord } from "../../lib/core/types.js";
import type { OwnerStore } from "../../lib/storage/port.js";

const by = { kind: "system", reason: "port-test" } as const;

export function recordFor(store: OwnerStore, h: OwnerHistory, patch: PlanePatch, id: string): TransitionRecord {
	const r = stage({ [store.owner]: h }, { [store.owner]: patch }, { id, at: "2026-12-01T00:00:00.000Z", by });
	assert.equal(r.noop, false);
	return r.records[store.owner] as TransitionRecord;
}

export interface PortImpl {
	name: string;
	/** A fresh store, a second reader of the same storage, and what is stored (to prove nothing was written). */
	open(dir: string): { store: OwnerStore; reader: () => OwnerStore; bytes: () => Promise<string> | string };
	/** A fresh folder for one case. */
	dir(t: { after(fn: () => void): void }): string;
}

export function portContract(impl: PortImpl): void {
	describe(`owner-store port: ${impl.name}`, () => {
		it("commits at the expected seq; a stale seq is a conflict and writes nothing; a repeated id is `already`", async (t) => {
			const { store, reader, bytes } = impl.open(impl.dir(t));
			const empty = await store.load();
			assert.equal(empty.seq, 0);
			const first = recordFor(store, empty, { tactics: { a: 1 } }, "t1");
			assert.deepEqual(await store.commit(first, 0), { kind: "committed", seq: 1 });
			assert.equal((await store.load()).seq, 1, "the commit is applied to the store's own history");
			assert.equal((await reader().load()).state.tactics.a, 1, "another reader sees it");
			const before = await bytes();
			// Staged on the state before t1 (the loaded history is the store's own, already past it).
			const stale = recordFor(store, newHistory(store.owner, 20), { tactics: { b: 2 } }, "t2");
			assert.deepEqual(await store.commit(stale, 0), { kind: "conflict", seq: 1 });
			assert.deepEqual(await store.commit(first, 0), { kind: "already", seq: 1 });
			assert.equal(await bytes(), before, "neither a conflict nor a retry writes anything");
			assert.equal(await store.committedSeq("t1"), 1);
			assert.equal(await store.committedSeq("t2"), undefined);
			const status = await store.status();
			assert.deepEqual([status.exists, status.seq, status.retained, status.error], [true, 1, 1, undefined]);
			assert.equal(status.bytes, (await store.load()).bytes);
			await store.close();
			assert.equal((await store.load()).seq, 1, "a closed store reopens");
		});

		it("a record whose seq does not follow the expected seq is refused as invalid input naming `seq`, and nothing is written", async (t) => {
			const { store, bytes } = impl.open(impl.dir(t));
			const first = recordFor(store, await store.load(), { tactics: { a: 1 } }, "s1");
			assert.deepEqual(await store.commit(first, 0), { kind: "committed", seq: 1 });
			const before = await bytes();
			const next = recordFor(store, await store.load(), { tactics: { a: 2 } }, "s2");
			// At the owner's seq (1) but numbered 3; at an outdated seq (0) but numbered 2; and a retry of s1 claimed at seq 1.
			for (const [record, expected] of [
				[{ ...next, seq: 3 }, 1],
				[next, 0],
				[first, 1],
			] as const) {
				await assert.rejects(store.commit(record, expected), (e: unknown) => {
					assert.ok(isStateError(e), String(e));
					assert.equal(e.code, "invalid_input", e.message);
					assert.deepEqual(e.path, ["seq"]);
					assert.match(e.message, new RegExp(`has seq ${record.seq}, but a commit at seq ${expected} needs seq ${expected + 1}`));
					return true;
				});
			}
			assert.equal(await bytes(), before, "a refused record writes nothing");
			assert.equal((await store.load()).seq, 1);
		});
	});
}
