/**
 * Project Skills from anywhere in the repository (issue 25), through the real pi SDK with its
 * own Skill discovery on: pi reads `.pi/skills/` only in the folder it starts in, so a session
 * in a subfolder (of the main checkout or of a worktree) gets the checkout root's compiled
 * Skills handed over, each listed exactly once; `.agents/skills/` ones pi finds itself. A Skill
 * compiled from a subfolder lands at the root and is listed for later sessions in other
 * subfolders. Nothing outside CWD's Skill folder is ever handed over.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { missedByPi } from "../../lib/host/skills/sync.js";
import { git, repo } from "../helpers/git-repo.js";
import { KEY, type Machine, commitOn, count, deployNotes, open, releaseNotes, wrote } from "./materialise-fixture.js";

const AGENTS_KEY = ".agents/skills/deploy-notes/SKILL.md";

/** A real git repository (with `src/`) and an agent folder whose State Flow config loads CWD. */
function project(t: { after(fn: () => void): void }) {
	const { base, dir } = repo(t);
	const agentDir = join(base, "agent");
	mkdirSync(join(agentDir, "state-flow"), { recursive: true });
	writeFileSync(join(agentDir, "state-flow", "config.json"), JSON.stringify({ owners: ["cwd"] }));
	const at = (cwd: string): Machine => ({ cwd, agentDir });
	return { base, dir, agentDir, at };
}

/** One prompt in a new session at `m`; what that session's pi loaded, the user was told and the model saw. */
async function promptOnce(m: Machine) {
	const s = await open(m);
	try {
		const seen = await s.prompt();
		return { skills: s.skills(), notes: s.notes, systemPrompt: seen.systemPrompt };
	} finally {
		s.dispose();
	}
}

describe("compiled project Skills from a subfolder of the repository", () => {
	it("the root's compiled Skills are in the Skill list exactly once from a subfolder: .pi/skills handed over, .agents/skills pi's own", async (t) => {
		const p = project(t);
		await commitOn(p.at(p.dir), { [KEY]: releaseNotes, [AGENTS_KEY]: deployNotes });
		const file = join(p.dir, KEY);
		const agentsFile = join(p.dir, AGENTS_KEY);
		assert.ok(existsSync(file) && existsSync(agentsFile), "compiled at the root by the root's session");
		const seen = await promptOnce(p.at(join(p.dir, "src")));
		assert.deepEqual(
			seen.skills.sort(),
			[
				["deploy-notes", agentsFile],
				["release-notes", file],
			],
			"pi holds both, each once",
		);
		assert.equal(count(seen.systemPrompt, "<available_skills>"), 1, "one Skill list, pi's");
		assert.equal(count(seen.systemPrompt, "<name>release-notes</name>"), 1);
		assert.equal(count(seen.systemPrompt, `<location>${file}</location>`), 1);
		assert.equal(count(seen.systemPrompt, "<name>deploy-notes</name>"), 1);
		assert.equal(count(seen.systemPrompt, `<location>${agentsFile}</location>`), 1);
		assert.deepEqual(wrote(seen.notes), [], "present, not written");
		assert.equal(existsSync(join(p.dir, "src", ".pi")), false, "nothing under the subfolder");
	});

	it("a Skill compiled from a subfolder lands at the root's .pi/skills and is listed there, then for a session in another subfolder", async (t) => {
		const p = project(t);
		const s = await open(p.at(join(p.dir, "src")));
		try {
			// From `src/` the root's Skill folder is `../.pi/skills/` (keys are relative to the folder pi runs in).
			const during = await s.prompt([{ artifacts: { [`../${KEY}`]: releaseNotes } }]);
			assert.equal(count(during.systemPrompt, "<name>release-notes</name>"), 0, "the run that compiles it keeps its system prompt");
			assert.ok(existsSync(join(p.dir, KEY)), "compiled at the checkout's root");
			assert.equal(existsSync(join(p.dir, "src", ".pi")), false, "never under the subfolder pi runs in");
			const next = await s.prompt();
			assert.equal(count(next.systemPrompt, "<name>release-notes</name>"), 1, "listed from the next prompt");
			assert.equal(count(next.systemPrompt, `<location>${join(p.dir, KEY)}</location>`), 1);
		} finally {
			s.dispose();
		}
		mkdirSync(join(p.dir, "docs"));
		const later = await promptOnce(p.at(join(p.dir, "docs")));
		assert.deepEqual(later.skills, [["release-notes", join(p.dir, KEY)]], "pi loads it for a session in another subfolder");
		assert.equal(count(later.systemPrompt, "<name>release-notes</name>"), 1);
		const atRoot = await promptOnce(p.at(p.dir));
		assert.deepEqual(atRoot.skills, [["release-notes", join(p.dir, KEY)]], "and at the root, by pi's own discovery");
		assert.equal(count(atRoot.systemPrompt, "<name>release-notes</name>"), 1);
	});

	it("in a worktree's subfolder: written at the worktree's root the first time, handed over once present", async (t) => {
		const p = project(t);
		await commitOn(p.at(p.dir), { [KEY]: releaseNotes });
		const wt = join(p.base, "wt2");
		git(p.dir, "worktree", "add", "-q", "-b", "feat", wt);
		const file = join(wt, KEY);
		const first = await promptOnce(p.at(join(wt, "src")));
		assert.deepEqual(wrote(first.notes), [`State Flow: wrote the compiled Skill ${file} (CWD state names it; it was missing here).`]);
		assert.deepEqual(first.skills, [["release-notes", file]]);
		assert.equal(count(first.systemPrompt, "<name>release-notes</name>"), 1);
		const second = await promptOnce(p.at(join(wt, "src")));
		assert.deepEqual(wrote(second.notes), [], "present now");
		assert.deepEqual(second.skills, [["release-notes", file]], "handed over: pi does not read the worktree root's .pi/skills from src/");
		assert.equal(count(second.systemPrompt, "<name>release-notes</name>"), 1);
		assert.equal(count(second.systemPrompt, `<location>${file}</location>`), 1);
	});
});

