/**
 * Links follow the project (issue 25), with the real `state-flow` binary, real git and the real
 * PostgreSQL test server: a link made at a repository's root is recorded under the project's
 * root and applies to its subfolders and its worktrees; a link an older build recorded under a
 * subfolder's path still applies there, and `unlink` removes that one.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname as base, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { closeDatabases } from "../../lib/storage/pg/placed.js";
import { git, repo } from "../helpers/git-repo.js";
import { type TestDatabase, testDatabase } from "../helpers/pg-server.js";
import { runCli, unwrapped } from "./run.js";

let server: TestDatabase;
before(async () => {
	server = await testDatabase();
});
after(async () => {
	await closeDatabases();
	await server.stop();
});

function setup(t: { after(fn: () => void): void }) {
	const { base, dir } = repo(t);
	const agent = join(base, "agent");
	mkdirSync(join(agent, "state-flow"), { recursive: true });
	const file = join(agent, "state-flow", "config.json");
	writeFileSync(file, `${JSON.stringify({ databaseSchema: server.schema() })}\n`);
	const run = (cwd: string, ...args: string[]) => runCli([...args, "--agent-dir", agent], { cwd, env: { STATE_FLOW_DATABASE_URL: server.url } });
	const links = () => (JSON.parse(readFileSync(file, "utf8")) as { links?: Record<string, string> }).links ?? {};
	return { base, dir, agent, file, run, links };
}

describe("links follow the project", () => {
	it("a link made in a subfolder is recorded under the repository's root and applies to every worktree", (t) => {
		const { base, dir, run, links } = setup(t);
		const linked = run(join(dir, "src"), "link", "acme/api");
		assert.equal(linked.code, 0, linked.stderr);
		assert.deepEqual(links(), { [dir]: "acme/api" });
		const set = run(join(dir, "src"), "set", "cwd.tactics.shared", "1");
		assert.equal(set.code, 0, set.stderr);
		const wt = join(base, "wt2");
		git(dir, "worktree", "add", "-q", "-b", "feat", wt);
		const show = run(wt, "show", "cwd");
		assert.equal(show.code, 0, show.stderr);
		assert.match(unwrapped(show.stdout), /^project .*proj \(link acme\/api\)$/m);
		assert.match(unwrapped(show.stdout), /shared/);
		assert.match(unwrapped(show.stdout), /postgres/i);
	});

	it("a link an older build recorded under a subfolder's path still applies there, and unlink removes it", (t) => {
		const { dir, file, run, links } = setup(t);
		const sub = join(dir, "src");
		writeFileSync(file, `${JSON.stringify({ databaseSchema: server.schema(), links: { [sub]: "acme/old" } })}\n`);
		assert.match(unwrapped(run(sub, "show", "cwd").stdout), /link acme\/old/);
		assert.doesNotMatch(unwrapped(run(dir, "show", "cwd").stdout), /link acme\/old/);
		const un = run(sub, "unlink");
		assert.equal(un.code, 0, un.stderr);
		assert.deepEqual(links(), {});
	});

	it("a migrated checkout moved to a new path stays linked by its repository's token; without one it says so loudly instead of reading its old files silently", (t) => {
		const { base, dir, run, links } = setup(t);
		assert.equal(run(dir, "set", "cwd.tactics.before", "1").code, 0);
		const migrated = run(dir, "migrate", "acme/moved");
		assert.equal(migrated.code, 0, migrated.stderr);
		assert.equal(run(dir, "set", "cwd.tactics.after", "2").code, 0, "written to the project's memory");
		const moved = join(base, "renamed");
		renameSync(dir, moved);
		const kept = run(join(moved, "src"), "show", "cwd");
		assert.match(unwrapped(kept.stdout), /\(link acme\/moved\)/);
		assert.match(unwrapped(kept.stdout), /after/);
		assert.doesNotMatch(unwrapped(kept.stdout), /warning/);
		// Without the token (a link an older build made by path alone): not linked, and said loudly.
		rmSync(join(moved, ".git", "state-flow-repository"));
		const show = run(join(moved, "src"), "show", "cwd");
		assert.equal(show.code, 0, show.stderr);
		assert.match(
			unwrapped(show.stdout),
			/warning: the memory in .*renamed\/\.git\/state-flow was moved to project `acme\/moved`, but this checkout is not linked/,
		);
		assert.match(unwrapped(show.stdout), /run `state-flow link acme\/moved`/);
		const relinked = run(moved, "link", "acme/moved");
		assert.equal(relinked.code, 0, relinked.stderr);
		assert.equal(links()[moved], "acme/moved");
		const now = run(moved, "show", "cwd");
		assert.doesNotMatch(unwrapped(now.stdout), /warning: the memory/);
		assert.match(unwrapped(now.stdout), /after/);
		const un = run(moved, "unlink");
		assert.equal(un.code, 0, un.stderr);
		assert.doesNotMatch(unwrapped(run(moved, "show", "cwd").stdout), /warning: the memory/, "unlink keeps the files on purpose: no more warning");
	});

	it("`unlink` in a checkout that is not linked clears the `moved-to` marker its warning names, so the advice works", (t) => {
		const { base, dir, run } = setup(t);
		assert.equal(run(dir, "set", "cwd.tactics.before", "1").code, 0);
		assert.equal(run(dir, "migrate", "acme/moved").code, 0);
		const moved = join(base, "renamed");
		renameSync(dir, moved);
		rmSync(join(moved, ".git", "state-flow-repository"));
		assert.match(unwrapped(run(moved, "show", "cwd").stdout), /was moved to project `acme\/moved`.*or `state-flow unlink` to keep using these files/s);
		const un = run(moved, "unlink");
		assert.equal(un.code, 0, un.stderr);
		assert.match(
			unwrapped(un.stdout),
			/is not linked to a project; its link is unchanged\..* The note that its memory was moved to project `acme\/moved` is removed/,
		);
		const after = run(moved, "show", "cwd");
		assert.doesNotMatch(unwrapped(after.stdout), /was moved to project/);
		assert.match(unwrapped(after.stdout), /before/, "its own files are read, as the warning promised");
	});

	it("`link` without an id offers the repository's suggestion and links nothing; without one it names what to give", (t) => {
		const { dir, run, links } = setup(t);
		const none = run(join(dir, "src"), "link");
		assert.equal(none.code, 1);
		assert.match(unwrapped(none.stderr), /needs the project id .*suggests none in \.pi\/state-flow\.json/);
		mkdirSync(join(dir, ".pi"), { recursive: true });
		writeFileSync(join(dir, ".pi", "state-flow.json"), '{ "project": "acme/api" }\n');
		const offer = run(join(dir, "src"), "link");
		assert.equal(offer.code, 0, offer.stderr);
		assert.match(unwrapped(offer.stdout), /suggests project `acme\/api`.*\n.*run: `state-flow link acme\/api`/);
		assert.deepEqual(links(), {}, "an offer links nothing");
	});

	it("the command `link` offers for a suggested id is pasted as one word: a repository's `;` or `$(…)` never runs", (t) => {
		const { dir, run, links } = setup(t);
		const pwned = join(dir, "..", "pwned");
		mkdirSync(join(dir, ".pi"), { recursive: true });
		for (const id of [`acme/api; touch ${pwned} #`, "it's $(touch pwned) `x`"]) {
			writeFileSync(join(dir, ".pi", "state-flow.json"), `${JSON.stringify({ project: id })}\n`);
			const offer = run(join(dir, "src"), "link");
			assert.equal(offer.code, 0, offer.stderr);
			const command = /run: `state-flow (link .*)`$/m.exec(unwrapped(offer.stdout))?.[1];
			assert.ok(command !== undefined, offer.stdout);
			// What a shell makes of the printed command: exactly `link` and the id, nothing run.
			const words = execFileSync("sh", ["-c", `printf '%s\\n' ${command}`], { cwd: base(dir), encoding: "utf8" });
			assert.equal(words, `link\n${id}\n`);
			assert.equal(existsSync(pwned) || existsSync(join(base(dir), "pwned")), false);
		}
		assert.deepEqual(links(), {}, "an offer links nothing");
	});
});
