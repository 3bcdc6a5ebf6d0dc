/**
 * Links follow a repository without an `origin` remote too (issue 25): linking one checkout
 * writes a token into the git common dir and records it (and the root's path) in the user's
 * config, so a moved checkout and a worktree of it are linked, and a `git clone <path>` of it is
 * `linkable` (issue 33: a claim asks). A token is read as untrusted input: one the user's config
 * does not map claims nothing; a link, another user's file or other text is ignored (and named
 * by doctor). Real git, real PostgreSQL.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { chownSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { validateConfig } from "../../lib/storage/placement/config.js";
import { readToken } from "../../lib/storage/project/repo-token.js";
import { repositoryWords } from "../../lib/storage/project/repository.js";
import { git } from "../helpers/git-repo.js";
import { linkSetup } from "./link-fixture.js";
import { unwrapped } from "./run.js";

const TOKEN_FILE = "state-flow-repository";
const TOKEN = /^local:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A repository with no remote, and a user whose config names the test database. */
function setup(t: { after(fn: () => void): void }) {
	const { base, dir, run, written } = linkSetup(t);
	/** Another repository of its own (no remote) in the same base folder. */
	const other = (name: string) => {
		const to = join(base, name);
		mkdirSync(to);
		git(to, "init", "-q", "-b", "main");
		return to;
	};
	return { base, dir, run, written, other };
}

