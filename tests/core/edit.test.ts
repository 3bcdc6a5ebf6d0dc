/**
 * Hand edits (`core/edit.ts`): the patch of a set replaces exactly the value named and a delete
 * removes exactly it (laws over arbitrary states and paths, against a plain model of setting a
 * value at a path); locators that name no current value of one owner, null members and paths
 * through nothing are refused with their locator.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { cascadeTargets, editPatch, parseEditTarget, stillAt, valueAtTarget } from "../../lib/core/edit.js";
import { isStateError, type StateErrorCode } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import { cloneJson, isPlainObject } from "../../lib/core/json.js";
import type { Segment } from "../../lib/core/locator.js";
import { applyPatch } from "../../lib/core/merge.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { emptyState } from "../../lib/core/state.js";
import type { Json, JsonObject, OwnerState } from "../../lib/core/types.js";

/** A value a store can hold: JSON without null object members. */
function stored(v: Json): Json {
	if (Array.isArray(v)) return v.map(stored);
	if (!isPlainObject(v)) return v;
	const out: JsonObject = {};
	for (const [k, child] of Object.entries(v))
		if (child !== null) Object.defineProperty(out, k, { value: stored(child), enumerable: true, writable: true, configurable: true });
	return out;
}

const key = fc.oneof(fc.constantFrom("a", "b", "__proto__", "constructor", "x y"), fc.string({ maxLength: 4 }));
const value = fc.jsonValue({ maxDepth: 3 }).map((v) => stored(v as Json));
const plane = fc.dictionary(key, value, { maxKeys: 5 }).map((d) => stored(d as Json) as JsonObject);

/** Every path to a value below the plane (object keys and array indexes), the plane itself excluded. */
function pathsIn(v: Json, prefix: Segment[] = []): Segment[][] {
	if (Array.isArray(v)) return v.flatMap((c, i) => [[...prefix, i], ...pathsIn(c, [...prefix, i])]);
	if (!isPlainObject(v)) return [];
	return Object.keys(v).flatMap((k) => [[...prefix, k], ...pathsIn(v[k] as Json, [...prefix, k])]);
}

/** The model: `root` with `next` at `path` (undefined: removed), by plain copying. */
function modelSet(root: Json, path: readonly Segment[], next: Json | undefined): Json | undefined {
	if (path.length === 0) return next;
	const [head, ...rest] = path as [Segment, ...Segment[]];
	if (typeof head === "number") {
		const copy = (root as Json[]).slice();
		const inner = modelSet(copy[head] as Json, rest, next);
		if (inner === undefined) copy.splice(head, 1);
		else copy[head] = inner;
		return copy;
	}
	const copy = cloneJson(root) as JsonObject;
	const inner = modelSet((root as JsonObject)[head] as Json, rest, next);
	if (inner === undefined) delete copy[head];
	else Object.defineProperty(copy, head, { value: inner, enumerable: true, writable: true, configurable: true });
	return copy;
}

function stateOf(tactics: JsonObject): OwnerState {
	const s = emptyState();
	s.tactics = cloneJson(tactics) as JsonObject;
	s.strategy = { untouched: "yes" };
	return s;
}

const refused = (fn: () => unknown, message: RegExp) => assert.throws(fn, (e: unknown) => isStateError(e) && message.test(e.message));

