/** What a refusal says: the StateError a call throws, or the test fails (no throw, or another error). */
import assert from "node:assert/strict";
import { isStateError, type StateError } from "../../lib/core/errors.js";

/** The StateError `fn` throws; any other outcome fails the test, naming it. */
export function refusalOf(fn: () => unknown): StateError {
	try {
		fn();
	} catch (e) {
		assert.ok(isStateError(e), `expected a StateError, got ${String(e)}`);
		return e;
	}
	return assert.fail("expected a StateError");
}

/** `<code>: <message>` of the refusal `fn` throws. */
export function codeAndWords(fn: () => unknown): string {
	const e = refusalOf(fn);
	return `${e.code}: ${e.message}`;
}
