/**
 * RFC 7386 merge over owner state: the RFC's appendix examples, in-place application,
 * the dry-run plan (changed pointers, missing deletions, undo, exact size delta), and
 * `mergeDiff` as a law: applying it to one value yields exactly the other.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { cloneJson, jsonEqual } from "../../lib/core/json.js";
import { applyMergePatch, applyPatch, mergeDiff, planPatch } from "../../lib/core/merge.js";
import { emptyState, stateBytes } from "../../lib/core/state.js";
import { checkPlan } from "../helpers/plan-check.js";
import type { Json, JsonObject, OwnerState, PlanePatch } from "../../lib/core/types.js";

// RFC 7386 Appendix A: [original, patch, result].
const RFC_EXAMPLES: Array<[Json, Json, Json]> = [
	[{ a: "b" }, { a: "c" }, { a: "c" }],
	[{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
	[{ a: "b" }, { a: null }, {}],
	[{ a: "b", b: "c" }, { a: null }, { b: "c" }],
	[{ a: ["b"] }, { a: "c" }, { a: "c" }],
	[{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
	[{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
	[{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
	[
		["a", "b"],
		["c", "d"],
		["c", "d"],
	],
	[{ a: "b" }, ["c"], ["c"]],
	[{ a: "foo" }, null, null],
	[{ a: "foo" }, "bar", "bar"],
	[{ e: null }, { a: 1 }, { e: null, a: 1 }],
	[[1, 2], { a: "b", c: null }, { a: "b" }],
	[{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

function stateWith(plane: JsonObject): OwnerState {
	const s = emptyState();
	s.tactics = cloneJson(plane);
	return s;
}

describe("applyMergePatch (RFC 7386 appendix)", () => {
	for (const [i, [target, patch, result]] of RFC_EXAMPLES.entries()) {
		it(`example ${i + 1}: ${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
			const t = cloneJson(target);
			assert.deepEqual(applyMergePatch(t, patch), result);
			assert.deepEqual(t, target, "the target is not mutated");
		});
	}

	it("returns values that share nothing with the patch", () => {
		const patch = { a: { b: [1] } };
		const out = applyMergePatch(undefined, patch) as { a: { b: number[] } };
		out.a.b.push(2);
		assert.deepEqual(patch, { a: { b: [1] } });
	});
});

describe("applyPatch on owner state", () => {
	it("merges per plane in place; objects recurse, arrays replace, null deletes", () => {
		const s = emptyState();
		applyPatch(s, { intents: { goal: { text: "ship", tags: ["a", "b"] } }, tactics: { step1: true } });
		applyPatch(s, { intents: { goal: { tags: ["c"], status: "open" } }, tactics: { step1: null, step2: 1 } });
		assert.deepEqual(s, {
			intents: { goal: { text: "ship", tags: ["c"], status: "open" } },
			strategy: {},
			tactics: { step2: 1 },
			artifacts: {},
			lazy: {},
		});
	});

	it("creates nested objects and drops nulls inside new objects", () => {
		const s = emptyState();
		applyPatch(s, { lazy: { a: { b: { c: 1, gone: null } } } });
		assert.deepEqual(s.lazy, { a: { b: { c: 1 } } });
	});

	it("does not share structure with the patch", () => {
		const s = emptyState();
		const patch = { tactics: { list: [{ x: 1 }] } };
		applyPatch(s, patch);
		(patch.tactics.list[0] as { x: number }).x = 2;
		assert.deepEqual(s.tactics, { list: [{ x: 1 }] });
	});

	it("is idempotent", () => {
		const s = stateWith({ a: { b: 1 }, c: [1] });
		const patch = { tactics: { a: { b: null, d: 2 }, c: null, e: { f: {} } } };
		applyPatch(s, patch);
		const once = cloneJson(s as unknown as JsonObject);
		applyPatch(s, patch);
		assert.deepEqual(s, once);
	});
});

describe("planPatch", () => {
	it("reports the deepest changed keys as canonical pointers", () => {
		const s = stateWith({ step1: { done: false, title: "x" }, old: 1 });
		const plan = checkPlan(s, { tactics: { step1: { done: true, title: "x" }, old: null, "new/one": { a: 1 } } });
		assert.deepEqual(plan.changed, ["/cwd/tactics/step1/done", "/cwd/tactics/old", "/cwd/tactics/new~1one"]);
		assert.equal(plan.noop, false);
	});

	it("reports missing deletions as escaped pointers and is a no-op when nothing else changes", () => {
		const s = stateWith({ keep: 1 });
		const plan = checkPlan(s, { tactics: { "a~b/c": null, nested: { x: null } }, lazy: { gone: null } });
		assert.deepEqual(plan.missingDeletions, ["/cwd/tactics/a~0b~1c", "/cwd/tactics/nested/x", "/cwd/lazy/gone"]);
		// `nested` did not exist, so the patch creates it as `{}`: that is a change.
		assert.deepEqual(plan.changed, ["/cwd/tactics/nested"]);
		const only = checkPlan(s, { tactics: { absent: null } });
		assert.equal(only.noop, true);
		assert.deepEqual(only.missingDeletions, ["/cwd/tactics/absent"]);
	});

	it("treats an empty plane object as a no-op", () => {
		const plan = checkPlan(stateWith({ a: 1 }), { tactics: {}, intents: {} });
		assert.equal(plan.noop, true);
		assert.deepEqual(plan.changed, []);
		assert.deepEqual(plan.undo, {});
		assert.equal(plan.bytesDelta, 0);
	});

	it("detects no-ops: equal scalars, equal arrays, equal nested objects", () => {
		const s = stateWith({ a: 1, b: [1, { c: 2 }], d: { e: { f: "g" } } });
		const plan = checkPlan(s, { tactics: { a: 1, b: [1, { c: 2 }], d: { e: { f: "g" } } } });
		assert.equal(plan.noop, true);
		assert.deepEqual(plan.undo, {});
	});

	it("replacing an object by a scalar and back is exact", () => {
		const s = stateWith({ a: { b: { c: [1, null] } }, n: 5 });
		const p1 = checkPlan(s, { tactics: { a: "flat", n: { now: "object" } } });
		assert.deepEqual(p1.undo, { tactics: { a: { b: { c: [1, null] } }, n: 5 } });
		assert.deepEqual(p1.changed, ["/cwd/tactics/a", "/cwd/tactics/n"]);
	});

	it("computes exact bytes when a plane goes empty and non-empty", () => {
		checkPlan(stateWith({ only: 1 }), { tactics: { only: null } });
		checkPlan(stateWith({ a: 1, b: 2 }), { tactics: { a: null, b: null, c: 3 } });
		checkPlan(stateWith({ a: 1, b: 2 }), { tactics: { a: null, b: null } });
		checkPlan(emptyState(), { tactics: { a: 1, b: { c: {} } }, lazy: { "é😀": "😀" } });
		checkPlan(stateWith({ a: { x: 1 } }), { tactics: { a: { x: null, y: 2 } } });
		checkPlan(stateWith({ a: { x: 1 } }), { tactics: { a: { x: null } } });
	});

	it("stays exact across many in-place writes to the same objects (maintained key counts)", () => {
		const s = emptyState();
		let bytes = stateBytes(s);
		const patches: PlanePatch[] = [
			{ tactics: { a: 1 } },
			{ tactics: { b: { x: 1 } } },
			{ tactics: { a: null, b: { x: null } } },
			{ tactics: { b: null } },
			{ tactics: { c: 1, d: 2 } },
			{ tactics: { c: null, d: null, e: { f: { g: 1 } } } },
			{ tactics: { e: { f: { g: null, h: 2 } } } },
		];
		for (const p of patches) {
			bytes += planPatch("cwd", s, p).bytesDelta;
			applyPatch(s, p);
			assert.equal(bytes, stateBytes(s), JSON.stringify(p));
		}
	});

	it("does not mutate the state or the patch", () => {
		const s = stateWith({ a: { b: 1 } });
		const before = JSON.stringify(s);
		const patch = { tactics: { a: { b: null, c: 2 } } };
		planPatch("cwd", s, patch);
		assert.equal(JSON.stringify(s), before);
		assert.deepEqual(patch, { tactics: { a: { b: null, c: 2 } } });
	});

	it("includes the owner in pointers", () => {
		const plan = planPatch("global", emptyState(), { strategy: { x: 1 } });
		assert.deepEqual(plan.changed, ["/global/strategy/x"]);
	});
});

// JSON objects without null members (what stored state can hold), keys including odd ones.
const key = fc.oneof(fc.constantFrom("a", "b", "__proto__", "constructor", "a.b", "x/y", "~0", ""), fc.string({ maxLength: 3 }));
const leaf = fc.oneof(fc.boolean(), fc.integer(), fc.string({ maxLength: 4 }), fc.array(fc.oneof(fc.constant(null), fc.integer()), { maxLength: 2 }));
const { obj } = fc.letrec<{ obj: JsonObject; value: Json }>((tie) => ({
	obj: fc.dictionary(key, tie("value"), { maxKeys: 4 }) as fc.Arbitrary<JsonObject>,
	value: fc.oneof({ depthSize: "small" }, leaf, tie("obj")) as fc.Arbitrary<Json>,
}));

describe("mergeDiff", () => {
	it("turns any state into any other: applyMergePatch(from, mergeDiff(from, to)) equals to", () => {
		assertProperty(
			fc.property(obj, obj, (from, to) => {
				const fromCopy = JSON.parse(JSON.stringify(from)) as JsonObject;
				const after = applyMergePatch(from, mergeDiff(from, to));
				assert.ok(jsonEqual(after, to), `${JSON.stringify(after)} != ${JSON.stringify(to)}`);
				assert.ok(jsonEqual(from, fromCopy), "inputs are not mutated");
			}),
			{ numRuns: 300 },
		);
	});

	it("is empty exactly when the objects are equal", () => {
		assertProperty(
			fc.property(obj, obj, (a, b) => {
				assert.equal(Object.keys(mergeDiff(a, b)).length === 0, jsonEqual(a, b));
				assert.equal(Object.keys(mergeDiff(a, a)).length, 0);
			}),
			{ numRuns: 200 },
		);
	});

	it("keeps __proto__ as an ordinary key and never touches Object.prototype", () => {
		const to = JSON.parse('{"__proto__":{"polluted":true}}') as JsonObject;
		const d = mergeDiff({}, to);
		assert.deepEqual(Object.keys(d), ["__proto__"]);
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
	});
});
