/**
 * Intents know their git branch (issue 26), on real git: the branch reader (main checkout,
 * worktree, detached HEAD, a folder outside git), merged and deleted branches judged from git's
 * object files (never by running git: tests/security/git-config-vectors.test.ts), and through
 * the real pi SDK: a new intent records the checkout's branch (a value the model sends is not
 * stored), and on another branch the head folds it into one line.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { GitBranchWatch } from "../../lib/storage/project/git-branch.js";
import { git } from "../helpers/git-repo.js";
import { headOf, startFlow } from "./fixture.js";

/** A repository on `main` with one commit, removed after the test. */
function repo(t: { after(fn: () => void): void }): { root: string; dir: string } {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "state-flow-git-")));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const dir = join(root, "proj");
	mkdirSync(dir);
	git(dir, "init", "-q", "-b", "main");
	writeFileSync(join(dir, "a.txt"), "a\n");
	git(dir, "add", "a.txt");
	git(dir, "commit", "-q", "-m", "first");
	return { root, dir };
}

function commitFile(dir: string, name: string): void {
	writeFileSync(join(dir, name), `${name}\n`);
	git(dir, "add", name);
	git(dir, "commit", "-q", "-m", name);
}

describe("git branch reader", () => {
	it("reads the branch of a checkout, a worktree and a subfolder; none when detached or outside git", async (t) => {
		const { root, dir } = repo(t);
		const watch = new GitBranchWatch();
		assert.deepEqual(await watch.refresh(dir), { branch: "main" });
		mkdirSync(join(dir, "sub"));
		assert.equal((await watch.refresh(join(dir, "sub"))).branch, "main");
		git(dir, "worktree", "add", "-q", "-b", "feature/login", join(root, "wt"));
		assert.equal((await watch.refresh(join(root, "wt"))).branch, "feature/login");
		assert.equal((await watch.refresh(dir)).branch, "main", "the main checkout keeps its own HEAD");
		git(dir, "checkout", "-q", "--detach");
		assert.deepEqual(await watch.refresh(dir), {}, "detached HEAD: no branch");
		const outside = mkdtempSync(join(root, "plain-"));
		assert.deepEqual(await watch.refresh(outside), {}, "a folder outside git (within the temp root) has no branch");
	});

	it("says a recorded branch was merged into the default branch or deleted, and nothing for a branch without own commits", async (t) => {
		const { dir } = repo(t);
		git(dir, "branch", "fresh");
		git(dir, "checkout", "-q", "-b", "done-work");
		commitFile(dir, "b.txt");
		git(dir, "checkout", "-q", "-b", "open-work");
		commitFile(dir, "c.txt");
		git(dir, "checkout", "-q", "-b", "removed");
		git(dir, "checkout", "-q", "main");
		git(dir, "merge", "-q", "--no-ff", "-m", "merge", "done-work");
		git(dir, "branch", "-D", "removed");
		git(dir, "pack-refs", "--all");
		const watch = new GitBranchWatch();
		const view = await watch.refresh(dir, ["fresh", "done-work", "open-work", "removed", "main"]);
		assert.deepEqual(view, { branch: "main", defaultBranch: "main", gone: { "done-work": "merged", removed: "deleted" } });
	});
});

describe("intents record their branch (real SDK)", () => {
	it("stamps a new intent with the checkout's branch, never the model's value, and folds it on another branch", async (t) => {
		const { dir } = repo(t);
		git(dir, "checkout", "-q", "-b", "feature/login");
		const flow = await startFlow({ cwd: dir });
		t.after(() => flow.dispose());
		const write = { cwd: { intents: { login: { goal: "fix login", gitBranch: "main", owns: [{ $ref: "cwd.tactics.l1" }] } }, tactics: { l1: "reproduce" } } };
		await flow.prompt("record it", [
			{ calls: [{ id: "w", name: "patch_state", args: write }] },
			{ calls: [{ id: "r", name: "read_state", args: { path: "cwd.intents.login" } }] },
			{ text: "ok" },
		]);
		const read = flow.results().r;
		assert.ok(read && !read.isError, read?.text);
		assert.deepEqual(JSON.parse(read.text.slice(read.text.indexOf("{"))), {
			goal: "fix login",
			owns: [{ $ref: "cwd.tactics.l1" }],
			gitBranch: "feature/login",
		});
		// A forged branch on an existing intent is left out; null drops the record.
		await flow.prompt("forge", [{ calls: [{ id: "f", name: "patch_state", args: { cwd: { intents: { login: { gitBranch: "other" } } } } }] }, { text: "ok" }]);
		assert.match(flow.results().f?.text ?? "", /nothing changed|no change/i);
		const onOwn = headOf(flow, flow.seen.length - 1);
		assert.match(onOwn, /"login":\{"goal":"fix login"/, "on its own branch the intent is shown");
		git(dir, "checkout", "-q", "-b", "other");
		await flow.prompt("where are we", [{ text: "ok" }]);
		const onOther = headOf(flow, flow.seen.length - 1);
		assert.ok(onOther.includes('~ cwd.intents.login of branch "feature/login": 1 open step'), onOther);
		assert.ok(!onOther.includes('"fix login"') && !onOther.includes('"reproduce"'), "the intent and its step are folded");
		git(dir, "branch", "-D", "feature/login");
		await flow.prompt("again", [{ text: "ok" }]);
		assert.ok(headOf(flow, flow.seen.length - 1).includes("; the branch was deleted: close the intent, or keep it on every branch with gitBranch null"));
	});
});
