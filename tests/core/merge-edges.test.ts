/**
 * Merge plans at their edges: missing deletions inside created values (never inside arrays),
 * roots whose patch changes nothing leave no undo and no size, damaged non-object roots are sized
 * exactly, and the leaves of a patch name each set or deleted key once.
 * (Written against the survivors of the mutation run on `lib/core/merge.ts`, docs/decisions.md.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { patchLeaves, planPatch } from "../../lib/core/merge.js";
import { emptyState } from "../../lib/core/state.js";
import { checkPlan } from "../helpers/plan-check.js";
import type { JsonObject } from "../../lib/core/types.js";

describe("missing deletions inside a created value", () => {
	it("are the nulls of nested objects, at any depth, and never an array's elements", () => {
		assert.deepEqual(planPatch("cwd", emptyState(), { tactics: { a: { b: 1, c: null, d: { e: null, f: 2 } } } }).missingDeletions, [
			"/cwd/tactics/a/c",
			"/cwd/tactics/a/d/e",
		]);
		assert.deepEqual(planPatch("cwd", emptyState(), { tactics: { a: [null, 1], s: "ab" } }).missingDeletions, []);
	});
});

describe("roots", () => {
	const withRoots = (roots: JsonObject) => ({ ...emptyState(), roots });

	it("a root patch that changes nothing leaves no undo and no size", () => {
		const plan = planPatch("cwd", withRoots({ todos: { a: 1 } }), { roots: { todos: { a: 1 } } });
		assert.deepEqual([plan.noop, plan.undo, plan.bytesDelta], [true, {}, 0]);
		const none = planPatch("cwd", emptyState(), { roots: { todos: null } });
		assert.deepEqual([none.noop, none.bytesDelta, none.missingDeletions], [true, 0, ["/cwd/roots/todos"]]);
	});

	it("a damaged non-object root replaced by an object, or a root set to a non-object, is sized exactly", () => {
		assert.deepEqual(checkPlan(withRoots({ todos: "damaged", other: {} }), { roots: { todos: { a: 1 } } }).changed, ["/cwd/roots/todos/a"]);
		assert.deepEqual(checkPlan(withRoots({ other: {} }), { roots: { todos: 5 } as unknown as JsonObject }).changed, ["/cwd/roots/todos"]);
		checkPlan(withRoots({ todos: "damaged" }), { roots: { todos: 7 } as unknown as JsonObject });
	});
});

describe("patchLeaves", () => {
	it("names each set or deleted key once, an empty object as a leaf, and nothing for an empty plane", () => {
		assert.deepEqual(patchLeaves({ tactics: { a: null, b: { c: 1, d: {} } }, lazy: {}, roots: { todos: { x: null } } }), [
			{ plane: "tactics", path: ["a"], deleted: true },
			{ plane: "tactics", path: ["b", "c"], deleted: false },
			{ plane: "tactics", path: ["b", "d"], deleted: false },
			{ plane: "roots", path: ["todos", "x"], deleted: true },
		]);
	});
});
