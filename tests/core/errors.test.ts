/**
 * The one error type of State Flow (core/errors.ts): its name, code, field path and cause, how
 * any thrown value becomes a message, and how a field path is spelled in messages.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateError, fail, formatPath, isStateError, messageOf } from "../../lib/core/errors.js";

describe("StateError and fail", () => {
	it("carries its name, code, message and field path (none unless given)", () => {
		const e = new StateError("invalid_input", "bad");
		assert.equal(e.name, "StateError");
		assert.equal(e.message, "bad");
		assert.deepEqual(e.path, []);
		assert.throws(
			() => fail("corrupt", "broken"),
			(x: unknown) => isStateError(x) && x.code === "corrupt" && x.message === "broken" && x.path.length === 0 && !Object.hasOwn(x, "cause"),
		);
		assert.throws(
			() => fail("invalid_input", "bad", ["cwd", "tactics", 0]),
			(x: unknown) => isStateError(x) && x.path.join() === "cwd,tactics,0",
		);
	});

	it("keeps the cause it was given", () => {
		const cause = new Error("ENOSPC");
		assert.throws(
			() => fail("io", "cannot write", [], cause),
			(x: unknown) => isStateError(x) && x.cause === cause,
		);
	});

	it("isStateError tells a StateError from any other thrown value", () => {
		assert.equal(isStateError(new StateError("io", "x")), true);
		assert.equal(isStateError(new Error("x")), false);
		assert.equal(isStateError({ name: "StateError", code: "io", message: "x" }), false);
		assert.equal(isStateError(undefined), false);
	});

	it("messageOf: an Error's message, anything else as text", () => {
		assert.equal(messageOf(new StateError("io", "disk")), "disk");
		assert.equal(messageOf(new TypeError("t")), "t");
		assert.equal(messageOf("plain"), "plain");
		assert.equal(messageOf(42), "42");
		assert.equal(messageOf(undefined), "undefined");
	});
});

describe("formatPath", () => {
	it("spells names with dots, other keys quoted in brackets, indexes in brackets", () => {
		assert.equal(formatPath([]), "(input)");
		assert.equal(formatPath(["cwd"]), "cwd");
		assert.equal(formatPath(["cwd", "tactics", "a.b", 0]), 'cwd.tactics["a.b"][0]');
		assert.equal(formatPath([0, "x"]), "[0].x");
		assert.equal(formatPath(["x", "0"]), 'x["0"]', "a key made of digits is a key, not an index");
		assert.equal(formatPath(["x", "1a"]), 'x["1a"]');
		assert.equal(formatPath(["x", "a b"]), 'x["a b"]');
		assert.equal(formatPath(["x", "_a-b$1"]), "x._a-b$1");
	});
});
