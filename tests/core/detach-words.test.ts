/**
 * What `detach` says when it refuses a value: what the value is (the type, the class, a cycle, a
 * hole, a throwing getter's own words), where, and what counts toward its nesting cap.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateError } from "../../lib/core/errors.js";
import { checkLimits, detach } from "../../lib/core/json.js";
import { DEFAULT_LIMITS } from "../../lib/core/types.js";

/** `leaf` inside `levels` nested objects: `{ a: { a: ... leaf } }`. */
function nest(levels: number, leaf: unknown): unknown {
	let v = leaf;
	for (let i = 0; i < levels; i++) v = { a: v };
	return v;
}

describe("detach refusal words", () => {
	/** The words after the field path, for a refusal of `{ v: value }`. */
	function what(value: unknown): string {
		try {
			detach({ v: value });
		} catch (e) {
			assert.ok(e instanceof StateError && e.code === "invalid_value", String(e));
			const m = /^`v` is (.*); state values must be finite JSON/.exec(e.message);
			assert.ok(m, e.message);
			return m[1] as string;
		}
		return assert.fail(`${String(value)} was accepted`);
	}

	it("says what the refused value is", () => {
		assert.equal(what(undefined), "undefined");
		assert.equal(what(Number.NaN), "NaN");
		assert.equal(what(Number.NEGATIVE_INFINITY), "-Infinity");
		assert.equal(
			what(() => 1),
			"a function",
		);
		assert.equal(what(Symbol("x")), "a symbol");
		assert.equal(what(10n), "a bigint");
		assert.equal(what(new Date(0)), "a Date instance");
		class Rows extends Array {}
		assert.equal(what(new Rows()), "a Rows instance", "an Array subclass is not a plain array");
		assert.equal(what(Object.setPrototypeOf([], null)), "a non-plain object", "an array without a prototype");
		assert.equal(what(Object.create(Object.create(null))), "a non-plain object", "a prototype without a constructor");
		assert.equal(what(new (class {})()), "a non-plain object", "an anonymous class");
		const cyclic: unknown[] = [];
		cyclic.push(cyclic);
		assert.throws(
			() => detach({ v: cyclic }),
			(e: unknown) => e instanceof StateError && e.message.startsWith("`v[0]` is a cycle (a value that contains itself);"),
		);
		assert.equal(what({ [Symbol("k")]: 1 }), "keyed by Symbol(k), a symbol");
	});

	it("names a hole in a sparse array as a hole, and a throwing getter with its error", () => {
		assert.throws(
			// biome-ignore lint/suspicious/noSparseArray: the hole is the point of the test
			() => detach([1, , 3]),
			(e: unknown) => e instanceof StateError && e.message.startsWith("`[1]` is a hole in a sparse array; fill it with `null` or remove it;"),
		);
		const src = {
			get bad(): number {
				throw new Error("boom");
			},
		};
		assert.throws(
			() => detach({ wrap: src }),
			(e: unknown) => e instanceof StateError && e.message === "reading `wrap.bad` threw (boom); send plain JSON data",
		);
	});

	it("takes a non-enumerable symbol key as not data: copied without it", () => {
		const o = { a: 1 };
		Object.defineProperty(o, Symbol("hidden"), { value: 2, enumerable: false });
		assert.deepEqual(detach(o), { a: 1 });
	});

	it("leaves the caller's path as it was, after a refusal too", () => {
		const path = ["cwd", "tactics"];
		assert.throws(() => detach({ x: [{ y: undefined }] }, path), StateError);
		assert.deepEqual(path, ["cwd", "tactics"]);
		assert.throws(() => checkLimits({ x: [{ y: 1 }] }, { ...DEFAULT_LIMITS, maxDepth: 1 }, path), StateError);
		assert.deepEqual(path, ["cwd", "tactics"]);
	});

	it("counts containers, not scalars, toward the nesting cap of 1000", () => {
		assert.deepEqual(detach(nest(1000, 1)), nest(1000, 1));
		assert.throws(
			() => detach(nest(1001, 1)),
			(e: unknown) => e instanceof StateError && e.code === "limit",
		);
		assert.throws(
			() => detach(nest(1000, () => 1)),
			(e: unknown) => e instanceof StateError && e.code === "invalid_value" && e.message.includes("a function"),
		);
	});
});
