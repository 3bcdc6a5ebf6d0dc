/**
 * Artifacts end to end through the real extension in real pi sessions (faux provider):
 * a Skill authored with patch_state is discovered by pi's own loader in the next session,
 * a Global Skill cannot land in the project, Session Skills stay in the session, and pi's
 * own `read` of an untracked SKILL.md carries the acquisition hint.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import type { Owner } from "../../lib/core/types.js";
import { createStateFlow } from "../../lib/index.js";
import { type Captured, capturing, createHarness } from "../helpers/pi-harness.js";
import { tempDir } from "../helpers/temp-dir.js";

interface Result {
	role: "toolResult";
	isError: boolean;
	content: Array<{ type: string; text?: string }>;
}

function folders(t: { after(fn: () => void): void }, owners: Owner[]) {
	const base = tempDir(t, "state-flow-e2e-");
	const cwd = join(base, "proj");
	const agentDir = join(base, "agent");
	mkdirSync(join(agentDir, "state-flow"), { recursive: true });
	mkdirSync(cwd);
	writeFileSync(join(agentDir, "state-flow", "config.json"), JSON.stringify({ owners }));
	return { cwd, agentDir };
}

/** One prompt in a fresh session in which the scripted model makes these tool calls. */
async function run(dirs: { cwd: string; agentDir: string }, calls: Array<[string, Record<string, unknown>]>, opts: { builtinTools?: boolean } = {}) {
	const h = await createHarness({ extensionFactories: [createStateFlow({ agentDir: dirs.agentDir })], ...dirs, skillPaths: [], ...opts });
	try {
		h.faux.setResponses([
			...calls.map(([tool, args]) => fauxAssistantMessage([fauxToolCall(tool, args)], { stopReason: "toolUse" })),
			fauxAssistantMessage(fauxText("done")),
		]);
		await h.session.prompt("go");
		const results = h.session.messages.filter((m) => m.role === "toolResult") as unknown as Result[];
		// The harness overrides the base system prompt, so ask the session's own resource loader what pi discovered.
		const skills = h.session.resourceLoader.getSkills().skills.map((s) => s.name);
		return { results, texts: results.map((r) => r.content.map((c) => c.text ?? "").join("")), skills };
	} finally {
		h.dispose();
	}
}

const releaseNotes = {
	kind: "skill",
	name: "release-notes",
	description: "Write release notes for this project.",
	body: "# Release notes\n\nGroup by type.",
};

describe("Skill artifacts in real sessions", () => {
	it("a Skill authored with patch_state is discovered by pi in the next session, and removal takes it away", async (t) => {
		const dirs = folders(t, ["cwd"]);
		const first = await run(dirs, [["patch_state", { artifacts: { ".pi/skills/release-notes/SKILL.md": releaseNotes } }]]);
		assert.equal(first.results[0]?.isError, false, first.texts[0]);
		assert.deepEqual(first.skills, [], "pi discovers Skills when a session starts");
		const next = await run(dirs, [["patch_state", { artifacts: { ".pi/skills/release-notes/SKILL.md": null } }]]);
		assert.deepEqual(next.skills, ["release-notes"]);
		assert.equal(existsSync(join(dirs.cwd, ".pi/skills/release-notes")), false);
		const third = await run(dirs, []);
		assert.deepEqual(third.skills, []);
	});

	it("a Global Skill cannot be compiled into the project, and an invalid Skill is refused with nothing written", async (t) => {
		const dirs = folders(t, ["global", "cwd"]);
		const { results, texts } = await run(dirs, [
			["patch_state", { global: { artifacts: { ".pi/skills/release-notes/SKILL.md": releaseNotes } } }],
			["patch_state", { cwd: { tactics: { t: "x" }, artifacts: { ".pi/skills/release-notes/SKILL.md": { ...releaseNotes, name: "Release" } } } }],
			["patch_state", { global: { artifacts: { "skills/release-notes/SKILL.md": releaseNotes } } }],
		]);
		assert.equal(results[0]?.isError, true);
		assert.match(texts[0] ?? "", /skills\/release-notes\/SKILL\.md/);
		assert.equal(results[1]?.isError, true);
		// Needs Stores.commit to run `prepare` before a first write creates `.pi/state-flow/`.
		assert.deepEqual(readdirSync(dirs.cwd), [], "an invalid Skill in the first CWD write wrote bytes into the project");
		assert.equal(results[2]?.isError, false, texts[2]);
		assert.equal(existsSync(join(dirs.agentDir, "skills/release-notes/SKILL.md")), true);
	});

	it("Session Skills stay in the session: nothing is written to disk", async (t) => {
		const dirs = folders(t, ["session"]);
		const { results, texts } = await run(dirs, [["patch_state", { artifacts: { ".pi/skills/release-notes/SKILL.md": releaseNotes } }]]);
		assert.equal(results[0]?.isError, false, texts[0]);
		assert.deepEqual(readdirSync(dirs.cwd), []);
	});

	it("pi's own read of an untracked SKILL.md carries the exact acquisition patch, which then works", async (t) => {
		const dirs = folders(t, ["cwd", "session"]);
		mkdirSync(join(dirs.cwd, "vendor/deploy"), { recursive: true });
		writeFileSync(join(dirs.cwd, "vendor/deploy/SKILL.md"), "---\nname: deploy\ndescription: Deploy checklist.\n---\nTag, then ship.\n");
		const patch = { cwd: { artifacts: { "vendor/deploy/SKILL.md": { kind: "skill" } } } };
		const { results, texts } = await run(
			dirs,
			[
				["read", { path: "vendor/deploy/SKILL.md" }],
				["patch_state", patch],
				["read", { path: "vendor/deploy/SKILL.md" }],
			],
			{ builtinTools: true },
		);
		assert.ok(texts[0]?.includes(`call patch_state with ${JSON.stringify(patch)}`), texts[0]);
		assert.equal(results[1]?.isError, false, texts[1]);
		assert.equal(existsSync(join(dirs.cwd, ".pi/skills/deploy/SKILL.md")), true);
		assert.equal(texts[2]?.includes("patch_state"), false, "no hint once tracked");
	});

	it("the head of the next prompt flags a tracked file that changed since it was recorded", async (t) => {
		const dirs = folders(t, ["cwd"]);
		writeFileSync(join(dirs.cwd, "main.ts"), "export {};\n");
		const seen: Captured[] = [];
		const h = await createHarness({ extensionFactories: [createStateFlow({ agentDir: dirs.agentDir })], ...dirs });
		try {
			h.faux.setResponses([
				fauxAssistantMessage([fauxToolCall("patch_state", { artifacts: { "main.ts": { kind: "file" } } })], { stopReason: "toolUse" }),
				fauxAssistantMessage(fauxText("tracked")),
				capturing(seen, () => fauxAssistantMessage(fauxText("seen"))),
			]);
			await h.session.prompt("track main.ts");
			writeFileSync(join(dirs.cwd, "main.ts"), "export const changed = true;\n");
			await h.session.prompt("what changed?");
			const sent = JSON.stringify(seen[0]?.messages);
			assert.match(sent, /stale artifact: artifacts\[\\"main.ts\\"\]: file changed since it was recorded/);
		} finally {
			h.dispose();
		}
	});
});
