/**
 * The write-side reference rules of `lib/core/refs.ts`, called directly (the engine and the model
 * interface call them on every patch): `checkWrittenRefs` judges exactly the objects a patch
 * writes or merges into, with the refusal naming the field and the spelling to send;
 * `anchorRevealedRefs` anchors a stored relative `$ref` a patch reveals by deleting its siblings;
 * `storedRefProblems` lists what `state-flow doctor` reports.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateError } from "../../lib/core/errors.js";
import { anchorRevealedRefs, checkWrittenRefs, storedRefProblems } from "../../lib/core/refs.js";
import { emptyState } from "../../lib/core/state.js";
import type { JsonObject, OwnerState, PlanePatch } from "../../lib/core/types.js";

function state(parts: Partial<OwnerState>): OwnerState {
	return { ...emptyState(), ...parts };
}

/** The CWD owner's patch checked as the engine does (canonical spelling, paths under `cwd`). */
function check(patch: PlanePatch, s: OwnerState = emptyState(), spell = (ref: string) => ref): void {
	checkWrittenRefs({ owner: "cwd", state: s, patch, base: ["cwd"], spell });
}

function refusal(fn: () => unknown): StateError {
	try {
		fn();
	} catch (e) {
		assert.ok(e instanceof StateError, String(e));
		assert.equal(e.code, "invalid_input");
		return e;
	}
	return assert.fail("expected a refusal");
}

const NOT_LOCATOR_HINT = ', e.g. {"$ref":"cwd.tactics.t1"}, with keys that are not plain names quoted: ["notes/a.md"]';

describe("checkWrittenRefs: what a reference must be", () => {
	it("accepts well-formed references anywhere a patch writes them", () => {
		check({
			intents: { m: { owns: [{ $ref: "cwd.tactics.a" }, [{ $ref: "global.lazy.b" }]], deep: { x: { $ref: "effective.lazy.c" } } } },
			tactics: { a: 1, plain: "cwd.lazy.plan.md", gone: null },
		});
	});

	it("refuses a `$ref` that is not a string, with an example in the writer's spelling", () => {
		const e = refusal(() => check({ intents: { m: { owns: [{ $ref: 3 }] } } }));
		assert.equal(e.message, '`cwd.intents.m.owns[0].$ref` must be a locator string, e.g. {"$ref":"cwd.tactics.t1"}');
		assert.deepEqual(e.path, ["cwd", "intents", "m", "owns", 0, "$ref"]);
		const relative = refusal(() => check({ tactics: { t: { $ref: false } } }, emptyState(), (ref) => ref.replace(/^cwd\./, "")));
		assert.equal(relative.message, '`cwd.tactics.t.$ref` must be a locator string, e.g. {"$ref":"tactics.t1"}');
	});

	it("refuses members beside `$ref`, naming each and the spelling to put under its own key", () => {
		const e = refusal(() => check({ intents: { m: { $ref: "cwd.tactics.a", why: "x", also: 2 } } }, emptyState(), (ref) => `<${ref}>`));
		assert.equal(
			e.message,
			'`cwd.intents.m` has `$ref` beside other members (`why`, `also`): a reference is {"$ref":"<locator>"} alone in its object; put it under its own key (e.g. {"ref":{"$ref":"<cwd.tactics.a>"}}) or rename `$ref`',
		);
		assert.deepEqual(e.path, ["cwd", "intents", "m"]);
		// Inside an array a value is stored literally: a `null` member is a member, not a deletion.
		const literal = refusal(() => check({ intents: { m: { owns: [{ $ref: "cwd.tactics.a", note: null }] } } }));
		assert.match(literal.message, /^`cwd\.intents\.m\.owns\[0\]` has `\$ref` beside other members \(`note`\)/);
	});

	it("refuses a string that is not a locator with the generic hint when no spelling fits", () => {
		const e = refusal(() => check({ lazy: { n: { deep: [{ a: { $ref: "not a locator" } }] } } }));
		assert.equal(
			e.message,
			`\`cwd.lazy.n.deep[0].a.$ref\` is \`not a locator\`, which is not a locator; a reference names a plane and keys${NOT_LOCATOR_HINT}`,
		);
		assert.deepEqual(e.path, ["cwd", "lazy", "n", "deep", 0, "a", "$ref"]);
	});
});

