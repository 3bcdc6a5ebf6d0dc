/**
 * Root data shown to the user (docs/spec.md §12): the `state-flow show` text and the
 * `/state browse` rows list the roots namespace after the planes, whether its extension is
 * loaded or not; an owner without root data shows no such section. Export and import carry
 * root data as stored (backup and restore).
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { formatShow } from "../../lib/cli/format.js";
import { treeRows } from "../../lib/host/browser/rows.js";
import { runCli, unwrapped } from "./run.js";

function withTodos() {
	const h = newHistory("cwd", 20);
	const r = stage(
		{ cwd: h },
		{ cwd: { tactics: { t: 1 }, roots: { todos: { a: { text: "kept" } } } } },
		{ id: "x", at: "2026-11-30T00:00:00.000Z", by: { kind: "extension", extension: "todo" }, roots: () => undefined },
	);
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
		assert.deepEqual(
			treeRows(newHistory("cwd", 20).state, new Set()).map((r) => r.label),
			["intents", "strategy", "tactics", "artifacts", "lazy (catalog)"],
		);
	});
});

describe("root data through state-flow export and import", () => {
	it("an export with root data imports back exactly; a document without roots leaves them alone", async (t) => {
		const base = mkdtempSync(join(tmpdir(), "state-flow-roots-cli-"));
		t.after(() => rmSync(base, { recursive: true, force: true }));
		const agent = join(base, "agent");
		const proj = join(base, "proj");
		mkdirSync(proj);
		const stores = openStoresAt({ agentDir: agent, cwd: proj });
		await stores.commit(
			{ cwd: { tactics: { t: 1 }, roots: { todos: { a: { text: "kept" } } } } },
			{ by: { kind: "extension", extension: "todo" }, id: "x1", at: "2026-11-30T00:00:00.000Z", roots: () => undefined },
		);
		const cli = (args: string[], input = "") => runCli([...args, "--cwd", proj, "--agent-dir", agent], { cwd: proj, input });
		const exported = cli(["export", "cwd"]);
		assert.equal(exported.code, 0, exported.stderr);
		assert.deepEqual(JSON.parse(exported.stdout).owners.cwd.state.roots, { todos: { a: { text: "kept" } } });
		// Change the root and the plane, then restore the export: both come back exactly.
		await stores.commit(
			{ cwd: { tactics: { t: 2 }, roots: { todos: { a: null, b: { text: "new" } } } } },
			{ by: { kind: "extension", extension: "todo" }, id: "x2", at: "2026-11-30T00:00:01.000Z", roots: () => undefined },
		);
		const restored = cli(["import", "-"], exported.stdout);
		assert.equal(restored.code, 0, restored.stderr);
		const again = (await openStoresAt({ agentDir: agent, cwd: proj }).load("cwd")).state;
		assert.deepEqual([again.tactics, again.roots], [{ t: 1 }, { todos: { a: { text: "kept" } } }]);
		// A plain state without a roots section changes the planes only.
		const plain = cli(["import", "-", "--owner", "cwd"], JSON.stringify({ tactics: { t: 3 } }));
		assert.equal(plain.code, 0, plain.stderr);
		assert.deepEqual((await openStoresAt({ agentDir: agent, cwd: proj }).load("cwd")).state.roots, { todos: { a: { text: "kept" } } });
		const bad = cli(["import", "-", "--owner", "cwd"], JSON.stringify({ roots: { todos: [1] } }));
		assert.notEqual(bad.code, 0);
		assert.match(unwrapped(bad.stderr), /`roots\.todos` must be an object/);
	});
});
