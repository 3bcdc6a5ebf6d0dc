/**
 * Temporary folders for tests that touch real files. Each test gets its own folder,
 * removed afterwards (also on failure) through `t.after`/`after` hooks by the caller.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Make a fresh temp folder with a recognisable prefix. */
export function makeTempDir(prefix = "state-flow-"): string {
	return mkdtempSync(join(tmpdir(), prefix));
}

/** Remove a folder made by `makeTempDir`, ignoring a missing one. */
export function removeTempDir(dir: string): void {
	rmSync(dir, { recursive: true, force: true });
}

/** Make a temp folder and register its removal with a node:test context. */
export function tempDir(t: { after(fn: () => void): void }, prefix?: string): string {
	const dir = makeTempDir(prefix);
	t.after(() => removeTempDir(dir));
	return dir;
}

/** A project folder and an agent directory (pi always has one), both made, in one temp folder removed afterwards. */
export function projectDirs(t: { after(fn: () => void): void }, prefix?: string): { base: string; cwd: string; agentDir: string } {
	const base = tempDir(t, prefix);
	const dirs = { base, cwd: join(base, "project"), agentDir: join(base, "agent") };
	mkdirSync(dirs.cwd);
	mkdirSync(dirs.agentDir);
	return dirs;
}