describe("checkWrittenRefs: the spelling it suggests for an unparsable reference", () => {
	const fixOf = (ref: string, s: OwnerState = emptyState(), patch: PlanePatch = {}): string => {
		const e = refusal(() => check({ ...patch, intents: { m: { $ref: ref } } }, s));
		const m = /write \{"\$ref":(".*")\}$/.exec(e.message);
		return m === null ? `(no fix) ${e.message}` : (JSON.parse(m[1] as string) as string);
	};

	it("quotes the key after a plane, keeping an owner the text names and adding the writer's otherwise", () => {
		assert.equal(fixOf("cwd.lazy.plans/a.md"), 'cwd.lazy["plans/a.md"]');
		assert.equal(fixOf("lazy.plans/a.md"), 'cwd.lazy["plans/a.md"]');
		assert.equal(fixOf("global.tactics.two words"), 'global.tactics["two words"]');
		// A key may hold a line break: the quoted spelling keeps it, escaped.
		assert.equal(fixOf("lazy.a\nb"), 'cwd.lazy["a\\nb"]');
		const e = refusal(() => check({ intents: { m: { $ref: "lazy.plans/a.md" } } }, emptyState(), (ref) => `model:${ref}`));
		assert.equal(
			e.message,
			'`cwd.intents.m.$ref` is `model:lazy.plans/a.md`, which is not a locator: a key that is not a plain name (letters, digits, _ $ -) is quoted; write {"$ref":"model:cwd.lazy[\\"plans/a.md\\"]"}',
		);
	});

	it("points a bare key to the one plane holding it once the patch is applied, else gives no spelling", () => {
		const one = state({ lazy: { "plan.md": "x" } });
		assert.equal(fixOf("plan.md", one), 'cwd.lazy["plan.md"]');
		// Written by the same patch: it exists once the patch is applied.
		assert.equal(fixOf("a b", emptyState(), { tactics: { "a b": 1 } }), 'cwd.tactics["a b"]');
		// Deleted by the same patch, held by two planes, or held by none: no spelling to suggest.
		assert.match(fixOf("plan.md", one, { lazy: { "plan.md": null } }), /^\(no fix\) .*which is not a locator; a reference names a plane/);
		assert.match(fixOf("plan.md", state({ lazy: { "plan.md": 1 }, tactics: { "plan.md": 2 } })), /^\(no fix\) /);
		assert.match(fixOf("plan.md"), /^\(no fix\) /);
	});
});

describe("checkWrittenRefs: a dotted spelling of an existing key with dots", () => {
	const dotted = "`cwd.intents.m.$ref` is `cwd.lazy.plan.md`, which names the key `plan` (missing), not the existing key `plan.md`; ";

	it("is refused with the quoted spelling, the key known from the state or from the patch", () => {
		const e = refusal(() => check({ intents: { m: { $ref: "cwd.lazy.plan.md" } } }, state({ lazy: { "plan.md": "x" } })));
		assert.equal(e.message, `${dotted}quote keys that are not plain names: write {"$ref":"cwd.lazy[\\"plan.md\\"]"}`);
		assert.deepEqual(e.path, ["cwd", "intents", "m", "$ref"]);
		const fromPatch = refusal(() => check({ lazy: { "plan.md": "x" }, intents: { m: { $ref: "cwd.lazy.plan.md" } } }));
		assert.equal(fromPatch.message, e.message);
		// The key `plan` deleted by the same patch is missing once it is applied.
		refusal(() => check({ lazy: { plan: null }, intents: { m: { $ref: "cwd.lazy.plan.md" } } }, state({ lazy: { plan: { md: 1 }, "plan.md": "x" } })));
	});

	it("is accepted when it names an existing key, when the dotted key is absent, or when it is not the writer's current plane", () => {
		const both = state({ lazy: { plan: { md: 1 }, "plan.md": "x" } });
		check({ intents: { m: { $ref: "cwd.lazy.plan.md" } } }, both);
		check({ intents: { m: { $ref: "cwd.lazy.plan.md" } } }, emptyState());
		check({ lazy: { "plan.md": null }, intents: { m: { $ref: "cwd.lazy.plan.md" } } }, state({ lazy: { "plan.md": "x" } }));
		check({ lazy: { plan: {} }, intents: { m: { $ref: "cwd.lazy.plan.md" } } }, state({ lazy: { "plan.md": "x" } }));
		const dots = state({ lazy: { "plan.md": "x", '"plan"].md': "y" } });
		for (const ref of ["global.lazy.plan.md", "cwd[1].lazy.plan.md", "effective.lazy.plan.md", "cwd.lazy.plan", "cwd.lazy[0].md", 'cwd.lazy["plan"].md', "cwd"])
			check({ intents: { m: { $ref: ref } } }, dots);
		// A registered root: the rule is about plane keys (and the state has no roots to look in).
		check({ intents: { m: { $ref: "cwd.roots.todos.a" } } }, state({ lazy: { "todos.a": 1 } }));
	});
});

