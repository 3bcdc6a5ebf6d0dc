/**
 * Structured references: what counts as a reference, anchoring of flat input,
 * flat presentation, and the scoped refusal of unqualified locators.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStateError } from "../../lib/core/errors.js";
import { anchorRefs, checkScopedRefs, isRef, mapRefs, presentRef, presentRefs, refsIn } from "../../lib/core/refs.js";
import type { Json } from "../../lib/core/types.js";

describe("isRef and refsIn", () => {
	it("recognises exactly one own `$ref` key holding a string", () => {
		assert.equal(isRef({ $ref: "cwd.lazy.plan" }), true);
		assert.equal(isRef({ $ref: "x", note: 1 }), false);
		assert.equal(isRef({ $ref: 3 }), false);
		assert.equal(isRef([{ $ref: "x" }]), false);
		assert.equal(isRef("cwd.lazy.plan"), false);
		assert.equal(isRef(Object.create({ $ref: "inherited" })), false);
	});

	it("collects references in document order, not inside extra-key `$ref` objects' siblings as refs", () => {
		const v: Json = { a: [{ $ref: "cwd.tactics.a" }, { b: { $ref: "cwd.lazy.b" } }], c: { $ref: "x", d: { $ref: "cwd.lazy.inner" } } };
		assert.deepEqual(refsIn(v), ["cwd.tactics.a", "cwd.lazy.b", "cwd.lazy.inner"]);
	});
});

describe("anchorRefs (flat input → canonical)", () => {
	it("prefixes relative current plane locators with the owner", () => {
		assert.deepEqual(anchorRefs({ owns: [{ $ref: "lazy.plan" }, { $ref: 'tactics["a.b"]' }, { $ref: "intents" }] }, "cwd"), {
			owns: [{ $ref: "cwd.lazy.plan" }, { $ref: 'cwd.tactics["a.b"]' }, { $ref: "cwd.intents" }],
		});
	});

	it("leaves qualified, historical, overlay and non-locator strings byte-identical", () => {
		const kept = [
			"global.lazy.plan",
			"cwd[1].tactics.x",
			"effective[1].tactics.x",
			"effective.tactics.x",
			"cwd.patches[0]",
			"price is $5.00",
			"lazy.plan ",
			"a.b.c",
			"lazy..x",
			"README.md",
		];
		for (const ref of kept) assert.deepEqual(anchorRefs({ $ref: ref }, "session"), { $ref: ref }, ref);
	});

	it("anchors `patches[N]` and, for Session, `response`: storage holds owner-qualified locators", () => {
		assert.deepEqual(anchorRefs([{ $ref: "patches[0]" }, { $ref: "patches[2].patch.tactics" }, { $ref: "response.last.text" }], "session"), [
			{ $ref: "session.patches[0]" },
			{ $ref: "session.patches[2].patch.tactics" },
			{ $ref: "session.response.last.text" },
		]);
		// `response` is Session's: for another owner it names nothing to anchor to and stays as sent.
		assert.deepEqual(anchorRefs([{ $ref: "patches[0]" }, { $ref: "response" }], "cwd"), [{ $ref: "cwd.patches[0]" }, { $ref: "response" }]);
	});

	it("never rewrites plain strings or `$ref` objects with extra keys", () => {
		const v: Json = { text: "lazy.plan", o: { $ref: "lazy.plan", why: "x" } };
		assert.deepEqual(anchorRefs(v, "cwd"), v);
	});

	it("anchors a `$ref` patch whose other keys are deletions: it merges into a reference", () => {
		// `{ $ref, note: null }` merges into `{ $ref }`; left unanchored it would store a relative ref.
		assert.deepEqual(anchorRefs({ owns: { $ref: "lazy.plan", note: null } }, "cwd"), { owns: { $ref: "cwd.lazy.plan", note: null } });
		assert.deepEqual(refsIn({ owns: { $ref: "cwd.lazy.plan", note: null } }), ["cwd.lazy.plan"]);
		// Inside arrays values are stored literally: such an object is ordinary data there.
		const literal: Json = { list: [{ $ref: "lazy.plan", note: null }] };
		assert.deepEqual(anchorRefs(literal, "cwd"), literal);
		assert.deepEqual(refsIn(literal), []);
		assert.deepEqual(presentRefs({ owns: { $ref: "cwd.lazy.plan", note: null } }, "cwd"), { owns: { $ref: "lazy.plan", note: null } });
	});

	it("keeps `__proto__` keys as own data and leaves the input untouched", () => {
		const input = JSON.parse('{"__proto__":{"$ref":"lazy.p"}}') as Json;
		const out = anchorRefs(input, "cwd") as Record<string, Json>;
		assert.ok(Object.hasOwn(out, "__proto__"));
		assert.equal(Object.getPrototypeOf(out), Object.prototype);
		assert.deepEqual(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, { $ref: "cwd.lazy.p" });
		assert.deepEqual(Object.getOwnPropertyDescriptor(input, "__proto__")?.value, { $ref: "lazy.p" });
	});
});

describe("presentRefs (canonical → flat presentation)", () => {
	it("shows same-owner current refs relative and everything else as stored", () => {
		const stored: Json = [
			{ $ref: "cwd.lazy.plan" },
			{ $ref: "global.lazy.plan" },
			{ $ref: "cwd[2].lazy.plan" },
			{ $ref: "effective.lazy.x" },
			{ $ref: "cwd.patches[0]" },
			{ $ref: "cwd.nope" },
			"cwd.lazy.plan",
		];
		assert.deepEqual(presentRefs(stored, "cwd"), [
			{ $ref: "lazy.plan" },
			{ $ref: "global.lazy.plan" },
			{ $ref: "cwd[2].lazy.plan" },
			{ $ref: "effective.lazy.x" },
			{ $ref: "patches[0]" },
			{ $ref: "cwd.nope" },
			"cwd.lazy.plan",
		]);
		assert.deepEqual(presentRefs([{ $ref: "session.response.last" }, { $ref: "cwd.response" }, { $ref: "session.patches[1]" }], "session"), [
			{ $ref: "response.last" },
			{ $ref: "cwd.response" },
			{ $ref: "patches[1]" },
		]);
	});
});

describe("checkScopedRefs", () => {
	it("refuses an unqualified locator, naming the field and the qualified forms", () => {
		assert.throws(
			() => checkScopedRefs({ a: { $ref: "lazy.plan" } }, ["cwd", "tactics"], ["cwd", "session"]),
			(e) =>
				isStateError(e) &&
				e.code === "invalid_input" &&
				e.message === "`cwd.tactics.a.$ref` is `lazy.plan`; in scoped mode write `cwd.lazy.plan` or `session.lazy.plan`" &&
				e.path.join("/") === "cwd/tactics/a/$ref",
		);
		assert.throws(() => checkScopedRefs([{ $ref: "patches[0]" }], []), /`global.patches\[0\]` or `cwd.patches\[0\]` or `session.patches\[0\]`/);
	});

	it("refuses an unqualified `$ref` patch whose other keys are deletions", () => {
		assert.throws(
			() => checkScopedRefs({ a: { $ref: "lazy.plan", old: null } }, ["cwd", "intents"], ["cwd", "session"]),
			/`cwd\.intents\.a\.\$ref` is `lazy\.plan`; in scoped mode write `cwd\.lazy\.plan`/,
		);
		checkScopedRefs({ a: [{ $ref: "lazy.plan", old: null }] }, ["cwd", "intents"], ["cwd", "session"]);
	});

	it("suggests `response` only through Session, and only when Session is wanted", () => {
		assert.throws(
			() => checkScopedRefs({ a: { $ref: "response" } }, ["cwd", "intents"], ["global", "cwd"]),
			(e) =>
				isStateError(e) &&
				e.message ===
					"`cwd.intents.a.$ref` is `response`; only Session has `response` and Session is not wanted here (global, cwd); reference an entry of a wanted owner instead",
		);
		assert.throws(
			() => checkScopedRefs({ a: { $ref: "response.last" } }, ["cwd", "intents"], ["cwd", "session"]),
			/in scoped mode write `session\.response\.last`$/,
		);
	});

	it("accepts qualified, overlay, historical and non-locator references", () => {
		for (const ref of ["cwd.lazy.plan", "effective.tactics.x", "global[3].lazy", "effective[1].lazy.x", "see lazy.plan", "$HOME"])
			checkScopedRefs({ $ref: ref }, []);
	});
});

describe("edges of what counts as a reference", () => {
	it("answers false for null, undefined and values without a string `$ref`", () => {
		for (const v of [null, undefined, 0, "", [], {}, { ref: "x" }]) assert.equal(isRef(v), false, String(v));
		const bare = Object.assign(Object.create(null) as object, { $ref: "cwd.lazy.a" });
		assert.equal(isRef(bare), true);
	});

	it("a deletion patch around a `$ref` that is not a string is no reference", () => {
		assert.deepEqual(refsIn({ a: { $ref: 3, note: null }, b: { $ref: "cwd.lazy.b", x: null, y: null } }), ["cwd.lazy.b"]);
		assert.deepEqual(anchorRefs({ a: { $ref: 3, note: null } }, "cwd"), { a: { $ref: 3, note: null } });
	});

	it("mapRefs hands the rewrite the path of each `$ref`, array indexes included", () => {
		const seen: string[] = [];
		mapRefs(
			{ a: [{ $ref: "x" }, { b: { $ref: "y" } }], c: { $ref: "z", gone: null } },
			(ref, path) => {
				seen.push(`${ref}@${path.join("/")}`);
				return ref;
			},
			["root"],
		);
		assert.deepEqual(seen, ["x@root/a/0/$ref", "y@root/a/1/b/$ref", "z@root/c/$ref"]);
		// Without a path, paths start at the value itself.
		const top: string[] = [];
		mapRefs([{ $ref: "x" }], (ref, path) => {
			top.push(path.join("/"));
			return ref;
		});
		assert.deepEqual(top, ["0/$ref"]);
		assert.throws(
			() => checkScopedRefs([{ a: [{ $ref: "lazy.x" }] }], ["cwd", "tactics"], ["cwd"]),
			(e) => isStateError(e) && e.path.join("/") === "cwd/tactics/0/a/0/$ref",
		);
		assert.throws(
			() => checkScopedRefs({ a: { $ref: "lazy.x" } }),
			(e) => isStateError(e) && e.path.join("/") === "a/$ref" && e.message.startsWith("`a.$ref` is `lazy.x`; in scoped mode write `global.lazy.x` or"),
		);
	});

	it("presentRef shortens only a locator of the sole owner, and nothing without one", () => {
		assert.equal(presentRef("cwd.lazy.a", "cwd"), "lazy.a");
		for (const ref of ["undefined.lazy.a", "cwd.lazy.a"]) assert.equal(presentRef(ref, undefined), ref);
		for (const ref of ["cwdx.lazy.a", "xyz.lazy.a", "cwd.global.lazy.a", "cwd.response", "cwd.", "global.lazy.a"]) assert.equal(presentRef(ref, "cwd"), ref);
	});
});
