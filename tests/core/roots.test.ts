/**
 * The roots namespace of registered external roots (docs/spec.md §12) in the pure engine:
 * merge plans report changes inside a root, keep the size delta exact and undo exactly;
 * staging asks the gate about every root and refuses roots without one.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { cloneJson } from "../../lib/core/json.js";
import { applyPatch, planPatch } from "../../lib/core/merge.js";
import { parseLocator, formatModelLocator } from "../../lib/core/locator.js";
import { newHistory } from "../../lib/core/history.js";
import { stage } from "../../lib/core/stage.js";
import { emptyState, stateBytes } from "../../lib/core/state.js";
import type { Json, JsonObject, OwnerState, RootGate } from "../../lib/core/types.js";

const key = fc.constantFrom("a", "b", "c", "todos", "x y");
const leaf: fc.Arbitrary<Json> = fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.boolean());
const value: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
	v: fc.oneof({ depthSize: "small" }, leaf, fc.dictionary(key, tie("v"), { maxKeys: 3 })),
})).v;
const patchValue: fc.Arbitrary<Json> = fc.oneof(fc.constant(null), value);
const rootValue = fc.dictionary(key, value, { maxKeys: 3 });
const rootsArb = fc.dictionary(fc.constantFrom("todos", "board", "x"), rootValue, { maxKeys: 3 });
const rootsPatch = fc.dictionary(fc.constantFrom("todos", "board", "x"), fc.oneof(fc.constant(null), fc.dictionary(key, patchValue, { maxKeys: 3 })), {
	minKeys: 1,
	maxKeys: 3,
});

function withRoots(roots: JsonObject | undefined): OwnerState {
	const s = emptyState();
	s.tactics = { t: 1 };
	if (roots !== undefined) s.roots = cloneJson(roots) as JsonObject;
	return s;
}

describe("roots in merge plans", () => {
	it("size delta is exact and undo restores the state (namespace present)", () => {
		assertProperty(
			fc.property(rootsArb, rootsPatch, (roots, patch) => {
				const before = withRoots(roots);
				const plan = planPatch("cwd", before, { roots: patch, tactics: { t: 2 } });
				const after = cloneJson(before as unknown as JsonObject) as unknown as OwnerState;
				applyPatch(after, { roots: patch, tactics: { t: 2 } });
				assert.equal(plan.bytesDelta, stateBytes(after) - stateBytes(before));
				applyPatch(after, plan.undo);
				assert.deepEqual(after, before);
			}),
		);
	});

	it("size delta is exact when the namespace is created", () => {
		assertProperty(
			fc.property(rootsPatch, (patch) => {
				const before = withRoots(undefined);
				const plan = planPatch("cwd", before, { roots: patch, tactics: { t: 2 } });
				const after = cloneJson(before as unknown as JsonObject) as unknown as OwnerState;
				applyPatch(after, { roots: patch, tactics: { t: 2 } });
				assert.equal(plan.bytesDelta, stateBytes(after) - stateBytes(before));
			}),
		);
	});

	it("reports changes inside a root, like a plane", () => {
		const plan = planPatch("cwd", withRoots(undefined), { roots: { todos: { milk: { text: "buy" } } } });
		assert.deepEqual(plan.changed, ["/cwd/roots/todos/milk"]);
		assert.deepEqual(plan.undo, { roots: { todos: null } });
	});
});

describe("roots in staging and locators", () => {
	const gateSeen: Array<[string, string, Json]> = [];
	const gate: RootGate = (owner, name, v, path) => {
		gateSeen.push([owner, name, v]);
		if (name !== "todos") throw Object.assign(new Error(`\`${path.join(".")}\` not registered`), { code: "invalid_input" });
	};

	it("asks the gate with the value after the patch; refuses roots without a gate", () => {
		const h = newHistory("cwd", 20);
		h.state.roots = { todos: { a: { text: "x" } } };
		const r = stage(
			{ cwd: h },
			{ cwd: { roots: { todos: { b: { text: "y" } } } } },
			{ id: "1", at: "t", by: { kind: "extension", extension: "todo" }, roots: gate },
		);
		assert.equal(r.noop, false);
		assert.deepEqual(gateSeen.at(-1), ["cwd", "todos", { a: { text: "x" }, b: { text: "y" } }]);
		assert.throws(
			() => stage({ cwd: h }, { cwd: { roots: { board: { a: 1 } } } }, { id: "2", at: "t", by: { kind: "system", reason: "t" }, roots: gate }),
			/not registered/,
		);
		assert.throws(
			() => stage({ cwd: h }, { cwd: { roots: { todos: { a: 1 } } } }, { id: "3", at: "t", by: { kind: "system", reason: "t" } }),
			/only State Flow inside pi/,
		);
	});

	it("parses registered roots beside the planes and prints them back", () => {
		const flat = parseLocator("todos.a.text", "flat", ["todos"]);
		assert.deepEqual(flat, { kind: "state", scope: null, offset: 0, plane: "roots", path: ["todos", "a", "text"] });
		assert.equal(formatModelLocator({ ...flat, scope: "cwd" } as typeof flat), "cwd.todos.a.text");
		assert.deepEqual(parseLocator("cwd.roots.todos", "canonical"), { kind: "state", scope: "cwd", offset: 0, plane: "roots", path: ["todos"] });
		assert.throws(() => parseLocator("todos", "flat"), /unknown plane `todos`/);
		assert.throws(() => parseLocator("cwd.roots", "scoped", ["todos"]), /unknown plane `roots`/);
	});
});
