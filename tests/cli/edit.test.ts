/**
 * `state-flow set`, `delete` and `edit` through the real binary: each one transition signed by
 * the user as the command, what it changes printed first; an edit that deletes more than the
 * value named needs `--yes`; `edit` runs a real $EDITOR script, keeps refused text in its file
 * with the command that applies it, and refuses (writing nothing) when another process changed
 * the value while the editor was open.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectDirs, tempDir } from "../helpers/temp-dir.js";
import { CLI, runCli, unwrapped } from "./run.js";

const by = { kind: "system", reason: "test" } as const;

async function setup(t: { after(fn: () => void): void }) {
	const { cwd, agentDir } = projectDirs(t, "state-flow-edit-");
	const stores = () => openStoresAt({ agentDir, cwd });
	await stores().commit(
		{
			cwd: {
				intents: { parser: { goal: "parse", owns: [{ $ref: "cwd.tactics.lex" }] }, other: { goal: "x" } },
				tactics: { lex: "write the lexer", next: "old" },
			},
		},
		{ by, id: "aaa1-0000", at: "2026-12-01T10:00:00.000Z" },
	);
	const run = (args: string[], env?: Record<string, string>) => runCli([...args, "--agent-dir", agentDir], { cwd, ...(env ? { env } : {}) });
	const state = async () => (await stores().load("cwd")).state;
	const seq = async () => (await stores().load("cwd")).seq;
	const last = async () => (await stores().load("cwd")).tail.at(-1);
	return { run, state, seq, last, cwd, agentDir };
}

/** An executable editor script: `body` is sh, run with the file as $1. */
function editor(t: { after(fn: () => void): void }, body: string): string {
	const dir = tempDir(t, "state-flow-editor-");
	const path = join(dir, "editor.sh");
	writeFileSync(path, `#!/bin/sh\n${body}\n`);
	chmodSync(path, 0o755);
	return path;
}

