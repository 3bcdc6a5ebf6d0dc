/**
 * A repository's worktree entries (`.git/worktrees/<name>/gitdir`) are its own claim (issue 33,
 * part 3): an entry counts only when the worktree it names is a `.git` file naming the entry
 * back. A shipped entry naming an unrelated folder of the user's (`~/notes/.pi`) never makes
 * `show`, `doctor` or `/state` call that folder's memory a store apart, and `state-flow adopt`
 * never moves it; an entry that is a FIFO, or a link to one, never blocks `/state` (a live pi
 * session, in a process the test can time out) nor `state-flow show`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { projectOf } from "../../lib/storage/project/project.js";
import { storesApart } from "../../lib/storage/project/stores-apart.js";
import { runCli, unwrapped } from "../cli/run.js";
import { git } from "../helpers/git-repo.js";
import { storeAt } from "../helpers/older-store.js";
import { expectSoon } from "../helpers/soon.js";
import { tempDir } from "../helpers/temp-dir.js";
import { startFlow } from "../host/fixture.js";
import { runChild } from "../storage/children/spawn.js";
import { snapshot } from "./hostile.js";

/** A repository with one commit at `<base>/hostile`, and a worktree entry `name` as a repository ships it (its `gitdir` left to the caller). */
function hostileRepo(base: string): string {
	const dir = join(base, "hostile");
	mkdirSync(dir);
	git(dir, "init", "-q", "-b", "main");
	writeFileSync(join(dir, "a.txt"), "a\n");
	git(dir, "add", ".");
	git(dir, "commit", "-q", "-m", "first");
	return dir;
}

function entry(repo: string, name: string): string {
	const e = join(repo, ".git", "worktrees", name);
	mkdirSync(e, { recursive: true });
	writeFileSync(join(e, "commondir"), "../..\n");
	writeFileSync(join(e, "HEAD"), "ref: refs/heads/main\n");
	return e;
}

describe("a shipped worktree entry naming a folder of the user's", () => {
	it("is no store apart: show, doctor and /state never name the folder, and adopt never moves its memory", async (t) => {
		const base = realpathSync(tempDir(t, "state-flow-lure-"));
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const notes = join(base, "notes");
		await storeAt(notes, [{ strategy: { rule: "NOTES-SECRET: the user's own notes" } }]);
		// A checkout of the user's own whose `.git` folder the entry names.
		const other = join(base, "other");
		mkdirSync(other);
		git(other, "init", "-q");
		await storeAt(other, [{ strategy: { rule: "OTHER-SECRET" } }]);
		const hostile = hostileRepo(base);
		writeFileSync(join(entry(hostile, "x"), "gitdir"), `${join(notes, ".pi")}\n`);
		writeFileSync(join(entry(hostile, "y"), "gitdir"), `${join(other, ".git")}\n`);
		assert.deepEqual(storesApart(projectOf(hostile), true), []);
		const before = { notes: snapshot(notes), other: snapshot(other) };
		const env = { PI_CODING_AGENT_DIR: agentDir };
		for (const args of [["show", "cwd"], ["doctor"]]) {
			const r = runCli(args, { cwd: hostile, env });
			const out = r.stdout + r.stderr;
			assert.ok(!out.includes(notes) && !out.includes(other) && !/store apart/.test(out), `${args.join(" ")}:\n${out}`);
		}
		for (const folder of [notes, other]) {
			const adopt = runCli(["adopt", folder], { cwd: hostile, env });
			assert.equal(adopt.code, 1, adopt.stdout);
			assert.match(unwrapped(adopt.stderr), /holds no undecided store apart from the project .*nothing was changed/);
		}
		const flow = await startFlow({ cwd: hostile, agentDir });
		t.after(() => flow.dispose());
		const said = (await flow.command("/state")).join("\n");
		assert.ok(!said.includes(notes) && !said.includes(other) && !/store apart/.test(said), said);
		assert.deepEqual({ notes: snapshot(notes), other: snapshot(other) }, before, "the user's folders are untouched");
		const project = new FileOwnerStore({ owner: "cwd", root: projectOf(hostile).store, retention: 20, gitignore: true });
		assert.equal(project.read().seq, 0, "nothing came into the hostile repository's store");
	});

	it("a real linked worktree still counts: its store apart is reported", async (t) => {
		const base = realpathSync(tempDir(t, "state-flow-lure-"));
		const dir = hostileRepo(base);
		git(dir, "worktree", "add", "-q", "-b", "feat", join(base, "wt"));
		await storeAt(join(base, "wt"), [{ tactics: { older: 1 } }]);
		assert.deepEqual(
			storesApart(projectOf(dir)).map((a) => [a.folder, a.where]),
			[[join(base, "wt"), "worktree"]],
		);
	});
});

describe("a worktree entry that is a FIFO or a link to one", () => {
	it("never blocks `state-flow show` nor `/state` in a live pi session", async (t) => {
		const base = realpathSync(tempDir(t, "state-flow-fifo-"));
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const hostile = hostileRepo(base);
		const fifo = join(base, "fifo");
		execFileSync("mkfifo", [fifo]);
		symlinkSync(fifo, join(entry(hostile, "linked"), "gitdir"));
		execFileSync("mkfifo", [join(entry(hostile, "plain"), "gitdir")]);
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const show = runCli(["show"], { cwd: hostile, env });
		assert.equal(show.signal, null, "state-flow show was killed: it blocked on the FIFO");
		assert.equal(show.code, 0, show.stderr);
		assert.match(unwrapped(show.stdout), /^project \S*hostile \(git root\)$/m);
		const child = runChild("state-command-child", [hostile, agentDir]);
		const soon = expectSoon("/state did not return within 60 s: it blocked on the FIFO", 60_000);
		const ended = child.done.then((r) => {
			soon.arrive();
			return r;
		});
		try {
			await soon.arrived;
		} finally {
			child.proc.kill("SIGKILL");
		}
		const r = await ended;
		assert.match(unwrapped(r.stdout), /^project \S*hostile \(git root\)$/m, r.stderr);
		assert.match(unwrapped(r.stdout), /^done$/m);
	});
});