describe("checkWrittenRefs: which objects it judges", () => {
	it("judges the merged object: a stored reference the patch adds a member to is refused", () => {
		const s = state({ intents: { m: { $ref: "cwd.tactics.a" } } });
		const e = refusal(() => check({ intents: { m: { why: "x" } } }, s));
		assert.match(e.message, /^`cwd\.intents\.m` has `\$ref` beside other members \(`why`\)/);
		// A patch that only deletes siblings of a stored `$ref` leaves a reference.
		check({ intents: { m: { note: null } } }, state({ intents: { m: { $ref: "cwd.tactics.a", note: "x" } } }));
		const bad = refusal(() => check({ intents: { m: { note: null } } }, state({ intents: { m: { $ref: "not a locator", note: "x" } } })));
		assert.match(bad.message, /^`cwd\.intents\.m\.\$ref` is `not a locator`, which is not a locator/);
	});

	it("judges a stored object below the patch with the stored member it merges into", () => {
		const s = state({ intents: { m: { note: { $ref: 3 }, other: 1 } } });
		check({ intents: { m: { other: 2 } } }, s);
		const e = refusal(() => check({ intents: { m: { note: { x: 1 } } } }, s));
		assert.equal(e.message, '`cwd.intents.m.note.$ref` must be a locator string, e.g. {"$ref":"cwd.tactics.t1"}');
	});

	it("after a patch deletes `$ref`, judges the members the patch writes and nothing stored", () => {
		const s = state({ intents: { m: { $ref: "cwd.tactics.a", x: { $ref: 3 } } } });
		check({ intents: { m: { $ref: null } } }, s);
		const e = refusal(() => check({ intents: { m: { $ref: null, y: { $ref: 5 } } } }, s));
		assert.deepEqual(e.path, ["cwd", "intents", "m", "y", "$ref"]);
	});

	it("leaves stored data the patch does not touch unjudged, and deletions and scalars pass", () => {
		const s = state({ intents: { bad: { $ref: 3 } }, tactics: { worse: [{ $ref: "x", y: 1 }] } });
		check({ intents: { good: "x", bad: null }, tactics: { worse: "replaced" } }, s);
		// A value that replaces a stored object is stored as written: its own `$ref` objects are judged.
		const e = refusal(() => check({ tactics: { worse: [{ $ref: "x" }] } }, s));
		assert.deepEqual(e.path, ["cwd", "tactics", "worse", 0, "$ref"]);
	});
});

