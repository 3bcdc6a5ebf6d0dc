/**
 * `/state link` in a checkout of a repository without `origin`, through the real SDK and a real
 * PostgreSQL server: on the user's yes it writes the repository's token into the git common dir
 * and records it (and the root's path) in the user's config, so a worktree of it is linked too.
 */
import assert from "node:assert/strict";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { configPath, readConfig } from "../../lib/storage/placement/config.js";
import { git } from "../helpers/git-repo.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { machine, piOn } from "./shared-fixture.js";

const server = serverForFile(testDatabase);

describe("/state link without `origin`", () => {
	it("on yes writes the token and records it with the root's path; a worktree follows; a no writes nothing", async (t) => {
		const a = machine(t, { database: server.url, databaseSchema: server.schema(), user: "alice" });
		git(a.cwd, "init", "-q", "-b", "main");
		git(a.cwd, "commit", "-q", "--allow-empty", "-m", "first");
		const root = realpathSync(a.cwd);
		const tokenFile = join(root, ".git", "state-flow-repository");

		const no = await piOn(t, a, false);
		await no.command("/state link acme/local");
		assert.throws(() => readFileSync(tokenFile), /ENOENT/, "no consent, no token");
		assert.equal(readConfig(a.agentDir).config.repoLinks, undefined);

		const pi = await piOn(t, a, true);
		const said = await pi.command("/state link acme/local");
		assert.match(said.join("\n"), /linked this checkout to project `acme\/local`.*no `origin` remote: State Flow gave it an identity/);
		const token = readFileSync(tokenFile, "utf8").trim();
		const written = JSON.parse(readFileSync(configPath(a.agentDir), "utf8")) as { repoLinks?: Record<string, string> };
		assert.deepEqual(written.repoLinks, { [token]: "acme/local", [root]: "acme/local" });

		const wt = join(root, "..", "wt");
		git(root, "worktree", "add", "-q", "-b", "feat", wt);
		const config = readConfig(a.agentDir).config;
		assert.equal(placementFor({ ...config, links: {} }, wt).project, "acme/local", "the worktree is linked by the token alone");
	});
});
