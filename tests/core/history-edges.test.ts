/**
 * History edges the other history tests leave open: the held-id index (`transitionIn`) after a
 * tail that repeats an id loses its first copy to a fold, or grows without `commitRecord`; and
 * temporal reads of an array item through transitions that left the array alone.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { commitRecord, fold, historyFrom, historyOf, newHistory, transitionIn, valueAt } from "../../lib/core/history.js";
import { emptyState } from "../../lib/core/state.js";
import type { OwnerHistory, TransitionRecord } from "../../lib/core/types.js";
import { commitOn, recordOn } from "../helpers/history.js";

/** `h` with three transitions of these ids, committed one by one. */
function withIds(ids: readonly string[]): OwnerHistory {
	const h = newHistory("cwd", 10);
	for (const id of ids) commitRecord(h, recordOn(h, { tactics: { [`k${h.seq}`]: h.seq } }, id));
	return h;
}

describe("transitionIn after a repeated id", () => {
	it("finds the later copy once a fold took the first one", () => {
		// A hand-edited log may repeat an id; the index keeps the first copy, a fold then drops it.
		const h = withIds(["x1", "x1", "x3"]);
		assert.equal(transitionIn(h, "x1")?.seq, 1);
		fold(h, 2);
		assert.equal(transitionIn(h, "x1")?.seq, 2);
		assert.equal(transitionIn(h, "x3")?.seq, 3);
	});

	it("is the same on a history rebuilt from records that repeat an id and fold on load", () => {
		const built = withIds(["a", "a", "b", "c"]);
		const h = historyFrom("cwd", emptyState(), 0, built.tail, 10);
		assert.equal(transitionIn(h, "a")?.seq, 1);
		fold(h, 3);
		assert.equal(transitionIn(h, "a")?.seq, 2);
		fold(h, 2);
		assert.equal(transitionIn(h, "a"), undefined);
		assert.equal(transitionIn(h, "c")?.seq, 4);
	});
});

describe("transitionIn after a tail changed in place", () => {
	it("sees a record pushed onto the same array without a commit", () => {
		const h = withIds(["t1", "t2"]);
		assert.equal(transitionIn(h, "t3"), undefined);
		const extra: TransitionRecord = { ...recordOn(h, { tactics: { z: 1 } }, "t3") };
		h.tail.push(extra);
		assert.equal(transitionIn(h, "t3"), extra);
	});
});

describe("temporal reads of an array item", () => {
	it("read through transitions that did not touch the array, the item is as it was", () => {
		const h = newHistory("cwd", 10);
		commitOn(h, { tactics: { items: ["a", "b"] } });
		commitOn(h, { tactics: { items: ["a", "b", "c"] } });
		commitOn(h, { tactics: { other: 1 } });
		commitOn(h, { strategy: { s: 1 } });
		assert.equal(valueAt(h, 1, ["tactics", "items", 2]), "c");
		assert.equal(valueAt(h, 2, ["tactics", "items", 2]), "c");
		assert.equal(valueAt(h, 3, ["tactics", "items", 2]), undefined);
		assert.equal(valueAt(h, 3, ["tactics", "items", 1]), "b");
		assert.deepEqual(
			historyOf(h, ["tactics", "items", 2]).map((e) => [e.id, e.before, e.after]),
			[["t2", null, "c"]],
		);
	});
});
