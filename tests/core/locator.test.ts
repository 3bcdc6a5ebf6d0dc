/**
 * The locator language: every docs/spec.md §4.1 row, scoped and canonical forms, the temporal vs
 * index rule, parse errors with columns, and key round-trips through the printer.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError } from "../../lib/core/errors.js";
import { formatKeySegment, formatLocator, type Locator, parseLocator } from "../../lib/core/locator.js";
import { presentLocator, toCanonicalLocator } from "../../lib/model/interface.js";

function parseError(text: string, form: "flat" | "scoped" | "canonical"): string {
	try {
		parseLocator(text, form);
	} catch (e) {
		assert.ok(isStateError(e) && e.code === "parse_error", `expected parse_error, got ${String(e)}`);
		return e.message;
	}
	assert.fail(`\`${text}\` parsed in ${form} form`);
}

describe("flat locators (docs/spec.md §4.1 table, captured CWD)", () => {
	const rows: Array<[string, string, Locator]> = [
		["tactics", "cwd.tactics", { kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: [] }],
		["tactics.items[1]", "cwd.tactics.items[1]", { kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: ["items", 1] }],
		['lazy["notes/2026.md"]', 'cwd.lazy["notes/2026.md"]', { kind: "state", scope: "cwd", offset: 0, plane: "lazy", path: ["notes/2026.md"] }],
		["effective[1].tactics.items[0]", "cwd[1].tactics.items[0]", { kind: "state", scope: "cwd", offset: 1, plane: "tactics", path: ["items", 0] }],
		["patches[0]", "cwd.patches[0]", { kind: "patches", owner: "cwd", index: 0, path: [] }],
	];
	for (const [model, canonical, loc] of rows) {
		it(`${model} means ${canonical} and presents back as ${model}`, () => {
			const got = toCanonicalLocator(model, ["cwd"]);
			assert.deepEqual(got, loc);
			assert.equal(formatLocator(got), canonical);
			assert.deepEqual(parseLocator(canonical, "canonical"), loc);
			assert.equal(presentLocator(got, ["cwd"]), model);
		});
	}

	it("accepts a qualified locator of the sole owner and `response` for a sole Session", () => {
		assert.equal(formatLocator(toCanonicalLocator("cwd.strategy.why", ["cwd"])), "cwd.strategy.why");
		assert.equal(formatLocator(toCanonicalLocator("response.last.text", ["session"])), "session.response.last.text");
		assert.equal(formatLocator(toCanonicalLocator("effective", ["global"])), "global");
	});

	it("refuses another owner and `response` without Session as excluded owners", () => {
		assert.throws(
			() => toCanonicalLocator("global.tactics", ["cwd"]),
			(e) => isStateError(e) && e.code === "excluded_owner" && /`global`/.test(e.message),
		);
		assert.throws(
			() => toCanonicalLocator("response", ["cwd"]),
			(e) => isStateError(e) && e.code === "excluded_owner" && /`session`/.test(e.message),
		);
	});
});

describe("scoped and canonical locators", () => {
	const rows: Array<[string, Locator]> = [
		["cwd.tactics", { kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: [] }],
		["global[2].strategy", { kind: "state", scope: "global", offset: 2, plane: "strategy", path: [] }],
		["session.patches[0]", { kind: "patches", owner: "session", index: 0, path: [] }],
		["effective.tactics", { kind: "state", scope: "effective", offset: 0, plane: "tactics", path: [] }],
		["session.response.last", { kind: "response", owner: "session", path: ["last"] }],
		["cwd[3].tactics.items[2][0]", { kind: "state", scope: "cwd", offset: 3, plane: "tactics", path: ["items", 2, 0] }],
		["cwd.patches[4].patch.tactics", { kind: "patches", owner: "cwd", index: 4, path: ["patch", "tactics"] }],
	];
	for (const [text, loc] of rows) {
		it(`${text} parses and prints back identically`, () => {
			const got = toCanonicalLocator(text, ["cwd", "session", "global"]);
			assert.deepEqual(got, loc);
			assert.equal(formatLocator(got), text);
			assert.equal(presentLocator(got, ["cwd", "session"]), text);
		});
	}

	it("keeps `[N]` after an owner temporal and every other `[N]` an array index", () => {
		const loc = parseLocator("cwd[2].tactics[3]", "canonical");
		assert.deepEqual(loc, { kind: "state", scope: "cwd", offset: 2, plane: "tactics", path: [3] });
		const quoted = parseLocator('cwd.tactics["2"][2]', "canonical");
		assert.deepEqual(quoted, { kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: ["2", 2] });
		assert.equal(formatLocator(quoted), 'cwd.tactics["2"][2]');
		assert.equal(formatLocator({ kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: [] }), "cwd.tactics");
	});

	it("refuses `effective[N]` with several owners but accepts it in flat and canonical form", () => {
		assert.match(parseError("effective[2].tactics", "scoped"), /column 10 .*`effective\[2\]` is refused.*`cwd\[2\]`/s);
		assert.deepEqual(parseLocator("effective[2].tactics", "canonical"), { kind: "state", scope: "effective", offset: 2, plane: "tactics", path: [] });
		assert.deepEqual(toCanonicalLocator("effective[2].tactics", ["session"]), { kind: "state", scope: "session", offset: 2, plane: "tactics", path: [] });
	});

	it("refuses unqualified planes in scoped form, showing the qualified form", () => {
		assert.match(parseError("lazy.plan", "scoped"), /`lazy` is not an owner; qualify it with an owner, e.g. `cwd.lazy.plan`/);
		assert.match(parseError("response", "scoped"), /write `session.response`/);
		assert.throws(
			() => toCanonicalLocator("global.tactics", ["cwd", "session"]),
			(e) => isStateError(e) && e.code === "excluded_owner",
		);
	});
});

describe("parse errors point at the offending character", () => {
	const cases: Array<[string, "flat" | "scoped", RegExp]> = [
		["tactics.]", "flat", /^unexpected `\]` at column 9 in `tactics\.\]`/],
		["tactics.items[x]", "flat", /unexpected `x` at column 15/],
		["cwd.plans", "scoped", /unexpected `plans` at column 5 .*unknown plane `plans`/],
		["tacticz.a", "flat", /unknown plane `tacticz`/],
		['lazy["a', "flat", /unexpected end of locator at column 8 .*unterminated string/],
		['lazy["\\q"]', "flat", /column 6 .*invalid JSON string/],
		["patches", "flat", /end of locator at column 8 .*`patches\[0\]`/],
		["cwd[01].tactics", "scoped", /column 5 .*without leading zeros/],
		["cwd[1].patches[0]", "scoped", /unknown plane `patches`/],
		["", "flat", /column 1 .*empty locator/],
		["tactics a", "flat", /unexpected ` ` at column 8/],
	];
	for (const [text, form, re] of cases) {
		it(`\`${text}\` (${form})`, () => {
			const msg = parseError(text, form);
			assert.match(msg, re);
			// The caret line sits under the reported column.
			const col = Number(/column (\d+)/.exec(msg)?.[1]);
			const lines = msg.split("\n");
			assert.equal(lines[1], `  ${text}`);
			assert.equal(lines[2], `  ${" ".repeat(col - 1)}^`);
		});
	}
});

describe("key round-trips", () => {
	const awkward = fc.oneof(
		fc.constantFrom(
			"__proto__",
			"constructor",
			"prototype",
			"$ref",
			"a.b",
			"a[0]",
			'["x"]',
			"~",
			"~0",
			"~1",
			"/",
			"a/b",
			"",
			"0",
			"12",
			"-1",
			"a b",
			'"',
			"\\",
			"\u2028",
			"é",
		),
		fc.string(),
	);
	it("formatLocator → parseLocator is the identity for arbitrary keys and indexes", () => {
		assertProperty(
			fc.property(fc.array(fc.oneof(awkward, fc.nat(1000)), { maxLength: 5 }), fc.constantFrom("intents", "lazy", "tactics"), (path, plane) => {
				const loc: Locator = { kind: "state", scope: "cwd", offset: 0, plane: plane as "lazy", path };
				const text = formatLocator(loc);
				assert.deepEqual(parseLocator(text, "canonical"), loc);
				assert.deepEqual(parseLocator(text.slice(4), "flat"), { ...loc, scope: null });
			}),
			{ numRuns: 1000 },
		);
		assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
	});

	it("prints identifiers bare and everything else as a JSON string", () => {
		assert.equal(formatKeySegment("__proto__"), ".__proto__");
		assert.equal(formatKeySegment("step-1"), ".step-1");
		assert.equal(formatKeySegment("0"), '["0"]');
		assert.equal(formatKeySegment(0), "[0]");
		assert.equal(formatKeySegment(""), '[""]');
		assert.equal(formatKeySegment("a.b"), '["a.b"]');
		assert.equal(formatKeySegment("~/x"), '["~/x"]');
	});
});
