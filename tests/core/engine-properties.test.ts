/**
 * Laws of the engine, checked with fast-check over random patch sequences: replay and
 * temporal reads agree with recorded snapshots for several retentions, incremental sizes
 * are exact, arbitrary keys round-trip without prototype pollution, merge is idempotent,
 * a patch that changes nothing stages nothing, and measured sizes and key lists stay exact
 * across in-place merges.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { StateError } from "../../lib/core/errors.js";
import { historyFrom, historyOf, newHistory, patchAt, replay, stateAt, valueAt } from "../../lib/core/history.js";
import { cloneJson, getOwn, jsonEqual, jsonUtf8Bytes, ownKeys, parsePointer, setOwn } from "../../lib/core/json.js";
import { applyPatch, planPatch } from "../../lib/core/merge.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { emptyState, stateBytes } from "../../lib/core/state.js";
import { PLANES } from "../../lib/core/types.js";
import type { Json, JsonObject, OwnerHistory, OwnerState, PlanePatch } from "../../lib/core/types.js";

const SPECIAL = ["__proto__", "constructor", "prototype", "$ref", "a.b", "[x]", "~", "/", "", "~1"];
const KEYS = ["a", "b", "c", ...SPECIAL];
const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

/** An object built with own-data writes, so generated `__proto__` keys stay data. */
function objectOf(entries: ReadonlyArray<readonly [string, Json]>): JsonObject {
	const o: JsonObject = {};
	for (const [k, v] of entries) setOwn(o, k, v);
	return o;
}

function objectArb(key: fc.Arbitrary<string>, value: fc.Arbitrary<Json>, maxLength: number): fc.Arbitrary<JsonObject> {
	return fc.array(fc.tuple(key, value), { maxLength }).map(objectOf);
}

const scalar: fc.Arbitrary<Json> = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom("x", "y", ""), fc.boolean());
const key = fc.constantFrom(...KEYS);

/** Merge-patch values: null deletes, arrays and scalars replace, objects recurse. */
const patchValue: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
	v: fc.oneof(
		{ depthSize: "small", maxDepth: 3 },
		fc.constant(null),
		scalar,
		fc.array(fc.oneof(scalar, fc.constant(null)), { maxLength: 3 }),
		objectArb(key, tie("v"), 3),
	),
})).v;

const planePatch: fc.Arbitrary<PlanePatch> = fc
	.array(fc.tuple(fc.constantFrom(...PLANES), fc.array(fc.tuple(key, patchValue), { minLength: 1, maxLength: 3 }).map(objectOf)), {
		minLength: 1,
		maxLength: 2,
	})
	.map((entries) => {
		const p: PlanePatch = {};
		for (const [plane, obj] of entries) p[plane] = obj;
		return p;
	});

const meta = (i: number) => ({ id: `t${i}`, at: "2026-11-30T10:00:00.000Z", by: { kind: "system", reason: "property" } as const });

function snap(s: OwnerState): OwnerState {
	return cloneJson(s as unknown as JsonObject) as unknown as OwnerState;
}

/** The refusal of a `$ref` object that is no reference (docs/spec.md §3.3), and no other error. */
const refusedRef = (e: unknown): boolean => e instanceof StateError && e.code === "invalid_input" && e.message.includes("$ref");

/** Whether staging `p` is refused because it would store a `$ref` object that is no reference. */
function refusedAsRef(h: OwnerHistory, p: PlanePatch, i: number): boolean {
	try {
		stage({ cwd: h }, { cwd: p }, meta(i));
		return false;
	} catch (e) {
		assert.ok(refusedRef(e), String(e));
		return true;
	}
}

/**
 * Commit each patch through stage; returns the history, the state after each commit and
 * the patches that were accepted (random `$ref` members are mostly refused, changing nothing).
 */
function build(patches: PlanePatch[], retention: number): { h: OwnerHistory; snaps: OwnerState[]; ids: string[]; accepted: PlanePatch[] } {
	const h = newHistory("cwd", retention);
	const snaps = [snap(h.state)];
	const ids: string[] = [];
	const accepted: PlanePatch[] = [];
	patches.forEach((p, i) => {
		const before = snap(h.state);
		if (refusedAsRef(h, p, i)) return assert.deepEqual(h.state, before);
		accepted.push(p);
		const r = stage({ cwd: h }, { cwd: p }, meta(i));
		if (r.noop) return;
		commitStaged({ cwd: h }, r);
		snaps.push(snap(h.state));
		ids.push(meta(i).id);
	});
	return { h, snaps, ids, accepted };
}

