/**
 * The head of a long-lived project (issue 26): relevance, not key order. On the fixture of
 * `tests/helpers/long-project.ts` the 8 KiB head shows every active intent's goal, every owned
 * step's key and status, every lazy note's and artifact's key and the todo texts, and folds the
 * closed intents and old tactics into one line that says how many, how old and how to read them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_HEAD_BUDGET, renderHead, utf8Bytes } from "../../lib/model/head.js";
import { activeWorkShown, longProject } from "../helpers/long-project.js";

describe("head relevance", () => {
	it("shows the active work of a 75 KB project whole at 8 KiB", () => {
		const { cwd, work, roots } = longProject();
		assert.ok(cwd.bytes > 70_000 && cwd.bytes < 90_000, `${cwd.bytes} B of state`);
		assert.equal(Object.keys(cwd.state.tactics).length, 311);
		const head = renderHead({ mode: "active", wanted: ["cwd"], histories: { cwd }, budget: DEFAULT_HEAD_BUDGET, roots });
		if (process.env.SHOW_HEAD) console.log(head);
		assert.ok(utf8Bytes(head) <= DEFAULT_HEAD_BUDGET);
		const { share, missing } = activeWorkShown(head, work);
		assert.deepEqual(missing, []);
		assert.equal(share, 1);
	});
});
