/**
 * Root data shown to the user (docs/spec.md §12): the `state-flow show` text and the
 * `/state browse` rows list the roots namespace after the planes, whether its extension is
 * loaded or not; an owner without root data shows no such section.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { formatShow } from "../../lib/cli/format.js";
import { treeRows } from "../../lib/host/browser-model.js";

function withTodos() {
	const h = newHistory("cwd", 20);
	const r = stage({ cwd: h }, { cwd: { tactics: { t: 1 }, roots: { todos: { a: { text: "kept" } } } } }, { id: "x", at: "2026-11-30T00:00:00.000Z", by: { kind: "extension", extension: "todo" }, roots: () => undefined });
	commitStaged({ cwd: h }, r);
	return h;
}

describe("root data in show and browse", () => {
	it("state-flow show lists the roots after the planes", () => {
		const text = formatShow("cwd", "/p", withTodos(), false);
		assert.match(text, /\nroots \(of extensions\):\n {2}\{\n {4}"todos": \{\n {6}"a": \{\n {8}"text": "kept"/);
		assert.doesNotMatch(formatShow("cwd", "/p", newHistory("cwd", 20), false), /roots/);
	});

	it("the browser has a roots row that expands to each root", () => {
		const h = withTodos();
		const rows = treeRows(h.state, new Set([JSON.stringify(["roots"])]));
		const labels = rows.map((r) => `${r.depth}:${r.label}`);
		assert.deepEqual(labels.slice(5), ["0:roots (of extensions)", "1:todos"]);
		assert.deepEqual(treeRows(newHistory("cwd", 20).state, new Set()).map((r) => r.label), ["intents", "strategy", "tactics", "artifacts", "lazy (catalog)"]);
	});
});
