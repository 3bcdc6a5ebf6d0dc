/**
 * Ownership cascades and dangling references (docs/spec.md §3.3), by example and against a
 * straightforward reference model on random intents/targets (fast-check).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { findDanglingRefs, planCascades } from "../../lib/core/ownership.js";
import { applyMergePatch } from "../../lib/core/merge.js";
import { refsIn } from "../../lib/core/refs.js";
import { emptyState } from "../../lib/core/state.js";
import type { Json, JsonObject, OwnerState, PlanePatch } from "../../lib/core/types.js";

function state(parts: Partial<OwnerState>): OwnerState {
	return { ...emptyState(), ...parts };
}

describe("planCascades", () => {
	const base = state({
		intents: {
			ship: { goal: "ship", owns: [{ $ref: "cwd.tactics.build" }, { $ref: "cwd.lazy.plan" }, { $ref: "cwd.tactics.shared" }] },
			docs: { goal: "docs", steps: { first: { $ref: "cwd.tactics.shared" } } },
		},
		tactics: { build: "npm run build", shared: "review", other: 1 },
		lazy: { plan: "long text" },
	});

	it("deletes the owned targets no remaining intent references", () => {
		const r = planCascades("cwd", base, { intents: { ship: null } });
		assert.deepEqual(r.cascades, [{ owner: "cwd", intent: "ship", targets: ["cwd.tactics.build", "cwd.lazy.plan"] }]);
		assert.deepEqual(r.extraDeletions, { tactics: { build: null }, lazy: { plan: null } });
		assert.deepEqual(r.danglingRefs, []);
	});

	it("keeps a target the same patch writes, and skips targets that do not exist", () => {
		const s = state({ ...base, lazy: {} });
		const r = planCascades("cwd", s, { intents: { ship: null }, tactics: { build: "keep me" } });
		assert.deepEqual(r.cascades, []);
		assert.deepEqual(r.extraDeletions, {});
	});

	it("gives a target shared by two deleted intents to the first in key order", () => {
		const r = planCascades("cwd", base, { intents: { ship: null, docs: null } });
		assert.deepEqual(r.cascades, [
			{ owner: "cwd", intent: "docs", targets: ["cwd.tactics.shared"] },
			{ owner: "cwd", intent: "ship", targets: ["cwd.tactics.build", "cwd.lazy.plan"] },
		]);
	});

	it("owns nothing through cross-owner, historical, overlay, whole-plane or nested-path-only refs", () => {
		const s = state({
			intents: {
				i: [
					{ $ref: "global.tactics.a" },
					{ $ref: "cwd[1].tactics.a" },
					{ $ref: "effective.tactics.a" },
					{ $ref: "cwd.tactics" },
					{ $ref: "cwd.strategy.a" },
					{ $ref: "cwd.patches[0]" },
					{ $ref: "tactics.a" },
				],
			},
			tactics: { a: 1 },
			strategy: { a: 1 },
		});
		assert.deepEqual(planCascades("cwd", s, { intents: { i: null } }).cascades, []);
	});

	it("a ref into a nested path owns the top-level entry", () => {
		const s = state({ intents: { i: { $ref: 'cwd.lazy["notes/a.md"].sections[0]' } }, lazy: { "notes/a.md": { sections: ["x"] } } });
		assert.deepEqual(planCascades("cwd", s, { intents: { i: null } }).extraDeletions, { lazy: { "notes/a.md": null } });
	});

	it("reports refs left dangling by deleting a target, never deleting the intent", () => {
		const r = planCascades("cwd", base, { tactics: { shared: null } });
		assert.deepEqual(r.cascades, []);
		assert.deepEqual(r.extraDeletions, {});
		// Each names the exact patch that drops it: a member becomes null, an array is resent without it.
		assert.deepEqual(r.danglingRefs, [
			{ owner: "cwd", intent: "docs", ref: "cwd.tactics.shared", drop: { steps: { first: null } } },
			{ owner: "cwd", intent: "ship", ref: "cwd.tactics.shared", drop: { owns: [{ $ref: "cwd.tactics.build" }, { $ref: "cwd.lazy.plan" }] } },
		]);
	});

	it("reports a written intent pointing at a missing target; an intent that is itself the ref has no drop patch", () => {
		const r = planCascades("cwd", base, { intents: { new: { $ref: "cwd.tactics.missing" } } });
		assert.deepEqual(r.danglingRefs, [{ owner: "cwd", intent: "new", ref: "cwd.tactics.missing" }]);
	});

	it("one drop patch per intent removes all its dangling refs, however deep in arrays", () => {
		const s = state({
			intents: {
				m: {
					owns: [{ $ref: "cwd.tactics.a" }, { $ref: "cwd.tactics.b" }, { $ref: "cwd.tactics.c" }],
					deep: [[{ $ref: "cwd.tactics.a" }, 1], { x: { $ref: "cwd.tactics.b" }, y: 2 }],
					keep: "k",
				},
			},
			tactics: { a: 1, b: 2, c: 3 },
		});
		const r = planCascades("cwd", s, { tactics: { a: null, b: null } });
		const drop = { owns: [{ $ref: "cwd.tactics.c" }], deep: [[1], { y: 2 }] };
		assert.deepEqual(r.danglingRefs, [
			{ owner: "cwd", intent: "m", ref: "cwd.tactics.a", drop },
			{ owner: "cwd", intent: "m", ref: "cwd.tactics.b", drop },
		]);
		// Applying it leaves no dangling ref and changes nothing else.
		const after = applyMergePatch(s.intents.m as Json, drop);
		assert.deepEqual(after, { owns: [{ $ref: "cwd.tactics.c" }], deep: [[1], { y: 2 }], keep: "k" });
	});

	it("does nothing for patches that neither touch intents nor delete entries", () => {
		const r = planCascades("cwd", base, { tactics: { x: null, build: "changed" }, lazy: { more: "text" }, strategy: { a: null } });
		assert.deepEqual(r, { cascades: [], extraDeletions: {}, danglingRefs: [] });
	});

	it("keeps `__proto__` targets as own data in extraDeletions", () => {
		const s = state({ intents: { i: { $ref: "cwd.tactics.__proto__" } }, tactics: JSON.parse('{"__proto__": 1}') as JsonObject });
		const r = planCascades("cwd", s, { intents: { i: null } });
		assert.ok(Object.hasOwn(r.extraDeletions.tactics as object, "__proto__"));
		assert.deepEqual(r.cascades[0]?.targets, ["cwd.tactics.__proto__"]);
	});
});

describe("findDanglingRefs", () => {
	it("finds every intent ref to a missing tactics/lazy entry of the owner", () => {
		const s = state({
			intents: { a: [{ $ref: "session.lazy.gone" }, { $ref: "session.lazy.here" }, { $ref: "session.lazy.gone" }], b: { $ref: "cwd.lazy.gone" } },
			lazy: { here: 1 },
		});
		assert.deepEqual(findDanglingRefs("session", s), [{ owner: "session", intent: "a", ref: "session.lazy.gone" }]);
	});
});

describe("cascade law against a reference model", () => {
	const keys = fc.constantFrom("a", "b", "c", "d", "__proto__", "x.y", "0");
	const plane = fc.constantFrom("tactics" as const, "lazy" as const);
	const target = fc.record({ plane, key: keys });
	const fmt = (t: { plane: string; key: string }): string => `cwd.${t.plane}${/^[A-Za-z_$][\w$-]*$/.test(t.key) ? `.${t.key}` : `[${JSON.stringify(t.key)}]`}`;

	it("deleting intents removes exactly the owned, existing targets no remaining intent references, and reports what the patch left dangling", () => {
		assertProperty(
			fc.property(
				fc.dictionary(fc.constantFrom("i1", "i2", "i3", "i4"), fc.array(target, { maxLength: 3 }), { maxKeys: 4 }),
				fc.uniqueArray(target, { selector: (t) => `${t.plane}/${t.key}`, maxLength: 8 }),
				fc.array(fc.constantFrom("i1", "i2", "i3", "i4", "zz"), { maxLength: 3 }),
				fc.array(target, { maxLength: 2 }),
				fc.array(target, { maxLength: 2 }),
				(intentRefs, existing, toDelete, explicitWrites, explicitDeletes) => {
					const s = emptyState();
					for (const [k, targets] of Object.entries(intentRefs)) s.intents[k] = { refs: targets.map((t) => ({ $ref: fmt(t) })) };
					for (const t of existing) Object.defineProperty(s[t.plane], t.key, { value: "body", enumerable: true, writable: true, configurable: true });
					const patch: PlanePatch = { intents: {} };
					for (const k of toDelete) (patch.intents as JsonObject)[k] = null;
					for (const t of explicitDeletes)
						Object.defineProperty((patch[t.plane] ??= {}), t.key, { value: null, enumerable: true, writable: true, configurable: true });
					for (const t of explicitWrites)
						Object.defineProperty((patch[t.plane] ??= {}), t.key, { value: "written", enumerable: true, writable: true, configurable: true });

					// Reference model: owned-by-deleted minus referenced-by-remaining, existing, not written.
					const deleted = new Set<string>(toDelete.filter((k) => Object.hasOwn(intentRefs, k)));
					const kept = new Set<string>();
					for (const [k, ts] of Object.entries(intentRefs)) if (!deleted.has(k)) for (const t of ts) kept.add(fmt(t));
					const written = new Set(explicitWrites.map(fmt));
					const exists = (t: { plane: "tactics" | "lazy"; key: string }): boolean => Object.hasOwn(s[t.plane], t.key);
					const removedByPatch = new Set(explicitDeletes.filter((t) => exists(t) && !written.has(fmt(t))).map(fmt));
					const expected = new Set<string>();
					for (const k of deleted) {
						for (const t of intentRefs[k] ?? []) {
							if (!kept.has(fmt(t)) && !written.has(fmt(t)) && !removedByPatch.has(fmt(t)) && exists(t)) expected.add(fmt(t));
						}
					}
					// Dangling: remaining intents' refs to entries this patch removed (deduplicated per intent).
					const expectedDangling: string[] = [];
					for (const k of Object.keys(intentRefs).sort()) {
						if (deleted.has(k)) continue;
						for (const ref of new Set((intentRefs[k] ?? []).map(fmt))) if (removedByPatch.has(ref)) expectedDangling.push(`${k} ${ref}`);
					}

					const r = planCascades("cwd", s, patch);
					const got = r.cascades.flatMap((c) => c.targets);
					assert.equal(got.length, new Set(got).size, "each target reported once");
					assert.deepEqual(new Set(got), expected);
					const extra: string[] = [];
					for (const p of ["tactics", "lazy"] as const) for (const k of Object.keys(r.extraDeletions[p] ?? {})) extra.push(fmt({ plane: p, key: k }));
					assert.deepEqual(new Set(extra), expected);
					for (const c of r.cascades) assert.ok(deleted.has(c.intent));
					assert.deepEqual(
						r.danglingRefs.map((d) => `${d.intent} ${d.ref}`),
						expectedDangling,
					);
					// Each drop patch removes exactly that intent's dangling refs, keeping the rest in order.
					for (const d of r.danglingRefs) {
						const gone = new Set(r.danglingRefs.filter((e) => e.intent === d.intent).map((e) => e.ref));
						const before = refsIn(s.intents[d.intent] as Json);
						assert.deepEqual(
							refsIn(applyMergePatch(s.intents[d.intent] as Json, d.drop as JsonObject)),
							before.filter((ref) => !gone.has(ref)),
						);
					}
					assert.equal(({} as Record<string, Json>)["body"], undefined);
				},
			),
			{ numRuns: 1000 },
		);
	});
});

describe("cost of ordinary writes", () => {
	/** A state whose every read throws: proves planCascades never looked at it. */
	const untouchable = new Proxy({} as OwnerState, {
		get(_t, prop) {
			throw new Error(`state.${String(prop)} was read`);
		},
	});

	it("never reads state when the patch neither touches intents nor deletes entries", () => {
		const patch: PlanePatch = {
			tactics: { a: "x", b: { nested: null } },
			lazy: { body: "text" },
			strategy: { gone: null },
			artifacts: { "a.md": { kind: "file" } },
		};
		assert.deepEqual(planCascades("cwd", untouchable, patch), { cascades: [], extraDeletions: {}, danglingRefs: [] });
	});

	it("checks only the written intent when no intent or entry is deleted", () => {
		const intents = new Proxy({ big: { $ref: "cwd.tactics.missing" } } as JsonObject, {
			get(t, prop) {
				if (prop === "big") throw new Error("an unwritten intent's value was read");
				return Reflect.get(t, prop);
			},
		});
		const s = { ...emptyState(), intents, tactics: { here: 1 } };
		const r = planCascades("cwd", s, { intents: { mine: { owns: [{ $ref: "cwd.tactics.here" }, { $ref: "cwd.lazy.nope" }] } } });
		assert.deepEqual(r.danglingRefs, [{ owner: "cwd", intent: "mine", ref: "cwd.lazy.nope", drop: { owns: [{ $ref: "cwd.tactics.here" }] } }]);
	});
});