describe("hand edits: the patch", () => {
	it("a set replaces exactly the value at the path, whole; a delete removes exactly it; nothing else changes", () => {
		assertProperty(
			fc.property(
				plane,
				value.filter((v) => v !== null),
				fc.nat(),
				fc.boolean(),
				(tactics, v, pick, remove) => {
					const paths = pathsIn(tactics);
					fc.pre(paths.length > 0);
					const path = paths[pick % paths.length] as Segment[];
					const target = { owner: "cwd" as const, plane: "tactics" as const, path };
					const state = stateOf(tactics);
					const before = cloneJson(state);
					const op = remove ? ({ kind: "delete" } as const) : ({ kind: "set", value: v } as const);
					const patch = editPatch(state, target, op);
					assert.deepEqual(state, before, "planning never mutates the state");
					applyPatch(state, patch.cwd ?? {});
					assert.deepEqual(state.tactics, modelSet(tactics, path, remove ? undefined : v));
					assert.deepEqual(state.strategy, { untouched: "yes" });
					assert.deepEqual(Object.keys(patch), ["cwd"]);
					assert.deepEqual(Object.keys(patch.cwd ?? {}), ["tactics"]);
					// After a set the value is there (after a delete from an array, the next item moved up).
					if (!remove) assert.equal(stillAt(state, target, v), true);
				},
			),
			{ numRuns: 300 },
		);
	});

	it("a new key is created, and a whole plane is replaced by a set and emptied by a delete", () => {
		const state = stateOf({ a: "x", b: { c: 1 } });
		applyPatch(state, editPatch(state, parseEditTarget("cwd.tactics.next"), { kind: "set", value: "write the parser" }).cwd ?? {});
		assert.deepEqual(state.tactics, { a: "x", b: { c: 1 }, next: "write the parser" });
		applyPatch(state, editPatch(state, parseEditTarget("cwd.tactics"), { kind: "set", value: { only: 1 } }).cwd ?? {});
		assert.deepEqual(state.tactics, { only: 1 });
		applyPatch(state, editPatch(state, parseEditTarget("cwd.tactics"), { kind: "delete" }).cwd ?? {});
		assert.deepEqual(state.tactics, {});
		assert.equal(valueAtTarget(state, parseEditTarget('cwd.tactics["x y"]')), undefined);
	});

	it("refuses what names no current value of one owner, null values and members, and paths through nothing", () => {
		const state = stateOf({ a: "x", list: [1, 2] });
		refused(() => parseEditTarget("effective.tactics.a"), /read-only view of several owners/);
		refused(() => parseEditTarget("cwd[2].tactics.a"), /past state; edit the current one \(`cwd\.tactics\.a`\)/);
		refused(() => parseEditTarget("cwd"), /names a whole owner/);
		refused(() => parseEditTarget("cwd.patches[0]"), /not stored state/);
		refused(() => parseEditTarget("cwd.tactics..a"), /./);
		refused(() => editPatch(state, parseEditTarget("cwd.tactics.nope"), { kind: "delete" }), /nothing at `cwd\.tactics\.nope` to delete/);
		refused(() => editPatch(state, parseEditTarget("cwd.tactics.nope.deeper"), { kind: "set", value: 1 }), /nothing at `cwd\.tactics\.nope`/);
		refused(() => editPatch(state, parseEditTarget("cwd.tactics.a.b"), { kind: "set", value: 1 }), /`cwd\.tactics\.a` is not an object/);
		refused(() => editPatch(state, parseEditTarget("cwd.tactics.list[5]"), { kind: "set", value: 1 }), /has 2 items; `\[5\]` is past its end/);
		refused(() => editPatch(state, parseEditTarget("cwd.tactics.a"), { kind: "set", value: null }), /cannot be set to null/);
		refused(() => editPatch(state, parseEditTarget("cwd.tactics.a"), { kind: "set", value: { k: [{ z: null }] } }), /`cwd\.tactics\.a\.k\[0\]\.z` is null/);
		refused(() => editPatch(state, parseEditTarget("cwd.tactics"), { kind: "set", value: [1] }), /is a plane: its value must be an object/);
		// An index one past the end appends; nulls inside arrays are data.
		applyPatch(state, editPatch(state, parseEditTarget("cwd.tactics.list[2]"), { kind: "set", value: [null] }).cwd ?? {});
		assert.deepEqual(state.tactics.list, [1, 2, [null]]);
	});
});

