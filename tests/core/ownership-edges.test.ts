/**
 * Ownership edges the cascade law of ownership.test.ts leaves open: the exact shape of a drop
 * patch (what it leaves alone), which references own nothing (index segments), what
 * `ownedEntries` lists, the order of a full dangling scan, and that deleting an intent that
 * does not exist stays as cheap as an ordinary write.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findDanglingRefs, ownedEntries, planCascades } from "../../lib/core/ownership.js";
import { emptyState } from "../../lib/core/state.js";
import type { JsonObject, OwnerState } from "../../lib/core/types.js";

function state(parts: Partial<OwnerState>): OwnerState {
	return { ...emptyState(), ...parts };
}

describe("drop patches", () => {
	it("name only the members that change: arrays and objects without a dangling ref are not resent", () => {
		const s = state({
			intents: {
				m: {
					owns: [{ $ref: "cwd.tactics.gone" }, "kept"],
					list: [1, [2], { $ref: "cwd.tactics.here" }],
					meta: { x: 1, inner: { y: [3] } },
					steps: { first: { $ref: "cwd.tactics.gone" }, second: "s" },
					note: "n",
				},
			},
			tactics: { gone: 1, here: 2 },
		});
		const r = planCascades("cwd", s, { tactics: { gone: null } });
		assert.deepEqual(r.danglingRefs, [{ owner: "cwd", intent: "m", ref: "cwd.tactics.gone", drop: { owns: ["kept"], steps: { first: null } } }]);
	});

	it("an intent whose value is an array gets no drop patch (a merge patch cannot name its items)", () => {
		const s = state({ intents: { list: [{ $ref: "cwd.tactics.gone" }, "other"] }, tactics: { gone: 1 } });
		const r = planCascades("cwd", s, { tactics: { gone: null } });
		assert.deepEqual(r.danglingRefs, [{ owner: "cwd", intent: "list", ref: "cwd.tactics.gone" }]);
	});
});

describe("what an intent owns", () => {
	it("ownedEntries lists same-owner tactics and lazy entries in document order, nothing else", () => {
		const value = {
			b: { $ref: "cwd.lazy.plan" },
			a: [{ $ref: "cwd.tactics.build" }, { $ref: "cwd.strategy.s" }, { $ref: "global.tactics.g" }],
			c: { deep: { $ref: 'cwd.tactics["x y"].sub[0]' } },
		};
		assert.deepEqual(ownedEntries(value, "cwd"), [
			{ plane: "lazy", key: "plan" },
			{ plane: "tactics", key: "build" },
			{ plane: "tactics", key: "x y" },
		]);
		assert.deepEqual(ownedEntries(value, "global"), [{ plane: "tactics", key: "g" }]);
		assert.deepEqual(ownedEntries("cwd.tactics.build", "cwd"), []);
	});

	it("a ref whose first segment is an index owns nothing, even where an entry has that key", () => {
		// `cwd.tactics[0]` indexes the plane as an array: it names no entry, so neither `0` nor `undefined`.
		const s = state({
			intents: { i: { $ref: "cwd.tactics[0]" }, j: { $ref: "cwd.lazy" } },
			tactics: { "0": "zero", undefined: "u" },
			lazy: { undefined: "u" },
		});
		assert.deepEqual(ownedEntries(s.intents.i as JsonObject, "cwd"), []);
		const r = planCascades("cwd", s, { intents: { i: null, j: null } });
		assert.deepEqual(r.cascades, []);
		assert.deepEqual(r.extraDeletions, {});
	});
});

describe("findDanglingRefs", () => {
	it("lists intents in key order, whatever order they were stored in", () => {
		const s = state({
			intents: { zeta: { $ref: "cwd.tactics.gone" }, alpha: [{ $ref: "cwd.lazy.gone" }], mid: { $ref: "cwd.tactics.here" } },
			tactics: { here: 1 },
		});
		assert.deepEqual(findDanglingRefs("cwd", s), [
			{ owner: "cwd", intent: "alpha", ref: "cwd.lazy.gone" },
			{ owner: "cwd", intent: "zeta", ref: "cwd.tactics.gone" },
		]);
	});
});

describe("cost of deleting an intent that does not exist", () => {
	it("reads no other intent: nothing is deleted, so only the written intent is checked", () => {
		const intents = new Proxy({ big: { $ref: "cwd.tactics.missing" } } as JsonObject, {
			get(t, prop) {
				if (prop === "big") throw new Error("an unwritten intent's value was read");
				return Reflect.get(t, prop);
			},
		});
		const s = { ...emptyState(), intents, tactics: { here: 1 } };
		const r = planCascades("cwd", s, { intents: { absent: null, mine: { $ref: "cwd.tactics.here" } } });
		assert.deepEqual(r, { cascades: [], extraDeletions: {}, danglingRefs: [] });
	});
});
