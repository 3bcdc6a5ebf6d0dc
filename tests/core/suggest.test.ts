/** "Did you mean": the nearest known word for a typo, none for a far or ambiguous one (issue 27). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { editDistance, nearest } from "../../lib/core/suggest.js";

const VERBS = ["history", "show", "undo", "redo", "restore", "set", "delete", "tidy", "owners"];

describe("nearest", () => {
	it("finds swapped, missing and extra letters, and a unique prefix", () => {
		assert.equal(nearest("histroy", VERBS), "history");
		assert.equal(nearest("--ful", ["--full", "--yes"]), "--full");
		assert.equal(nearest("shwo", VERBS), "show");
		assert.equal(nearest("restor", VERBS), "restore");
		assert.equal(nearest("tid", VERBS), "tidy");
	});

	it("suggests nothing for a far word or a tie", () => {
		assert.equal(nearest("frob", VERBS), undefined);
		assert.equal(nearest("sat", ["set", "sit"]), undefined);
		assert.equal(nearest("", VERBS), undefined);
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