describe("state-flow set / delete", () => {
	it("sets one value as one transition signed as the command, printing before and after", async (t) => {
		const e = await setup(t);
		const r = e.run(["set", "cwd.tactics.next", '"write the parser"']);
		assert.equal(r.code, 0, r.stderr);
		assert.equal(r.stdout, `set cwd.tactics.next\n  - "old"\n  + "write the parser"\nCommitted as transition ${(await e.last())?.id}.\n`);
		assert.equal((await e.state()).tactics.next, "write the parser");
		assert.deepEqual((await e.last())?.by, { kind: "command", command: "state-flow set cwd.tactics.next" });
		assert.ok((await e.last())?.who, "signed by the user on this machine");
		// A value replaces what is there whole: members not given are gone.
		const whole = e.run(["set", "cwd.intents.other", '{"goal": "y", "status": "open"}']);
		assert.equal(whole.code, 0, whole.stderr);
		assert.match(unwrapped(whole.stdout), /^ {2}~ \/goal: "x" → "y"$/m);
		assert.match(unwrapped(whole.stdout), /^ {2}\+ \/status: "open"$/m);
		assert.deepEqual((await e.state()).intents.other, { goal: "y", status: "open" });
		assert.equal(await e.seq(), 3);
	});

	it("refuses bad input naming it and writes nothing", async (t) => {
		const e = await setup(t);
		const cases: Array<[string[], RegExp, number]> = [
			[["set", "cwd.tactics.next", "write"], /the value is not JSON .*a string needs its quotes/, 1],
			[["set", "cwd.tactics.next", '{"a": null}'], /`cwd\.tactics\.next\.a` is null/, 1],
			[["set", "cwd.tactics.next"], /`set` needs a JSON value after the locator/, 2],
			[["set", "session.tactics.a", "1"], /Session state lives in pi's session file/, 2],
			[["delete", "cwd.tactics.nope"], /nothing at `cwd\.tactics\.nope` to delete/, 1],
			[["delete", "cwd[1].tactics.next"], /is a past state/, 1],
			[["set", "cwd.tactics", "[1]"], /is a plane: its value must be an object/, 1],
		];
		for (const [args, message, code] of cases) {
			const r = e.run(args);
			assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
			assert.match(unwrapped(r.stderr), message);
		}
		assert.equal(await e.seq(), 1, "nothing was written");
	});

	it("a delete that takes more than the value named shows it and needs --yes", async (t) => {
		const e = await setup(t);
		const asked = e.run(["delete", "cwd.intents.parser"]);
		assert.equal(asked.code, 1);
		assert.match(unwrapped(asked.stdout), /also deletes 1 entry owned by what it removes:\n {4}cwd\.tactics\.lex\n/);
		assert.match(unwrapped(asked.stderr), /nothing was written: run it again with --yes to delete it too/);
		assert.equal(await e.seq(), 1);
		const done = e.run(["delete", "cwd.intents.parser", "--yes"]);
		assert.equal(done.code, 0, done.stderr);
		const s = await e.state();
		assert.equal(s.intents.parser, undefined);
		assert.equal(s.tactics.lex, undefined);
		assert.equal(s.tactics.next, "old");
		assert.deepEqual((await e.last())?.cascades, [{ owner: "cwd", intent: "parser", targets: ["cwd.tactics.lex"] }]);
		// One transition: one undo brings both back.
		const undo = e.run(["undo", "cwd"]);
		assert.equal(undo.code, 0, undo.stderr);
		assert.equal((await e.state()).tactics.lex, "write the lexer");
	});
});

describe("state-flow edit", () => {
	it("opens the value in $EDITOR and sets what is saved; an unchanged file writes nothing", async (t) => {
		const e = await setup(t);
		const seen = join(tempDir(t, "state-flow-seen-"), "seen.json");
		const script = editor(t, `cp "$1" "${seen}"\nprintf '{"goal": "parse well", "owns": [{"$ref": "cwd.tactics.lex"}]}' > "$1"`);
		const r = e.run(["edit", "cwd.intents.parser"], { EDITOR: script, VISUAL: "" });
		assert.equal(r.code, 0, r.stderr);
		assert.deepEqual(JSON.parse(readFileSync(seen, "utf8")), { goal: "parse", owns: [{ $ref: "cwd.tactics.lex" }] });
		assert.match(unwrapped(r.stdout), /^ {2}~ \/goal: "parse" → "parse well"$/m);
		assert.equal(((await e.state()).intents.parser as { goal?: string }).goal, "parse well");
		assert.deepEqual((await e.last())?.by, { kind: "command", command: "state-flow edit cwd.intents.parser" });
		const same = e.run(["edit", "cwd.intents.parser"], { EDITOR: "true", VISUAL: "" });
		assert.equal(same.code, 0, same.stderr);
		assert.match(unwrapped(same.stdout), /No change to cwd\.intents\.parser; nothing was written/);
		assert.equal(await e.seq(), 2);
	});

	it("keeps refused text in its file and names the command that applies it once fixed", async (t) => {
		const e = await setup(t);
		const r = e.run(["edit", "cwd.tactics.next"], { VISUAL: editor(t, `printf '"unfinished' > "$1"`) });
		assert.equal(r.code, 1);
		const file = /kept in (\S+); fix it and apply it with `state-flow set cwd\.tactics\.next @\1`/.exec(unwrapped(r.stderr))?.[1];
		assert.ok(file, r.stderr);
		assert.match(unwrapped(r.stderr), /the edited text is not JSON/);
		assert.equal(readFileSync(file, "utf8"), '"unfinished');
		assert.equal(await e.seq(), 1);
		writeFileSync(file, '"finished"');
		const applied = e.run(["set", "cwd.tactics.next", `@${file}`]);
		assert.equal(applied.code, 0, applied.stderr);
		assert.equal((await e.state()).tactics.next, "finished");
	});

	it("refuses, writing nothing of its own, when another process changed the value while the editor was open", async (t) => {
		const e = await setup(t);
		// The editor saves its text, and meanwhile another state-flow process sets the same value.
		const script = editor(
			t,
			`printf '"mine"' > "$1"\n"${process.execPath}" "${CLI}" set cwd.tactics.next '"theirs"' --agent-dir "${e.agentDir}" --cwd "${e.cwd}" >/dev/null`,
		);
		const r = e.run(["edit", "cwd.tactics.next"], { EDITOR: script, VISUAL: "" });
		assert.equal(r.code, 1, r.stdout);
		assert.match(unwrapped(r.stderr), /`cwd\.tactics\.next` changed since it was shown .*nothing was written/);
		assert.match(unwrapped(r.stderr), /Your text is kept in /);
		assert.equal((await e.state()).tactics.next, "theirs");
		assert.equal(await e.seq(), 2, "only the other process's transition");
		const kept = /kept in (\S+);/.exec(unwrapped(r.stderr))?.[1] as string;
		assert.ok(existsSync(kept));
	});
});
