/** "Did you mean": the nearest known word for a typo, none for a far or ambiguous one (issue 27). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { didYouMean, editDistance, nearest } from "../../lib/core/suggest.js";

const VERBS = ["history", "show", "undo", "redo", "restore", "set", "delete", "tidy", "owners"];

describe("nearest", () => {
	it("finds swapped, missing and extra letters, and a unique prefix", () => {
		assert.equal(nearest("histroy", VERBS), "history");
		assert.equal(nearest("--ful", ["--full", "--yes"]), "--full");
		assert.equal(nearest("shwo", VERBS), "show");
		assert.equal(nearest("restor", VERBS), "restore");
		assert.equal(nearest("tid", VERBS), "tidy");
	});

	it("a unique prefix wins however far it is; a prefix of several words falls back to the distance", () => {
		assert.equal(nearest("his", VERBS), "history");
		assert.equal(nearest("re", VERBS), undefined, "redo and restore");
		assert.equal(nearest("", ["only"]), undefined, "nothing typed is no word's prefix");
		assert.equal(nearest("HIST", VERBS), "history", "case does not count");
	});

	it("allows one edit up to five letters and two from six, counting a name without its leading dashes", () => {
		assert.equal(nearest("--sumry", ["--summary"]), undefined, "`sumry`: five letters, two edits away");
		assert.equal(nearest("--summry", ["--summary"]), "--summary");
		assert.equal(nearest("ab-cde", ["xb-cdx"]), "xb-cdx", "a dash inside the word counts");
		assert.equal(nearest("abcdefgh", ["xbcdefgy"]), "xbcdefgy");
		assert.equal(nearest("abcdefghi", ["xbcdefgyz"]), undefined, "never more than two");
		assert.equal(nearest("ab", ["xy"]), undefined);
		assert.equal(nearest("ab", ["xb"]), "xb", "one edit even for two letters");
	});

	it("didYouMean: the words appended to an unknown-word message, or nothing", () => {
		assert.equal(didYouMean("histroy", VERBS), " Did you mean `history`?");
		assert.equal(
			didYouMean("histroy", VERBS, (k) => `/state ${k}`),
			" Did you mean /state history?",
		);
		assert.equal(didYouMean("frob", VERBS), "");
	});

	it("suggests nothing for a far word or a tie", () => {
		assert.equal(nearest("frob", VERBS), undefined);
		assert.equal(nearest("sat", ["set", "sit"]), undefined);
		assert.equal(nearest("", VERBS), undefined);
	});

	it("editDistance counts a swap of neighbours as one edit", () => {
		assert.equal(editDistance("ab", "ba"), 1);
		assert.equal(editDistance("abcd", "acbd"), 1);
		assert.equal(editDistance("abcd", "badc"), 2);
		assert.equal(editDistance("kitten", "sitting"), 3);
		assert.equal(editDistance("", "abc"), 3);
		assert.equal(editDistance("abc", ""), 3);
	});

	it("editDistance is a metric on small words (zero on equal, symmetric, at most the longer length)", () => {
		assertProperty(
			fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), (a, b) => {
				assert.equal(editDistance(a, a), 0);
				assert.equal(editDistance(a, b), editDistance(b, a));
				assert.ok(editDistance(a, b) <= Math.max(a.length, b.length));
				assert.equal(editDistance(a, b) === 0, a === b);
			}),
		);
	});
});