describe("links of a repository without `origin`", () => {
	it("linking writes a token into the common dir; the moved checkout and a new worktree follow, a clone of its path is linkable; unlink removes its keys", (t) => {
		const { base, dir, run, written } = setup(t);
		const linked = run(dir, "link", "acme/local");
		assert.equal(linked.code, 0, linked.stderr);
		assert.match(unwrapped(linked.stdout), /no `origin` remote: State Flow gave it an identity in its git common dir \(state-flow-repository\)/);
		const tokenFile = join(dir, ".git", TOKEN_FILE);
		assert.equal(lstatSync(tokenFile).mode & 0o777, 0o600);
		const token = readFileSync(tokenFile, "utf8").replace(/\n$/, "");
		assert.match(token, TOKEN);
		assert.deepEqual(written().links, { [dir]: "acme/local" });
		assert.deepEqual(written().repoLinks, { [token]: "acme/local", [dir]: "acme/local" });
		assert.equal(run(dir, "set", "cwd.tactics.shared", "1").code, 0);

		// `git clone <path>`: its origin is the linked checkout's path; a clone never copies the token, and asks.
		const copy = join(base, "copy");
		git(base, "clone", "-q", dir, copy);
		assert.equal(existsSync(join(copy, ".git", TOKEN_FILE)), false);
		const inCopy = run(copy, "show", "cwd");
		assert.match(unwrapped(inCopy.stdout), new RegExp(`^linkable: acme/local — .*repository \\(${dir.replace(/[/.]/g, "\\$&")}\\)`, "m"));
		assert.doesNotMatch(unwrapped(inCopy.stdout), /shared|\(link /);

		// Moved: the path entry no longer applies, the token (moved with `.git`) does.
		const moved = join(base, "moved");
		renameSync(dir, moved);
		const show = run(join(moved, "src"), "show", "cwd");
		assert.equal(show.code, 0, show.stderr);
		assert.match(unwrapped(show.stdout), /^project .*moved \(link acme\/local\)$/m);
		assert.match(unwrapped(show.stdout), /shared/);
		assert.doesNotMatch(unwrapped(show.stdout), /warning/);

		// A worktree shares the common dir, so its token.
		const wt = join(base, "wt");
		git(moved, "worktree", "add", "-q", "-b", "feat", wt);
		const inWt = run(wt, "show", "cwd");
		assert.match(unwrapped(inWt.stdout), /\(link acme\/local\)/);
		assert.match(unwrapped(inWt.stdout), /shared/);

		// Unlink there removes the repository's token link; the old path's entries are the old path's.
		const un = run(wt, "unlink");
		assert.equal(un.code, 0, un.stderr);
		assert.deepEqual(written().repoLinks, { [dir]: "acme/local" });
		assert.doesNotMatch(unwrapped(run(moved, "show", "cwd").stdout), /\(link /);
		assert.equal(readFileSync(join(moved, ".git", TOKEN_FILE), "utf8"), `${token}\n`, "the token stays: it is only an identity");
	});

	it("a token the user's config does not map claims nothing; the exact token only claims; a link, another user's file or other text there is ignored and named by doctor", (t) => {
		const { dir, run, written, other } = setup(t);
		assert.equal(run(dir, "link", "acme/local").code, 0);
		const tokenA = join(dir, ".git", TOKEN_FILE);
		const token = readFileSync(tokenA, "utf8").trim();
		const b = other("b");
		const planted = join(b, ".git", TOKEN_FILE);
		// What the token makes of `b`: linked, or only claiming the linked repository (`linkable`), or nothing.
		const claimsIn = (cwd: string) => {
			const out = run(cwd, "show", "cwd").stdout;
			assert.doesNotMatch(out, /\(link /, "a token alone never links");
			return /^linkable: acme\/local/m.test(out);
		};

		// Planted by the repository's content, in the exact format: no config maps it.
		writeFileSync(planted, `local:${randomUUID()}\n`);
		assert.equal(claimsIn(b), false, "a repository alone never links");
		// The very token of a linked repository, as a regular file of this user's: a copy of it, which claims the link and asks.
		writeFileSync(planted, `${token}\n`);
		assert.equal(claimsIn(b), true, "the exact token is a claim (the gates below are what is tested)");
		// Not in the exact format: ignored.
		for (const text of [`${token.toUpperCase()}\n`, `${token} \n`, `${token}\n\n`, ` ${token}`, `${token}\n${"x".repeat(200)}`]) {
			writeFileSync(planted, text);
			assert.equal(claimsIn(b), false, JSON.stringify(text));
		}
		const doctorSays = () => unwrapped(run(b, "doctor", "--dry-run").stdout);
		assert.match(
			doctorSays(),
			/cwd: the repository token .*b\/\.git\/state-flow-repository is ignored \((it does not hold a State Flow repository token|it is larger than 128 bytes)/,
		);
		// Another user's file: ignored (only root can make one; elsewhere a root-owned file stands in, read directly).
		if (process.getuid?.() === 0) {
			writeFileSync(planted, `${token}\n`);
			chownSync(planted, 54_321, 54_321);
			assert.equal(claimsIn(b), false, "another user's token file is ignored");
			assert.match(doctorSays(), /is ignored \(it belongs to another user\)/);
		} else {
			assert.deepEqual(readToken("/etc/hostname"), { problem: "it belongs to another user" });
		}
		// A symbolic link to the linked repository's token: never followed.
		renameSync(planted, `${planted}.old`);
		symlinkSync(tokenA, planted);
		assert.equal(claimsIn(b), false, "a token behind a symbolic link is ignored");
		assert.match(doctorSays(), /is ignored \(it is a symbolic link\)/);
		// Linking there writes no token through the link and leaves the linked repository's token as it was.
		const linked = run(b, "link", "acme/b");
		assert.equal(linked.code, 0, linked.stderr);
		assert.match(unwrapped(linked.stdout), /no `origin` remote and got no identity \(.*is ignored: it is a symbolic link; remove it/);
		assert.equal(lstatSync(planted).isSymbolicLink(), true);
		assert.equal(readFileSync(tokenA, "utf8"), `${token}\n`);
		assert.deepEqual(written().repoLinks, { [token]: "acme/local", [dir]: "acme/local", [b]: "acme/b" });
	});

	it("a planted `.git` file never takes on a linked repository's identity, nor makes a link write a token into another repository", (t) => {
		const { base, dir, run, written, other } = setup(t);
		assert.equal(run(dir, "link", "acme/local").code, 0);
		assert.equal(run(dir, "set", "cwd.tactics.secret", "1").code, 0);
		const linkedIn = (cwd: string) => unwrapped(run(cwd, "show", "cwd").stdout);
		// A `.git` file naming the linked checkout's `.git`: git would use it, State Flow does not take its token.
		const named = join(base, "named");
		mkdirSync(named);
		writeFileSync(join(named, ".git"), `gitdir: ${join(dir, ".git")}\n`);
		assert.doesNotMatch(linkedIn(named), /\(link |secret/);
		// A git dir shipped with the checkout naming the linked repository's common dir: not its worktree.
		const shipped = join(base, "shipped");
		mkdirSync(join(shipped, ".gitdata"), { recursive: true });
		writeFileSync(join(shipped, ".git"), "gitdir: .gitdata\n");
		writeFileSync(join(shipped, ".gitdata", "gitdir"), "../.git\n");
		writeFileSync(join(shipped, ".gitdata", "commondir"), `${join(dir, ".git")}\n`);
		assert.doesNotMatch(linkedIn(shipped), /\(link |secret/);
		// Linking such a checkout writes no token into the repository it names, which stays unlinked.
		const victim = other("victim");
		const pointer = join(base, "pointer");
		mkdirSync(pointer);
		writeFileSync(join(pointer, ".git"), `gitdir: ${join(victim, ".git")}\n`);
		assert.equal(run(pointer, "link", "acme/pointer").code, 0);
		assert.equal(existsSync(join(victim, ".git", TOKEN_FILE)), false);
		assert.deepEqual(
			Object.values(written().repoLinks ?? {}).filter((p) => p === "acme/pointer"),
			[],
		);
		assert.doesNotMatch(linkedIn(victim), /\(link /);
	});

	it("a link made by path alone (an older build) gains its repository when linked again", (t) => {
		const { dir, run, written } = setup(t);
		const file = join(dir, "..", "agent", "state-flow", "config.json");
		writeFileSync(file, `${JSON.stringify({ ...written(), links: { [dir]: "acme/local" } })}\n`);
		const again = run(dir, "link", "acme/local");
		assert.equal(again.code, 0, again.stderr);
		assert.match(unwrapped(again.stdout), /already linked to project `acme\/local`; its repository is recorded now/);
		const token = readFileSync(join(dir, ".git", TOKEN_FILE), "utf8").trim();
		assert.deepEqual(written().repoLinks, { [token]: "acme/local", [dir]: "acme/local" });
		assert.match(unwrapped(run(dir, "link", "acme/local").stdout), /already linked to project `acme\/local`; nothing changed/);
	});

	it("what a link says about the repository keeps a hostile root path on one line and its clone command one shell word", () => {
		const root = "/tmp/a b\n$(touch x)";
		const said = repositoryWords({ keys: [root], problem: "its git dir\nis odd" }, root);
		assert.equal(said.includes("\n"), false, said);
		assert.match(said, /`git clone '\/tmp\/a b\\u000a\$\(touch x\)'`/);
		assert.match(said, /got no identity \(its git dir\\u000ais odd\)/);
	});

	it("config: a `local:` key is kept only in the exact token format", () => {
		const token = `local:${randomUUID()}`;
		const read = validateConfig({ repoLinks: { [token]: "acme/a", "local:nope": "acme/b" } });
		assert.deepEqual(read.config.repoLinks, { [token]: "acme/a" });
		assert.equal(read.problems.length, 1);
		assert.match(read.problems[0] as string, /`repoLinks\["local:nope"\]` is not a repository identity/);
	});
});
