/**
 * Artifacts follow the project, through the real pi SDK (issue 25): keys are stored relative to
 * the checkout's root and shown to a session in a subfolder relative to that folder, so every key
 * the model sees or writes is a path pi's tools take as it is; a Skill compiles at the checkout's
 * root when the model names it there; a path outside the checkout (another worktree's files
 * included) is refused: the territory is the checkout, never the folder above it.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DefaultResourceLoader } from "@mariozechner/pi-coding-agent";
import { artifactRootsFor } from "../../lib/storage/artifacts/files.js";
import { staleArtifacts } from "../../lib/storage/artifacts/stale.js";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { projectOf } from "../../lib/storage/project/project.js";
import { git, repo } from "../helpers/git-repo.js";
import { startFlow, userTexts } from "./fixture.js";

/** A repository with a second worktree `wt2` on branch `feat` whose `src/a.txt` holds `a`, and an agent folder beside them. */
function worktreeOf(t: Parameters<typeof repo>[0], a: string): { dir: string; wt: string; agentDir: string } {
	const { base, dir } = repo(t);
	const wt = join(base, "wt2");
	git(dir, "worktree", "add", "-q", "-b", "feat", wt);
	writeFileSync(join(wt, "src", "a.txt"), a);
	const agentDir = join(base, "agent");
	mkdirSync(agentDir);
	return { dir, wt, agentDir };
}

