/**
 * Every line `state-flow` prints for a person fits 80 columns (issue 35), also for long input: long
 * keys and values, whole transition ids, a long teammate name, the credential refusal, the
 * doctor's salvage report. A longer line is broken between words under itself; a command in
 * backticks is never broken (it is copied whole), and `export` stays data, one value per line as
 * JSON writes it. A path is kept whole too, so only a path longer than a line could pass the
 * width (`tests/ops/history-text.test.ts`); the folders here are as short as a home folder's.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectDirs } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "./run.js";

/** Every line of `text` within 80 columns, and no line breaking a `quoted command` (an odd count of backticks). */
function fits(what: string, text: string): void {
	for (const line of text.split("\n")) {
		assert.ok([...line].length <= 80, `${what}: ${[...line].length} columns: ${line}`);
		assert.equal((line.match(/`/g) ?? []).length % 2, 0, `${what}: a command broken across lines: ${line}`);
	}
}

const PROSE = Array.from({ length: 12 }, (_, i) => `step ${i + 1} of the migration plan for the parser`).join(", ");
const KEY = "the-configuration-loader-rewrite-that-spans-many-modules-and-a-long-name";
const TOKEN = "x".repeat(190);

describe("every line of the CLI within 80 columns, for long input", () => {
	it("show, history --full, import, undo, redo, restore, the credential refusal and doctor --salvage", (t) => {
		const { base, cwd, agentDir } = projectDirs(t, "sf-");
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const run = (...args: string[]) => {
			const r = runCli(args, { cwd, env });
			fits(`state-flow ${args.join(" ")} (stdout)`, r.stdout);
			fits(`state-flow ${args.join(" ")} (stderr)`, r.stderr);
			return r;
		};
		const asUser = (user: string | undefined) => {
			writeFileSync(join(agentDir, "state-flow", "config.json"), JSON.stringify(user === undefined ? {} : { user }));
		};
		assert.equal(run("set", "cwd.tactics.plan", JSON.stringify(PROSE)).code, 0);
		writeFileSync(join(cwd, "notes.md"), "# notes\n");
		const note = { kind: "file", note: `why it matters: ${PROSE}` };
		assert.equal(run("set", 'cwd.artifacts["notes.md"]', JSON.stringify(note)).code, 0);
		const file = join(base, "an-import-with-a-long-file-name.json");
		writeFileSync(file, JSON.stringify({ tactics: { [KEY]: TOKEN, plan: PROSE }, strategy: { rule: PROSE } }));
		const imported = run("import", file, "--owner", "cwd");
		assert.equal(imported.code, 0, imported.stderr);
		const importId = /^Imported \S+an-import-with-a-long-file-name\.json into cwd as transition ([0-9a-f-]{36})\./.exec(unwrapped(imported.stdout))?.[1];
		assert.ok(importId, imported.stdout);

		const shown = run("show", "cwd");
		// A long member wraps under itself: two more columns than the member it continues.
		const lines = shown.stdout.split("\n");
		const at = lines.findIndex((l) => l.startsWith('    "plan": "step 1 of the migration plan'));
		assert.ok(at >= 0, shown.stdout);
		assert.match(lines[at + 1] ?? "", /^ {6}\S/);
		assert.ok(unwrapped(shown.stdout).includes(`"plan": ${JSON.stringify(PROSE)}`), "no word lost or changed");
		const full = run("history", "--full", "cwd");
		assert.match(unwrapped(full.stdout), /^ {5}at \S+ by import \S+an-import-with-a-long-file-name\.json \S+@\S+$/m);

		// A teammate's change, undone by its whole id: the consent, then the undo; redo; restore.
		asUser("a-teammate-with-a-rather-long-name-on-a-shared-build-machine");
		assert.equal(run("set", `cwd.tactics.${KEY}`, JSON.stringify(PROSE)).code, 0);
		asUser(undefined);
		const theirs = /^ {2}#\d+ ([0-9a-f-]{36})$/m.exec(run("history", "--full", "cwd").stdout)?.[1];
		assert.ok(theirs);
		const asked = run("undo", theirs);
		assert.equal(asked.code, 1);
		assert.match(unwrapped(asked.stderr), /This undo reverts changes made by a-teammate-with-a-rather-long-name-on-a-shared-build-machine@/);
		for (const args of [
			["undo", theirs, "--yes"],
			["redo", "cwd", "--yes"],
			["restore", importId, "--path", "cwd", "--yes"],
		]) {
			const r = run(...args);
			assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
		}
		const unknown = run("restore", "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9");
		assert.match(unwrapped(unknown.stderr), /no retained transition's id starts with `0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9`/);

		// The credential refusal: a paragraph, its commands whole.
		const secret = `sk-ant-api03-${"A".repeat(95)}`;
		const refused = run("set", "cwd.tactics.key", JSON.stringify(secret));
		assert.equal(refused.code, 1);
		assert.match(unwrapped(refused.stderr), /holds what looks like an Anthropic API key/);
		writeFileSync(file, JSON.stringify({ tactics: { key: secret } }));
		assert.equal(run("import", file, "--owner", "cwd").code, 1);

		// export is data: JSON as it writes it, a long value on its one line.
		const exported = runCli(["export", "cwd"], { cwd, env });
		assert.ok(
			exported.stdout.split("\n").some((l) => l.includes(TOKEN)),
			"export keeps a value whole",
		);

		// A damaged record, salvaged: the report fits too.
		const logPath = join(cwd, ".pi", "state-flow", "log.jsonl");
		const log = readFileSync(logPath);
		const from = log.indexOf("migration plan");
		log.fill(0x7a, from, from + 20);
		writeFileSync(logPath, log);
		const dry = run("doctor", "--salvage", "cwd", "--dry-run");
		assert.match(unwrapped(dry.stdout), /cwd: lost #1 /);
		const done = run("doctor", "--salvage", "cwd");
		assert.match(unwrapped(done.stdout), /All stores are healthy\./);
		run("doctor");
		run("history", "--full");
	});
});