/** A refusal of exactly this kind: a StateError with `code` and these words, naming no input field (the locator in the words names the place). */
function refusedWith(fn: () => unknown, code: StateErrorCode, message: string): void {
	assert.throws(fn, (e: unknown) => {
		assert.ok(isStateError(e), `a StateError, not ${String(e)}`);
		assert.equal(e.code, code);
		assert.equal(e.message, message);
		assert.deepEqual(e.path, []);
		return true;
	});
}

describe("hand edits: each refusal's kind and words", () => {
	it("a locator that is no current value of one owner is invalid input", () => {
		refusedWith(
			() => parseEditTarget("cwd.patches[0]"),
			"invalid_input",
			"`cwd.patches[0]` is not stored state; name an owner's value, e.g. `cwd.tactics.next`.",
		);
		refusedWith(
			() => parseEditTarget("effective.tactics.a"),
			"invalid_input",
			"`effective.tactics.a` is the read-only view of several owners; name one owner, e.g. `cwd.tactics.next`.",
		);
		refusedWith(() => parseEditTarget("cwd"), "invalid_input", "`cwd` names a whole owner; name a plane or a key, e.g. `cwd.tactics`.");
	});

	it("a value a store cannot hold is invalid input", () => {
		const state = stateOf({ a: "x" });
		refusedWith(
			() => editPatch(state, parseEditTarget("cwd.tactics.a"), { kind: "set", value: null }),
			"invalid_input",
			"`cwd.tactics.a` cannot be set to null (null deletes); use delete to remove it.",
		);
		refusedWith(
			() => editPatch(state, parseEditTarget("cwd.tactics.a"), { kind: "set", value: { k: { z: null } } }),
			"invalid_input",
			"`cwd.tactics.a.k.z` is null: stored objects never hold null members (null deletes); remove the key.",
		);
		refusedWith(
			() => editPatch(state, parseEditTarget("cwd.tactics"), { kind: "set", value: "text" }),
			"invalid_input",
			"`cwd.tactics` is a plane: its value must be an object of entries.",
		);
	});

	it("a path that leads nowhere is not found, and only a delete says it had nothing to delete", () => {
		const state = stateOf({ a: "x", obj: { k: 1 }, list: [1, 2] });
		const set = { kind: "set", value: 1 } as const;
		refusedWith(() => editPatch(state, parseEditTarget("cwd.tactics.nope.deeper"), set), "not_found", "nothing at `cwd.tactics.nope`.");
		refusedWith(() => editPatch(state, parseEditTarget("cwd.tactics.nope"), { kind: "delete" }), "not_found", "nothing at `cwd.tactics.nope` to delete.");
		refusedWith(() => editPatch(state, parseEditTarget("cwd.tactics.list[2]"), { kind: "delete" }), "not_found", "nothing at `cwd.tactics.list[2]` to delete.");
		refusedWith(() => editPatch(state, parseEditTarget("cwd.tactics.list[3]"), set), "not_found", "`cwd.tactics.list` has 2 items; `[3]` is past its end.");
		refusedWith(() => editPatch(state, parseEditTarget("cwd.tactics.a.b"), set), "not_found", "`cwd.tactics.a` is not an object; it has no key `b`.");
		// An index sets only in an array: not in a string's characters, not in an object's keys.
		refusedWith(() => editPatch(state, parseEditTarget("cwd.tactics.a[0]"), set), "not_found", "`cwd.tactics.a` is not an array; `[0]` indexes only arrays.");
		refusedWith(
			() => editPatch(state, parseEditTarget("cwd.tactics.obj[0]"), set),
			"not_found",
			"`cwd.tactics.obj` is not an array; `[0]` indexes only arrays.",
		);
	});
});

