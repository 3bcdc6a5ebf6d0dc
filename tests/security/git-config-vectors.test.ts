/**
 * No command runs with a repository's config in force (issue 33, part 1): before each prompt the
 * branch watch tells whether an intent's branch was merged, and it reads git's object files
 * instead of running git. One test per way a repository's config makes git run a command —
 * fsmonitor, `core.sshCommand` and `core.gitProxy` through a partial clone's promisor fetch,
 * hooks, `include`/`includeIf`, `credential.helper`, diff and textconv drivers, `protocol.*`,
 * `safe.directory` — each armed to create a sentinel file, then a real pi session (SDK, faux
 * model) on `main` with intents of a merged and an unmerged branch: the sentinel never appears
 * and the head still says which branch was merged. Then git itself is run on the repository the
 * test made, proving the trap was armed (the sentinel appears).
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { git } from "../helpers/git-repo.js";
import { tempDir } from "../helpers/temp-dir.js";
import { headOf, startFlow } from "../host/fixture.js";

const run = promisify(execFile);

/** git on the test's own repository, asynchronously (a credential test serves HTTP from this process meanwhile); never throws. */
async function gitAsync(dir: string, ...args: string[]): Promise<void> {
	const env = {
		...process.env,
		GIT_CONFIG_NOSYSTEM: "1",
		HOME: tmpdir(),
		GIT_TERMINAL_PROMPT: "0",
		GIT_AUTHOR_NAME: "t",
		GIT_AUTHOR_EMAIL: "t@x",
		GIT_COMMITTER_NAME: "t",
		GIT_COMMITTER_EMAIL: "t@x",
	};
	await run("git", args, { cwd: dir, env, timeout: 20_000 }).catch(() => undefined);
}

interface Repo {
	base: string;
	dir: string;
	sentinel: string;
	/** An executable that creates the sentinel (and fails). */
	trap: string;
	/** The commit ids of `main`'s tip and the unmerged branch's tip. */
	main: string;
	open: string;
}

function commitFile(dir: string, name: string): void {
	writeFileSync(join(dir, name), `${name}\n`);
	git(dir, "add", name);
	git(dir, "commit", "-q", "-m", name);
}

/** `main` with `done-work` merged into it and `open-work` not; checked out on `main`; intents of both branches in the project's store. */
async function world(t: { after(fn: () => void): void }): Promise<Repo> {
	const base = realpathSync(tempDir(t, "state-flow-vectors-"));
	const dir = join(base, "proj");
	mkdirSync(dir);
	git(dir, "init", "-q", "-b", "main");
	commitFile(dir, "a.txt");
	commitFile(dir, "b.txt");
	git(dir, "checkout", "-q", "-b", "done-work");
	commitFile(dir, "done.txt");
	git(dir, "checkout", "-q", "main");
	git(dir, "checkout", "-q", "-b", "open-work");
	commitFile(dir, "open.txt");
	git(dir, "checkout", "-q", "main");
	git(dir, "merge", "-q", "--no-ff", "-m", "merge done-work", "done-work");
	const sentinel = join(base, "SENTINEL");
	const trap = join(base, "trap.sh");
	writeFileSync(trap, `#!/bin/sh\ntouch '${sentinel}'\nexit 1\n`);
	chmodSync(trap, 0o755);
	mkdirSync(join(base, "agent"));
	const stores = openStoresAt({ agentDir: join(base, "agent"), cwd: dir });
	const intent = (goal: string, gitBranch: string, step: string) => ({ goal, gitBranch, owns: [{ $ref: `cwd.tactics.${step}` }] });
	await stores.commit(
		{
			cwd: {
				intents: { done: intent("finish the done work", "done-work", "d1"), open: intent("finish the open work", "open-work", "o1") },
				tactics: { d1: "step", o1: "step" },
			},
		},
		{ by: { kind: "system", reason: "vectors" }, id: "v1", at: "2026-01-01T00:00:00.000Z" },
	);
	await stores.close();
	return { base, dir, sentinel, trap, main: git(dir, "rev-parse", "main"), open: git(dir, "rev-parse", "open-work") };
}

