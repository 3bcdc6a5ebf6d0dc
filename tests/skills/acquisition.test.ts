/**
 * The acquisition hint on a `read` of a SKILL.md: the exact patch for the owner whose
 * territory holds it (flat or scoped), nothing for excluded owners, other files or Skills
 * already tracked, and the suggested patch really acquires the Skill.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { JsonObject, Owner } from "../../lib/core/types.js";
import { keyLens } from "../../lib/core/artifact-keys.js";
import { acquisitionHint } from "../../lib/host/skills/acquisition.js";
import { toCanonicalPatch } from "../../lib/model/interface.js";
import { setup as setupArtifacts } from "./artifact-fixture.js";

const SKILL = "---\nname: deploy\ndescription: Deploy the app.\n---\nSteps.\n";

function setup(t: { after(fn: () => void): void }) {
	const s = setupArtifacts(t);
	for (const d of [join(s.cwd, "vendor/deploy"), join(s.agentDir, "skills/deploy")]) mkdirSync(d, { recursive: true });
	writeFileSync(join(s.cwd, "vendor/deploy/SKILL.md"), SKILL);
	writeFileSync(join(s.agentDir, "skills/deploy/SKILL.md"), SKILL);
	writeFileSync(join(s.cwd, "README.md"), "hi");
	const hint = (path: string, wanted: Owner[]) => acquisitionHint(path, { ...s.roots, wanted, histories: s.histories });
	return { ...s, hint };
}

/** The JSON argument the hint tells the model to send. */
function suggested(hint: string | undefined): JsonObject {
	const m = /call patch_state with (\{.*\}) \(artifacts/.exec(hint ?? "");
	assert.ok(m, `no patch in hint: ${hint}`);
	return JSON.parse(m[1] as string) as JsonObject;
}

describe("acquisition hint", () => {
	it("gives one line with the flat patch for a project Skill read by relative path", (t) => {
		const s = setup(t);
		const hint = s.hint("vendor/deploy/SKILL.md", ["cwd"]);
		assert.equal(hint?.includes("\n"), false);
		assert.match(hint ?? "", /artifacts\["vendor\/deploy\/SKILL.md"\]/);
		assert.deepEqual(suggested(hint), { artifacts: { "vendor/deploy/SKILL.md": { kind: "skill" } } });
	});

	it("from a subfolder, names the Skill relative to that folder, the way the model reads and writes keys", (t) => {
		const s = setup(t);
		mkdirSync(join(s.cwd, "app"));
		const hint = acquisitionHint("../vendor/deploy/SKILL.md", {
			...s.roots,
			from: join(s.cwd, "app"),
			lens: keyLens("app"),
			wanted: ["cwd"],
			histories: s.histories,
		});
		assert.deepEqual(suggested(hint), { artifacts: { "../vendor/deploy/SKILL.md": { kind: "skill" } } });
		assert.match(hint ?? "", /relative to the folder pi runs in\)\.$/);
		assert.equal(keyLens("app").fromModel("../vendor/deploy/SKILL.md", "f"), "vendor/deploy/SKILL.md", "the patch names the file read");
	});

	it("gives the scoped patch, relative to the agent directory, for a Global Skill read by absolute path", (t) => {
		const s = setup(t);
		const hint = s.hint(join(s.agentDir, "skills/deploy/SKILL.md"), ["global", "cwd", "session"]);
		assert.deepEqual(suggested(hint), { global: { artifacts: { "skills/deploy/SKILL.md": { kind: "skill" } } } });
	});

	it("hints for a Skill inside a folder whose name starts with two dots", (t) => {
		const s = setup(t);
		mkdirSync(join(s.cwd, "..vendor/deploy"), { recursive: true });
		writeFileSync(join(s.cwd, "..vendor/deploy/SKILL.md"), SKILL);
		assert.deepEqual(suggested(s.hint("..vendor/deploy/SKILL.md", ["cwd"])), { artifacts: { "..vendor/deploy/SKILL.md": { kind: "skill" } } });
	});

	it("accepts pi's `@` prefix on read paths", (t) => {
		const s = setup(t);
		assert.deepEqual(suggested(s.hint("@vendor/deploy/SKILL.md", ["cwd", "session"])), {
			cwd: { artifacts: { "vendor/deploy/SKILL.md": { kind: "skill" } } },
		});
	});

	it("says nothing for an excluded owner's territory, other files or paths outside every root", (t) => {
		const s = setup(t);
		assert.equal(s.hint(join(s.agentDir, "skills/deploy/SKILL.md"), ["cwd", "session"]), undefined);
		assert.equal(s.hint("vendor/deploy/SKILL.md", ["global"]), undefined);
		assert.equal(s.hint("vendor/deploy/SKILL.md", ["session"]), undefined);
		assert.equal(s.hint("README.md", ["cwd"]), undefined);
		assert.equal(s.hint("../elsewhere/SKILL.md", ["cwd", "global"]), undefined);
	});

	it("the suggested patch acquires the Skill, after which neither the source nor the copy gets a hint", (t) => {
		const s = setup(t);
		const input = suggested(s.hint("vendor/deploy/SKILL.md", ["cwd"]));
		s.commit(toCanonicalPatch(input, ["cwd"]));
		const entry = s.histories.cwd.state.artifacts["vendor/deploy/SKILL.md"] as JsonObject;
		assert.equal(entry.compiledTo, ".pi/skills/deploy/SKILL.md");
		assert.equal(s.hint("vendor/deploy/SKILL.md", ["cwd"]), undefined);
		assert.equal(s.hint(".pi/skills/deploy/SKILL.md", ["cwd"]), undefined);
	});

	it("says nothing when another wanted owner (a Session draft) already tracks the file", (t) => {
		const s = setup(t);
		s.commit({ session: { artifacts: { "vendor/deploy/SKILL.md": { kind: "skill" } } } });
		assert.equal(s.hint("vendor/deploy/SKILL.md", ["cwd", "session"]), undefined);
		assert.notEqual(s.hint("vendor/deploy/SKILL.md", ["cwd"]), undefined, "Session is not wanted here");
	});
});
