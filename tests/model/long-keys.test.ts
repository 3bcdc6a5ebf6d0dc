/**
 * Locators made of long keys stay bounded wherever they are shown (issue 33): a `read_state`
 * search line (the first included: 1,000-character keys nested 60 deep made it 60,157
 * characters), the head's notices and recent transitions, and a patch's result. A cut locator
 * shows its start and end around a marker counting what it left out. A fast-check property over
 * hostile key shapes (long keys with escapes and astral characters, deep nesting, wide objects,
 * past the limits a planted store ignores) checks every search line and the whole result.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { elideMiddle, MAX_SHOWN_LOCATOR } from "../../lib/core/elide.js";
import { newHistory } from "../../lib/core/history.js";
import type { Locator } from "../../lib/core/locator.js";
import { searchState } from "../../lib/core/search.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { Json, JsonObject, Owner, OwnerHistory } from "../../lib/core/types.js";
import { renderHead } from "../../lib/model/head.js";
import { presentLocator } from "../../lib/model/interface.js";
import { patchResult } from "../../lib/model/results.js";
import { MAX_SEARCH_LINE, MAX_SEARCH_MATCHES, MAX_SEARCH_TEXT, searchResult } from "../../lib/model/search-result.js";
import { assertProperty } from "../helpers/seed.js";

const WHOLE = (owner: Owner): Locator => ({ kind: "state", scope: owner, offset: 0, plane: null, path: [] });
const by = { kind: "system", reason: "test" } as const;

/** A history holding `tactics` as a planted store would: no limit on keys or depth applies. */
function planted(tactics: JsonObject): Partial<Record<Owner, OwnerHistory>> {
	const h = newHistory("cwd", 20);
	h.state.tactics = tactics;
	return { cwd: h };
}

/** `depth` objects nested, each under one key of `width` characters, a matching string at the bottom. */
function nested(depth: number, width: number): JsonObject {
	let v: Json = "the graphql note";
	for (let i = depth - 1; i >= 0; i--) v = { [`${String.fromCharCode(97 + (i % 26))}`.repeat(width)]: v };
	return v as JsonObject;
}

/** The search result's text for `query` over every planted tactic. */
function search(histories: Partial<Record<Owner, OwnerHistory>>, query: string) {
	const wanted: Owner[] = ["cwd"];
	const present = (loc: Locator) => presentLocator(loc, wanted);
	const answer = searchState({ wanted, histories, roots: [] }, [WHOLE("cwd")], query, present, MAX_SEARCH_MATCHES);
	return { answer, result: searchResult({ query, answer, wanted }) };
}

/** The match lines of a search result (its header and trailing count left out). */
function matchLines(text: string): string[] {
	return text
		.split("\n")
		.slice(1)
		.filter((l) => !l.startsWith("+ "));
}

