/**
 * `searchState` (issue 26) over real histories built by the real stage/commit path: every match
 * it reports reads back, through the real evaluator and the model's locator parser, to a key or
 * a string that holds the text; it finds every such place (the shown plus the counted equal a
 * brute-force count); snippets are one line; a whole owner's search covers planes and roots.
 * The cuts are pinned exactly: 24 characters before the earliest term and 40 after, 60 of a
 * matching key's value, widened so no surrogate pair is split (pairs whose low half is the
 * first or the last low surrogate, U+DC00 and U+DFFF, sit at the cuts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { newHistory } from "../../lib/core/history.js";
import { formatLocator, type Locator, parseLocator } from "../../lib/core/locator.js";
import { evaluate, type QueryView } from "../../lib/core/query.js";
import { descend, searchState, searchTerms } from "../../lib/core/search.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { Json, JsonObject, Owner, OwnerHistory } from "../../lib/core/types.js";
import { presentLocator, toCanonicalLocator } from "../../lib/model/interface.js";

const WHOLE = (owner: Owner): Locator => ({ kind: "state", scope: owner, offset: 0, plane: null, path: [] });

function viewOf(owners: Owner[], patch: Record<string, JsonObject>): QueryView {
	const histories: Partial<Record<Owner, OwnerHistory>> = {};
	for (const o of owners) histories[o] = newHistory(o, 20);
	const staged = stage(histories, patch, { id: "t1", at: "2026-01-01T00:00:00Z", by: { kind: "system", reason: "test" }, roots: () => {} });
	commitStaged(histories, staged);
	return { wanted: owners, histories, roots: ["todos"] };
}

/** Brute force: places (member names, strings not under a matching member name) that hold `q`. */
function count(v: Json, q: string, keyMatched = false): number {
	if (typeof v === "string") return !keyMatched && v.toLowerCase().includes(q) ? 1 : 0;
	if (Array.isArray(v)) return v.reduce((n: number, x) => n + count(x as Json, q), 0);
	if (v === null || typeof v !== "object") return 0;
	let n = 0;
	for (const [k, x] of Object.entries(v)) {
		const hit = k.toLowerCase().includes(q);
		n += (hit ? 1 : 0) + count(x as Json, q, hit);
	}
	return n;
}

