/**
 * History in one vocabulary at 80 columns (issue 27): `state-flow history` lists newest first,
 * one line per transition, with the words `/state history` uses (short ids, local times, keys
 * as users type them, `+N` for the rest); `--full` wraps every changed leaf under its label, and
 * a bounded list counts what it leaves out, never one 47 KB line.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { labelledList, transitionLine as cliLine } from "../../lib/cli/format.js";
import { transitionLine as hostLine } from "../../lib/host/commands/status.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "./run.js";

describe("history's changed list", () => {
	it("folds a long list into at most `max` lines of 80 columns, counting the rest", () => {
		const paths = Array.from({ length: 1210 }, (_, i) => `tactics.step-${i}`);
		const lines = labelledList("    changed: ", paths, 4);
		assert.equal(lines.length, 4);
		for (const l of lines) assert.ok(l.length <= 80, l);
		assert.match(lines[0] ?? "", /^ {4}changed: tactics\.step-0, tactics\.step-1, /);
		for (const l of lines.slice(1)) assert.match(l, /^ {13}\S/);
		const shown = lines.join(" ").match(/tactics\.step-\d+/g) ?? [];
		assert.deepEqual(shown, paths.slice(0, shown.length), "the first paths, in order");
		assert.match(lines.at(-1) ?? "", new RegExp(`… and ${(1210 - shown.length).toLocaleString("en-US")} more \\(1,210 changes\\)$`));
		assert.equal(labelledList("    changed: ", paths).length > 4, true, "unbounded, every item is listed");
	});

	it("prints a short list whole, and an item longer than a line clipped", () => {
		assert.deepEqual(labelledList("    changed: ", ["tactics.a", "tactics.b (deleted)"]), ["    changed: tactics.a, tactics.b (deleted)"]);
		assert.deepEqual(labelledList("    changed: ", []), ["    changed: (nothing)"]);
		const [long] = labelledList("    changed: ", [`lazy.${"x".repeat(200)}`]);
		assert.ok((long?.length ?? 0) <= 80 && (long?.length ?? 0) >= 78, long);
		assert.match(long ?? "", /x…$/);
	});

	it("lists state-flow history newest first in /state history's words, within 80 columns; --full wraps every leaf", (t) => {
		const dir = tempDir(t, "state-flow-fold-");
		const cwd = join(dir, "proj");
		const agent = join(dir, "agent");
		mkdirSync(cwd);
		const env = ["--agent-dir", agent];
		const set = runCli(["set", "cwd.intents.ship", '{"goal":"ship it","status":"active"}', ...env], { cwd });
		assert.equal(set.code, 0, set.stderr);
		const file = join(dir, "big.json");
		const tactics = Object.fromEntries(Array.from({ length: 800 }, (_, i) => [`step-${i}`, `do ${i}`]));
		writeFileSync(file, JSON.stringify({ intents: {}, strategy: {}, tactics, artifacts: {}, lazy: {} }));
		const imported = runCli(["import", file, "--owner", "cwd", ...env], { cwd });
		assert.equal(imported.code, 0, imported.stderr);
		const h = runCli(["history", "cwd", ...env], { cwd });
		assert.equal(h.code, 0, h.stderr);
		for (const line of h.stdout.split("\n").filter((l) => !l.startsWith("CWD "))) assert.ok(line.length <= 80, line);
		const rows = h.stdout.split("\n").filter((l) => /^ {2}#\d/.test(l));
		assert.equal(rows.length, 2);
		// Newest first, a local time, the keys as users type them, the rest counted in the list's verbs (the import deleted the intent).
		assert.match(rows[0] ?? "", /^ {2}#2 \w{4,} \d\d:\d\d:\d\d import big\.json .*tactics\.step-0 \+799, delete \+1$/);
		assert.match(rows[1] ?? "", /^ {2}#1 \w{4,} \d\d:\d\d:\d\d .*intents\.ship$/);
		assert.match(unwrapped(h.stdout), /state-flow history --full/);
		const full = runCli(["history", "cwd", "--full", ...env], { cwd });
		assert.equal(full.code, 0, full.stderr);
		// Whole ids and sources may pass 80 columns (that is what --full asks); the changed lists wrap.
		for (const line of full.stdout.split("\n").filter((l) => /^ {5}(changed| {9})/.test(l))) assert.ok(line.length <= 80, line);
		assert.match(unwrapped(full.stdout), /^ {5}at \d{4}-\d\d-\d\dT[\d:.]+Z by /m);
		assert.match(unwrapped(full.stdout), /changed: intents\.ship\.goal, intents\.ship\.status$/m);
		assert.equal(full.stdout.match(/tactics\.step-\d+/g)?.length, 800, "--full lists every changed leaf");
	});

	it("prints a transition alike in the CLI and in /state (one formatter; ASCII text measures alike)", () => {
		const now = new Date(2026, 10, 28, 15, 0, 0);
		const record = {
			seq: 12,
			id: "3f2a1b2c-0000-4000-8000-000000000000",
			at: new Date(2026, 10, 28, 14, 3, 9).toISOString(),
			owners: ["cwd", "global"],
			by: { kind: "tool", sessionId: "s", toolCallId: "call_8xKzQ2abcdef" },
			who: { user: "alice", host: "laptop.example.org" },
			patch: { tactics: { a: "x", "b c": null }, intents: { x: { goal: "g" } } },
			undo: {},
			cascades: [{ owner: "cwd", intent: "old", targets: ["cwd.tactics.t1"] }],
		} as never;
		for (const full of [false, true]) assert.equal(cliLine(record, "3f2a", { now, full }), hostLine(record, "3f2a", { now, full }));
		assert.equal(cliLine(record, "3f2a", { now, full: false }), "  #12 3f2a 14:03:09 model call_8xKzQ2… alice@laptop set intents.x +1, delete +1");
		assert.match(
			cliLine(record, "3f2a", { now, full: true }),
			/changed: intents\.x\.goal, tactics\.a, tactics\["b c"\] \(deleted\)\n {5}cascaded: intents\.old -> cwd\.tactics\.t1$/,
		);
	});
});