describe("hand edits: registered roots", () => {
	it("one root is a target; the namespace itself, or a root by index, is refused", () => {
		assert.deepEqual(parseEditTarget("cwd.roots.todos"), { owner: "cwd", plane: "roots", path: ["todos"] });
		assert.deepEqual(parseEditTarget("cwd.roots.todos.items[0]"), { owner: "cwd", plane: "roots", path: ["todos", "items", 0] });
		refusedWith(() => parseEditTarget("cwd.roots"), "invalid_input", "`cwd.roots` names every registered root; name one root, e.g. `cwd.roots.todos`.");
		refusedWith(() => parseEditTarget("cwd.roots[0]"), "invalid_input", "`cwd.roots[0]` names every registered root; name one root, e.g. `cwd.roots.todos`.");
	});

	it("the first root is written into a state that has none; a root's value is an object, what is below it anything", () => {
		const state = stateOf({});
		assert.equal(state.roots, undefined);
		// Before any root is written the namespace reads as empty, as the edit plans against it.
		assert.deepEqual(valueAtTarget(state, { owner: "cwd", plane: "roots", path: [] }), {});
		assert.equal(valueAtTarget(state, parseEditTarget("cwd.roots.todos")), undefined);
		const todos = parseEditTarget("cwd.roots.todos");
		const first = editPatch(state, todos, { kind: "set", value: { items: ["a"], done: 0 } });
		assert.deepEqual(first, { cwd: { roots: { todos: { items: ["a"], done: 0 } } } });
		applyPatch(state, first.cwd ?? {});
		applyPatch(state, editPatch(state, parseEditTarget("cwd.roots.notes"), { kind: "set", value: {} }).cwd ?? {});
		assert.deepEqual(valueAtTarget(state, todos), { items: ["a"], done: 0 });
		applyPatch(state, editPatch(state, parseEditTarget("cwd.roots.todos.items"), { kind: "set", value: "none" }).cwd ?? {});
		assert.deepEqual(state.roots, { todos: { items: "none", done: 0 }, notes: {} });
		// Replacing a root whole removes the members the new value leaves out.
		const replaced = editPatch(state, todos, { kind: "set", value: { done: 1 } });
		assert.deepEqual(replaced, { cwd: { roots: { todos: { items: null, done: 1 } } } });
		applyPatch(state, replaced.cwd ?? {});
		assert.deepEqual(state.roots, { todos: { done: 1 }, notes: {} });
		refusedWith(
			() => editPatch(state, todos, { kind: "set", value: 5 }),
			"invalid_input",
			"`cwd.roots.todos` is a registered root: its value must be an object.",
		);
		refusedWith(
			() => editPatch(state, todos, { kind: "set", value: ["a"] }),
			"invalid_input",
			"`cwd.roots.todos` is a registered root: its value must be an object.",
		);
	});
});

describe("hand edits: still there, and what cascades", () => {
	it("a value the user saw absent is still there only while nothing is there", () => {
		const state = stateOf({ a: "x" });
		const absent = parseEditTarget("cwd.tactics.b");
		const present = parseEditTarget("cwd.tactics.a");
		assert.equal(stillAt(state, absent, undefined), true);
		assert.equal(stillAt(state, absent, "x"), false);
		assert.equal(stillAt(state, present, undefined), false);
		assert.equal(stillAt(state, present, "x"), true);
		assert.equal(stillAt(state, present, "y"), false);
	});

	it("deleting an intent by hand also deletes what it owns, named by cascadeTargets", () => {
		const histories = { cwd: newHistory("cwd", 20) };
		const meta = (id: string) => ({ id, at: "2026-01-01T00:00:00.000Z", by: { kind: "system", reason: "t" } as const });
		const setup = { cwd: { intents: { ship: { goal: "ship", owns: [{ $ref: "cwd.tactics.build" }] } }, tactics: { build: "npm run build", other: 1 } } };
		commitStaged(histories, stage(histories, setup, meta("1")));
		const patch = editPatch(histories.cwd.state, parseEditTarget("cwd.intents.ship"), { kind: "delete" });
		assert.deepEqual(cascadeTargets(stage(histories, patch, meta("2")).report), ["cwd.tactics.build"]);
		const keep = editPatch(histories.cwd.state, parseEditTarget("cwd.tactics.other"), { kind: "delete" });
		assert.deepEqual(cascadeTargets(stage(histories, keep, meta("3")).report), []);
	});
});
