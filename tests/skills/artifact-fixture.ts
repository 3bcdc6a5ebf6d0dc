/**
 * Shared fixture for the artifact compiler tests: a project and an agent folder in a temp
 * folder, empty histories, and `commit`, which does what `Stores.commit` does with the
 * compiler (prepare, apply the file effects, apply the rewritten patch).
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { isStateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import { applyPatch } from "../../lib/core/merge.js";
import type { CanonicalPatch, JsonObject, Owner, OwnerHistory } from "../../lib/core/types.js";
import { createArtifactCompiler } from "../../lib/storage/artifacts/compiler.js";
import { tempDir } from "../helpers/temp-dir.js";

/** Temp roots, histories and a commit function for one test. */
export function setup(t: { after(fn: () => void): void }) {
	const base = tempDir(t, "state-flow-artifacts-");
	const cwd = join(base, "proj");
	const agentDir = join(base, "agent");
	mkdirSync(cwd);
	mkdirSync(agentDir);
	const roots = { cwd, agentDir };
	const histories: Record<Owner, OwnerHistory> = {
		global: newHistory("global", 20),
		cwd: newHistory("cwd", 20),
		session: newHistory("session", 20),
	};
	const compile = createArtifactCompiler(roots, { parseFrontmatter });
	/** What Stores.commit does with `prepare`: compile, stage, apply the effects, apply the patch. */
	const commit = (patch: CanonicalPatch) => {
		const effects = compile(patch, histories);
		effects.apply();
		for (const [owner, planes] of Object.entries(effects.patch)) applyPatch(histories[owner as Owner].state, planes);
		return effects;
	};
	const art = (owner: Owner, key: string) => histories[owner].state.artifacts[key] as JsonObject | undefined;
	return { base, cwd, agentDir, roots, histories, compile, commit, art };
}

/** Every file under `dir` with its bytes, to prove nothing was written. */
export function tree(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (d: string) => {
		for (const e of readdirSync(d, { withFileTypes: true })) {
			const p = join(d, e.name);
			if (e.isDirectory()) {
				out[`${p}/`] = "";
				walk(p);
			} else out[p] = readFileSync(p, "utf8");
		}
	};
	walk(dir);
	return out;
}

export function refused(fn: () => unknown, pattern: RegExp): void {
	assert.throws(fn, (e: unknown) => isStateError(e) && e.code === "artifact" && pattern.test(e.message));
}

export const skill = (name: string, description = "Formats release notes. Use when writing a changelog.") => ({
	kind: "skill",
	name,
	description,
	body: "# Release notes\n\nGroup changes by type.",
});
