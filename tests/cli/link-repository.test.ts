/**
 * Links follow the repository, not the path (issue 25), where the user said yes for it (issue
 * 33): once the user links one checkout, a moved or renamed checkout and a worktree of that
 * repository are linked on this machine; a second clone of the same repository (its `origin`
 * remote, normalised) is only `linkable` until `state-flow link` runs there; a repository alone
 * never links; a linked checkout whose local files hold state of their own says so loudly.
 * Real git, real PostgreSQL.
 */
import assert from "node:assert/strict";
import { readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { validateConfig } from "../../lib/storage/placement/config.js";
import { normalRemote, originUrl } from "../../lib/storage/project/repository.js";
import { git } from "../helpers/git-repo.js";
import { linkSetup } from "./link-fixture.js";
import { unwrapped } from "./run.js";

function setup(t: { after(fn: () => void): void }) {
	const { base, dir, run, written, schema } = linkSetup(t);
	git(dir, "remote", "add", "origin", "https://tok@GitHub.com/acme/api.git");
	/** A second clone of the same repository, its origin spelled another way (scp-like, no `.git`). */
	const clone = (name: string, from = dir) => {
		const to = join(base, name);
		git(base, "clone", "-q", from, to);
		git(to, "remote", "set-url", "origin", "git@github.com:acme/api");
		return to;
	};
	return { base, dir, run, written, clone, schema };
}

describe("links follow the repository", () => {
	it("a link is recorded for the repository (no credentials) with this repository's yes; a renamed checkout and a worktree follow, a second clone asks", (t) => {
		const { base, dir, run, written, clone, schema } = setup(t);
		const linked = run(dir, "link", "acme/api");
		assert.equal(linked.code, 0, linked.stderr);
		assert.match(unwrapped(linked.stdout), /Every checkout of repository github\.com\/acme\/api on this machine/);
		const { linkConsents, ...rest } = written();
		assert.deepEqual(rest, { databaseSchema: schema, links: { [dir]: "acme/api" }, repoLinks: { "github.com/acme/api": "acme/api" } });
		assert.deepEqual(
			Object.values(linkConsents ?? {}).map((c) => [c.repo, c.project]),
			[["github.com/acme/api", "acme/api"]],
			"the yes for this repository on this machine",
		);
		assert.doesNotMatch(readFileSync(join(base, "agent", "state-flow", "config.json"), "utf8"), /tok/, "a URL's credentials are never recorded");
		assert.equal(run(dir, "set", "cwd.tactics.shared", "1").code, 0);
		const moved = join(base, "renamed");
		renameSync(dir, moved);
		const show = run(join(moved, "src"), "show", "cwd");
		assert.equal(show.code, 0, show.stderr);
		assert.match(unwrapped(show.stdout), /^project .*renamed \(link acme\/api\)$/m);
		assert.match(unwrapped(show.stdout), /shared/);
		assert.doesNotMatch(unwrapped(show.stdout), /warning|linkable/);
		const wtOfMoved = join(base, "wt-moved");
		git(moved, "worktree", "add", "-q", "-b", "side", wtOfMoved);
		assert.match(unwrapped(run(wtOfMoved, "show", "cwd").stdout), /\(link acme\/api\)/, "a worktree of the consented repository follows");
		// A second clone claims the same repository: it says so and stays local until linked there.
		const second = clone("second", moved);
		const claimed = run(second, "show", "cwd");
		assert.equal(claimed.code, 0, claimed.stderr);
		assert.match(
			unwrapped(claimed.stdout),
			/^linkable: acme\/api — run `state-flow link acme\/api` here to share; this checkout's repository \(github\.com\/acme\/api\) is linked to project `acme\/api` on this machine, but you never said yes for this checkout/m,
		);
		assert.doesNotMatch(unwrapped(claimed.stdout), /shared|\(link /, "the project's memory is not read");
		const offered = run(second, "link");
		assert.match(unwrapped(offered.stdout), /^linkable: acme\/api — .*\nTo share this checkout's CWD memory with it, run: `state-flow link acme\/api`$/m);
		assert.equal(run(second, "link", "acme/api").code, 0);
		assert.match(unwrapped(run(second, "show", "cwd").stdout), /shared/, "linked there, it reads the project's memory");
		const wt = join(base, "wt");
		git(second, "worktree", "add", "-q", "-b", "feat", wt);
		const inWt = run(wt, "show", "cwd");
		assert.match(unwrapped(inWt.stdout), /\(link acme\/api\)/);
		assert.match(unwrapped(inWt.stdout), /shared/);
	});

	it("a repository alone never links: another remote, or none, is not linked", (t) => {
		const { base, dir, run } = setup(t);
		const other = join(base, "other");
		git(base, "clone", "-q", dir, other);
		git(other, "remote", "set-url", "origin", "git@github.com:acme/web.git");
		assert.doesNotMatch(unwrapped(run(other, "show", "cwd").stdout), /link /, "nothing linked yet");
		assert.equal(run(dir, "link", "acme/api").code, 0);
		assert.doesNotMatch(unwrapped(run(other, "show", "cwd").stdout), /\(link /, "another repository is not linked");
		git(other, "remote", "remove", "origin");
		assert.doesNotMatch(unwrapped(run(other, "show", "cwd").stdout), /\(link /);
	});

	it("a clone whose local files hold state stays local; linked there with --force it says so loudly; unlink there unlinks the repository", (t) => {
		const { dir, run, written, clone } = setup(t);
		const second = clone("second");
		assert.equal(run(second, "set", "cwd.tactics.local", "1").code, 0);
		assert.equal(run(dir, "link", "acme/api").code, 0);
		const before = run(second, "show", "cwd");
		assert.match(unwrapped(before.stdout), /^linkable: acme\/api/m);
		assert.match(unwrapped(before.stdout), /local/, "its own memory is read until the user links it");
		const refused = run(second, "link", "acme/api");
		assert.equal(refused.code, 1);
		assert.match(unwrapped(refused.stderr), /local CWD store .*second\/\.git\/state-flow holds 1 transition\(s\); linking would stop using it/);
		assert.equal(run(second, "link", "acme/api", "--force").code, 0);
		const show = run(second, "show", "cwd");
		assert.equal(show.code, 0, show.stderr);
		assert.match(
			unwrapped(show.stdout),
			/warning: this checkout is linked to project `acme\/api`, whose memory is read, but its local files in .*second\/\.git\/state-flow hold state of their own that is NOT read/,
		);
		assert.doesNotMatch(unwrapped(show.stdout), /tactics\.local|local: 1/);
		const un = run(second, "unlink");
		assert.equal(un.code, 0, un.stderr);
		assert.match(unwrapped(un.stdout), /Unlinked .*second from project `acme\/api`/);
		assert.deepEqual(written().repoLinks, {}, "the repository's link is gone");
		assert.deepEqual(written().linkConsents, {}, "and every yes given for it");
		assert.deepEqual(written().links, { [dir]: "acme/api" }, "a checkout linked by its path stays linked");
		const after = run(second, "show", "cwd");
		assert.doesNotMatch(unwrapped(after.stdout), /warning|linkable/);
		assert.match(unwrapped(after.stdout), /local/);
	});
});

describe("repository identity", () => {
	it("one repository however its URL is spelled; credentials, ports and `.git` dropped", () => {
		for (const url of [
			"git@github.com:acme/api.git",
			"https://github.com/acme/api",
			"https://user:secret@GITHUB.com/acme/api.git/",
			"ssh://git@github.com:22/acme/api",
		]) {
			assert.equal(normalRemote(url), "github.com/acme/api", url);
		}
		assert.equal(normalRemote("/srv/git/api.git"), "/srv/git/api");
		assert.equal(normalRemote("file:///srv/git/api.git"), "/srv/git/api");
		assert.equal(normalRemote("https://x/a\nb"), undefined, "a control character is no identity");
	});

	it("reads origin's url only, from git's config text", () => {
		const text = '[core]\n\turl = nope\n[remote "upstream"]\n\turl = git@x:a/b\n[remote "origin"]\n\tfetch = +refs/heads/*\n\turl = git@x:c/d\n';
		assert.equal(originUrl(text), "git@x:c/d");
		assert.equal(originUrl("[core]\n"), undefined);
	});

	it("config: a repoLinks entry State Flow would not record is ignored with a problem naming it", () => {
		const read = validateConfig({ repoLinks: { "github.com/acme/api": "acme/api", "https://tok@github.com/x": "acme/x", "github.com/acme/y": "" } });
		assert.deepEqual(read.config.repoLinks, { "github.com/acme/api": "acme/api" });
		assert.equal(read.problems.length, 2);
		assert.match(read.problems[0] as string, /`repoLinks\[.*\]` is not a repository identity/);
		const bad = validateConfig({ repoLinks: [] });
		assert.match(bad.problems[0] as string, /`repoLinks` must be an object/);
	});
});
