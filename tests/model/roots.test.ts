/**
 * Registered roots in what the model sees (docs/spec.md §6, §12): concurrent-change notices name
 * a root the model knows like a plane path and never a dormant root's paths (the transition is
 * still counted); the head shows a root after the planes under the same budget.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { renderHead } from "../../lib/model/head.js";
import { utf8Bytes } from "../../lib/core/size.js";
import { concurrentNotice } from "../../lib/model/notices.js";

describe("notices name registered roots only", () => {
	const h = newHistory("cwd", 20);
	const r = stage(
		{ cwd: h },
		{ cwd: { roots: { todos: { a: { text: "x" } }, secret: { k: 1 } } } },
		{ id: "o1", at: "2026-11-30T00:00:00.000Z", by: { kind: "extension", extension: "other" }, roots: () => undefined },
	);
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

describe("the head shows registered roots under the budget", () => {
	it("a large root is shortened like a plane, with a marker naming its locator; a dormant root is never shown", () => {
		const h = newHistory("cwd", 20);
		const todos: Record<string, { text: string }> = {};
		for (let i = 0; i < 200; i++) todos[`t${i}`] = { text: `item number ${i} `.repeat(4) };
		commitStaged(
			{ cwd: h },
			stage(
				{ cwd: h },
				{ cwd: { tactics: { next: "x" }, roots: { todos, secret: { k: "hidden" } } } },
				{ id: "1", at: "2026-11-30T00:00:00.000Z", by: { kind: "system", reason: "t" }, roots: () => undefined },
			),
		);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories: { cwd: h }, budget: 1024, roots: ["todos"] });
		assert.ok(utf8Bytes(head) <= 1024, `${utf8Bytes(head)} bytes`);
		assert.match(head, /^todos: \{.*"…":"\d+ more keys, [\d.]+ KB: read_state todos with projection keys"\}$/m);
		assert.match(head, /^tactics: \{"next":"x"\}$/m);
		assert.doesNotMatch(head, /secret|hidden|roots/);
	});
});