/** A refusal with `code`, never a made-up value. */
const refusedAs = (code: string) => (e: unknown) => e instanceof StateError && e.code === code;

/** Independent one-step read: numbers index arrays, strings key objects. */
function at(v: Json | undefined, seg: string | number): Json | undefined {
	if (typeof seg === "number") return Array.isArray(v) ? v[seg] : undefined;
	return v !== null && typeof v === "object" && !Array.isArray(v) ? getOwn(v, seg) : undefined;
}

function prototypeUntouched(): void {
	assert.equal(({} as Record<string, unknown>).polluted, undefined);
	assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), PROTO_NAMES);
}

describe("engine properties", () => {
	for (const retention of [0, 1, 7, 100]) {
		it(`(a) replay, temporal reads and sizes agree with snapshots, retention ${retention}`, () => {
			// Commits checked: refused `$ref` patches change nothing, so a bug refusing every patch would check nothing.
			let commits = 0;
			assertProperty(
				fc.property(fc.array(planePatch, { maxLength: 14 }), key, fc.oneof(key, fc.integer({ min: 0, max: 2 })), (patches, k, seg) => {
					const { h, snaps, ids } = build(patches, retention);
					commits += h.seq;
					assert.ok(h.tail.length <= retention);
					assert.equal(h.seq, snaps.length - 1);
					assert.deepEqual(replay(h.checkpoint, h.tail), h.state);
					assert.equal(h.bytes, stateBytes(h.state), "incremental bytes equal stateBytes");
					for (let n = 0; n <= h.tail.length; n++) {
						const expected = snaps[snaps.length - 1 - n] as OwnerState;
						assert.deepEqual(stateAt(h, n), expected, `stateAt ${n}`);
						const v = valueAt(h, n, ["tactics", k]);
						assert.deepEqual(v, getOwn(expected.tactics, k), `valueAt ${n} tactics.${k}`);
						const deep = valueAt(h, n, ["tactics", k, seg]);
						assert.deepEqual(deep, at(getOwn(expected.tactics, k), seg), `valueAt ${n} tactics.${k}.${seg}`);
					}
					// Beyond the retained tail: folded (history existed) or not_found (it never did); patches[N] alike.
					const beyond = refusedAs(h.checkpointSeq > 0 ? "folded" : "not_found");
					assert.throws(() => stateAt(h, h.tail.length + 1), beyond);
					assert.throws(() => valueAt(h, h.tail.length + 1, ["tactics", k]), beyond);
					for (let n = 0; n < h.tail.length; n++) assert.equal(patchAt(h, n).id, ids[ids.length - 1 - n], `patches[${n}]`);
					assert.throws(() => patchAt(h, h.tail.length), beyond);
					const rebuilt = historyFrom("cwd", h.checkpoint, h.checkpointSeq, h.tail, retention);
					assert.deepEqual(rebuilt.state, h.state);
					const expectedHistory = [];
					for (let i = 0; i < h.tail.length; i++) {
						const after = getOwn((snaps[snaps.length - 1 - i] as OwnerState).tactics, k);
						const before = getOwn((snaps[snaps.length - 2 - i] as OwnerState).tactics, k);
						if (before === undefined && after === undefined) continue;
						if (before !== undefined && after !== undefined && jsonEqual(before, after)) continue;
						const r = h.tail[h.tail.length - 1 - i];
						expectedHistory.push({ id: r?.id, at: r?.at, before: before ?? null, after: after ?? null });
					}
					assert.deepEqual(historyOf(h, ["tactics", k]), expectedHistory);
				}),
				{ numRuns: 1000 },
			);
			assert.ok(commits >= 2000, `only ${commits} commits in 1000 cases`);
		});
	}

	it("(c) arbitrary keys round-trip through applyPatch, JSON and pointers without pollution", () => {
		const anyKey = fc.oneof(fc.constantFrom(...SPECIAL), fc.string({ maxLength: 6 }));
		assertProperty(
			fc.property(anyKey, anyKey, scalar, (k1, k2, v) => {
				const h = newHistory("cwd", 5);
				const patch = { cwd: { lazy: objectOf([[k1, objectOf([[k2, v]])]]) } };
				// `{ "$ref": <scalar> }` is never a reference: refused, nothing written.
				if (k2 === "$ref") return assert.throws(() => stage({ cwd: h }, patch, meta(1)), refusedRef);
				const r = stage({ cwd: h }, patch, meta(1));
				assert.equal(r.noop, false);
				commitStaged({ cwd: h }, r);
				assert.deepEqual(parsePointer(r.report.changed[0] as string), ["cwd", "lazy", k1]);
				assert.ok(Object.hasOwn(h.state.lazy, k1));
				assert.equal(valueAt(h, 0, ["lazy", k1, k2]), v);
				const reloaded = JSON.parse(JSON.stringify(h.state)) as JsonObject;
				assert.ok(jsonEqual(reloaded, h.state as unknown as JsonObject));
				// Delete through the pointer's own tokens: the exact inverse path.
				const [, plane, entry] = parsePointer(r.report.changed[0] as string);
				const del = stage({ cwd: h }, { cwd: { [plane as "lazy"]: objectOf([[entry as string, null]]) } }, meta(2));
				commitStaged({ cwd: h }, del);
				assert.deepEqual(h.state, emptyState());
				prototypeUntouched();
			}),
			{ numRuns: 1000 },
		);
	});

	it("(e) applying a patch twice equals applying it once", () => {
		assertProperty(
			fc.property(planePatch, planePatch, (base, p) => {
				const s = emptyState();
				applyPatch(s, base);
				applyPatch(s, p);
				const once = snap(s);
				applyPatch(s, p);
				assert.deepEqual(s, once);
				assert.equal(planPatch("cwd", s, p).noop, true);
				prototypeUntouched();
			}),
			{ numRuns: 1000 },
		);
	});

	it("(f) a patch that changes nothing stages { noop: true } and no record", () => {
		let withAccepted = 0;
		assertProperty(
			fc.property(fc.array(planePatch, { minLength: 1, maxLength: 5 }), fc.constantFrom(...KEYS), (patches, k) => {
				const { h, accepted } = build(patches, 7);
				if (accepted.length > 0) withAccepted++;
				const seq = h.seq;
				const last = accepted[accepted.length - 1] ?? {};
				const again = stage({ cwd: h }, { cwd: last }, meta(99));
				assert.equal(again.noop, true, "re-applying the last patch");
				assert.equal("records" in again, false);
				// Re-setting current values and deleting an absent key also changes nothing.
				const same: PlanePatch = { tactics: cloneJson(h.state.tactics), lazy: objectOf(getOwn(h.state.lazy, k) === undefined ? [[k, null]] : []) };
				const r = stage({ cwd: h }, { cwd: same }, meta(100));
				assert.equal(r.noop, true, "re-setting current values");
				commitStaged({ cwd: h }, r);
				assert.equal(h.seq, seq);
			}),
			{ numRuns: 1000 },
		);
		assert.ok(withAccepted >= 500, `only ${withAccepted} of 1000 cases re-applied an accepted patch`);
	});

	it("(g) measured sizes and key lists are exact for any JSON, and stay exact across in-place merges", () => {
		/** Every object and array inside `v`, outermost first. */
		const containers = (v: Json, out: Array<Json[] | JsonObject> = []): Array<Json[] | JsonObject> => {
			if (Array.isArray(v)) {
				out.push(v);
				for (const item of v) containers(item, out);
			} else if (v !== null && typeof v === "object") {
				out.push(v);
				for (const k of Object.keys(v)) containers(v[k] as Json, out);
			}
			return out;
		};
		const exact = (v: Json) => Buffer.byteLength(JSON.stringify(v), "utf8");
		// Any JSON, with long and multi-byte strings (the long-string path measures at 1024 characters).
		const text = fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary", minLength: 1020, maxLength: 1100 }));
		assertProperty(
			fc.property(fc.jsonValue({ maxDepth: 4, stringUnit: "grapheme" }), text, (v, s) => {
				for (const value of [v as Json, s, [s, v as Json], { [s]: s }]) {
					assert.equal(jsonUtf8Bytes(value), exact(value));
					assert.equal(jsonUtf8Bytes(value), exact(value), "the second measure is the first");
				}
			}),
			{ numRuns: 300 },
		);
		assertProperty(
			fc.property(fc.array(planePatch, { minLength: 1, maxLength: 8 }), (patches) => {
				const state = emptyState();
				for (const p of patches) {
					// Measure and list everything first, so an entry the merge failed to forget would be stale.
					for (const c of containers(state as unknown as JsonObject)) {
						jsonUtf8Bytes(c);
						if (!Array.isArray(c)) ownKeys(c);
					}
					applyPatch(state, p);
					for (const c of containers(state as unknown as JsonObject)) {
						assert.equal(jsonUtf8Bytes(c), exact(c), `size of ${JSON.stringify(c)}`);
						if (!Array.isArray(c)) assert.deepEqual(ownKeys(c), Object.keys(c));
					}
				}
			}),
			{ numRuns: 500 },
		);
	});
});
