/**
 * The head renderer over histories built by the real engine: content and order, flat and
 * scoped spelling, determinism, bootstrap detection, and the budget law (fast-check): the
 * head fits whenever the skeleton does, and every elided value is readable at its marker.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { newHistory } from "../../lib/core/history.js";
import { jsonEqual } from "../../lib/core/json.js";
import { evaluate } from "../../lib/core/query.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { OWNERS, PLANES } from "../../lib/core/types.js";
import type { CanonicalPatch, Json, JsonObject, Owner, OwnerHistory } from "../../lib/core/types.js";
import { HEAD_CLOSE, HEAD_OPEN, MARKER_KEY, isBootstrap, renderHead, utf8Bytes } from "../../lib/model/head.js";
import { presentValue, toCanonicalLocator } from "../../lib/model/interface.js";

type Histories = Partial<Record<Owner, OwnerHistory>>;

/**
 * Histories for `wanted` after committing `patches` through the engine, one minute apart.
 * `exact`: store them as sent (as an older build may have), without reference checks.
 */
function build(wanted: readonly Owner[], patches: CanonicalPatch[], exact = false): Histories {
	const histories: Histories = {};
	for (const o of wanted) histories[o] = newHistory(o, 20);
	patches.forEach((patch, i) => {
		const at = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
		commitStaged(histories, stage(histories, patch, { id: `t${i + 1}`, at, by: { kind: "system", reason: "test" }, ...(exact ? { exact } : {}) }));
	});
	return histories;
}

const BODY = "the full plan body, never shown in the head ".repeat(4);
const FIXTURE: CanonicalPatch[] = [
	{ cwd: { intents: { login: { goal: "fix login", owns: [{ $ref: "cwd.tactics.t1" }, { $ref: "cwd.tactics.t2" }] } }, tactics: { t1: "reproduce", t2: "patch" } } },
	{ cwd: { tactics: { t2: null }, lazy: { "notes/plan.md": BODY }, artifacts: { "src/a.ts": { kind: "file" } } } },
	{ cwd: { strategy: { approach: "smallest fix first" } }, session: { tactics: { s1: { $ref: "cwd.lazy[\"notes/plan.md\"]" } } } },
];

const MARKER = /^elided .*: read_state (.+)$/;

/** The JSON shown after a line's prefix, per plane line of the head. */
function planeLines(head: string): Map<string, Json> {
	const out = new Map<string, Json>();
	for (const line of head.split("\n")) {
		const m = /^((?:global|cwd|session)\.)?(intents|strategy|tactics|artifacts|lazy)( \(catalog, bytes\))?: (.*)$/.exec(line);
		if (m) out.set(`${m[1] ?? ""}${m[2]}`, JSON.parse(m[4] as string) as Json);
	}
	return out;
}

function markerLocator(v: Json): string | undefined {
	if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
	const keys = Object.keys(v);
	const text = v[MARKER_KEY];
	if (keys.length !== 1 || typeof text !== "string") return undefined;
	return MARKER.exec(text)?.[1];
}

