/**
 * Real git repositories for tests: a `git` runner with a fixed identity and no system or user
 * config, and a repository with one commit and a `src/` subfolder in a fresh temp folder.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempDir } from "./temp-dir.js";

const ENV = {
	...process.env,
	GIT_AUTHOR_NAME: "t",
	GIT_AUTHOR_EMAIL: "t@x",
	GIT_COMMITTER_NAME: "t",
	GIT_COMMITTER_EMAIL: "t@x",
	GIT_CONFIG_NOSYSTEM: "1",
	HOME: tmpdir(),
};

export function git(dir: string, ...args: string[]): string {
	return execFileSync("git", args, { cwd: dir, env: ENV, encoding: "utf8" }).trim();
}

/** A repository with one commit and a `src/` subfolder, in a fresh real temp folder. */
export function repo(t: { after(fn: () => void): void }): { base: string; dir: string } {
	const base = realpathSync(tempDir(t, "state-flow-project-"));
	const dir = join(base, "proj");
	mkdirSync(join(dir, "src"), { recursive: true });
	git(dir, "init", "-q", "-b", "main");
	writeFileSync(join(dir, "src", "a.txt"), "a\n");
	git(dir, "add", ".");
	git(dir, "commit", "-q", "-m", "first");
	return { base, dir };
}
