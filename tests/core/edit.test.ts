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
import { editPatch, parseEditTarget, stillAt, valueAtTarget } from "../../lib/core/edit.js";
import { isStateError } from "../../lib/core/errors.js";
import { cloneJson, isPlainObject } from "../../lib/core/json.js";
import type { Segment } from "../../lib/core/locator.js";
import { applyPatch } from "../../lib/core/merge.js";
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