describe("anchorRevealedRefs", () => {
	it("anchors a stored relative `$ref` whose siblings the patch deletes, in a copy", () => {
		const s = state({ intents: { m: { $ref: "lazy.plan", x: 1, y: 2 } }, tactics: { t: { owns: { first: { $ref: "tactics.a", note: "n" } } } } });
		const patch: PlanePatch = {
			intents: { m: { x: null, y: null, absent: null }, other: "kept" },
			tactics: { t: { owns: { first: { note: null } } } },
			lazy: { l: 1 },
		};
		const before = structuredClone(patch);
		const out = anchorRevealedRefs("cwd", s, patch);
		assert.deepEqual(out, {
			intents: { m: { x: null, y: null, absent: null, $ref: "cwd.lazy.plan" }, other: "kept" },
			tactics: { t: { owns: { first: { note: null, $ref: "cwd.tactics.a" } } } },
			lazy: { l: 1 },
		});
		assert.deepEqual(patch, before);
		assert.equal(out.lazy, patch.lazy, "a plane with nothing revealed is the patch's own");
	});

	it("anchors `response` for Session only, and keeps `__proto__` keys as data", () => {
		const s = state({ intents: { m: { $ref: "response.last", x: 1 } } });
		const patch: PlanePatch = { intents: { m: { x: null } } };
		assert.deepEqual(anchorRevealedRefs("session", s, patch), { intents: { m: { x: null, $ref: "session.response.last" } } });
		assert.equal(anchorRevealedRefs("cwd", s, patch), patch);
		const proto = JSON.parse('{"__proto__":{"$ref":"lazy.p","x":1}}') as JsonObject;
		const out = anchorRevealedRefs("cwd", state({ intents: proto }), { intents: JSON.parse('{"__proto__":{"x":null}}') as JsonObject });
		assert.deepEqual(Object.getOwnPropertyDescriptor(out.intents, "__proto__")?.value, { x: null, $ref: "cwd.lazy.p" });
		assert.equal(Object.getPrototypeOf(out.intents), Object.prototype);
	});

	it("returns the patch itself when it reveals nothing", () => {
		const s = state({
			intents: {
				two: { $ref: "lazy.plan", x: 1, y: 2 },
				alone: { $ref: "lazy.plan" },
				qualified: { $ref: "global.lazy.plan", x: 1 },
				notLoc: { $ref: "a b", x: 1 },
				num: { $ref: 1, x: 1 },
				kept: { $ref: "lazy.plan", x: 1 },
				three: { $ref: "lazy.plan", x: 1, y: 2 },
				scalar: "s",
			},
		});
		for (const m of [
			{ two: { x: null } }, // one sibling left
			{ alone: { z: null } }, // nothing deleted: a stored lone `$ref` is not revealed by this patch
			{ qualified: { x: null } },
			{ notLoc: { x: null } },
			{ num: { x: null } },
			{ kept: { $ref: "tactics.b", x: null } }, // the patch writes `$ref` itself (anchored by the caller)
			{ kept: { x: null, y: { $ref: "lazy.q", z: 1 } } }, // a written value: not a deletion
			{ three: { $ref: null, x: null } }, // the reference itself deleted: `y` is left as data
			{ scalar: { x: null }, kept: "replaced", missing: { x: null } },
		] as JsonObject[]) {
			const patch: PlanePatch = { intents: m, lazy: { l: null } };
			assert.equal(anchorRevealedRefs("cwd", s, patch), patch, JSON.stringify(m));
		}
	});

	it("looks below a written member for stored references it reveals", () => {
		const s = state({ intents: { m: { $ref: "lazy.a", x: 1, inner: { $ref: "lazy.b", q: 1 } } } });
		const out = anchorRevealedRefs("cwd", s, { intents: { m: { inner: { q: null } } } });
		assert.deepEqual(out, { intents: { m: { inner: { q: null, $ref: "cwd.lazy.b" } } } });
	});
});

describe("storedRefProblems", () => {
	it("lists, in plane and document order, the refusal each malformed stored reference would get", () => {
		const s = state({
			intents: { ok: { owns: [{ $ref: "cwd.tactics.a" }] }, bad: { owns: [{ $ref: "lazy.plans/a.md" }, { $ref: "cwd.tactics.a", note: 1 }] } },
			tactics: { x: { $ref: "cwd.lazy.plan.md" } },
			lazy: { "plan.md": 1, n: { deep: { $ref: 7 } } },
		});
		assert.deepEqual(storedRefProblems("cwd", s), [
			'`cwd.intents.bad.owns[0].$ref` is `lazy.plans/a.md`, which is not a locator: a key that is not a plain name (letters, digits, _ $ -) is quoted; write {"$ref":"cwd.lazy[\\"plans/a.md\\"]"}',
			'`cwd.intents.bad.owns[1]` has `$ref` beside other members (`note`): a reference is {"$ref":"<locator>"} alone in its object; put it under its own key (e.g. {"ref":{"$ref":"cwd.tactics.a"}}) or rename `$ref`',
			'`cwd.tactics.x.$ref` is `cwd.lazy.plan.md`, which names the key `plan` (missing), not the existing key `plan.md`; quote keys that are not plain names: write {"$ref":"cwd.lazy[\\"plan.md\\"]"}',
			'`cwd.lazy.n.deep.$ref` must be a locator string, e.g. {"$ref":"cwd.tactics.t1"}',
		]);
		assert.deepEqual(storedRefProblems("global", state({ tactics: { a: { $ref: "global.lazy.a" } } })), []);
	});
});
