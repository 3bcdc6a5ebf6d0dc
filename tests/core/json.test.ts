/**
 * Detachment, equality, cloning, limits and pointers of JSON values, including keys that
 * are dangerous as property names (`__proto__`, `constructor`, ...).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { StateError } from "../../lib/core/errors.js";
import { checkLimits, cloneJson, detach, isPlainObject, jsonBytes, jsonEqual, parsePointer, setOwn, toPointer } from "../../lib/core/json.js";
import { applyPatch, planPatch } from "../../lib/core/merge.js";
import { emptyState, isEmptyState, stateBytes } from "../../lib/core/state.js";
import { DEFAULT_LIMITS } from "../../lib/core/types.js";
import type { Json, JsonObject } from "../../lib/core/types.js";

const SPECIAL_KEYS = ["__proto__", "constructor", "prototype", "$ref", "a.b", "[x]", "~", "/", "", "~1", "a/b~c", "hasOwnProperty", "toString"];

function refusal(fn: () => unknown, code: string, pathText: string): void {
	assert.throws(fn, (e: unknown) => {
		assert.ok(e instanceof StateError, `expected StateError, got ${String(e)}`);
		assert.equal(e.code, code);
		assert.ok(e.message.includes(`\`${pathText}\``), `message ${JSON.stringify(e.message)} should name ${pathText}`);
		return true;
	});
}

describe("detach refusals", () => {
	it("refuses undefined, functions, symbols, bigint, NaN and Infinity naming the field path", () => {
		refusal(() => detach({ a: { b: undefined } }), "invalid_value", "a.b");
		refusal(() => detach({ a: [1, () => 1] }), "invalid_value", "a[1]");
		refusal(() => detach({ s: Symbol("x") }), "invalid_value", "s");
		refusal(() => detach({ n: 10n }), "invalid_value", "n");
		refusal(() => detach({ x: { "a.b": Number.NaN } }), "invalid_value", 'x["a.b"]');
		refusal(() => detach([Number.POSITIVE_INFINITY]), "invalid_value", "[0]");
		refusal(() => detach({ y: -Infinity }, ["cwd", "tactics"]), "invalid_value", "cwd.tactics.y");
	});

	it("refuses sparse arrays at the hole", () => {
		// biome-ignore lint/suspicious/noSparseArray: the hole is the point of the test
		const sparse = [1, , 3];
		refusal(() => detach({ list: sparse }), "invalid_value", "list[1]");
		const grown: unknown[] = [];
		grown.length = 2;
		refusal(() => detach(grown), "invalid_value", "[0]");
	});

	it("refuses class instances and non-plain prototypes", () => {
		refusal(() => detach({ d: new Date(0) }), "invalid_value", "d");
		refusal(() => detach({ m: new Map() }), "invalid_value", "m");
		refusal(() => detach({ r: /x/ }), "invalid_value", "r");
		class Thing {
			a = 1;
		}
		refusal(() => detach({ t: new Thing() }), "invalid_value", "t");
		refusal(() => detach({ o: Object.create({ inherited: 1 }) }), "invalid_value", "o");
		refusal(() => detach({ boxed: new String("x") }), "invalid_value", "boxed");
	});

	it("refuses cycles but accepts shared (acyclic) references", () => {
		const a: Record<string, unknown> = { x: 1 };
		a.self = { back: a };
		refusal(() => detach({ root: a }), "invalid_value", "root.self.back");
		const arr: unknown[] = [];
		arr.push(arr);
		refusal(() => detach(arr), "invalid_value", "[0]");
		const shared = { v: 1 };
		assert.deepEqual(detach({ a: shared, b: shared }), { a: { v: 1 }, b: { v: 1 } });
	});

	it("refuses a throwing getter as invalid_value naming the field", () => {
		const src = {
			ok: 1,
			get bad(): number {
				throw new Error("boom");
			},
		};
		refusal(() => detach({ wrap: src }), "invalid_value", "wrap.bad");
	});

	it("refuses absurdly deep input with `limit` instead of overflowing the stack", () => {
		let deep: unknown = 1;
		for (let i = 0; i < 50_000; i++) deep = { a: deep };
		assert.throws(
			() => detach(deep),
			(e: unknown) => e instanceof StateError && e.code === "limit" && e.message.includes("levels") && e.message.length < 300,
		);
	});

	it("refuses enumerable symbol keys", () => {
		refusal(() => detach({ o: { [Symbol("k")]: 1 } }), "invalid_value", "o");
	});

	it("accepts null-prototype objects and returns ordinary objects", () => {
		const o = Object.create(null) as Record<string, unknown>;
		o.k = [1, null, "s", true, { z: -0.5 }];
		const d = detach(o) as JsonObject;
		assert.equal(Object.getPrototypeOf(d), Object.prototype);
		assert.deepEqual(d, { k: [1, null, "s", true, { z: -0.5 }] });
	});
});

describe("detach copies once", () => {
	it("reads each getter exactly once and keeps the first value", () => {
		let reads = 0;
		const src = {
			get g() {
				reads++;
				return reads === 1 ? "first" : "later";
			},
		};
		const d = detach({ wrap: src }) as JsonObject;
		assert.equal(reads, 1);
		assert.deepEqual(d, { wrap: { g: "first" } });
		assert.equal(Object.getOwnPropertyDescriptor(d.wrap as object, "g")?.get, undefined, "copy holds data, not a getter");
	});

	it("reads array elements defined by getters exactly once", () => {
		let reads = 0;
		const arr: unknown[] = [0];
		Object.defineProperty(arr, 0, { get: () => ++reads, enumerable: true });
		assert.deepEqual(detach(arr), [1]);
		assert.equal(reads, 1);
	});

	it("is unaffected by caller mutation after detach", () => {
		const src = { a: { b: [1, 2] }, c: "x" };
		const d = detach(src);
		src.a.b.push(3);
		src.c = "y";
		(src as Record<string, unknown>).extra = 1;
		assert.deepEqual(d, { a: { b: [1, 2] }, c: "x" });
	});

	it("ignores non-enumerable properties", () => {
		const o = { a: 1 };
		Object.defineProperty(o, "hidden", { value: 2, enumerable: false });
		assert.deepEqual(detach(o), { a: 1 });
	});
});

describe("special keys", () => {
	it("detach copies `__proto__` and friends as own data without touching prototypes", () => {
		const protoNames = Object.getOwnPropertyNames(Object.prototype).sort();
		const src = JSON.parse('{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}}') as unknown;
		const d = detach(src) as JsonObject;
		assert.equal(Object.getPrototypeOf(d), Object.prototype);
		assert.ok(Object.hasOwn(d, "__proto__"));
		assert.deepEqual(Object.keys(d), ["__proto__", "constructor"]);
		assert.equal(JSON.stringify(d), '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}}}');
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
		assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), protoNames);
		const c = cloneJson(d);
		assert.ok(Object.hasOwn(c, "__proto__"));
		assert.ok(jsonEqual(c, d));
	});

	it("copies every name `Object.prototype` has as own data even where that prototype is frozen (a hardened host)", () => {
		// A child process: freezing the prototype here would change every later test of this file.
		const json = new URL("../../lib/core/json.js", import.meta.url).href;
		const script = `
			import { detach, cloneJson } from ${JSON.stringify(json)};
			Object.freeze(Object.prototype);
			const names = Object.getOwnPropertyNames(Object.prototype);
			const src = JSON.parse(JSON.stringify(Object.fromEntries(names.map((n, i) => [n, i]))));
			const d = cloneJson(detach(src));
			const ok = names.every((n, i) => Object.hasOwn(d, n) && d[n] === i) && Object.getPrototypeOf(d) === Object.prototype;
			process.stdout.write(ok ? "ok " + names.length : "wrong");
		`;
		// execArgv carries the loader that runs this file (tsx under the mutation runner), so the child reads the same module.
		const out = execFileSync(process.execPath, [...process.execArgv, "--input-type=module", "-e", script], { encoding: "utf8" });
		assert.match(out, /^ok \d+$/);
	});

	it("round-trips every special key through applyPatch, JSON and pointers", () => {
		const protoNames = Object.getOwnPropertyNames(Object.prototype).sort();
		for (const key of SPECIAL_KEYS) {
			const state = emptyState();
			const k = JSON.stringify(key);
			// JSON.parse creates `__proto__` as an own data property, like a model's tool arguments.
			const patch = { tactics: JSON.parse(`{${k}:{${k}:${k}}}`) as JsonObject };
			const plan = planPatch("cwd", state, patch);
			assert.deepEqual(plan.changed, [toPointer(["cwd", "tactics", key])]);
			assert.deepEqual(parsePointer(plan.changed[0] as string), ["cwd", "tactics", key]);
			applyPatch(state, patch);
			assert.ok(Object.hasOwn(state.tactics, key), `own key ${JSON.stringify(key)}`);
			const reloaded = JSON.parse(JSON.stringify(state)) as JsonObject;
			assert.ok(jsonEqual(reloaded, state as unknown as JsonObject), `JSON round-trip for ${JSON.stringify(key)}`);
			assert.equal(stateBytes(state), JSON.stringify(state).length);
			const del = planPatch("cwd", state, { tactics: JSON.parse(`{${JSON.stringify(key)}:null}`) as JsonObject });
			applyPatch(state, { tactics: JSON.parse(`{${JSON.stringify(key)}:null}`) as JsonObject });
			assert.equal(del.changed.length, 1);
			assert.ok(isEmptyState(state), `deleting ${JSON.stringify(key)} empties the state`);
		}
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
		assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), protoNames);
	});

	it("escapes `~` and `/` in pointers and parses them back", () => {
		assert.equal(toPointer(["cwd", "lazy", "notes/2026.md"]), "/cwd/lazy/notes~12026.md");
		assert.equal(toPointer(["cwd", "lazy", "~x", "", "~1"]), "/cwd/lazy/~0x//~01");
		assert.deepEqual(parsePointer("/cwd/lazy/~0x//~01"), ["cwd", "lazy", "~x", "", "~1"]);
		assert.equal(toPointer(["a~b~c/d/e"]), "/a~0b~0c~1d~1e", "every `~` and `/`, not the first only");
		assert.deepEqual(parsePointer("/a~0b~0c~1d~1e"), ["a~b~c/d/e"]);
		assert.deepEqual(parsePointer(""), [], "the empty pointer is the whole document");
		assert.deepEqual(parsePointer("/"), [""]);
		assert.throws(
			() => parsePointer("cwd/tactics"),
			(e: unknown) => e instanceof StateError && e.code === "parse_error" && e.message === "pointer `cwd/tactics` must start with `/`",
		);
	});

	it("reading an inherited name is absent: a deletion of `constructor` on an empty plane is missing", () => {
		const plan = planPatch("cwd", emptyState(), { tactics: { constructor: null, toString: null } });
		assert.equal(plan.noop, true);
		assert.deepEqual(plan.missingDeletions, ["/cwd/tactics/constructor", "/cwd/tactics/toString"]);
	});
});

describe("jsonEqual, cloneJson, isPlainObject, jsonBytes", () => {
	it("compares deeply and ignores key order", () => {
		assert.ok(jsonEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }));
		assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: 2 }));
		assert.ok(!jsonEqual([1, 2], [2, 1]));
		assert.ok(!jsonEqual({}, []));
		assert.ok(!jsonEqual(null, {}));
		assert.ok(!jsonEqual({ a: undefined } as unknown as Json, { b: 1 }));
		assert.ok(jsonEqual("x", "x"));
		assert.ok(!jsonEqual([1], [1, 2]), "a longer array is not equal");
		assert.ok(!jsonEqual([], { length: 0 }), "an object with a `length` is not an array");
		for (const scalar of [null, 0, "", false]) assert.ok(!jsonEqual({}, scalar), `{} vs ${JSON.stringify(scalar)}`);
	});

	it("copies a name `Object.prototype` has as an ordinary data property (deletable, writable, enumerable)", () => {
		const o: JsonObject = {};
		setOwn(o, "__proto__", 1);
		setOwn(o, "a", 2);
		for (const k of ["__proto__", "a"]) {
			assert.deepEqual(Object.getOwnPropertyDescriptor(o, k), { value: k === "a" ? 2 : 1, writable: true, enumerable: true, configurable: true });
		}
		const c = cloneJson(JSON.parse('{"constructor":{"x":1}}') as JsonObject);
		assert.equal(Reflect.deleteProperty(c, "constructor"), true, "deleted as merge deletes a key");
		assert.deepEqual(Object.keys(c), []);
	});

	it("clones deeply without sharing", () => {
		const v = { a: [{ b: 1 }] };
		const c = cloneJson(v);
		assert.deepEqual(c, v);
		assert.notEqual(c.a, v.a);
		assert.notEqual(c.a[0], v.a[0]);
	});

	it("recognises plain objects only", () => {
		assert.ok(isPlainObject({}));
		assert.ok(isPlainObject(Object.create(null)));
		assert.ok(!isPlainObject([]));
		assert.ok(!isPlainObject(null));
		assert.ok(!isPlainObject(new Date()));
	});

	it("measures UTF-16 units", () => {
		assert.equal(jsonBytes({ a: "é😀" }), '{"a":"é😀"}'.length);
		assert.equal(jsonBytes("😀"), 4);
	});
});

describe("checkLimits", () => {
	const limits = { ...DEFAULT_LIMITS, maxDepth: 3, maxKeyLength: 4 };
	it("accepts values within the depth limit", () => {
		checkLimits({ a: { b: [1] } }, limits, ["cwd", "tactics", "x"]);
		checkLimits("scalar", limits, []);
	});
	it("refuses too deep values naming the path and the limit", () => {
		assert.throws(
			() => checkLimits({ a: { b: [[1]] } }, limits, ["cwd", "tactics", "x"]),
			(e: unknown) => e instanceof StateError && e.code === "limit" && e.message.includes("`cwd.tactics.x.a.b[0]`") && e.message.includes("3"),
		);
	});
	it("accepts null and a key exactly at the length limit", () => {
		checkLimits({ abcd: null, b: [null, { c: null }] }, limits, ["cwd"]);
	});
	it("shows a path of 16 fields whole and a deeper one abbreviated", () => {
		const fields = (n: number) => Array.from({ length: n }, (_, i) => `f${i}`);
		const at = (n: number) => {
			try {
				checkLimits({ a: { b: { c: {} } } }, limits, fields(n - 3));
			} catch (e) {
				assert.ok(e instanceof StateError && e.code === "limit", String(e));
				return e.message;
			}
			return assert.fail("accepted");
		};
		assert.ok(at(16).startsWith(`\`${fields(13).join(".")}.a.b.c\` nests deeper`), at(16));
		assert.ok(at(17).startsWith(`\`${fields(12).join(".")}...(17 levels)\` nests deeper`), at(17));
	});
	it("refuses too long keys naming the path and the limit", () => {
		assert.throws(
			() => checkLimits({ ok: { toolong: 1 } }, limits, ["cwd", "tactics", "x"]),
			(e: unknown) =>
				e instanceof StateError &&
				e.code === "limit" &&
				e.message.includes("cwd.tactics.x.ok") &&
				e.message.includes("limit is 4") &&
				(e.path as unknown[]).join("/") === "cwd/tactics/x/ok/toolong",
		);
	});
	it("names the key's field and at most 40 characters of the key", () => {
		const key = `${"k".repeat(40)}TAIL`;
		assert.throws(
			() => checkLimits({ ok: { [key]: 1 } }, limits, ["cwd"]),
			(e: unknown) =>
				e instanceof StateError &&
				e.message.startsWith(`key \`cwd.ok\` + "${"k".repeat(40)}"... is 44 characters; the key length limit is 4`) &&
				!e.message.includes("TAIL"),
		);
	});
});