describe("head rendering", () => {
	it("shows the flat owner's planes in stable order, lazy as a catalog, refs relative, flags and recent keys", () => {
		const histories = build(["cwd"], FIXTURE.map((p) => ({ cwd: p.cwd ?? {} })));
		const head = renderHead({ mode: "active", wanted: ["cwd"], histories, budget: 8192, staleArtifacts: [{ owner: "cwd", key: "src/a.ts", note: "file changed since recorded" }] });
		const lines = head.split("\n");
		assert.equal(lines[0], HEAD_OPEN);
		assert.equal(lines.at(-1), HEAD_CLOSE);
		assert.equal(lines[1], "# cwd seq 3");
		assert.deepEqual(lines.slice(2, 7).map((l) => l.split(/[ :]/)[0]), ["intents", "strategy", "tactics", "artifacts", "lazy"]);
		assert.equal(lines[2], 'intents: {"login":{"goal":"fix login","owns":[{"$ref":"tactics.t1"},{"$ref":"tactics.t2"}]}}');
		assert.equal(lines[6], `lazy (catalog, bytes): {"notes/plan.md":${utf8Bytes(JSON.stringify(BODY))}}`);
		assert.ok(!head.includes("never shown"), "no lazy body in the head");
		assert.ok(lines.includes("! dangling ref: intents.login -> tactics.t2 (missing)"));
		assert.ok(lines.includes('! stale artifact: artifacts["src/a.ts"]: file changed since recorded'));
		const recent = lines.slice(lines.indexOf("recent transitions (newest first):") + 1, -1);
		assert.deepEqual(recent, [
			"- #3 2026-01-01T00:02:00.000Z set strategy.approach",
			'- #2 2026-01-01T00:01:00.000Z set artifacts["src/a.ts"], lazy["notes/plan.md"]; del tactics.t2',
			"- #1 2026-01-01T00:00:00.000Z set intents.login, tactics.t1, tactics.t2",
		]);
	});

	it("shows no recent transitions in Passive mode", () => {
		const histories = build(["cwd"], FIXTURE.map((p) => ({ cwd: p.cwd ?? {} })));
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 8192 });
		assert.ok(!head.includes("recent transitions"));
		assert.ok(!head.includes("2026-01-01"));
	});

	it("qualifies every scoped locator, keeps refs as stored and never shows an excluded owner", () => {
		const histories = build(["global", "cwd", "session"], [{ global: { strategy: { secret: "global only" } } }, ...FIXTURE]);
		const head = renderHead({ mode: "active", wanted: ["session", "cwd"], histories, budget: 8192, recent: 2 });
		assert.ok(!head.includes("global only") && !head.includes("# global"));
		const lines = head.split("\n");
		assert.ok(lines.indexOf("# cwd seq 3") < lines.indexOf("# session seq 1"));
		assert.ok(lines.includes('session.tactics: {"s1":{"$ref":"cwd.lazy[\\"notes/plan.md\\"]"}}'));
		assert.ok(lines.includes("! dangling ref: cwd.intents.login -> cwd.tactics.t2 (missing)"));
		assert.ok(lines.includes("- session#1 2026-01-01T00:03:00.000Z set session.tactics.s1"));
		assert.ok(lines.includes("- cwd#3 2026-01-01T00:03:00.000Z set cwd.strategy.approach"));
		assert.ok(!lines.some((l) => l.startsWith("- cwd#2")), "only the last two transitions");
	});

	it("renders the same bytes for the same input, whatever the owner order, without touching the histories", () => {
		const histories = build(["cwd", "session"], FIXTURE);
		const before = JSON.stringify(histories);
		const a = renderHead({ mode: "active", wanted: ["cwd", "session"], histories, budget: 300 });
		const b = renderHead({ mode: "active", wanted: ["session", "cwd"], histories, budget: 300 });
		assert.equal(a, b);
		assert.equal(JSON.stringify(histories), before);
	});

	it("marks an owner that was never written or is emptied as empty", () => {
		const histories = build(["cwd"], [{ cwd: { tactics: { a: 1 } } }, { cwd: { tactics: { a: null } } }]);
		assert.equal(renderHead({ mode: "passive", wanted: ["cwd", "session"], histories, budget: 8192 }), `${HEAD_OPEN}\n# cwd seq 2 (empty)\n# session seq 0 (empty)\n${HEAD_CLOSE}`);
	});
});

describe("isBootstrap", () => {
	it("is true only while every wanted owner has no plane entry", () => {
		assert.equal(isBootstrap({}, ["cwd", "session"]), true);
		const written = build(["global", "cwd"], [{ global: { intents: { a: 1 } } }]);
		assert.equal(isBootstrap(written, ["cwd"]), true, "an excluded owner's entries do not count");
		assert.equal(isBootstrap(written, ["global", "cwd"]), false);
		const emptied = build(["cwd"], [{ cwd: { lazy: { a: "x" } } }, { cwd: { lazy: { a: null } } }]);
		assert.equal(isBootstrap(emptied, ["cwd"]), true, "history does not count");
	});
});