describe("artifacts in a subfolder of a worktree", () => {
	it("keys are written relative to the subfolder, stored relative to the checkout's root; Skills compile there; the main worktree's files are outside", async (t) => {
		const { dir, wt, agentDir } = worktreeOf(t, "changed in wt2\n");
		const flow = await startFlow({ cwd: join(wt, "src"), agentDir, flags: { "state-owners": "cwd" } });
		t.after(() => flow.dispose());
		const skill = { kind: "skill", name: "notes", description: "Writes notes. Use when asked for notes.", body: "# Notes" };
		await flow.prompt("track", [
			{ calls: [{ id: "f", name: "patch_state", args: { artifacts: { "a.txt": { kind: "file" }, "../.pi/skills/notes/SKILL.md": skill } } }] },
			{ calls: [{ id: "out", name: "patch_state", args: { artifacts: { [join(dir, "src", "a.txt")]: { kind: "file" } } } }] },
			{ calls: [{ id: "here", name: "patch_state", args: { artifacts: { ".pi/skills/notes2/SKILL.md": { ...skill, name: "notes2" } } } }] },
			{ calls: [{ id: "up", name: "patch_state", args: { artifacts: { "../../proj/src/a.txt": { kind: "file" } } } }] },
			{ text: "ok" },
		]);
		const results = flow.results();
		assert.ok(!results.f?.isError, results.f?.text);
		assert.ok(existsSync(join(wt, ".pi", "skills", "notes", "SKILL.md")), "the Skill is compiled at the checkout's root");
		assert.ok(!existsSync(join(wt, "src", ".pi", "skills")), "never under the subfolder pi runs in");
		assert.ok(!existsSync(join(dir, ".pi", "skills")), "never into another worktree");
		assert.equal(results.out?.isError, true);
		assert.match(results.out?.text ?? "", /is outside the checkout's root \(\S*wt2\)/);
		assert.equal(results.here?.isError, true, "a Skill never compiles under the subfolder");
		assert.match(
			results.here?.text ?? "",
			/use artifacts\["\.\.\/\.pi\/skills\/notes2\/SKILL\.md"\] or artifacts\["\.\.\/\.agents\/skills\/notes2\/SKILL\.md"\]/,
		);
		assert.match(results.here?.text ?? "", /`cwd\.artifacts\["\.pi\/skills\/notes2\/SKILL\.md"\]`/, "named as the model wrote it");
		assert.equal(results.up?.isError, true);
		assert.match(results.up?.text ?? "", /artifacts\["\.\.\/\.\.\/proj\/src\/a\.txt"\]` leaves the repository/);
		const stored = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		const a = stored.state.artifacts["src/a.txt"] as { sourceHash?: string; fingerprint?: { size?: number } };
		assert.equal(a.fingerprint?.size, "changed in wt2\n".length, "the key names wt2/src/a.txt, not wt2/src/src/a.txt");
		assert.deepEqual(Object.keys(stored.state.artifacts).sort(), [".pi/skills/notes/SKILL.md", "src/a.txt"], "stored relative to the checkout's root");
	});

	it("a project Skill in .agents/skills compiles at the checkout's root, where pi finds it from the subfolder", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const sub = join(dir, "src");
		const flow = await startFlow({ cwd: sub, agentDir, flags: { "state-owners": "cwd" } });
		t.after(() => flow.dispose());
		const skill = { kind: "skill", name: "deploy", description: "Deploys. Use when asked to deploy.", body: "# Deploy" };
		await flow.prompt("skill", [
			{ calls: [{ id: "s", name: "patch_state", args: { artifacts: { "../.agents/skills/deploy/SKILL.md": skill } } }] },
			{ text: "ok" },
		]);
		assert.ok(!flow.results().s?.isError, flow.results().s?.text);
		assert.ok(existsSync(join(dir, ".agents", "skills", "deploy", "SKILL.md")));
		const stored = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual(staleArtifacts("cwd", stored.state, artifactRootsFor(sub, agentDir)), [], "its compiled copy is State Flow's own");
		const loader = new DefaultResourceLoader({ cwd: sub, agentDir });
		await loader.reload();
		const found = loader.getSkills().skills.filter((k) => k.name === "deploy");
		assert.deepEqual(
			found.map((k) => k.filePath),
			[join(dir, ".agents", "skills", "deploy", "SKILL.md")],
			"pi started in the subfolder discovers it (the user's own Skills aside)",
		);
	});
});

describe("a file artifact seen from another worktree", () => {
	it("says it differs in this worktree, not that it changed; in the worktree it was recorded in, a change is a change", async (t) => {
		const { dir, wt, agentDir } = worktreeOf(t, "another branch's a\n");
		const read = (id: string) => ({ calls: [{ id, name: "read_state", args: { path: "cwd.tactics" } }] });
		const hint = (flow: Awaited<ReturnType<typeof startFlow>>, id: string) =>
			(flow.results()[id]?.text ?? "").split("\n").filter((l) => l.startsWith("Source changed: "));
		const main = await startFlow({ cwd: dir, agentDir, flags: { "state-owners": "cwd" }, idPrefix: "m" });
		t.after(() => main.dispose());
		await main.prompt("track", [
			{ calls: [{ id: "rec", name: "patch_state", args: { artifacts: { "src/a.txt": { kind: "file" } } } }] },
			read("m0"),
			{ text: "ok" },
		]);
		assert.ok(!main.results().rec?.isError, main.results().rec?.text);
		assert.deepEqual(hint(main, "m0"), []);
		// The worktree shares the project's store: its own a.txt is another file, not a change.
		const other = await startFlow({ cwd: wt, agentDir, flags: { "state-owners": "cwd" }, idPrefix: "w" });
		t.after(() => other.dispose());
		await other.prompt("look", [read("w1"), { text: "ok" }]);
		const request = other.seen.at(-2);
		assert.ok(request, "the worktree's first request");
		const head = userTexts(request).find((x) => x.includes("<state_flow_head>")) ?? "";
		assert.match(head, /stale artifact: artifacts\["src\/a\.txt"\]: file differs in this worktree \(size 2 → 19\)/);
		assert.doesNotMatch(head, /changed since it was recorded/);
		assert.deepEqual(hint(other, "w1"), [], "the head said it");
		await other.prompt("again", [{ ...read("w2"), before: () => rmSync(join(wt, "src", "a.txt")) }, { text: "ok" }]);
		assert.deepEqual(hint(other, "w2"), ['Source changed: artifacts["src/a.txt"]: file is not in this worktree.']);
		// Where it was recorded, an edit is a change.
		await main.prompt("more", [{ ...read("m1"), before: () => writeFileSync(join(dir, "src", "a.txt"), "a, edited\n") }, { text: "ok" }]);
		assert.deepEqual(hint(main, "m1"), ['Source changed: artifacts["src/a.txt"]: file changed since it was recorded (size 2 → 10).']);
	});
});
