/**
 * The measuring side of the JSON primitives: UTF-8 sizes of compact JSON (measured once per
 * object, forgotten when it changes), key lists listed once, and the small predicates the
 * stores and the surface ask (`isEmptyObject`, `isJsonText`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { forgetMeasured, isEmptyObject, isJsonText, jsonUtf8Bytes, ownKeys, setOwn } from "../../lib/core/json.js";
import type { Json, JsonObject } from "../../lib/core/types.js";

const exact = (v: Json): number => Buffer.byteLength(JSON.stringify(v), "utf8");

describe("jsonUtf8Bytes", () => {
	it("is the UTF-8 length of the compact JSON, for empty, one-member and nested containers", () => {
		const cases: Json[] = [
			null,
			true,
			0,
			-1.5e-7,
			"",
			"é😀\n\u0000",
			[],
			{},
			[1],
			{ a: 1 },
			[[], {}, [[]]],
			{ "": {}, é: [null, "x"], '"q"': { z: [] } },
			"x".repeat(1023),
			"é".repeat(1024),
			["é".repeat(1500), "é".repeat(1500)],
		];
		for (const v of cases) assert.equal(jsonUtf8Bytes(v), exact(v), JSON.stringify(v).slice(0, 60));
		assertProperty(
			fc.property(fc.jsonValue({ maxDepth: 4, stringUnit: "grapheme" }), (v) => {
				assert.equal(jsonUtf8Bytes(v as Json), exact(v as Json));
			}),
			{ numRuns: 200 },
		);
	});

	it("measures an object or array once: a change is seen only after `forgetMeasured` (merge forgets what it changes)", () => {
		const o: JsonObject = { a: [1, 2] };
		const before = jsonUtf8Bytes(o);
		assert.equal(before, exact(o));
		o.b = "more";
		assert.equal(jsonUtf8Bytes(o), before, "the measured size is reused, not measured again");
		forgetMeasured(o);
		assert.equal(jsonUtf8Bytes(o), exact(o), "after forgetting, the object is measured as it is now");

		// An array as long as a long string is an array all the same: measured as one, and forgotten.
		const long: Json[] = new Array<Json>(1100).fill(1);
		assert.equal(jsonUtf8Bytes(long), exact(long));
		long.push("é".repeat(10));
		forgetMeasured(long);
		assert.equal(jsonUtf8Bytes(long), exact(long));
	});
});

describe("ownKeys", () => {
	it("lists an object's keys once, and again after `forgetMeasured`", () => {
		const o: JsonObject = { b: 1, a: 2 };
		const first = ownKeys(o);
		assert.deepEqual(first, ["b", "a"]);
		setOwn(o, "__proto__", 3);
		assert.equal(ownKeys(o), first, "the same list, not listed again");
		forgetMeasured(o);
		assert.deepEqual(ownKeys(o), ["b", "a", "__proto__"]);
	});
});

describe("isEmptyObject, isJsonText", () => {
	it("isEmptyObject: true only without an own enumerable key", () => {
		assert.equal(isEmptyObject({}), true);
		assert.equal(isEmptyObject(Object.create(null)), true);
		assert.equal(isEmptyObject({ a: undefined }), false);
		assert.equal(isEmptyObject(JSON.parse('{"__proto__":1}')), false);
		assert.equal(isEmptyObject(Object.create({ inherited: 1 })), true, "an inherited key is not the object's");
	});

	it("isJsonText: one complete JSON value, not one cut short", () => {
		assert.equal(isJsonText('{"a":[1,"x"]}'), true);
		assert.equal(isJsonText("3"), true);
		assert.equal(isJsonText('{"a":[1,"x"]'), false);
		assert.equal(isJsonText(""), false);
		assert.equal(isJsonText('{"a":1}{"b":2}'), false);
	});
});