/**
 * A partial clone whose promisor remote is `url`: git fetches a missing object from it (running
 * whatever the config names for that URL); the root commit is removed, so git's walk from `main`
 * down to it needs a fetch.
 */
function promisor(r: Repo, url: string, config = join(r.dir, ".git", "config")): void {
	const set = (k: string, v: string) => git(r.dir, "config", "--file", config, k, v);
	git(r.dir, "config", "core.repositoryformatversion", "1");
	set("extensions.partialClone", "origin");
	set("remote.origin.url", url);
	set("remote.origin.promisor", "true");
	set("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*");
	const root = git(r.dir, "rev-list", "--max-parents=0", "main");
	rmSync(join(r.dir, ".git", "objects", root.slice(0, 2), root.slice(2)));
}

/** Each vector: arm the repository, and the git command that sets it off (run after the session, to prove the trap is armed). */
const VECTORS: Record<string, (r: Repo, t: { after(fn: () => void): void }) => Promise<(r: Repo) => Promise<void>>> = {
	"core.fsmonitor": async (r) => {
		git(r.dir, "config", "core.fsmonitor", r.trap);
		return (x) => gitAsync(x.dir, "status");
	},
	"core.sshCommand through a promisor fetch": async (r) => {
		promisor(r, "ssh://example.invalid/x");
		git(r.dir, "config", "core.sshCommand", r.trap);
		return (x) => gitAsync(x.dir, "merge-base", "--is-ancestor", x.open, x.main);
	},
	"core.gitProxy through a promisor fetch": async (r) => {
		promisor(r, "git://example.invalid/x");
		git(r.dir, "config", "core.gitProxy", r.trap);
		return (x) => gitAsync(x.dir, "merge-base", "--is-ancestor", x.open, x.main);
	},
	hooks: async (r) => {
		const hooks = join(r.base, "hooks");
		mkdirSync(hooks);
		for (const name of [
			"pre-commit",
			"post-commit",
			"post-checkout",
			"post-merge",
			"reference-transaction",
			"pre-auto-gc",
			"post-rewrite",
			"fsmonitor-watchman",
		]) {
			writeFileSync(join(hooks, name), `#!/bin/sh\ntouch '${r.sentinel}'\n`);
			chmodSync(join(hooks, name), 0o755);
			writeFileSync(join(r.dir, ".git", "hooks", name), `#!/bin/sh\ntouch '${r.sentinel}'\n`, { mode: 0o755 });
		}
		git(r.dir, "config", "core.hooksPath", hooks);
		return (x) => gitAsync(x.dir, "commit", "-q", "--allow-empty", "-m", "set it off");
	},
	"include.path": async (r) => {
		const evil = join(r.dir, ".git", "evil.config");
		promisor(r, "ssh://example.invalid/x", evil);
		git(r.dir, "config", "--file", evil, "core.sshCommand", r.trap);
		git(r.dir, "config", "include.path", "evil.config");
		return (x) => gitAsync(x.dir, "merge-base", "--is-ancestor", x.open, x.main);
	},
	includeIf: async (r) => {
		const evil = join(r.dir, ".git", "evil.config");
		promisor(r, "ssh://example.invalid/x", evil);
		git(r.dir, "config", "--file", evil, "core.sshCommand", r.trap);
		git(r.dir, "config", "includeIf.gitdir:/.path", evil);
		return (x) => gitAsync(x.dir, "merge-base", "--is-ancestor", x.open, x.main);
	},
	"credential.helper": async (r, t) => {
		// A remote that asks for credentials: git then runs the helper the config names.
		const server = createServer((_req, res) => {
			res.writeHead(401, { "WWW-Authenticate": 'Basic realm="x"' });
			res.end();
		});
		await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
		t.after(() => server.close());
		const port = (server.address() as AddressInfo).port;
		promisor(r, `http://127.0.0.1:${port}/x.git`);
		git(r.dir, "config", "credential.helper", `!${r.trap}`);
		return (x) => gitAsync(x.dir, "merge-base", "--is-ancestor", x.open, x.main);
	},
	"diff and textconv drivers": async (r) => {
		writeFileSync(join(r.dir, ".git", "info", "attributes"), "* diff=evil\n");
		git(r.dir, "config", "diff.evil.textconv", r.trap);
		git(r.dir, "config", "diff.evil.command", r.trap);
		git(r.dir, "config", "diff.external", r.trap);
		return (x) => gitAsync(x.dir, "diff", "HEAD~1", "HEAD");
	},
	"protocol.ext.allow with an ext:: promisor": async (r) => {
		promisor(r, `ext::${r.trap} %S`);
		git(r.dir, "config", "protocol.ext.allow", "always");
		git(r.dir, "config", "protocol.allow", "always");
		return (x) => gitAsync(x.dir, "merge-base", "--is-ancestor", x.open, x.main);
	},
};