describe("missedByPi", () => {
	it("only a file in the checkout root's .pi/skills, seen from elsewhere, and never through a link out of the checkout", (t) => {
		const p = project(t);
		const roots = { cwd: p.dir, agentDir: p.agentDir };
		const src = join(p.dir, "src");
		const inRoot = join(p.dir, KEY);
		assert.equal(missedByPi(inRoot, src, roots), true, "pi in src/ does not read the root's .pi/skills");
		assert.equal(missedByPi(inRoot, p.dir, roots), false, "pi at the root finds it itself");
		assert.equal(missedByPi(join(p.dir, AGENTS_KEY), src, roots), false, "pi finds .agents/skills up to the git root itself");
		assert.equal(missedByPi(join(p.agentDir, "skills/release-notes/SKILL.md"), src, roots), false, "Global's Skills are pi's own");
		assert.equal(missedByPi(join(p.base, "elsewhere/.pi/skills/x/SKILL.md"), src, roots), false, "outside the checkout");
		// src/.pi/skills linked to the root's: pi reads the root's Skills from src/ through it.
		mkdirSync(join(p.dir, ".pi/skills"), { recursive: true });
		mkdirSync(join(src, ".pi"));
		symlinkSync(join(p.dir, ".pi/skills"), join(src, ".pi/skills"));
		assert.equal(missedByPi(inRoot, src, roots), false, "found through the cwd's own .pi/skills");
		// The root's Skill folder linked out of the checkout: what lies there is not CWD's to hand over.
		const other = join(p.base, "other");
		mkdirSync(join(other, ".pi/skills/evil"), { recursive: true });
		writeFileSync(join(other, ".pi/skills/evil/SKILL.md"), "---\nname: evil\ndescription: d\n---\n");
		symlinkSync(join(other, ".pi/skills/evil"), join(p.dir, ".pi/skills/evil"));
		assert.equal(missedByPi(join(p.dir, ".pi/skills/evil/SKILL.md"), join(p.dir, "docs"), roots), false, "a link out of the checkout");
	});
});
