/**
 * Laws of the model interface (fast-check): for every sole owner, flat input →
 * toCanonicalPatch → presentValue gives back exactly what the model sent, whatever
 * reference shapes it holds; and canonical storage holds only owner-qualified current refs.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { StateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import { formatLocator, type Locator, tryParseLocator } from "../../lib/core/locator.js";
import { refsIn } from "../../lib/core/refs.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { OWNERS, PLANES, type Json, type JsonObject, type Owner } from "../../lib/core/types.js";
import { presentValue, toCanonicalPatch } from "../../lib/model/interface.js";

const key = fc.oneof(
	fc.constantFrom("__proto__", "constructor", "prototype", "$ref", "a.b", "x[0]", "~1", "/", "", "0", "plan", "step-1"),
	fc.string({ maxLength: 6 }),
);
const segs = fc.array(fc.oneof(key, fc.nat(20)), { maxLength: 3 });
const plane = fc.constantFrom(...PLANES);

/** Every reference shape a flat model may send, for sole owner `owner`. */
function refString(owner: Owner): fc.Arbitrary<string> {
	const others = OWNERS.filter((o) => o !== owner);
	const loc = (l: fc.Arbitrary<Locator>): fc.Arbitrary<string> => l.map(formatLocator);
	return fc.oneof(
		// relative current (gets anchored)
		loc(fc.record({ kind: fc.constant("state" as const), scope: fc.constant(null), offset: fc.constant(0), plane, path: segs })),
		// cross-owner current or historical
		loc(fc.record({ kind: fc.constant("state" as const), scope: fc.constantFrom(...others), offset: fc.nat(5), plane, path: segs })),
		// same-owner historical, e.g. `cwd[2].x`
		loc(fc.record({ kind: fc.constant("state" as const), scope: fc.constant(owner), offset: fc.integer({ min: 1, max: 9 }), plane, path: segs })),
		// overlay, current or historical
		loc(
			fc.record({
				kind: fc.constant("state" as const),
				scope: fc.constant("effective" as const),
				offset: fc.nat(3),
				plane: fc.option(plane, { nil: null }).map((p) => p ?? "tactics"),
				path: segs,
			}),
		),
		// patches[N], relative (gets anchored) or another owner's
		loc(fc.record({ kind: fc.constant("patches" as const), owner: fc.constantFrom<Owner | null>(null, ...others), index: fc.nat(5), path: segs })),
		fc.constantFrom(
			"response",
			"response.last.text",
			"$HOME",
			"a.b",
			"lazy.plan is long",
			"cwd.",
			".tactics",
			"lazy..x",
			"tactics.]",
			"$ref",
			"price: $5.00",
			"README.md",
		),
		fc.string({ maxLength: 12 }),
	);
}

/** Storage never holds a relative locator (bar `response` of a non-Session owner: it names nothing there). */
function assertQualified(stored: Json, owner: Owner): void {
	for (const ref of refsIn(stored)) {
		const flat = tryParseLocator(ref, "flat");
		const ownerless = flat !== undefined && (flat.kind === "state" ? flat.scope : flat.owner) === null;
		assert.ok(!ownerless || (flat?.kind === "response" && owner !== "session"), `relative ref stored: ${ref}`);
	}
}

/** `{ [path[0]]: { [path[1]]: … leaf } }` built with own-data writes. */
function nest(path: string[], leaf: Json): Json {
	return path.reduceRight<Json>((inner, k) => {
		const o: JsonObject = {};
		Object.defineProperty(o, k, { value: inner, enumerable: true, writable: true, configurable: true });
		return o;
	}, leaf);
}

function valueWithRefs(owner: Owner): fc.Arbitrary<Json> {
	const ref = refString(owner);
	const { value } = fc.letrec<{ value: Json }>((tie) => ({
		value: fc.oneof(
			{ depthSize: "small", withCrossShrink: true },
			fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null)) as fc.Arbitrary<Json>,
			ref.map((r) => ({ $ref: r }) as Json),
			fc
				.tuple(
					ref,
					key.filter((k) => k !== "$ref"),
					tie("value"),
				)
				.map(([r, k, v]) => {
					const o: JsonObject = { $ref: r };
					Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
					return o as Json;
				}),
			fc.array(tie("value"), { maxLength: 3 }),
			fc.array(fc.tuple(key, tie("value")), { maxLength: 3 }).map((entries) => {
				const o: JsonObject = {};
				for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
				return o as Json;
			}),
		),
	}));
	return value;
}

function flatInput(owner: Owner): fc.Arbitrary<JsonObject> {
	return fc
		.uniqueArray(fc.tuple(plane, fc.array(fc.tuple(key, valueWithRefs(owner)), { maxLength: 3 })), { selector: ([p]) => p, minLength: 1, maxLength: 3 })
		.map((planes) => {
			const out: JsonObject = {};
			for (const [p, entries] of planes) {
				const body: JsonObject = {};
				for (const [k, v] of entries) Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
				out[p] = body;
			}
			return out;
		});
}

/**
 * Oracle: whether the model's reference text is a reference the engine resolves for sole
 * owner `owner`: a flat locator, anchored to the owner when it names none (`response` only
 * for Session), parsed again as canonical.
 */
