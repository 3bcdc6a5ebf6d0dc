/**
 * A `.git` file is followed only where git itself agrees and the target names this checkout
 * back (issue 33, part 2), on real git: the legitimate layouts keep working (a separate git dir
 * whose `core.worktree` names it, a bare repository inside its checkout, a submodule's
 * worktrees), and a `.git` file naming another repository's separate git dir, a bare repository
 * with worktrees, a submodule's `.git/modules/<name>`, the checkout itself or a folder above it
 * (`gitdir: ..`) is never followed: the checkout keeps its own folder, nothing is made outside
 * it. A worktree whose repository moved is not called a git root and is told the repair; outside
 * git a folder above holding memory is named. The same attacks through the pi SDK and the CLI:
 * tests/security/hostile-gitdir.test.ts.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { chownSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectLine, projectNote, projectOf, storeInRoot } from "../../lib/storage/project/project.js";
import { git, repo } from "../helpers/git-repo.js";
import { tempDir } from "../helpers/temp-dir.js";
import { snapshot } from "../security/hostile.js";

const by = { kind: "system", reason: "pointer-test" } as const;
const at = "2026-01-01T00:00:00.000Z";

/** A repository made with `git init --separate-git-dir`: its checkout and its git dir, siblings under `base`. */
function separate(base: string, name: string): { checkout: string; gitDir: string } {
	const checkout = join(base, name);
	const gitDir = join(base, `${name}-gitdir`);
	git(base, "init", "-q", "-b", "main", `--separate-git-dir=${gitDir}`, checkout);
	writeFileSync(join(checkout, "a.txt"), "a\n");
	git(checkout, "add", ".");
	git(checkout, "commit", "-q", "-m", "first");
	return { checkout, gitDir };
}

/** A folder whose `.git` file names `gitdir`, as an archive ships it. */
function pointing(base: string, name: string, gitdir: string): string {
	const dir = join(base, name);
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, ".git"), `gitdir: ${gitdir}\n`);
	return dir;
}

/** A write in `cwd` through the real stores, and every entry under `base` but `cwd` and the agent dir unchanged. */
async function writesOnlyInside(base: string, cwd: string): Promise<void> {
	const agentDir = join(base, "agent");
	mkdirSync(agentDir, { recursive: true });
	const outside = (snap: Record<string, string>) =>
		Object.fromEntries(Object.entries(snap).filter(([k]) => !join(base, k).startsWith(`${cwd}/`) && !k.startsWith("agent")));
	const before = outside(snapshot(base));
	const stores = openStoresAt({ agentDir, cwd });
	await stores.commit({ cwd: { tactics: { hostile: "written" } } }, { by, id: "h1", at });
	assert.deepEqual((await stores.load("cwd")).state.tactics, { hostile: "written" }, "the checkout's own memory, nothing else's");
	await stores.close();
	assert.deepEqual(outside(snapshot(base)), before, "nothing outside the checkout was made or changed");
	assert.equal(readFileSync(join(storeInRoot(cwd), "log.jsonl"), "utf8").split("\n").length, 2, "the write landed in the checkout's own folder");
}

