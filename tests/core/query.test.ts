/**
 * The read evaluator over real histories built by the real stage/commit path: current,
 * temporal and folded reads, patches[N], projections, the overlay, excluded owners,
 * not-found messages, all-or-error batches and arbitrary keys (fast-check).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import { formatLocator, type Locator, parseLocator } from "../../lib/core/locator.js";
import { evaluate, type QueryView } from "../../lib/core/query.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Json, JsonObject, Owner, OwnerHistory } from "../../lib/core/types.js";
import { presentLocator, toCanonicalLocator } from "../../lib/model/interface.js";
import { codeAndWords as code } from "../helpers/refusal.js";

type Histories = Partial<Record<Owner, OwnerHistory>>;
let counter = 0;

function write(histories: Histories, patch: CanonicalPatch): string {
	const id = `t${++counter}`;
	const result = stage(histories, patch, { id, at: `2026-01-01T00:00:${String(counter % 60).padStart(2, "0")}Z`, by: { kind: "system", reason: "test" } });
	commitStaged(histories, result);
	return id;
}

function read(view: QueryView, text: string, projection: "value" | "keys" | "history" = "value"): Json {
	return evaluate(view, [parseLocator(text, "canonical")], projection)[0]?.value as Json;
}

function fixture(): { view: QueryView; ids: string[] } {
	const histories: Histories = { global: newHistory("global", 2), cwd: newHistory("cwd", 20), session: newHistory("session", 20) };
	const ids = [
		write(histories, { cwd: { tactics: { items: ["a", "b"], "notes/x.md": 1 } }, global: { strategy: { style: { tone: "dry", width: 80 } } } }),
		write(histories, { cwd: { tactics: { items: ["a", "b", "c"] } }, global: { strategy: { v: 2 } } }),
		write(histories, {
			cwd: { tactics: { done: true } },
			session: { strategy: { style: { tone: "warm" } }, tactics: { items: ["s"] } },
			global: { strategy: { v: 3 } },
		}),
	];
	return { view: { wanted: ["global", "cwd", "session"], histories, response: { last: { text: "done", at: "t" } } }, ids };
}

describe("evaluate", () => {
	const { view, ids } = fixture();

	it("reads current values, array indexes and bracketed keys", () => {
		assert.deepEqual(read(view, "cwd.tactics.items[1]"), "b");
		assert.equal(read(view, 'cwd.tactics["notes/x.md"]'), 1);
		assert.deepEqual(read(view, "cwd.tactics"), { items: ["a", "b", "c"], "notes/x.md": 1, done: true });
	});

	it("reads temporal states with [N] after the owner", () => {
		assert.deepEqual(read(view, "cwd[1].tactics"), { items: ["a", "b", "c"], "notes/x.md": 1 });
		assert.equal(read(view, "cwd[2].tactics.items[1]"), "b");
		assert.deepEqual(read(view, "cwd[3].tactics"), {});
		assert.match(
			code(() => read(view, "cwd[3].tactics.items")),
			/^not_found: `cwd\[3\].tactics.items` does not exist; read `cwd\[3\].tactics`/,
		);
		// The suggested parent is the deepest one that existed then, also several levels down.
		assert.match(
			code(() => read(view, "cwd[1].tactics.nope.deeper.still")),
			/^not_found: `cwd\[1\].tactics.nope.deeper.still` does not exist; read `cwd\[1\].tactics` with/,
		);
		assert.match(
			code(() => read(view, "cwd[1].tactics.items[7].x")),
			/^not_found: `cwd\[1\].tactics.items\[7\].x` does not exist; read `cwd\[1\].tactics.items` with/,
		);
	});

	it("refuses offsets beyond retained history instead of inventing a state", () => {
		assert.match(
			code(() => read(view, "global[3].strategy")),
			/^folded: global history before transition t\d+ was folded; retention is 2/,
		);
		assert.match(
			code(() => read(view, "session[2].tactics")),
			/^not_found: session has only 1 transition; read an offset of at most 1$/,
		);
		assert.match(
			code(() => read(view, "cwd.patches[3]")),
			/^not_found/,
		);
	});

	it("returns patches[N] as { id, at, patch } with the exact transition id", () => {
		const [r] = evaluate(view, [parseLocator("cwd.patches[0]", "canonical")], "value");
		assert.equal(r?.transitionId, ids[2]);
		assert.deepEqual(r?.value, { id: ids[2], at: (r?.value as JsonObject | undefined)?.["at"] as string, patch: { tactics: { done: true } } });
		assert.deepEqual(read(view, "cwd.patches[2].patch.tactics.items"), ["a", "b"]);
	});

	it("projects keys (sorted) and array lengths, and refuses keys of a scalar", () => {
		assert.deepEqual(read(view, "cwd.tactics", "keys"), ["done", "items", "notes/x.md"]);
		assert.deepEqual(read(view, "cwd.tactics.items", "keys"), { length: 3 });
		assert.deepEqual(read(view, "cwd", "keys"), ["artifacts", "intents", "lazy", "strategy", "tactics"]);
		assert.match(
			code(() => read(view, "cwd.tactics.done", "keys")),
			/^invalid_input: projection `keys` needs an object or an array; `cwd.tactics.done` is a boolean/,
		);
	});

	it("lists keys in the head's natural order, whatever order merges left them in", () => {
		const histories: Histories = { cwd: newHistory("cwd", 20) };
		write(histories, { cwd: { tactics: { s10: "test", s2: "fix", "1-reproduce": 1, s1: "look", B: 0 } } });
		write(histories, { cwd: { tactics: { s2: null } } });
		write(histories, { cwd: { tactics: { s2: "fix again" } } });
		const v: QueryView = { wanted: ["cwd"], histories };
		assert.deepEqual(Object.keys(histories.cwd?.state.tactics ?? {}), ["s10", "1-reproduce", "s1", "B", "s2"], "stored order moved s2 to the end");
		assert.deepEqual(read(v, "cwd.tactics", "keys"), ["1-reproduce", "B", "s1", "s2", "s10"]);
	});

	it("projects the history of a locator, newest first", () => {
		assert.deepEqual(
			(read(view, "cwd.tactics.items", "history") as JsonObject[]).map((h) => [h["id"], h["before"], h["after"]]),
			[
				[ids[1], ["a", "b"], ["a", "b", "c"]],
				[ids[0], null, ["a", "b"]],
			],
		);
		assert.match(
			code(() => read(view, "effective.tactics", "history")),
			/needs a current owner locator/,
		);
	});

	it("overlays session over cwd over global, merging objects and taking arrays whole", () => {
		assert.deepEqual(read(view, "effective.strategy"), { style: { tone: "warm", width: 80 }, v: 3 });
		assert.deepEqual(read(view, "effective.tactics.items"), ["s"]);
		assert.equal(read(view, "effective.strategy.style.width"), 80);
		assert.deepEqual(read(view, "effective.tactics", "keys"), ["done", "items", "notes/x.md"]);
		assert.match(
			code(() => read(view, "effective.tactics.items[1]")),
			/^not_found: `effective.tactics.items\[1\]` does not exist; read `effective.tactics.items`/,
		);
	});

	it("lets a scalar of a higher owner hide a lower owner's object", () => {
		const h: Histories = { global: newHistory("global", 5), session: newHistory("session", 5) };
		write(h, { global: { tactics: { a: { deep: 1 } } }, session: { tactics: { a: 5 } } });
		const v: QueryView = { wanted: ["global", "session"], histories: h };
		assert.equal(read(v, "effective.tactics.a"), 5);
		assert.match(
			code(() => read(v, "effective.tactics.a.deep")),
			/^not_found/,
		);
	});

	it("reads `session.response` and treats missing histories as never written", () => {
		assert.equal(read(view, "session.response.last.text"), "done");
		const empty: QueryView = { wanted: ["cwd"], histories: {} };
		assert.deepEqual(read(empty, "cwd.lazy"), {});
		assert.match(
			code(() => read(empty, "cwd.patches[0]")),
			/^not_found/,
		);
	});

	it("refuses excluded owners, naming them", () => {
		const v: QueryView = { ...view, wanted: ["cwd", "session"] };
		assert.match(
			code(() => read(v, "global.strategy")),
			/^excluded_owner: owner `global` is not wanted/,
		);
		assert.match(
			code(() => read({ ...view, wanted: ["cwd"] }, "session.response")),
			/^excluded_owner: owner `session`/,
		);
		// The overlay only sees wanted owners.
		assert.deepEqual(read(v, "effective.strategy"), { style: { tone: "warm" } });
	});

	it("names the missing locator and its deepest existing parent, in the model's form", () => {
		const flat: QueryView = { wanted: ["cwd"], histories: view.histories, present: (l) => presentLocator(l, ["cwd"]) };
		assert.equal(
			code(() => evaluate(flat, [toCanonicalLocator("tactics.nope.deeper", ["cwd"])], "value")),
			"not_found: `tactics.nope.deeper` does not exist; read `tactics` with projection `keys` to see what is there",
		);
		assert.match(
			code(() => read(view, "cwd.tactics.items.x")),
			/read `cwd.tactics.items` with projection `keys`/,
		);
	});

	it("answers batches in order and refuses the whole batch on one error", () => {
		const locs = ["cwd.tactics.done", "global.strategy.v", "cwd.tactics.items[0]"].map((t) => parseLocator(t, "canonical"));
		assert.deepEqual(
			evaluate(view, locs, "value").map((r) => [r.locator, r.value]),
			[
				["cwd.tactics.done", true],
				["global.strategy.v", 3],
				["cwd.tactics.items[0]", "a"],
			],
		);
		assert.throws(
			() => evaluate(view, [...locs, parseLocator("cwd.tactics.missing", "canonical")], "value"),
			(e) => isStateError(e) && e.code === "not_found",
		);
	});

	it("returns copies: mutating a result never changes stored state", () => {
		const v = read(view, "cwd.tactics") as JsonObject;
		(v["items"] as Json[]).push("mutated");
		assert.deepEqual(read(view, "cwd.tactics.items"), ["a", "b", "c"]);
	});
});

describe("arbitrary keys through store and bracket locators", () => {
	const key = fc.oneof(
		fc.constantFrom("__proto__", "constructor", "prototype", "$ref", "a.b", "a[0]", "]", "~", "~1", "/", "", "0", "07", "toString"),
		fc.string(),
	);
	it("formatLocator of any key reads back the value stored under it", () => {
		const protoNames = Object.getOwnPropertyNames(Object.prototype).sort();
		// Values without nested nulls: a null inside a merge patch deletes rather than stores.
		// Inside an entry a `$ref` member makes a reference or a refusal (tests/model/interface-refs.test.ts); here keys are data.
		const dataKey = key.filter((k) => k !== "$ref");
		const values = fc.oneof(
			fc.string(),
			fc.integer(),
			fc.boolean(),
			fc.array(fc.oneof(fc.string(), fc.constant(null))),
			fc.dictionary(dataKey, fc.string()),
		) as fc.Arbitrary<Json>;
		assertProperty(
			fc.property(key, dataKey, values, (k1, k2, value) => {
				const histories: Histories = { session: newHistory("session", 3) };
				const inner: JsonObject = {};
				Object.defineProperty(inner, k2, { value, enumerable: true, writable: true, configurable: true });
				const lazy: JsonObject = {};
				Object.defineProperty(lazy, k1, { value: inner, enumerable: true, writable: true, configurable: true });
				write(histories, { session: { lazy } });
				const loc: Locator = { kind: "state", scope: "session", offset: 0, plane: "lazy", path: [k1, k2] };
				const text = formatLocator(loc);
				const expected = JSON.parse(JSON.stringify(value)) as Json; // fast-check dictionaries may have a null prototype
				assert.deepEqual(evaluate({ wanted: ["session"], histories }, [parseLocator(text, "canonical")], "value")[0]?.value, expected);
				assert.deepEqual(read({ wanted: ["session"], histories }, formatLocator({ ...loc, path: [k1] }), "keys"), [k2]);
			}),
			{ numRuns: 1000 },
		);
		assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), protoNames);
		assert.equal(({} as Record<string, unknown>)["a.b"], undefined);
	});
});