function resolvable(ref: string, owner: Owner): boolean {
	const flat = tryParseLocator(ref, "flat");
	if (flat === undefined) return false;
	const relative = (flat.kind === "state" ? flat.scope : flat.owner) === null;
	if (relative && flat.kind === "response" && owner !== "session") return false;
	return tryParseLocator(relative ? `${owner}.${ref}` : ref, "canonical") !== undefined;
}

/** Oracle: every object with a `$ref` member is `{ "$ref": <resolvable> }` once merged (null siblings vanish outside arrays). */
function onlyReferences(v: Json, owner: Owner, merged = true): boolean {
	if (typeof v !== "object" || v === null) return true;
	if (Array.isArray(v)) return v.every((item) => onlyReferences(item, owner, false));
	// Outside arrays `"$ref": null` deletes the member: the object holds no `$ref` once merged.
	if (Object.hasOwn(v, "$ref") && !(merged && v["$ref"] === null)) {
		const ref = v["$ref"];
		const others = Object.keys(v).filter((k) => k !== "$ref" && (!merged || v[k] !== null));
		return typeof ref === "string" && others.length === 0 && resolvable(ref, owner);
	}
	return Object.keys(v).every((k) => onlyReferences(v[k] as Json, owner, merged));
}

/** Planes are maps of entries (an entry may be named `$ref`); their entries are values. */
function planesHoldOnlyReferences(input: JsonObject, owner: Owner): boolean {
	return Object.values(input).every((p) => Object.values(p as JsonObject).every((v) => onlyReferences(v, owner)));
}

describe("flat round trip", () => {
	for (const owner of OWNERS) {
		it(`toCanonicalPatch then presentValue is the identity for sole owner ${owner}, and a \`$ref\` that is no reference is refused`, () => {
			const protoNames = Object.getOwnPropertyNames(Object.prototype).sort();
			let anchoredRuns = 0;
			let refusedRuns = 0;
			assertProperty(
				fc.property(flatInput(owner), (input) => {
					let canonical: ReturnType<typeof toCanonicalPatch>;
					try {
						canonical = toCanonicalPatch(input, [owner]);
					} catch (e) {
						assert.ok(e instanceof StateError && e.code === "invalid_input", String(e));
						// Refused exactly when a `$ref` object is no reference, or spells a key written beside it ambiguously.
						assert.ok(!planesHoldOnlyReferences(input, owner) || e.message.includes("not the existing key"), e.message);
						refusedRuns++;
						return;
					}
					assert.ok(planesHoldOnlyReferences(input, owner), "accepted a `$ref` object that is no reference");
					assert.deepEqual(Object.keys(canonical), [owner]);
					const stored = canonical[owner] as JsonObject;
					assertQualified(stored, owner);
					if (!isDeepStrictEqual(stored, input)) anchoredRuns++;
					assert.deepEqual(presentValue(stored, [owner]), input);
				}),
				{ numRuns: 4000 },
			);
			assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), protoNames);
			// The law is not vacuous: many runs really were rewritten by anchoring.
			assert.ok(anchoredRuns > 100, `only ${anchoredRuns} runs held a relative reference`);
			assert.ok(refusedRuns > 100, `only ${refusedRuns} runs were refused`);
		});
	}
});

describe("references revealed by deleting siblings", () => {
	for (const owner of OWNERS) {
		it(`stored \`$ref\` data (from before references were checked) whose siblings a later patch deletes is stored qualified and presented as written, or refused when it is no reference, sole owner ${owner}`, () => {
			const extras = fc.uniqueArray(
				key.filter((k) => k !== "$ref"),
				{ minLength: 1, maxLength: 3 },
			);
			// Both outcomes are checked often: a bug refusing (or accepting) every reveal would leave one branch empty.
			let revealed = 0;
			let refused = 0;
			assertProperty(
				fc.property(
					plane,
					key.filter((k) => k !== "$ref"),
					fc.array(
						key.filter((k) => k !== "$ref"),
						{ maxLength: 2 },
					),
					refString(owner),
					extras,
					(p, entry, path, ref, siblings) => {
						const h = newHistory(owner, 5);
						const by = { kind: "system", reason: "property" } as const;
						const input = (leaf: Json): JsonObject => ({ [p]: nest([entry], nest(path, leaf)) as JsonObject });
						const data: JsonObject = { $ref: ref };
						for (const k of siblings) Object.defineProperty(data, k, { value: 1, enumerable: true, writable: true, configurable: true });
						// Stored as an older build wrote it: as sent, unchecked (an exact delta).
						commitStaged({ [owner]: h }, stage({ [owner]: h }, { [owner]: input(data) }, { id: "t1", at: "2026-11-30T00:00:00.000Z", by, exact: true }));
						const reveal = () =>
							stage({ [owner]: h }, toCanonicalPatch(input(Object.fromEntries(siblings.map((k) => [k, null])) as JsonObject), [owner]), {
								id: "t2",
								at: "2026-11-30T00:00:00.000Z",
								by,
							});
						if (!resolvable(ref, owner)) {
							refused++;
							return void assert.throws(reveal, (e: unknown) => e instanceof StateError && e.code === "invalid_input");
						}
						commitStaged({ [owner]: h }, reveal());
						revealed++;
						const stored = h.state[p];
						assertQualified(stored, owner);
						assert.deepEqual(presentValue(stored, [owner]), nest([entry], nest(path, { $ref: ref })));
					},
				),
				{ numRuns: 300 },
			);
			assert.ok(revealed >= 120 && refused >= 30, `${revealed} revealed and ${refused} refused of 300`);
		});
	}
});