describe("a repository's config never makes the branch watch run a command (live pi session)", () => {
	for (const [name, arm] of Object.entries(VECTORS)) {
		it(`${name}: nothing runs, and the head still tells the merged branch from the open one`, async (t) => {
			const r = await world(t);
			const setOff = await arm(r, t);
			const flow = await startFlow({ cwd: r.dir, agentDir: join(r.base, "agent") });
			t.after(() => flow.dispose());
			await flow.prompt("where are we", [{ text: "ok" }]);
			const head = headOf(flow, 0);
			assert.equal(existsSync(r.sentinel), false, `a command ran (${name})`);
			assert.match(head, /~ cwd\.intents\.done of branch "done-work": 1 open step; the branch was merged into "main"/, head);
			assert.match(head, /~ cwd\.intents\.open of branch "open-work": 1 open step(?:\n|$)/m, head);
			await setOff(r);
			assert.equal(existsSync(r.sentinel), true, `the trap was armed: git itself set it off (${name})`);
		});
	}

	it("safe.directory: a repository of another user's (its config saying `safe.directory = *`) is not followed at all; nothing runs", async (t) => {
		const r = await world(t);
		// Only root can give a repository away (the suite runs as root in CI, as the other ownership tests do).
		if (process.getuid?.() !== 0) return;
		promisor(r, "ssh://example.invalid/x");
		git(r.dir, "config", "core.sshCommand", r.trap);
		git(r.dir, "config", "safe.directory", "*");
		const chownAll = (p: string) => {
			chownSync(p, 4242, 4242);
			for (const e of readdirSync(p, { withFileTypes: true })) {
				if (e.isDirectory()) chownAll(join(p, e.name));
				else chownSync(join(p, e.name), 4242, 4242);
			}
		};
		chownAll(join(r.dir, ".git"));
		const flow = await startFlow({ cwd: r.dir, agentDir: join(r.base, "agent") });
		t.after(() => flow.dispose());
		await flow.prompt("where are we", [{ text: "ok" }]);
		assert.equal(existsSync(r.sentinel), false, "a command ran");
		assert.doesNotMatch(headOf(flow, 0), /the branch was merged/);
		assert.match((await flow.command("/state")).join("\n"), /belongs to another user/);
		await gitAsync(r.dir, "merge-base", "--is-ancestor", r.open, r.main);
		assert.equal(existsSync(r.sentinel), false, "git refuses the repository too: its own safe.directory is not honoured");
		await gitAsync(r.dir, "-c", "safe.directory=*", "merge-base", "--is-ancestor", r.open, r.main);
		assert.equal(existsSync(r.sentinel), true, "the trap was armed: trusted by the user, git sets it off");
	});
});
