/**
 * `state-flow history` at 80 columns (issue 27): an import that changed a thousand paths prints
 * its `changed:` list folded under its label with a count of the rest, never as one long line.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { CHANGED_LINES, changedLines } from "../../lib/cli/format.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli } from "./run.js";

describe("history's changed list", () => {
	it("folds a long list into at most CHANGED_LINES lines of 80 columns, counting the rest", () => {
		const paths = Array.from({ length: 1210 }, (_, i) => `/tactics/step-${i}`);
		const lines = changedLines(paths);
		assert.equal(lines.length, CHANGED_LINES);
		for (const l of lines) assert.ok(l.length <= 80, l);
		assert.match(lines[0] ?? "", /^ {4}changed: \/tactics\/step-0, \/tactics\/step-1, /);
		for (const l of lines.slice(1)) assert.match(l, /^ {13}\S/);
		const shown = lines.join(" ").match(/\/tactics\/step-\d+/g) ?? [];
		assert.deepEqual(shown, paths.slice(0, shown.length), "the first paths, in order");
		assert.match(lines.at(-1) ?? "", new RegExp(`… and ${(1210 - shown.length).toLocaleString("en-US")} more \\(1,210 paths\\)$`));
	});

	it("prints a short list whole, and a path longer than a line clipped", () => {
		assert.deepEqual(changedLines(["/tactics/a", "/tactics/b (deleted)"]), ["    changed: /tactics/a, /tactics/b (deleted)"]);
		assert.deepEqual(changedLines([]), ["    changed: (nothing)"]);
		const [long] = changedLines([`/lazy/${"x".repeat(200)}`]);
		assert.ok((long?.length ?? 0) <= 80 && (long?.length ?? 0) >= 78, long);
		assert.match(long ?? "", /x…$/);
	});

	it("keeps state-flow history of a big import within 80 columns", (t) => {
		const dir = tempDir(t, "state-flow-fold-");
		const cwd = join(dir, "proj");
		const agent = join(dir, "agent");
		mkdirSync(cwd);
		const file = join(dir, "big.json");
		const tactics = Object.fromEntries(Array.from({ length: 800 }, (_, i) => [`step-${i}`, `do ${i}`]));
		writeFileSync(file, JSON.stringify({ intents: {}, strategy: {}, tactics, artifacts: {}, lazy: {} }));
		const env = ["--agent-dir", agent];
		const imported = runCli(["import", file, "--owner", "cwd", ...env], { cwd });
		assert.equal(imported.code, 0, imported.stderr);
		const h = runCli(["history", "cwd", ...env], { cwd });
		assert.equal(h.code, 0, h.stderr);
		for (const line of h.stdout.split("\n").filter((l) => !l.startsWith("CWD "))) assert.ok(line.length <= 80, line);
		assert.match(h.stdout, /… and [\d,]+ more \(800 paths\)/);
	});
});
