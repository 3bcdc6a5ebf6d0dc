/**
 * A link needs the user's yes for this repository on this machine (issue 33), through the real
 * pi SDK, real git, a real `tar` archive and a real PostgreSQL server: a downloaded copy whose
 * `.git/config` names the team's remote (here: an archive of the user's own linked checkout,
 * `.git/` and its consent file included) is not linked and its model never sees the team's
 * memory until the user says yes at a prompt; a yes links it before that prompt's head; a no is
 * asked once per session; a worktree and a moved checkout of a consented repository stay linked
 * without asking; a fresh clone asks once, naming the project; without a UI nothing is asked and
 * `/state` says so; a link made before this change keeps working.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { configPath, type StateFlowConfig } from "../../lib/storage/placement/config.js";
import { runCli } from "../cli/run.js";
import { git, repo } from "../helpers/git-repo.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { commitOn, type Machine, otherMachine, piOn, type T } from "./shared-fixture.js";

const server = serverForFile(testDatabase);

/** The team's repository, linked on this machine by `state-flow link` (its memory holds TEAM-PLAN), and helpers around it. */
async function team(t: T) {
	const { base, dir } = repo(t);
	git(dir, "remote", "add", "origin", "git@github.com:acme/api.git");
	const agentDir = join(base, "agent");
	mkdirSync(join(agentDir, "state-flow"), { recursive: true });
	const schema = server.schema();
	writeFileSync(configPath(agentDir), `${JSON.stringify({ database: server.url, databaseSchema: schema, user: "alice" })}\n`);
	await commitOn(otherMachine(t, server.url, schema, "acme/api"), { cwd: { intents: { plan: "TEAM-PLAN" } } });
	const cli = (cwd: string, ...args: string[]) => runCli([...args, "--agent-dir", agentDir], { cwd });
	const linked = cli(dir, "link", "acme/api");
	assert.equal(linked.code, 0, linked.stderr);
	const config = () => JSON.parse(readFileSync(configPath(agentDir), "utf8")) as StateFlowConfig;
	const at = (cwd: string): Machine => ({ agentDir, cwd });
	return { base, dir, agentDir, cli, config, at };
}

/** A downloaded archive of `dir` (`.git/` included, as a tarball ships it), unpacked under `base/downloads`. */
function download(base: string, dir: string): string {
	const archive = join(base, "api.tar");
	execFileSync("tar", ["-cf", archive, "-C", join(dir, ".."), "proj"]);
	const into = join(base, "downloads");
	mkdirSync(into);
	execFileSync("tar", ["-xf", archive, "-C", into]);
	return join(into, "proj");
}

const readCall = (id: string) => ({ calls: [{ id, name: "read_state", args: { path: "cwd.intents" } }] });

