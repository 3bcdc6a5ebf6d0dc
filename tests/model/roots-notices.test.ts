/**
 * Concurrent-change notices and registered roots (docs/spec.md §6.4, §12): a root the model
 * knows is named like a plane path; a dormant root's paths are never named (the transition is
 * still counted).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { concurrentNotice } from "../../lib/model/notices.js";

describe("notices name registered roots only", () => {
	const h = newHistory("cwd", 20);
	const r = stage({ cwd: h }, { cwd: { roots: { todos: { a: { text: "x" } }, secret: { k: 1 } } } }, { id: "o1", at: "2026-11-30T00:00:00.000Z", by: { kind: "extension", extension: "other" }, roots: () => undefined });
	commitStaged({ cwd: h }, r);
	const args = { wanted: ["cwd"] as const, histories: { cwd: h }, seqAtHead: { cwd: 0 }, ownSeqs: {} };

	it("names paths inside a registered root, not inside a dormant one", () => {
		const text = concurrentNotice({ ...args, roots: ["todos"] }) ?? "";
		assert.match(text, /1 transition/);
		assert.match(text, /todos\.a/);
		assert.doesNotMatch(text, /secret|roots/);
	});

	it("names nothing of roots when none is registered", () => {
		assert.doesNotMatch(concurrentNotice(args) ?? "", /todos|secret|roots/);
	});
});
