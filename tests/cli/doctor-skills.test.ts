/**
 * `state-flow doctor` and compiled Skills that no artifact records: a Skill file carrying State
 * Flow's marker line whose artifact the owner's state lacks (a crash between writing the file and
 * committing) is listed with the way out and left in place; the user's own Skills are not listed,
 * and the line goes once the artifact adopts the file. A project's `.agents/skills/` at the
 * checkout root is looked into as well, from any subfolder.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { parseArgs } from "../../lib/cli/verbs.js";
import { runDoctor } from "../../lib/cli/doctor/index.js";
import { createArtifactCompiler } from "../../lib/storage/artifacts/compiler.js";
import { renderSkill } from "../../lib/storage/artifacts/skill-format.js";
import { repo } from "../helpers/git-repo.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { unwrapped } from "./run.js";

const KEY = ".pi/skills/deploy/SKILL.md";

/**
 * In `folder`'s Skill folder `place`: a compiled Skill named `name` no artifact records, the user's
 * own Skill `mine`, and `evil`, a Skill folder that is a link to `outside/` under `base` (a cloned
 * repository may hold one; it is never followed).
 */
function plantSkills(folder: string, base: string, place: string, name: string, description: string): void {
	const put = (rel: string, text: string) => {
		mkdirSync(dirname(join(folder, rel)), { recursive: true });
		writeFileSync(join(folder, rel), text);
	};
	put(`${place}/${name}/SKILL.md`, renderSkill("cwd", `${place}/${name}/SKILL.md`, name, description, "Steps."));
	put(`${place}/mine/SKILL.md`, "---\nname: mine\ndescription: My own Skill.\n---\nMine.\n");
	const outside = join(base, "outside");
	mkdirSync(outside);
	writeFileSync(join(outside, "SKILL.md"), renderSkill("cwd", `${place}/evil/SKILL.md`, "evil", "Elsewhere.", "Steps."));
	symlinkSync(outside, join(folder, `${place}/evil`));
}

describe("state-flow doctor and compiled Skills no artifact records", () => {
	it("lists one State Flow wrote, leaves it, ignores the user's own, and is quiet once the artifact adopts it", async (t) => {
		const { base: root, cwd, agentDir } = projectDirs(t, "state-flow-doctor-skills-");
		// What a writer that died after writing the compiled file, before its commit, leaves behind.
		plantSkills(cwd, root, ".pi/skills", "deploy", "Deploy the app.");
		const stores = openStoresAt({ agentDir, cwd });
		await stores.commit({ cwd: { tactics: { t: 1 } } }, { by: { kind: "system", reason: "test" }, id: "one", at: "2026-12-01T00:00:00.000Z" });
		const doctor = () => runDoctor(parseArgs(["doctor", "--agent-dir", agentDir, "--cwd", cwd]));
		const first = await doctor();
		assert.equal(first.code, 0, first.stdout);
		assert.match(
			unwrapped(first.stdout),
			/^cwd: .*\/project\/\.pi\/skills\/deploy\/SKILL\.md was compiled by State Flow from cwd\.artifacts\["\.pi\/skills\/deploy\/SKILL\.md"\], which the state does not record .*Patch that artifact again to adopt the file, or delete the file; doctor leaves it\.$/m,
		);
		assert.doesNotMatch(unwrapped(first.stdout), /skills\/mine/, "the user's own Skill is not State Flow's");
		assert.doesNotMatch(unwrapped(first.stdout), /skills\/evil/, "a linked Skill folder is not read");
		assert.ok(existsSync(join(cwd, KEY)), "doctor leaves the file");
		// The same patch again adopts the byte-identical file: nothing is left unrecorded.
		const compile = createArtifactCompiler({ cwd, agentDir }, { parseFrontmatter });
		await stores.commit(
			{ cwd: { artifacts: { [KEY]: { kind: "skill", name: "deploy", description: "Deploy the app.", body: "Steps." } } } },
			{ by: { kind: "system", reason: "test" }, id: "two", at: "2026-12-01T00:00:01.000Z", prepare: (p, h) => compile(p, h) },
		);
		const again = await doctor();
		assert.equal(again.code, 0, again.stdout);
		assert.doesNotMatch(unwrapped(again.stdout), /does not record/);
	});

	it("looks into the checkout root's .agents/skills too, from a subfolder, never through a link out of it", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const key = ".agents/skills/notes/SKILL.md";
		plantSkills(dir, base, ".agents/skills", "notes", "Take notes.");
		const sub = join(dir, "src");
		await openStoresAt({ agentDir, cwd: sub }).commit(
			{ cwd: { tactics: { t: 1 } } },
			{ by: { kind: "system", reason: "test" }, id: "one", at: "2026-12-01T00:00:00.000Z" },
		);
		const r = await runDoctor(parseArgs(["doctor", "--agent-dir", agentDir, "--cwd", sub]));
		assert.equal(r.code, 0, r.stdout);
		const lines = r.stdout.split("\n").filter((l) => l.includes("does not record"));
		assert.equal(lines.length, 1, r.stdout);
		assert.match(
			lines[0] ?? "",
			/^cwd: \S*\/proj\/\.agents\/skills\/notes\/SKILL\.md was compiled by State Flow from cwd\.artifacts\["\.agents\/skills\/notes\/SKILL\.md"\]/,
		);
		assert.ok(existsSync(join(dir, key)), "doctor leaves the file");
	});
});
