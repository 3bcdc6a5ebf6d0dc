/**
 * The closed word lists of the engine's types (owners, shared owners, planes) and the one guard
 * behind them, `isOneOf`: each word of its list is accepted, nothing else is — not another
 * list's word, not a different case, not an inherited name, not a non-string.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isOneOf, isOwner, isPlane, isSharedOwner, OWNERS, PLANES, ROOTS, SHARED_OWNERS } from "../../lib/core/types.js";

const strangers: unknown[] = [
	"",
	"Global",
	"CWD",
	"effective",
	"response",
	"patches",
	ROOTS,
	"toString",
	"__proto__",
	"length",
	"0",
	0,
	null,
	undefined,
	true,
	["cwd"],
	{ cwd: 1 },
];

describe("isOneOf", () => {
	it("accepts exactly the strings of its list", () => {
		const list = ["a", "b"] as const;
		assert.equal(isOneOf(list, "a"), true);
		assert.equal(isOneOf(list, "b"), true);
		for (const v of ["c", "", "ab", "A", ...strangers]) assert.equal(isOneOf(list, v), false, String(v));
		assert.equal(isOneOf([], "a"), false);
	});
});

describe("owner and plane guards", () => {
	it("isOwner: global, cwd and session", () => {
		assert.deepEqual([...OWNERS], ["global", "cwd", "session"]);
		for (const o of OWNERS) assert.equal(isOwner(o), true, o);
		for (const v of [...strangers, ...PLANES]) assert.equal(isOwner(v), false, String(v));
	});

	it("isSharedOwner: global and cwd, never session", () => {
		for (const o of SHARED_OWNERS) assert.equal(isSharedOwner(o), true, o);
		for (const v of [...strangers, "session", ...PLANES]) assert.equal(isSharedOwner(v), false, String(v));
	});

	it("isPlane: the five planes, never the roots namespace or an owner", () => {
		for (const p of PLANES) assert.equal(isPlane(p), true, p);
		for (const v of [...strangers, ...OWNERS]) assert.equal(isPlane(v), false, String(v));
	});
});
