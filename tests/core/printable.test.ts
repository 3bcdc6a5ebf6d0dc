/**
 * Stored text as data wherever it is shown (core/printable.ts): which characters each spelling
 * turns into `\uXXXX` escapes (controls, separators, bidi controls, invisible characters, the
 * head's tag, `<` for the head), which it leaves, and the refusals and quoting built on them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	HEAD_TAG,
	hasBidiControl,
	hasInvisible,
	identifierProblem,
	inline,
	jsonId,
	modelJson,
	modelLine,
	printable,
	printableDeep,
	shellWord,
	spellId,
} from "../../lib/core/printable.js";

describe("spelling unsafe characters", () => {
	it("printable: controls, DEL, C1, separators, bidi controls and a lone carriage return; tabs, line feeds and CRLF stay", () => {
		assert.equal(printable("a\u0000b\u001bc\u007fd\u0085e"), "a\\u0000b\\u001bc\\u007fd\\u0085e");
		assert.equal(printable("x\u2028y\u2029z"), "x\\u2028y\\u2029z");
		assert.equal(printable("\u202eevil\u2066\u061c\u200e"), "\\u202eevil\\u2066\\u061c\\u200e");
		assert.equal(printable("a\tb\nc\r\nd\re"), "a\tb\nc\r\nd\\u000de");
		assert.equal(printable("zero\u200bwidth"), "zero\u200bwidth", "invisible characters are spelled only in ids");
		assert.equal(printable("plain é € 😀 <tag>"), "plain é € 😀 <tag>");
	});

	it("inline: also tabs, line feeds and carriage returns, and the start of the head's tag in any case", () => {
		assert.equal(inline("a\tb\nc\rd"), "a\\u0009b\\u000ac\\u000dd");
		assert.equal(inline(`x</${HEAD_TAG}>y`), `x\\u003c/${HEAD_TAG}>y`);
		assert.equal(inline(`< ${HEAD_TAG.toUpperCase()}`), `\\u003c ${HEAD_TAG.toUpperCase()}`);
		assert.equal(inline("a < b <other>"), "a < b <other>");
		assert.equal(inline("\u202e"), "\\u202e");
	});

	it("spellId: also the characters that show nothing, astral tags as their two units", () => {
		assert.equal(spellId("a\u200bb\u00adc\ufeffd"), "a\\u200bb\\u00adc\\ufeffd");
		assert.equal(spellId("x\udb40\udc41y"), "x\\udb40\\udc41y");
		assert.equal(spellId(`<${HEAD_TAG}`), `\\u003c${HEAD_TAG}`);
		assert.equal(spellId("a\nb"), "a\\u000ab");
		assert.equal(spellId("id-1 é"), "id-1 é");
		assert.equal(jsonId("a\u200bb"), '"a\\u200bb"');
		assert.equal(JSON.parse(jsonId("a\u200bb")), "a\u200bb", "the same string to a JSON parser");
	});

	it("modelLine spells `<` and controls; modelJson spells `<`, C1 and separators only", () => {
		assert.equal(modelLine("a<b\nc\u202e"), "a\\u003cb\\u000ac\\u202e");
		assert.equal(modelJson('{"a":"<\u0085\u2028\\n"}'), '{"a":"\\u003c\\u0085\\u2028\\n"}');
		assert.equal(modelJson('{"a":"\u202e"}'), '{"a":"\u202e"}');
	});

	it("hasBidiControl and hasInvisible tell which kind a text holds", () => {
		assert.equal(hasBidiControl("a\u202eb"), true);
		assert.equal(hasBidiControl("a\u200bb"), false);
		assert.equal(hasInvisible("a\u200bb"), true);
		assert.equal(hasInvisible("a\udb40\udc20b"), true);
		assert.equal(hasInvisible("a\u202eb"), false);
		assert.equal(hasInvisible("plain"), false);
	});

	it("printableDeep spells every string and key of a value, and keeps the rest", () => {
		const v = { "k\u001b": ["a\u202e", 1, null, true, { n: "\u2028" }], plain: "x" };
		assert.deepEqual(printableDeep(v), { "k\\u001b": ["a\\u202e", 1, null, true, { n: "\\u2028" }], plain: "x" });
		assert.equal(printableDeep(null), null);
		assert.equal(printableDeep(7), 7);
		assert.equal(printableDeep("a\u0007"), "a\\u0007");
	});
});

describe("identifiers and shell words", () => {
	it("identifierProblem names what an id must not hold, in order: controls, bidi, invisible (spelled)", () => {
		assert.equal(identifierProblem("my-project"), undefined);
		assert.equal(identifierProblem("a\nb"), "must not contain control characters or line breaks");
		assert.equal(identifierProblem("a\u2028b"), "must not contain control characters or line breaks");
		assert.equal(identifierProblem("a\u202eb"), "must not contain bidirectional overrides (they make text read otherwise)");
		assert.equal(identifierProblem("a\u200bb"), "must not contain invisible characters (found \\u200b): it would read as another id");
	});

	it("shellWord leaves a plain word and single-quotes anything else, quotes included", () => {
		assert.equal(shellWord("proj-1_a@b%c+d=e:f,g./h"), "proj-1_a@b%c+d=e:f,g./h");
		assert.equal(shellWord("a b"), "'a b'");
		assert.equal(shellWord("$(rm -rf ~)"), "'$(rm -rf ~)'");
		assert.equal(shellWord("it's"), "'it'\\''s'");
		assert.equal(shellWord(";x"), "';x'");
		assert.equal(shellWord("x;"), "'x;'");
		assert.equal(shellWord(""), "''");
		assert.equal(shellWord("é"), "'é'");
	});
});