describe("searchState", () => {
	it("finds keys and string values, case-insensitively, in planes and registered roots, with one-line snippets", () => {
		const view = viewOf(["cwd"], {
			cwd: {
				tactics: { "graphql-spike": { status: "done", do: "try it" }, t2: "drop the\nGraphQL gateway\u001b[2J", t3: "unrelated" },
				lazy: { "notes/api.md": "line one\nwe chose REST over graphql in May" },
				roots: { todos: { a: { text: "remove GraphQL deps", done: false } } },
			},
		});
		const present = (loc: Locator) => presentLocator(loc, ["cwd"]);
		const answer = searchState(view, [WHOLE("cwd")], "GRAPHQL", present, 40);
		assert.deepEqual(
			answer.matches.map((m) => [m.locator, m.in]),
			[
				["tactics.graphql-spike", "key"],
				["tactics.t2", "value"],
				['lazy["notes/api.md"]', "value"],
				["todos.a.text", "value"],
			],
		);
		assert.equal(answer.omitted, 0);
		for (const m of answer.matches) assert.ok(![..."\n\r\u001b"].some((c) => m.snippet.includes(c)), `one line, no control character: ${m.snippet}`);
		assert.equal(answer.matches[0]?.snippet, '{"status":"done","do":"try it"}');
		assert.match(answer.matches[1]?.snippet ?? "", /^"drop the\\nGraphQL gateway\\u001b\[2J"$/);
	});

	it("keeps at most `max` matches and counts the rest", () => {
		const tactics: JsonObject = {};
		for (let i = 0; i < 30; i++) tactics[`t${i}`] = `step ${i} of the graphql removal`;
		const view = viewOf(["cwd"], { cwd: { tactics } });
		const answer = searchState(view, [WHOLE("cwd")], "graphql", formatLocator, 10);
		assert.equal(answer.matches.length, 10);
		assert.equal(answer.omitted, 20);
	});

	it("every match reads back to what holds the text, and shown + counted is every place (any state)", () => {
		const key = fc.constantFrom("a", "Ab", "xAbx", "n/1", "b", "ABC", "q r");
		const text = fc.constantFrom("", "ab", "xaBy", "nothing", "line\nAB", "abab");
		const value = fc.letrec<{ v: Json }>((tie) => ({
			v: fc.oneof({ depthSize: "small" }, text, fc.integer(), fc.array(tie("v"), { maxLength: 3 }), fc.dictionary(key, tie("v"), { maxKeys: 3 })),
		})).v;
		assertProperty(
			fc.property(
				fc.dictionary(key, value, { maxKeys: 4 }),
				fc.dictionary(key, value, { maxKeys: 3 }),
				fc.integer({ min: 1, max: 12 }),
				(tactics, strategy, max) => {
					const wanted: Owner[] = ["cwd", "session"];
					const view = viewOf(wanted, { cwd: { tactics: tactics as JsonObject }, session: { strategy: strategy as JsonObject } });
					const answer = searchState(view, wanted.map(WHOLE), "ab", (loc) => presentLocator(loc, wanted), max);
					const expected = count(tactics as Json, "ab") + count(strategy as Json, "ab");
					assert.equal(answer.matches.length + answer.omitted, expected);
					assert.equal(answer.matches.length, Math.min(max, expected));
					for (const m of answer.matches) {
						const loc = toCanonicalLocator(m.locator, wanted, ["todos"]);
						const [got] = evaluate(view, [loc], "value");
						if (m.in === "value") assert.ok(typeof got?.value === "string" && got.value.toLowerCase().includes("ab"), m.locator);
						else assert.ok(String(loc.path.at(-1)).toLowerCase().includes("ab"), m.locator);
						assert.ok(!m.snippet.includes("\n"), m.snippet);
					}
				},
			),
			{ numRuns: 150 },
		);
	});

	it("searches under one locator only", () => {
		const view = viewOf(["cwd"], { cwd: { tactics: { a: "graphql" }, strategy: { b: "graphql" } } });
		const loc = parseLocator("cwd.strategy", "canonical");
		const answer = searchState(view, [loc], "graphql", formatLocator, 10);
		assert.deepEqual(
			answer.matches.map((m) => m.locator),
			["cwd.strategy.b"],
		);
	});
	it("finds any of several terms separated by |, each a phrase that may hold spaces (issue 36)", () => {
		const view = viewOf(["cwd"], {
			cwd: {
				tactics: { "apollo-client": "swap it", t2: "the GraphQL gateway", t3: "a parse error here", t4: "parse, then error", t5: "unrelated" },
			},
		});
		const present = (loc: Locator) => presentLocator(loc, ["cwd"]);
		const places = (q: string) => searchState(view, [WHOLE("cwd")], q, present, 40).matches.map((m) => [m.locator, m.in, m.snippet]);
		assert.deepEqual(places("graphql | APOLLO"), [
			["tactics.apollo-client", "key", '"swap it"'],
			["tactics.t2", "value", '"the GraphQL gateway"'],
		]);
		// A term with a space is a phrase: "parse error" is not "parse" and "error" anywhere.
		assert.deepEqual(places("parse error"), [["tactics.t3", "value", '"a parse error here"']]);
		// Empty terms are dropped; a query of nothing but separators is searched as it is.
		assert.deepEqual(places("|parse error||"), places("parse error"));
		assert.deepEqual(searchTerms(" | "), [" | "]);
		assert.deepEqual(searchTerms("A|a| b "), ["a", "b"]);
		// The snippet is cut around the earliest term in the text.
		const long = viewOf(["cwd"], { cwd: { tactics: { t: `${"x".repeat(200)} apollo ${"y".repeat(200)} graphql` } } });
		const [m] = searchState(long, [WHOLE("cwd")], "graphql|apollo", present, 40).matches;
		assert.match(m?.snippet ?? "", /^"…x+ apollo y+…"$/);
	});

	it("property: a search for a|b finds exactly the places a search for a or one for b finds", () => {
		const word = fc.constantFrom("alpha", "beta", "gamma", "Alpha beta", "al", "ph");
		const value = fc.array(word, { maxLength: 3 }).map((a) => a.join(" "));
		const tactics = fc.dictionary(fc.oneof(word, fc.constantFrom("k1", "k2", "k3")), value, { maxKeys: 6 });
		assertProperty(
			fc.property(tactics, word, word, (t, a, b) => {
				const view = viewOf(["cwd"], { cwd: { tactics: t } });
				const at = (q: string) => new Set(searchState(view, [WHOLE("cwd")], q, formatLocator, 1000).matches.map((m) => `${m.locator} ${m.in}`));
				const either = at(`${a}|${b}`);
				const union = new Set([...at(a), ...at(b)]);
				for (const p of either) assert.ok(union.has(p), `${p} found by ${a}|${b} but by neither`);
				// What a or b finds, a|b finds, but a string whose own key matched one of the terms is shown by that key.
				for (const p of union) {
					const keyOfIt = p.endsWith(" value") && either.has(`${p.slice(0, -" value".length)} key`);
					assert.ok(either.has(p) || keyOfIt, `${p} lost by ${a}|${b}`);
				}
			}),
			{ numRuns: 120 },
		);
	});

	it("hands `present` the locator that reads each match: a plane by its name, a registered root under `roots`", () => {
		const view = viewOf(["cwd"], { cwd: { tactics: { "graphql-spike": "x" }, roots: { todos: { a: { text: "remove GraphQL" } } } } });
		const seen: Locator[] = [];
		const present = (loc: Locator): string => {
			seen.push(loc);
			return formatLocator(loc);
		};
		searchState(view, [WHOLE("cwd")], "graphql", present, 40);
		assert.deepEqual(seen, [
			{ kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: ["graphql-spike"] },
			{ kind: "state", scope: "cwd", offset: 0, plane: "roots", path: ["todos", "a", "text"] },
		]);
		// Each reads back, through the evaluator, to the key's value and to the string.
		assert.deepEqual(
			evaluate(view, seen, "value").map((r) => r.value),
			["x", "remove GraphQL"],
		);
		// Nothing below: the base itself.
		assert.deepEqual(descend(WHOLE("cwd"), []), WHOLE("cwd"));
	});

	it("a start that is itself a matching string is one match; null and booleans in arrays are passed over", () => {
		const view = viewOf(["cwd"], { cwd: { tactics: { t2: "the GraphQL gateway", list: [null, true, 3, "graphql again"] } } });
		const at = (text: string) => searchState(view, [parseLocator(text, "canonical")], "graphql", formatLocator, 10).matches.map((m) => [m.locator, m.in]);
		assert.deepEqual(at("cwd.tactics.t2"), [["cwd.tactics.t2", "value"]]);
		assert.deepEqual(at("cwd.tactics.list"), [["cwd.tactics.list[3]", "value"]]);
	});

	/** The snippets of a search for `q` over `tactics`, in order. */
	const snippets = (tactics: JsonObject, q: string): string[] =>
		searchState(viewOf(["cwd"], { cwd: { tactics } }), [WHOLE("cwd")], q, formatLocator, 40).matches.map((m) => m.snippet);
	const quoted = (s: string) => JSON.stringify(s);

	it("a string's snippet is the 24 characters before the earliest term and the 40 after it, exactly", () => {
		assert.deepEqual(snippets({ t: `${"a".repeat(30)}needle${"b".repeat(50)}` }, "needle"), [quoted(`…${"a".repeat(24)}needle${"b".repeat(40)}…`)]);
		// U+FF58 is past the surrogates (0xE000 and up): counted as one unit like any other.
		assert.deepEqual(snippets({ t: `${"ｘ".repeat(30)}needle${"ｙ".repeat(50)}` }, "needle"), [quoted(`…${"ｘ".repeat(24)}needle${"ｙ".repeat(40)}…`)]);
		// Near the start: nothing before to leave out, no leading marker.
		assert.deepEqual(snippets({ t: `a needle${"z".repeat(60)}` }, "needle"), [quoted(`a needle${"z".repeat(40)}…`)]);
	});

	it("a snippet whose cut falls inside a surrogate pair keeps the pair whole, at either end", () => {
		// 24 before `needle` lands on the low half (U+DC00) of U+10000; 40 after it on the low half (U+DFFF) of U+103FF.
		const text = `a${"\u{10000}".repeat(12)}bneedlec${"\u{103FF}".repeat(25)}`;
		assert.deepEqual(snippets({ t: text }, "needle"), [quoted(`…${"\u{10000}".repeat(12)}bneedlec${"\u{103FF}".repeat(20)}…`)]);
		// A lone low surrogate opening the string (a planted store can hold one) is kept, not looked behind.
		assert.deepEqual(snippets({ t: `\udc00 needle${"z".repeat(60)}` }, "needle"), [quoted(`\udc00 needle${"z".repeat(40)}…`)]);
	});

	it("the earliest term in the text sets the snippet, whatever the order of the terms; at one place, the first listed", () => {
		const text = `${"x".repeat(200)} apollo ${"y".repeat(200)} graphql`;
		const around = quoted(`…${"x".repeat(23)} apollo ${"y".repeat(39)}…`);
		assert.deepEqual(snippets({ t: text }, "graphql|apollo"), [around]);
		assert.deepEqual(snippets({ t: text }, "apollo|graphql"), [around]);
		const both = `${"x".repeat(30)}graphql${"y".repeat(60)}`;
		assert.deepEqual(snippets({ t: both }, "graph|graphql"), [quoted(`…${"x".repeat(24)}graphql${"y".repeat(38)}…`)]);
		assert.deepEqual(snippets({ t: both }, "graphql|graph"), [quoted(`…${"x".repeat(24)}graphql${"y".repeat(40)}…`)]);
	});

	it("where lower-casing changes a string's length (İ), the snippet is the string's start; no term, no match", () => {
		const text = `İ${"x".repeat(50)}graphql${"y".repeat(10)}`;
		assert.deepEqual(snippets({ t: text }, "graphql"), [quoted(`İ${"x".repeat(39)}…`)]);
		assert.deepEqual(snippets({ t: "İstanbul", İstanbul: 1 }, "graphql"), []);
	});

	it("a matching key's value is previewed: 60 characters whole, longer ones cut to 60 (never inside a pair) and marked", () => {
		const sixty = "s".repeat(60);
		const cases: [Json, string][] = [
			[sixty, quoted(sixty)],
			[`${sixty}t`, quoted(`${sixty}…`)],
			[`${"s".repeat(59)}😀tail`, quoted(`${"s".repeat(59)}😀…`)],
			// Compact JSON of 60 characters (`{"k":"` + 52 + `"}`) whole, of 61 cut.
			[{ k: "v".repeat(52) }, `{"k":"${"v".repeat(52)}"}`],
			[{ k: "v".repeat(53) }, `{"k":"${"v".repeat(53)}"…`],
		];
		for (const [value, preview] of cases) assert.deepEqual(snippets({ "needle-key": value }, "needle"), [preview], JSON.stringify(value));
	});
});