describe("long keys where locators are shown", () => {
	it("a first match under 1,000-character keys nested 60 deep: one bounded line showing the locator's start and end", () => {
		const { answer, result } = search(planted(nested(60, 1000)), "graphql");
		assert.ok((answer.matches[0]?.locator.length ?? 0) > 60_000, "the locator itself is that long");
		const text = result.content[0]?.text ?? "";
		const [line, ...rest] = matchLines(text);
		assert.equal(rest.length, 0);
		assert.ok(line !== undefined && line.length <= MAX_SEARCH_LINE, `${line?.length} characters`);
		assert.match(line, /^tactics\.a+…\(\d{2},\d{3} characters left out\)…h+: "the graphql note"$/);
		assert.ok(text.length < MAX_SEARCH_TEXT + 200, `${text.length} characters`);
		assert.deepEqual(result.details.search.matches, [line.slice(0, line.indexOf(": "))], "details carry the locator as shown");
	});

	it("property: every line of a search result is bounded, and the lines within their limit, whatever the keys", () => {
		// Keys: long, with characters JSON escapes (quote, backslash, controls), astral ones, and the query itself.
		const piece = fc.constantFrom("q", "Q", "x", '"', "\\", "\u001b", "\u2028", "😀", "é", "graphql", " ");
		const key = fc.oneof(
			fc.array(piece, { maxLength: 12 }).map((a) => a.join("")),
			fc.tuple(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.integer({ min: 50, max: 1000 })).map(([a, n]) => a.join("").repeat(n)),
		);
		const leaf = fc.oneof(
			fc.constant("graphql"),
			fc.array(piece, { maxLength: 400 }).map((a) => a.join("")),
			fc.integer(),
		);
		// Deep chains and wide objects, mixed.
		const shaped = fc.oneof(
			fc.tuple(fc.array(key, { minLength: 1, maxLength: 70 }), leaf).map(([keys, v]) => keys.reduceRight<Json>((acc, k) => ({ [k]: acc }), v)),
			fc.dictionary(key, leaf, { maxKeys: 80 }),
		);
		assertProperty(
			fc.property(fc.dictionary(key, shaped, { minKeys: 1, maxKeys: 6 }), fc.constantFrom("graphql", "q", "x", "\\"), (tactics, query) => {
				const { result } = search(planted(tactics as JsonObject), query);
				const text = result.content[0]?.text ?? "";
				const lines = matchLines(text);
				let used = 0;
				for (const l of lines) {
					assert.ok(l.length <= MAX_SEARCH_LINE, `a line of ${l.length} characters`);
					used += l.length + 1;
				}
				assert.ok(used <= MAX_SEARCH_TEXT + 1, `${used} characters of lines`);
				assert.equal(result.details.search.matches.length, lines.length);
				assert.ok(!["\r", "\u001b", "\u2028"].some((c) => lines.join("").includes(c)), "stored text never ends a line or reaches the terminal raw");
			}),
			{ numRuns: 60 },
		);
	});

	it("a cut keeps JSON escapes and surrogate pairs whole, and fits its bound", () => {
		assertProperty(
			fc.property(fc.array(fc.constantFrom("a", "\\u001b", '\\"', "\\\\", "😀", "é"), { maxLength: 400 }), fc.integer({ min: 64, max: 300 }), (parts, max) => {
				const text = parts.join("");
				const cut = elideMiddle(text, max);
				assert.ok(cut.length <= max || cut === text);
				if (cut === text) return;
				const m = /^(.*)…\((\d[\d,]*) characters left out\)…(.*)$/su.exec(cut);
				assert.ok(m, cut);
				const [start, n, end] = [m[1] as string, Number((m[2] as string).replaceAll(",", "")), m[3] as string];
				assert.equal(start.length + n + end.length, text.length);
				assert.ok(text.startsWith(start) && text.endsWith(end));
				// Both parts are whole pieces: the start is a prefix of pieces, the end a suffix.
				let at = 0;
				for (const p of parts) {
					if (at === start.length) break;
					at += p.length;
					assert.ok(at <= start.length, `the start ends inside ${JSON.stringify(p)}`);
				}
				let back = 0;
				for (const p of [...parts].reverse()) {
					if (back === end.length) break;
					back += p.length;
					assert.ok(back <= end.length, `the end starts inside ${JSON.stringify(p)}`);
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("the head: dangling-reference notices and recent transitions of long keys stay within the budget", () => {
		const histories: Partial<Record<Owner, OwnerHistory>> = { cwd: newHistory("cwd", 20) };
		const intents: JsonObject = {};
		for (let i = 0; i < 8; i++) intents[String.fromCharCode(97 + i).repeat(1000)] = { goal: "g", owns: [{ $ref: `cwd.tactics.${"t".repeat(1000)}${i}` }] };
		commitStaged(histories, stage(histories, { cwd: { intents } }, { id: "a", at: "2026-01-01T00:00:00.000Z", by, exact: true }));
		const head = renderHead({ mode: "active", wanted: ["cwd"], histories, budget: 8192 });
		assert.ok(Buffer.byteLength(head) <= 8192, `${Buffer.byteLength(head)} bytes`);
		const notices = head.split("\n").filter((l) => l.startsWith("! dangling ref: "));
		assert.equal(notices.length, 8);
		for (const l of notices) {
			assert.ok(l.length <= 2 * MAX_SHOWN_LOCATOR + 40, l);
			assert.match(
				l,
				/^! dangling ref: intents\.([a-h])\1+…\([\d,]+ characters left out\)…\1+ -> tactics\.t+…\([\d,]+ characters left out\)…t+\d \(missing\)$/,
			);
		}
		const recent = head.split("\n").find((l) => l.startsWith("- #1 "));
		assert.ok(recent !== undefined && recent.length < 7 * MAX_SHOWN_LOCATOR, recent);
	});

	it("a patch's result: the changed path of a long key is shown by its start and end", () => {
		const histories: Partial<Record<Owner, OwnerHistory>> = { cwd: newHistory("cwd", 20) };
		const key = "k".repeat(1000);
		const patch = { cwd: { tactics: { [key]: "v" } } };
		const staged = stage(histories, patch, { id: "a", at: "2026-01-01T00:00:00.000Z", by });
		assert.equal(staged.noop, false);
		const text = patchResult({ transitionId: "a", report: staged.report, wanted: ["cwd"] }).content[0]?.text ?? "";
		const changed = /^changed: (.*)$/m.exec(text)?.[1] ?? "";
		assert.ok(changed.length <= MAX_SHOWN_LOCATOR, changed);
		assert.match(changed, /^\/tactics\/k+…\(\d+ characters left out\)…k+$/);
	});
});

describe("what a search says it searched (issue 36)", () => {
	it("names the owners and what it covers, the terms when there are several, and stays one bounded line for any query", () => {
		const h = planted({ "graphql-spike": "try it", apollo: "the Apollo client" });
		const first = (q: string) => (search(h, q).result.content[0]?.text ?? "").split("\n")[0] ?? "";
		assert.equal(
			first("graphql"),
			'search "graphql" in cwd: keys and text of every plane, lazy bodies and registered roots, now (not history), case-insensitive: 1 match',
		);
		assert.equal(
			first("graphql|apollo"),
			'search any of "graphql", "apollo" in cwd: keys and text of every plane, lazy bodies and registered roots, now (not history), case-insensitive: 2 matches',
		);
		const under = searchResult({ query: "x", under: "tactics", answer: { matches: [], omitted: 0 }, wanted: ["cwd"] });
		assert.equal(under.content[0]?.text, 'search "x" under "tactics": keys and text, case-insensitive: no match');
		for (const q of ["q".repeat(50_000), "a|".repeat(20_000), "\u001b\n".repeat(5_000)]) {
			const line = first(q);
			assert.ok(line.length <= MAX_SEARCH_LINE, `${line.length} characters`);
			assert.ok(![...line].some((c) => c.charCodeAt(0) < 0x20), "no control character in the first line");
		}
	});
});
