/**
 * The closed word lists of the engine's types (owners, shared owners, planes) and the one guard
 * behind them, `isOneOf`: each word of its list is accepted, nothing else is — not another
 * list's word, not a different case, not an inherited name, not a non-string. Also the order
 * of the sections and the default limits a patch is checked against.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStateError } from "../../lib/core/errors.js";
import { validateCanonicalPatch } from "../../lib/core/stage.js";
import { isOneOf, isOwner, isPlane, isSharedOwner, OWNERS, PLANES, ROOTS, SECTIONS, SHARED_OWNERS } from "../../lib/core/types.js";

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

describe("sections and default limits", () => {
	it("the sections are the planes in order, then the roots namespace", () => {
		assert.deepEqual(SECTIONS, [...PLANES, ROOTS]);
	});

	it("by default a key may have 1,024 characters and a value nest 64 deep, no more", () => {
		const refusal = (e: unknown): boolean => isStateError(e) && e.code === "limit";
		const keyed = (n: number): unknown => ({ cwd: { tactics: { ["k".repeat(n)]: 1 } } });
		validateCanonicalPatch(keyed(1024));
		assert.throws(() => validateCanonicalPatch(keyed(1025)), refusal);
		const nested = (depth: number): unknown => {
			let v: unknown = 1;
			for (let i = 0; i < depth; i++) v = { d: v };
			return { cwd: { tactics: v } };
		};
		validateCanonicalPatch(nested(60));
		assert.throws(() => validateCanonicalPatch(nested(70)), refusal);
	});
});
