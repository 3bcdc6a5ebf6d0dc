/**
 * The project is the repository (issue 25), on real git: a subfolder finds the root's memory,
 * worktrees share the main worktree's, a bare repository's worktrees share the common dir's,
 * submodules and nested repositories are projects of their own, a moved checkout keeps its
 * memory, a store planted above the repository (or in any ancestor outside git) is never
 * adopted, and a planted `.git` file never leads into another repository's memory. Two whole pi
 * sessions in two worktrees writing at once: tests/host/worktrees-pi.test.ts.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { storePaths } from "../../lib/storage/project/paths.js";
import { projectOf, storeInRoot } from "../../lib/storage/project/project.js";
import { git, repo } from "../helpers/git-repo.js";
import { storeAt } from "../helpers/older-store.js";
import { tempDir } from "../helpers/temp-dir.js";

const by = { kind: "system", reason: "project-test" } as const;
const at = "2026-01-01T00:00:00.000Z";

describe("the project of a folder", () => {
	it("a subfolder of a repository uses the repository's store, in its git dir; a root store an older build made keeps working", async (t) => {
		const { dir } = repo(t);
		const p = projectOf(join(dir, "src"));
		assert.equal(p.store, join(dir, ".git", "state-flow"));
		assert.equal(p.root, dir);
		assert.equal(p.checkout, dir);
		assert.equal(p.via, "git-root");
		assert.equal(p.git?.gitDir, join(dir, ".git"));
		assert.equal(storePaths(join(base(t), "agent"), join(dir, "src")).cwdRoot, p.store);
		await storeAt(dir, [{ tactics: { older: 1 } }]);
		assert.equal(projectOf(join(dir, "src")).store, storeInRoot(dir));
	});

	it("every worktree of a repository shares its store, and the main worktree's root store an older build made", async (t) => {
		const { base, dir } = repo(t);
		git(dir, "worktree", "add", "-q", "-b", "feat", join(base, "wt2"));
		assert.equal(projectOf(join(base, "wt2", "src")).store, join(dir, ".git", "state-flow"));
		await storeAt(dir, [{ tactics: { older: 1 } }]);
		const p = projectOf(join(base, "wt2", "src"));
		assert.equal(p.store, join(dir, ".pi", "state-flow"));
		assert.equal(p.via, "worktree");
		assert.equal(p.checkout, join(base, "wt2"));
		assert.equal(p.root, dir);
		assert.equal(p.git?.commonDir, join(dir, ".git"));
	});

	it("the worktrees of a bare repository share a store in its common dir", (t) => {
		const { base, dir } = repo(t);
		git(base, "clone", "-q", "--bare", dir, "bare.git");
		git(join(base, "bare.git"), "worktree", "add", "-q", join(base, "w1"), "main");
		git(join(base, "bare.git"), "worktree", "add", "-q", "-b", "two", join(base, "w2"));
		const one = projectOf(join(base, "w1", "src"));
		assert.equal(one.store, join(base, "bare.git", "state-flow"));
		assert.equal(one.via, "common-dir");
		assert.equal(projectOf(join(base, "w2")).store, one.store);
	});

	it("a submodule and a nested repository are projects of their own", (t) => {
		const { base, dir } = repo(t);
		const lib = join(base, "lib");
		mkdirSync(lib);
		git(lib, "init", "-q", "-b", "main");
		writeFileSync(join(lib, "l.txt"), "l\n");
		git(lib, "add", ".");
		git(lib, "commit", "-q", "-m", "lib");
		git(dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib");
		const sub = projectOf(join(dir, "vendor", "lib"));
		assert.equal(sub.store, join(dir, ".git", "modules", "vendor", "lib", "state-flow"));
		assert.equal(sub.via, "git-root");
		const nested = join(dir, "src", "inner");
		mkdirSync(nested);
		git(nested, "init", "-q");
		assert.equal(projectOf(nested).store, join(nested, ".git", "state-flow"));
		assert.equal(projectOf(join(dir, "src")).store, join(dir, ".git", "state-flow"));
	});

	it("a moved checkout keeps its memory, and its worktree follows after `git worktree repair`", async (t) => {
		const { base, dir } = repo(t);
		git(dir, "worktree", "add", "-q", "-b", "feat", join(base, "wt2"));
		const agentDir = join(base, "agent");
		const first = openStoresAt({ agentDir, cwd: join(dir, "src") });
		await first.commit({ cwd: { tactics: { kept: 1 } } }, { by, id: "t1", at });
		await first.close();
		const moved = join(base, "renamed");
		renameSync(dir, moved);
		const after = openStoresAt({ agentDir, cwd: join(moved, "src") });
		assert.deepEqual((await after.load("cwd")).state.tactics, { kept: 1 });
		await after.close();
		git(moved, "worktree", "repair", join(base, "wt2"));
		assert.equal(projectOf(join(base, "wt2")).store, join(moved, ".git", "state-flow"));
	});

	it("outside git the folder itself is the project: a store in an ancestor is never adopted", (t) => {
		const base = realpathSync(tempDir(t, "state-flow-project-"));
		mkdirSync(join(base, ".pi", "state-flow"), { recursive: true });
		writeFileSync(join(base, ".pi", "state-flow", "log.jsonl"), "");
		const deep = join(base, "x", "y");
		mkdirSync(deep, { recursive: true });
		const p = projectOf(deep);
		assert.deepEqual([p.store, p.via, p.root], [join(deep, ".pi", "state-flow"), "folder", deep]);
	});

	it("a store planted above the repository root is never used", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		const planted = openStoresAt({ agentDir, cwd: base });
		await planted.commit({ cwd: { tactics: { planted: true } } }, { by, id: "p1", at });
		await planted.close();
		assert.equal(projectOf(base).store, join(base, ".pi", "state-flow"));
		const inside = openStoresAt({ agentDir, cwd: join(dir, "src") });
		assert.deepEqual((await inside.load("cwd")).state.tactics, {});
		await inside.close();
	});

	it("the home folder's repository is the project of the home folder only", (t) => {
		const home = realpathSync(tempDir(t, "state-flow-home-"));
		git(home, "init", "-q");
		mkdirSync(join(home, "scratch"));
		const saved = process.env.HOME;
		process.env.HOME = home;
		t.after(() => {
			process.env.HOME = saved;
		});
		const below = projectOf(join(home, "scratch"));
		assert.deepEqual([below.store, below.via], [join(home, "scratch", ".pi", "state-flow"), "folder"]);
		assert.match(below.note ?? "", /home folder/);
		// A store below it is the folder's own, whatever the home repository's index holds (here: nothing readable).
		mkdirSync(join(home, "scratch", ".pi", "state-flow"), { recursive: true });
		writeFileSync(join(home, "scratch", ".pi", "state-flow", "log.jsonl"), "");
		writeFileSync(join(home, ".git", "index"), "DIRC garbage");
		assert.deepEqual([projectOf(join(home, "scratch")).store, projectOf(join(home, "scratch")).refused], [storeInRoot(join(home, "scratch")), undefined]);
		assert.equal(projectOf(home).store, join(home, ".git", "state-flow"));
	});

	it("a refusal names a hostile folder as data: no line break or escape of its own", (t) => {
		const base = realpathSync(tempDir(t, "state-flow-project-"));
		const evil = join(base, "evil\n\u001b[2J\u202e");
		mkdirSync(join(evil, ".pi", "state-flow"), { recursive: true });
		writeFileSync(join(evil, ".pi", "state-flow", "log.jsonl"), "");
		writeFileSync(join(evil, ".git"), "gitdir: /nonexistent/state-flow-test\n");
		const p = projectOf(evil);
		assert.match(p.refused ?? "", /^State Flow does not read `.*evil.*`: the work tree at .* is not followed/);
		// biome-ignore lint/suspicious/noControlCharactersInRegex: a control character is what must not appear.
		assert.doesNotMatch(p.refused ?? "", /[\n\u001b\u202e]/);
	});

	it("a planted `.git` file naming another repository's worktree never leads to its memory", (t) => {
		const { base, dir } = repo(t);
		git(dir, "worktree", "add", "-q", "-b", "feat", join(base, "wt2"));
		const hostile = join(base, "hostile");
		mkdirSync(hostile);
		writeFileSync(join(hostile, ".git"), `gitdir: ${join(dir, ".git", "worktrees", "wt2")}\n`);
		const p = projectOf(hostile);
		assert.equal(p.store, join(hostile, ".pi", "state-flow"));
		assert.match(p.note ?? "", /does not name this worktree back/);
		assert.equal(p.git, undefined);
	});

	it("a planted `.git` file and git dir of its own never lead into another repository's common dir or `.git`", (t) => {
		const { base, dir } = repo(t);
		// Shipped whole: `.git` names `.gitdata`, which names the victim's common dir and names this checkout back.
		const shipped = join(base, "shipped");
		mkdirSync(join(shipped, ".gitdata"), { recursive: true });
		writeFileSync(join(shipped, ".git"), "gitdir: .gitdata\n");
		writeFileSync(join(shipped, ".gitdata", "gitdir"), "../.git\n");
		writeFileSync(join(shipped, ".gitdata", "commondir"), "../../proj/.git\n");
		writeFileSync(join(shipped, ".gitdata", "HEAD"), "ref: refs/heads/main\n");
		const p = projectOf(shipped);
		assert.equal(p.root, shipped);
		assert.equal(p.store, join(shipped, ".pi", "state-flow"));
		assert.match(p.note ?? "", /is not a worktree entry of/);
		assert.equal(p.git, undefined);
		// `gitdir:` naming the other checkout's `.git` itself: not followed (its identity is not this folder's).
		const named = join(base, "named");
		mkdirSync(named);
		writeFileSync(join(named, ".git"), `gitdir: ${join(dir, ".git")}\n`);
		const q = projectOf(named);
		assert.equal(q.store, join(named, ".pi", "state-flow"));
		assert.match(q.note ?? "", /names the git dir of another checkout/);
		assert.equal(q.git, undefined);
	});
});

/** A throwaway base for an agent directory in tests that need none of their own. */
function base(t: { after(fn: () => void): void }): string {
	return tempDir(t, "state-flow-agent-");
}
