/**
 * The write precondition (`core/precondition.ts`, issue 38) as laws over generated histories: a
 * patch is refused exactly when one of its leaves and a leaf another writer changed after the
 * seen seq are the same path or one lies inside the other; every key reported is one the patch
 * writes (or a prefix of one) and one that changed; a client that saw the latest seq, or wrote
 * only other keys, is never refused; a seq the store never reached, or one folded away, is.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { fold, newHistory } from "../../lib/core/history.js";
import { checkSeen } from "../../lib/core/precondition.js";
import type { Json, PlanePatch } from "../../lib/core/types.js";
import { commitOn } from "../helpers/history.js";
import { assertProperty } from "../helpers/seed.js";

/** A value a patch writes at a tactic: a scalar, a deletion, or one level of object. */
const leafValue: fc.Arbitrary<Json> = fc.oneof(fc.integer({ min: 0, max: 9 }), fc.constant(null));
const value: fc.Arbitrary<Json> = fc.oneof(leafValue, fc.dictionary(fc.constantFrom("x", "y"), leafValue, { minKeys: 1, maxKeys: 2 }));
const tactics: fc.Arbitrary<PlanePatch> = fc.dictionary(fc.constantFrom("a", "b", "c", "d"), value, { minKeys: 1, maxKeys: 3 }).map((t) => ({ tactics: t }));

/** Leaf paths of a tactics patch, written out here as the law states them (not through the code under test). */
function leaves(p: PlanePatch): string[][] {
	const out: string[][] = [];
	for (const [k, v] of Object.entries(p.tactics ?? {})) {
		if (v !== null && typeof v === "object" && !Array.isArray(v)) for (const j of Object.keys(v)) out.push([k, j]);
		else out.push([k]);
	}
	return out;
}
const isPrefix = (a: readonly string[], b: readonly string[]) => a.length <= b.length && a.every((s, i) => s === b[i]);
const overlap = (a: readonly string[], b: readonly string[]) => isPrefix(a, b) || isPrefix(b, a);

describe("the write precondition (checkSeen)", () => {
	it("refuses exactly the patches overlapping a key changed since the seen seq, and reports only such keys", () => {
		assertProperty(
			fc.property(fc.array(tactics, { maxLength: 3 }), fc.array(tactics, { maxLength: 3 }), tactics, (before, others, mine) => {
				const h = newHistory("cwd", 100);
				for (const p of before) commitOn(h, p);
				const seen = h.seq;
				for (const p of others) commitOn(h, p);
				const changed = others.flatMap(leaves);
				const written = leaves(mine);
				const found = checkSeen(h, seen, mine);
				const collides = written.some((w) => changed.some((c) => overlap(w, c)));
				assert.equal(found.kind, collides ? "changed" : "ok");
				if (found.kind === "changed") {
					assert.equal(found.transitions, others.length);
					assert.equal(found.seq, h.seq);
					for (const k of found.keys) {
						assert.equal(k.plane, "tactics");
						assert.ok(
							written.some((w) => isPrefix(k.path, w)),
							`reported ${k.path} is written by the patch`,
						);
						assert.ok(
							changed.some((c) => overlap(k.path, c)),
							`reported ${k.path} changed`,
						);
					}
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("never refuses a client that saw the latest seq; refuses a seq never reached and one folded away", () => {
		assertProperty(
			fc.property(fc.array(tactics, { minLength: 3, maxLength: 6 }), tactics, (patches, mine) => {
				const h = newHistory("cwd", 100);
				for (const p of patches) commitOn(h, p);
				assert.deepEqual(checkSeen(h, h.seq, mine), { kind: "ok" });
				assert.deepEqual(checkSeen(h, h.seq + 1, mine), { kind: "ahead", seq: h.seq });
				fold(h, 1);
				assert.deepEqual(checkSeen(h, 0, mine), { kind: "folded", seq: h.seq, retainedFrom: h.checkpointSeq });
			}),
			{ numRuns: 100 },
		);
	});

	it("counts an intent deletion's cascade as a write of what it owns", () => {
		const h = newHistory("cwd", 100);
		commitOn(h, { intents: { login: { goal: "g", owns: [{ $ref: "cwd.tactics.t1" }] } }, tactics: { t1: "step", t2: "other" } });
		const seen = h.seq;
		commitOn(h, { tactics: { t1: "changed by another writer" } });
		const found = checkSeen(h, seen, { intents: { login: null } });
		assert.equal(found.kind, "changed");
		assert.deepEqual(found.kind === "changed" ? found.keys : [], [{ plane: "tactics", path: ["t1"] }]);
		assert.deepEqual(checkSeen(h, seen, { tactics: { t2: "mine" } }), { kind: "ok" }, "another key merges");
	});

	it("names a changed key once, however many of the patch's paths lie inside it", () => {
		const h = newHistory("cwd", 100);
		commitOn(h, { tactics: { a: { x: 1, y: 1 } } });
		const seen = h.seq;
		commitOn(h, { tactics: { a: "replaced whole by another writer" } });
		const found = checkSeen(h, seen, { tactics: { a: { x: 2, y: 2, z: { deep: 1 } } } });
		assert.deepEqual(found, { kind: "changed", seq: 2, transitions: 1, keys: [{ plane: "tactics", path: ["a"] }] });
	});
});