describe("head budget", () => {
	it("elides the deepest detail first and says what it elided", () => {
		const deep = { level1: { level2: { level3: "d".repeat(400) } } };
		const histories = build(["cwd"], [{ cwd: { intents: { keep: "short intent" }, tactics: { deep, flat: "e".repeat(150) } } }]);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 520 });
		assert.ok(utf8Bytes(head) <= 520, `${utf8Bytes(head)} bytes`);
		assert.ok(head.includes('intents: {"keep":"short intent"}'));
		assert.ok(head.includes(`"flat":"${"e".repeat(150)}"`), "the shallower string is shown whole");
		assert.ok(head.includes('{"level1":{"level2":{"level3":{"…":"elided string, 402 B: read_state tactics.deep.level1.level2.level3"}}}}'));
		assert.match(head, /\nelided 1 value \(402 B\) to fit the 520 B head budget/);
	});

	it("elides a string larger than a quarter of the budget before deeper detail", () => {
		const deep = { a: { b: { c: "d".repeat(100) } } };
		const histories = build(["cwd"], [{ cwd: { tactics: { huge: "h".repeat(3000), deep } } }]);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 1200 });
		assert.ok(utf8Bytes(head) <= 1200);
		assert.ok(head.includes('"huge":{"…":"elided string, 2.9 KB: read_state tactics.huge"}'));
		assert.ok(head.includes(JSON.stringify(deep)), "the deeper, smaller detail stays");
	});

	it("elides a lazy catalog only as a whole, pointing at the keys projection", () => {
		const lazy: Record<string, string> = {};
		for (let i = 0; i < 60; i++) lazy[`notes/n${i}.md`] = `body ${i}`;
		const histories = build(["cwd", "session"], [{ cwd: { lazy, intents: { i: "keep" } } }]);
		const head = renderHead({ mode: "passive", wanted: ["cwd", "session"], histories, budget: 600 });
		assert.ok(head.includes('cwd.lazy (catalog, bytes): {"…":"elided catalog of 60 keys (use projection keys): read_state cwd.lazy"}'));
		assert.ok(head.includes('cwd.intents: {"i":"keep"}'));
		const [keys] = evaluate({ wanted: ["cwd", "session"], histories }, [toCanonicalLocator("cwd.lazy", ["cwd", "session"])], "keys");
		assert.equal((keys?.value as string[] | undefined)?.length, 60);
	});

	it("drops recent transitions before any state and names where to read them", () => {
		const histories = build(["cwd"], [{ cwd: { tactics: { a: "x".repeat(100) } } }, { cwd: { tactics: { b: "y".repeat(100) } } }]);
		const full = renderHead({ mode: "active", wanted: ["cwd"], histories, budget: 8192 });
		const head = renderHead({ mode: "active", wanted: ["cwd"], histories, budget: utf8Bytes(full) - 1 });
		assert.ok(head.includes(`"a":"${"x".repeat(100)}"`) && head.includes(`"b":"${"y".repeat(100)}"`));
		assert.ok(head.includes("- #2 "));
		assert.ok(head.includes("- elided 1 older: read_state patches[1]"));
	});

	it("fits the budget whenever the skeleton fits, and every elided value is readable at its marker", () => {
		const key = fc.constantFrom("a", "b.c", "", "__proto__", "x y", 'q"', "n1", "$ref", "[0]", "t");
		const leaf = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ minLength: 40, maxLength: 400 }), fc.integer(), fc.boolean());
		const { value } = fc.letrec<{ value: Json }>((tie) => ({
			value: fc.oneof(
				{ depthSize: "small", withCrossShrink: true },
				leaf,
				fc.array(tie("value"), { maxLength: 4 }),
				fc.dictionary(key, tie("value"), { maxKeys: 4, noNullPrototype: true }) as fc.Arbitrary<Json>,
			),
		}));
		const plane = fc.dictionary(key, value, { maxKeys: 5, noNullPrototype: true }) as fc.Arbitrary<JsonObject>;
		const ownerPatch = fc.record({ intents: plane, strategy: plane, tactics: plane, artifacts: plane, lazy: plane }, { requiredKeys: [] });
		const wantedArb = fc.subarray([...OWNERS], { minLength: 1 });
		fc.assert(
			fc.property(wantedArb, fc.array(fc.dictionary(fc.constantFrom(...OWNERS), ownerPatch, { maxKeys: 3 }), { maxLength: 3 }), fc.integer({ min: 0, max: 3000 }), fc.constantFrom("active", "passive"), (wanted, patches, budget, mode) => {
				const histories = build(OWNERS, patches as CanonicalPatch[], true);
				const input = { mode: mode as "active" | "passive", wanted, histories, budget };
				const head = renderHead(input);
				assert.equal(renderHead(input), head, "deterministic");
				const skeleton = utf8Bytes(renderHead({ ...input, budget: 0 }));
				if (budget >= skeleton) assert.ok(utf8Bytes(head) <= budget, `${utf8Bytes(head)} > ${budget}`);
				const shown = planeLines(head);
				let markers = 0;
				const check = (displayed: Json, original: Json): void => {
					const loc = markerLocator(displayed);
					if (loc !== undefined) {
						markers++;
						const [result] = evaluate({ wanted, histories }, [toCanonicalLocator(loc, wanted)]);
						assert.ok(result !== undefined && jsonEqual(presentValue(result.value, wanted), original), `marker ${loc} reads the elided value`);
					} else if (typeof displayed === "object" && displayed !== null && typeof original === "object" && original !== null) {
						assert.deepEqual(Object.keys(displayed), Object.keys(original));
						for (const k of Object.keys(original)) check((displayed as JsonObject)[k] as Json, (original as JsonObject)[k] as Json);
					} else assert.equal(displayed, original, "a value is shown whole");
				};
				for (const owner of wanted) {
					for (const p of PLANES) {
						const state = histories[owner]?.state[p] ?? {};
						const name = wanted.length === 1 ? p : `${owner}.${p}`;
						const displayed = shown.get(name);
						if (Object.keys(state).length === 0) {
							assert.equal(displayed, undefined);
							continue;
						}
						assert.ok(displayed !== undefined, `${name} is shown`);
						if (p !== "lazy") check(displayed, presentValue(state, wanted));
						else if (markerLocator(displayed) === undefined) assert.deepEqual(Object.keys(displayed as JsonObject), Object.keys(state));
						else markers++;
					}
				}
				assert.equal(markers > 0, /\nelided \d+ values? \(/.test(head), "elision is announced exactly when it happens");
			}),
			{ numRuns: 150 },
		);
	});
});
