/**
 * The owner state value (core/state.ts): a fresh state, when one is empty (only the five planes
 * count), and its size as the size limit counts it (the planes in order, `roots` once written).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ROOTS_MEMBER_BYTES, emptyState, isEmptyState, stateBytes } from "../../lib/core/state.js";

describe("owner state", () => {
	it("a fresh state has the five planes, empty, in order", () => {
		assert.deepEqual(Object.keys(emptyState()), ["intents", "strategy", "tactics", "artifacts", "lazy"]);
		assert.equal(isEmptyState(emptyState()), true);
	});

	it("is empty only while no plane has an entry; `roots` does not count", () => {
		for (const plane of ["intents", "strategy", "tactics", "artifacts", "lazy"] as const) {
			assert.equal(isEmptyState({ ...emptyState(), [plane]: { k: 1 } }), false, plane);
		}
		assert.equal(isEmptyState({ ...emptyState(), roots: { todos: {} } }), true);
	});

	it("counts the planes in order, then `roots` once written", () => {
		const s = { ...emptyState(), tactics: { a: 1 } };
		assert.equal(stateBytes(s), JSON.stringify({ intents: {}, strategy: {}, tactics: { a: 1 }, artifacts: {}, lazy: {} }).length);
		assert.equal(stateBytes({ ...s, roots: {} }), stateBytes(s) + ROOTS_MEMBER_BYTES);
	});
});