describe("the legitimate layouts of a `.git` file", () => {
	it("a separate git dir is followed once its core.worktree names the checkout (the note's command); its worktrees share the store", (t) => {
		const base = realpathSync(tempDir(t, "state-flow-pointer-"));
		const { checkout, gitDir } = separate(base, "sp");
		const before = projectOf(checkout);
		assert.deepEqual([before.via, before.store, before.git], ["unfollowed", storeInRoot(checkout), undefined]);
		assert.match(projectNote(before) ?? "", /names no work tree of its own.*`git --git-dir=\S+sp-gitdir config core\.worktree \S+sp`/);
		git(base, `--git-dir=${gitDir}`, "config", "core.worktree", checkout);
		assert.equal(git(checkout, "rev-parse", "--show-toplevel"), checkout, "git agrees: the checkout is the work tree");
		const after = projectOf(checkout);
		assert.deepEqual([after.via, after.store, after.git?.commonDir], ["git-root", join(gitDir, "state-flow"), gitDir]);
		git(checkout, "worktree", "add", "-q", "-b", "feat", join(base, "w"));
		const wt = projectOf(join(base, "w"));
		assert.deepEqual([wt.via, wt.store], ["common-dir", after.store]);
	});

	it("a bare repository inside its checkout (`gitdir: ./.bare`) is followed, and its worktrees share its store", (t) => {
		const { base, dir } = repo(t);
		const container = join(base, "container");
		mkdirSync(container);
		git(container, "clone", "-q", "--bare", dir, ".bare");
		writeFileSync(join(container, ".git"), "gitdir: ./.bare\n");
		git(container, "worktree", "add", "-q", join(container, "main"), "main");
		const top = projectOf(container);
		assert.deepEqual([top.via, top.store], ["git-root", join(container, ".bare", "state-flow")]);
		assert.equal(projectOf(join(container, "main", "src")).store, top.store);
	});

	it("a submodule and a worktree of the submodule share the submodule's store", (t) => {
		const { base, dir } = repo(t);
		const lib = join(base, "lib");
		mkdirSync(lib);
		git(lib, "init", "-q", "-b", "main");
		writeFileSync(join(lib, "l.txt"), "l\n");
		git(lib, "add", ".");
		git(lib, "commit", "-q", "-m", "lib");
		git(dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib");
		const sub = projectOf(join(dir, "vendor", "lib"));
		const store = join(dir, ".git", "modules", "vendor", "lib", "state-flow");
		assert.deepEqual([sub.via, sub.store], ["git-root", store]);
		git(join(dir, "vendor", "lib"), "worktree", "add", "-q", "-b", "side", join(base, "lib-wt"));
		const wt = projectOf(join(base, "lib-wt"));
		assert.deepEqual([wt.via, wt.store], ["common-dir", store]);
	});
});

describe("a `.git` file naming what is not this checkout's", () => {
	it("another repository's separate git dir (its core.worktree names that checkout): not followed, nothing made outside", async (t) => {
		const base = realpathSync(tempDir(t, "state-flow-pointer-"));
		const { checkout, gitDir } = separate(base, "victim");
		git(base, `--git-dir=${gitDir}`, "config", "core.worktree", checkout);
		const hostile = pointing(base, "hostile", gitDir);
		const p = projectOf(hostile);
		assert.deepEqual([p.via, p.store, p.git], ["unfollowed", storeInRoot(hostile), undefined]);
		assert.match(p.note ?? "", /names no work tree of its own, so it may be another repository's/);
		await writesOnlyInside(base, hostile);
	});

	it("a bare repository with worktrees: not followed", async (t) => {
		const { base, dir } = repo(t);
		git(base, "clone", "-q", "--bare", dir, "bare.git");
		git(join(base, "bare.git"), "worktree", "add", "-q", join(base, "w1"), "main");
		const hostile = pointing(base, "hostile", join(base, "bare.git"));
		const p = projectOf(hostile);
		assert.deepEqual([p.via, p.git], ["unfollowed", undefined]);
		await writesOnlyInside(base, hostile);
	});

	it("a submodule's `.git/modules/<name>`: not followed (its core.worktree names the submodule's checkout)", async (t) => {
		const { base, dir } = repo(t);
		const lib = join(base, "lib");
		mkdirSync(lib);
		git(lib, "init", "-q", "-b", "main");
		writeFileSync(join(lib, "l.txt"), "l\n");
		git(lib, "add", ".");
		git(lib, "commit", "-q", "-m", "lib");
		git(dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib");
		const hostile = pointing(base, "hostile", join(dir, ".git", "modules", "vendor", "lib"));
		const p = projectOf(hostile);
		assert.deepEqual([p.via, p.git], ["unfollowed", undefined]);
		await writesOnlyInside(base, hostile);
	});

	for (const gitdir of ["..", "../..", "."]) {
		it(`\`gitdir: ${gitdir}\` (the checkout itself or a folder above it) is never a git dir: no store is made there`, async (t) => {
			const base = realpathSync(tempDir(t, "state-flow-pointer-"));
			const hostile = pointing(base, join("a", "b", "hostile"), gitdir);
			const p = projectOf(hostile);
			assert.deepEqual([p.via, p.store, p.git], ["unfollowed", storeInRoot(hostile), undefined]);
			assert.match(p.note ?? "", /is this checkout or a folder above it, never a git dir State Flow keeps memory in/);
			await writesOnlyInside(base, hostile);
		});
	}

	it("a git dir of another user's is not followed (git's safe.directory rule)", (t) => {
		const base = realpathSync(tempDir(t, "state-flow-pointer-"));
		const { checkout, gitDir } = separate(base, "sp");
		git(base, `--git-dir=${gitDir}`, "config", "core.worktree", checkout);
		assert.equal(projectOf(checkout).via, "git-root");
		// Only root can give a folder away; any other user names a folder of root's instead.
		if (process.getuid?.() === 0) chownSync(gitDir, 4242, 4242);
		else writeFileSync(join(checkout, ".git"), "gitdir: /usr\n");
		const p = projectOf(checkout);
		assert.deepEqual([p.via, p.git], ["unfollowed", undefined]);
		assert.match(p.note ?? "", /is not a folder of yours/);
	});
});

describe("what a checkout that is not followed is told", () => {
	it("a worktree whose repository moved is not called a git root, and is told `git worktree repair <path>` as one shell word", (t) => {
		const { base, dir } = repo(t);
		const wt = join(base, "my wt");
		git(dir, "worktree", "add", "-q", "-b", "feat", wt);
		renameSync(dir, join(base, "moved"));
		const p = projectOf(wt);
		const line = projectLine(p);
		assert.doesNotMatch(line, /git root/);
		assert.match(line, /my wt \(its \.git is not followed\)$/);
		assert.ok(line.length <= 80, line);
		assert.match(projectNote(p) ?? "", /if the repository moved, `git worktree repair '[^']*\/my wt'` run in the repository mends it/);
		git(join(base, "moved"), "worktree", "repair", wt);
		assert.equal(projectOf(wt).via, "worktree");
	});

	it("outside git, a subfolder of a folder holding memory says so on one line; not once it holds its own", async (t) => {
		const base = realpathSync(tempDir(t, "state-flow-pointer-"));
		const notes = join(base, "notes\nhere");
		const agentDir = join(base, "agent");
		const first = openStoresAt({ agentDir, cwd: notes });
		await first.commit({ cwd: { tactics: { mine: 1 } } }, { by, id: "n1", at });
		await first.close();
		const sub = join(notes, "drafts", "today");
		mkdirSync(sub, { recursive: true });
		const note = projectNote(projectOf(sub)) ?? "";
		assert.match(note, /^note: a folder above, `\S*notes\\u000ahere`, has State Flow memory; this folder starts its own/);
		assert.doesNotMatch(note, /\n/);
		assert.equal(projectNote(projectOf(notes)), undefined, "the folder with memory is told nothing");
		const own = openStoresAt({ agentDir, cwd: sub });
		await own.commit({ cwd: { tactics: { sub: 1 } } }, { by, id: "s1", at });
		await own.close();
		assert.equal(projectNote(projectOf(sub)), undefined);
	});
});
