/**
 * Natural key order (core/order.ts), the order the head and the `keys` projection list a plane
 * in: runs of digits by number, the rest by code unit, and a total order. Examples name the
 * cases; the properties are the laws a sort needs (docs/model-surface.md, "Which keys come first").
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { naturalCompare } from "../../lib/core/order.js";

const sign = (n: number) => Math.sign(n);
const sorted = (keys: string[]) => [...keys].sort(naturalCompare);

describe("naturalCompare", () => {
	it("compares runs of digits as numbers and the rest by code unit", () => {
		assert.deepEqual(sorted(["s10", "s2", "s1"]), ["s1", "s2", "s10"]);
		assert.deepEqual(sorted(["2-fix", "10-ship", "1-reproduce"]), ["1-reproduce", "2-fix", "10-ship"]);
		assert.deepEqual(sorted(["b", "a10", "a9b", "a9a"]), ["a9a", "a9b", "a10", "b"]);
		assert.deepEqual(sorted(["x19y", "x9y", "x100"]), ["x9y", "x19y", "x100"]);
		// Equal length runs compare digit by digit, wherever they differ.
		assert.ok(naturalCompare("v123", "v129") < 0);
		assert.ok(naturalCompare("v193", "v123") > 0);
		assert.ok(naturalCompare("7", "8") < 0);
	});

	it("leading zeros do not count for the number; ties fall back to code units", () => {
		assert.ok(naturalCompare("s007", "s8") < 0);
		assert.ok(naturalCompare("s010", "s9") > 0);
		assert.ok(naturalCompare("s00", "s1") < 0);
		assert.ok(naturalCompare("s01", "s1") < 0, "same number: `0` sorts before `1`");
		assert.ok(naturalCompare("s1", "s01") > 0);
		assert.equal(naturalCompare("s01", "s01"), 0);
		assert.equal(naturalCompare("", ""), 0);
	});

	it("a prefix comes first; after a common run the longer rest is later", () => {
		assert.ok(naturalCompare("ab", "abc") < 0);
		assert.ok(naturalCompare("abc", "ab") > 0);
		assert.ok(naturalCompare("a1", "a1b") < 0);
		assert.ok(naturalCompare("a1b", "a1") > 0);
		assert.ok(naturalCompare("1", "1a") < 0);
		assert.ok(naturalCompare("", "a") < 0);
		// Equal numbers (`01` and `1`): the longer rest is later, whatever its code units say.
		assert.ok(naturalCompare("a01x", "a1") > 0);
		assert.ok(naturalCompare("a1", "a01x") < 0);
		assert.ok(naturalCompare("a", "") > 0);
	});

	it("digits against other characters compare by code unit", () => {
		assert.ok(naturalCompare("a1", "ab") < 0, "`1` (49) before `b` (98)");
		assert.ok(naturalCompare("a:", "a9") > 0, "`:` (58) after `9` (57), not a digit");
		assert.ok(naturalCompare("a/", "a0") < 0, "`/` (47) before `0` (48), not a digit");
		assert.ok(naturalCompare("x!!9", "x10") < 0, "`!` is no digit: `!!9` is not a longer number than `10`");
	});

	it("is a total order: antisymmetric, transitive, zero only for the same string", () => {
		const key = fc.stringMatching(/^[a-c0-9/:]{0,6}$/);
		assertProperty(
			fc.property(key, key, key, (a, b, c) => {
				assert.equal(sign(naturalCompare(a, b)) + sign(naturalCompare(b, a)), 0);
				assert.equal(naturalCompare(a, b) === 0, a === b);
				if (naturalCompare(a, b) <= 0 && naturalCompare(b, c) <= 0) assert.ok(naturalCompare(a, c) <= 0, `${a} <= ${b} <= ${c}`);
			}),
			{ numRuns: 2000 },
		);
	});

	it("orders digit runs as numbers (without leading zeros) and agrees with code units elsewhere", () => {
		assertProperty(
			fc.property(
				fc.string({ maxLength: 3 }).filter((s) => !/\\d/.test(s)),
				fc.nat(100_000),
				fc.nat(100_000),
				(prefix, m, n) => {
					assert.equal(sign(naturalCompare(`${prefix}${m}`, `${prefix}${n}`)), sign(m - n));
				},
			),
		);
	});
});
