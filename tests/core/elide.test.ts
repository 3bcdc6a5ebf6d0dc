/**
 * `elideMiddle` (issue 33) cut by cut: the start keeps 60 % of the room left by the marker, the
 * end the rest, and each cut moves outwards-or-back only as far as it must so that it never splits
 * a surrogate pair or a JSON escape (`\uXXXX`, `\"`, `\\`, `\n`). The cases are exact: with 100
 * characters and a bound of 37 the marker takes 27, the start 6 and the end 4, so each case places
 * a pair or an escape across position 6 or 96. A property over JSON text checks the promises on
 * any input: bounded, a true prefix and suffix, both parts still valid JSON text, a right count.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { elideMiddle, MAX_SHOWN_LOCATOR, shownLocator } from "../../lib/core/elide.js";
import { assertProperty } from "../helpers/seed.js";

const left = (n: number) => `…(${n.toLocaleString("en-US")} characters left out)…`;
/** A 100-character text: `head`, then `x` to fill, then `tail`. */
const text100 = (head: string, tail = "") => `${head}${"x".repeat(100 - head.length - tail.length)}${tail}`;
/** The bound that keeps 6 characters at the start and 4 at the end of 100 (27 for the marker). */
const M = 37;

describe("elideMiddle", () => {
	it("keeps text of at most `max` characters whole, and cuts longer text to at most `max`", () => {
		const t = text100("");
		assert.equal(elideMiddle(t, 100), t);
		assert.equal(elideMiddle(t, 99).length <= 99, true);
		assert.notEqual(elideMiddle(t, 99), t);
		assert.equal(shownLocator("a".repeat(MAX_SHOWN_LOCATOR)), "a".repeat(MAX_SHOWN_LOCATOR));
	});

	it("plain text keeps 60 % of the room at the start and the rest at the end, exactly", () => {
		assert.equal(left(100).length, 27);
		assert.equal(elideMiddle("0123456789".repeat(10), M), `012345${left(90)}6789`);
		// U+FF58 is past the surrogates (0xE000 and up): one unit like any other.
		assert.equal(elideMiddle("ｘ".repeat(100), M), `${"ｘ".repeat(6)}${left(90)}${"ｘ".repeat(4)}`);
	});

	it("a cut inside a surrogate pair leaves the pair out whole, at either end", () => {
		// U+10000 (low half U+DC00) at 5–6, U+103FF (low half U+DFFF) at 95–96.
		const t = `abcde\u{10000}${"x".repeat(88)}\u{103FF}yyy`;
		assert.equal(t.length, 100);
		assert.equal(elideMiddle(t, M), `abcde${left(92)}yyy`);
	});

	it("a bound with no room past the marker keeps only the marker, whatever the text starts with", () => {
		assert.equal(elideMiddle(`\udc00${"x".repeat(99)}`, 20), left(100));
		assert.equal(elideMiddle(`\\u001b${"x".repeat(94)}`, 20), left(100));
	});

	it("the start is cut before an escape it would split, and only then", () => {
		const cases: [string, string][] = [
			// Inside `\u001b` (1–6), at its last digit.
			["a\\u001b", "a"],
			// Inside `\"` (5–6).
			['abcde\\"', "abcde"],
			// After `\n` (3–4), a character later: nothing split.
			["abc\\nx", "abc\\nx"],
			// Right at the end of `\n` (4–5).
			["abcd\\n", "abcd\\n"],
			// An escaped backslash `\\` (4–5) before the cut: its second backslash starts nothing.
			["abcd\\\\", "abcd\\\\"],
			// `\\` then `\"` (3–6): the third backslash starts an escape the cut is inside.
			['abc\\\\\\"', "abc\\\\"],
			// An escape starting just after the cut (7–8) is not the start's business.
			["abcdefx\\n", "abcdef"],
		];
		for (const [head, start] of cases) {
			const t = text100(head);
			assert.equal(elideMiddle(t, M), `${start}${left(96 - start.length)}xxxx`, head);
		}
		// An escape at the very beginning: a bound of 32 keeps 3 at the start, inside `\u001b`.
		assert.equal(elideMiddle(text100("\\u001b"), 32), `${left(98)}xx`);
	});

	it("the end is cut after an escape it would split, and never past the text", () => {
		const cases: [string, string][] = [
			// Inside `\u001b` (93–98).
			["\\u001by", "y"],
			// Inside `\n` (95–96).
			["\\nyyy", "yyy"],
			// Right after `\n` (94–95): nothing split.
			["\\nyyyy", "yyyy"],
			// An escape running to the end of the text (94–99).
			["\\u001b", ""],
			// A cut-off escape at the end (95–99, one digit short): the end keeps nothing.
			["\\u001", ""],
		];
		for (const [tail, end] of cases) {
			const t = text100("", tail);
			assert.equal(elideMiddle(t, M), `xxxxxx${left(94 - end.length)}${end}`, tail);
		}
	});

	it("property: JSON text of any string is cut to at most `max`, into a prefix and a suffix that are still JSON text", () => {
		const unit = fc.constantFrom("a", "b", "\\", '"', "\n", "\u001b", "\u{10000}", "😀", "é", "ｘ");
		assertProperty(
			fc.property(fc.array(unit, { minLength: 40, maxLength: 400 }), fc.integer({ min: 64, max: 300 }), (units, max) => {
				const text = JSON.stringify(units.join(""));
				const out = elideMiddle(text, max);
				if (text.length <= max) {
					assert.equal(out, text);
					return;
				}
				assert.ok(out.length <= max, `${out.length} > ${max}`);
				const m = /^(.*)…\(([\d,]+) characters left out\)…(.*)$/su.exec(out);
				assert.ok(m !== null, out);
				const [, start = "", count = "", end = ""] = m;
				assert.equal(start.length + Number(count.replaceAll(",", "")) + end.length, text.length);
				assert.ok(text.startsWith(start) && text.endsWith(end), out);
				// Neither part splits an escape or a pair: each, closed with a quote, parses, and holds no lone surrogate.
				assert.equal(typeof JSON.parse(`${start}"`), "string", start);
				assert.equal(typeof JSON.parse(`"${end}`), "string", end);
				assert.ok(!/\p{Cs}/u.test(start) && !/\p{Cs}/u.test(end), out);
				// Each cut gives up at most 5 characters (an escape) of its share: the result fills its bound.
				assert.ok(out.length >= max - 12, `${out.length} for ${max}`);
			}),
			{ numRuns: 300 },
		);
	});
});