describe("a link through the repository needs the user's yes here", () => {
	it("a downloaded archive claiming the team's origin is asked once, shows only local memory on a no, and /state says it is linkable", async (t) => {
		const { base, dir, at, config } = await team(t);
		const copy = download(base, dir);
		const before = JSON.stringify(config());
		const pi = await piOn(t, at(copy), false);
		await pi.prompt("hi", [readCall("r1"), { text: "ok" }]);
		assert.equal(pi.asked.length, 1, "asked at the first prompt");
		assert.match(
			pi.asked[0] as string,
			/claims to be github\.com\/acme\/api, which you linked to project `acme\/api` on this machine\. Link this checkout to it too\?/,
		);
		assert.match(pi.asked[0] as string, /say yes only if you know where this checkout came from/);
		assert.doesNotMatch(JSON.stringify(pi.seen), /TEAM-PLAN/, "neither the head nor read_state shows the team's memory");
		assert.equal(JSON.stringify(config()), before, "a no writes nothing");
		await pi.prompt("again", [readCall("r2"), { text: "ok" }]);
		await pi.prompt("and again", [{ text: "ok" }]);
		assert.equal(pi.asked.length, 1, "a no is remembered for the session: never asked on every prompt");
		assert.doesNotMatch(JSON.stringify(pi.seen), /TEAM-PLAN/);
		await pi.command("/state");
		const status = pi.output("status");
		assert.match(status, /^linkable: acme\/api — \/state link to share$/m);
		assert.match(
			status.replace(/\n/g, " "),
			/you said no in this session: this checkout's repository \(github\.com\/acme\/api\) is linked to project `acme\/api`/,
		);
		assert.doesNotMatch(status, /project acme\/api$/m, "the CWD owner is local");
		for (const line of status.split("\n")) assert.ok(line.length <= 80, `fits 80 columns: ${line}`);
		// `/state link` without an id asks about exactly that project, and a yes links it.
		const yes = await piOn(t, at(copy), true);
		await yes.command("/state link");
		assert.match(yes.asked[0] as string, /claims to be github\.com\/acme\/api/);
		await yes.prompt("now", [{ text: "ok" }]);
		assert.match(yes.head(), /TEAM-PLAN/);
	});

	it("a yes at the prompt links before the head is built, and is recorded for the repository on this machine", async (t) => {
		const { base, dir, at, config } = await team(t);
		const copy = download(base, dir);
		const pi = await piOn(t, at(copy), true);
		await pi.prompt("hi", [{ text: "ok" }]);
		assert.equal(pi.asked.length, 1);
		assert.match(pi.head(), /TEAM-PLAN/, "the first prompt's head is the project's");
		assert.ok(pi.notes.some((n) => /linked this checkout to project `acme\/api`/.test(n)));
		const consents = Object.values(config().linkConsents ?? {});
		assert.deepEqual(
			consents.map((c) => [c.repo, c.project]),
			[
				["github.com/acme/api", "acme/api"],
				["github.com/acme/api", "acme/api"],
			],
			"the first checkout's yes and this one's",
		);
		await pi.prompt("next", [{ text: "ok" }]);
		assert.equal(pi.asked.length, 1, "nothing more to ask");
	});

	it("a moved checkout and a worktree of a consented repository stay linked without asking; a fresh clone asks once, naming the project", async (t) => {
		const { base, dir, at } = await team(t);
		// Moved: the path link no longer applies; the repository's yes (its common dir) does.
		const moved = join(base, "moved");
		renameSync(dir, moved);
		const inMoved = await piOn(t, at(join(moved, "src")), false);
		await inMoved.prompt("hi", [{ text: "ok" }]);
		assert.equal(inMoved.asked.length, 0, "a move keeps the repository's yes");
		assert.match(inMoved.head(), /TEAM-PLAN/);
		const wt = join(base, "wt");
		git(moved, "worktree", "add", "-q", "-b", "feat", wt);
		const inWt = await piOn(t, at(wt), false);
		await inWt.prompt("hi", [{ text: "ok" }]);
		assert.equal(inWt.asked.length, 0, "a worktree shares the repository's yes");
		assert.match(inWt.head(), /TEAM-PLAN/);
		const clone = join(base, "clone");
		git(base, "clone", "-q", moved, clone);
		git(clone, "remote", "set-url", "origin", "https://github.com/acme/api.git");
		const inClone = await piOn(t, at(clone), false);
		await inClone.prompt("hi", [{ text: "ok" }]);
		await inClone.prompt("again", [{ text: "ok" }]);
		assert.equal(inClone.asked.length, 1, "a fresh clone asks once");
		assert.match(inClone.asked[0] as string, /claims to be github\.com\/acme\/api, which you linked to project `acme\/api`/);
		assert.doesNotMatch(JSON.stringify(inClone.seen), /TEAM-PLAN/);
	});

	it("without an interactive UI nothing is asked: the checkout stays local and /state and the session start say so", async (t) => {
		const { base, dir, at } = await team(t);
		const copy = download(base, dir);
		const pi = await piOn(t, at(copy));
		assert.ok(
			pi.notes.some((n) =>
				/not linked: this checkout's repository .* Nothing can be asked here \(no interactive UI\); to share it, run: state-flow link acme\/api --cwd /.test(n),
			),
			pi.notes.join("\n"),
		);
		await pi.prompt("hi", [readCall("r1"), { text: "ok" }]);
		assert.equal(pi.asked.length, 0);
		assert.doesNotMatch(JSON.stringify(pi.seen), /TEAM-PLAN/);
		await pi.command("/state");
		assert.match(
			pi.output("status").replace(/\n/g, " "),
			/linkable: acme\/api — not asked here \(no interactive UI\); state-flow link acme\/api here shares it/,
		);
	});

	it("a link made before this change keeps working at its path and in its worktrees; moved, it asks once", async (t) => {
		const { base, dir, at, agentDir, config } = await team(t);
		// The config as an older build wrote it: the path and the repository, no yes per repository.
		const { linkConsents: _, ...older } = config();
		writeFileSync(configPath(agentDir), `${JSON.stringify(older)}\n`);
		const pi = await piOn(t, at(join(dir, "src")), false);
		await pi.prompt("hi", [{ text: "ok" }]);
		assert.equal(pi.asked.length, 0);
		assert.match(pi.head(), /TEAM-PLAN/);
		const wt = join(base, "wt");
		git(dir, "worktree", "add", "-q", "-b", "feat", wt);
		const inWt = await piOn(t, at(wt), false);
		await inWt.prompt("hi", [{ text: "ok" }]);
		assert.equal(inWt.asked.length, 0, "the worktree follows the project root's path link");
		assert.match(inWt.head(), /TEAM-PLAN/);
		// Nothing was migrated to a yes for the repository: moved, it claims the link and asks once.
		const moved = join(base, "moved");
		renameSync(dir, moved);
		const inMoved = await piOn(t, at(moved), true);
		await inMoved.prompt("hi", [{ text: "ok" }]);
		assert.equal(inMoved.asked.length, 1);
		assert.match(inMoved.head(), /TEAM-PLAN/);
	});
});
