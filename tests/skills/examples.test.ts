/**
 * The packaged Skills cannot drift: both are valid for pi's own loader, every JSON block in
 * them is a tagged example, and every example runs through the real extension in a real pi
 * session (faux provider), in document order, one session per selection.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { loadSkills } from "@mariozechner/pi-coding-agent";
import { type Owner, isOwner } from "../../lib/core/types.js";
import { createStateFlow } from "../../lib/index.js";
import { createHarness } from "../helpers/pi-harness.js";
import { tempDir } from "../helpers/temp-dir.js";

/** The package root, from the source tree (tsx) or from dist/tests (compiled). */
function packageRoot(): string {
	for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
		if (existsSync(join(dir, "package.json"))) return dir;
		if (dirname(dir) === dir) throw new Error("package.json not found above this test file");
	}
}
const SKILLS_DIR = resolve(packageRoot(), "skills");
const SKILL_FILES = ["state-flow-guide", "state-flow-memory"].map((n) => join(SKILLS_DIR, n, "SKILL.md"));

interface Example {
	where: string;
	tool: "patch_state" | "read_state";
	owners: Owner[];
	input: Record<string, unknown>;
}

const TAG = /<!-- example: (patch|read) (flat|scoped) ([a-z,]+) -->\n```json\n([\s\S]*?)\n```/g;

/** Every tagged example of a Skill file, in document order. */
function examplesOf(file: string): Example[] {
	const text = readFileSync(file, "utf8");
	const out: Example[] = [];
	for (const m of text.matchAll(TAG)) {
		const [, tool, form, ownerList, json] = m as unknown as string[];
		const where = `${file.slice(SKILLS_DIR.length + 1)}:${text.slice(0, m.index).split("\n").length}`;
		const owners = (ownerList as string).split(",") as Owner[];
		assert.ok(owners.every(isOwner), `${where}: unknown owner in ${ownerList}`);
		assert.equal(form, owners.length === 1 ? "flat" : "scoped", `${where}: ${form} does not match ${owners.length} owner(s)`);
		out.push({
			where,
			tool: tool === "patch" ? "patch_state" : "read_state",
			owners,
			input: JSON.parse(json as string) as Record<string, unknown>,
		});
	}
	return out;
}

/** Files the examples refer to, as a real project would have them. */
function writeFixtures(cwd: string): void {
	mkdirSync(join(cwd, "vendor/deploy"), { recursive: true });
	writeFileSync(join(cwd, "vendor/deploy/SKILL.md"), "---\nname: deploy\ndescription: Team deploy checklist.\n---\n\n1. Tag. 2. Ship.\n");
	mkdirSync(join(cwd, "src/export"), { recursive: true });
	writeFileSync(join(cwd, "src/export/csv.ts"), "export function csv() {}\n");
}

interface ToolResultMessage {
	role: "toolResult";
	toolName: string;
	isError: boolean;
	content: Array<{ type: string; text?: string }>;
	details: Record<string, unknown> | undefined;
}

/** Run examples that share one selection as consecutive tool calls of one prompt. */
async function runGroup(t: { after(fn: () => void): void }, examples: Example[]) {
	const base = tempDir(t, "state-flow-examples-");
	const cwd = join(base, "proj");
	const agentDir = join(base, "agent");
	mkdirSync(join(agentDir, "state-flow"), { recursive: true });
	mkdirSync(cwd);
	writeFixtures(cwd);
	writeFileSync(join(agentDir, "state-flow", "config.json"), JSON.stringify({ owners: examples[0]?.owners }));
	const h = await createHarness({ extensionFactories: [createStateFlow({ agentDir })], cwd, agentDir });
	try {
		assert.deepEqual(h.extensionErrors, []);
		h.faux.setResponses([
			...examples.map((ex) => fauxAssistantMessage([fauxToolCall(ex.tool, ex.input)], { stopReason: "toolUse" })),
			fauxAssistantMessage(fauxText("done")),
		]);
		await h.session.prompt("Run the documented examples.");
		const results = h.session.messages.filter((m) => m.role === "toolResult") as unknown as ToolResultMessage[];
		assert.equal(results.length, examples.length);
		return { cwd, agentDir, results };
	} finally {
		h.dispose();
	}
}

function groups(file: string): Example[][] {
	const byOwners = new Map<string, Example[]>();
	for (const ex of examplesOf(file)) {
		const key = ex.owners.join(",");
		byOwners.set(key, [...(byOwners.get(key) ?? []), ex]);
	}
	return [...byOwners.values()];
}

describe("packaged Skills", () => {
	it("are valid for pi's own loader: name equals folder, description present, no warnings", () => {
		const { skills, diagnostics } = loadSkills({ cwd: SKILLS_DIR, agentDir: SKILLS_DIR, skillPaths: [SKILLS_DIR], includeDefaults: false });
		assert.deepEqual(diagnostics, []);
		assert.deepEqual(skills.map((s) => s.name).sort(), ["state-flow-guide", "state-flow-memory"]);
		for (const s of skills) assert.ok(s.description.length > 40 && s.description.length <= 1024);
	});

	it("tag every JSON block as a runnable example, and the Guide covers both grammars and every read form", () => {
		for (const file of SKILL_FILES) {
			const blocks = readFileSync(file, "utf8").match(/```json\n/g) ?? [];
			assert.equal(examplesOf(file).length, blocks.length, `${file}: every \`\`\`json block needs an example tag`);
		}
		const guide = examplesOf(SKILL_FILES[0] as string);
		const text = JSON.stringify(guide.map((e) => e.input));
		for (const needle of ["$ref", "effective[1]", "patches[0]", '"keys"', '"history"', "effective.tactics", "lazy[", "paths", ":null", '"search"']) {
			assert.ok(text.includes(needle), `the Guide has no example using ${needle}`);
		}
		assert.ok(guide.some((e) => e.owners.length === 1) && guide.some((e) => e.owners.length > 1));
	});

	for (const file of SKILL_FILES) {
		for (const group of groups(file)) {
			const owners = group[0]?.owners.join(",") ?? "";
			it(`${file.slice(SKILLS_DIR.length + 1)}: the ${owners} examples succeed through the real tools`, async (t) => {
				const { results } = await runGroup(t, group);
				group.forEach((ex, i) => {
					const r = results[i] as ToolResultMessage;
					const text = r.content.map((c) => c.text ?? "").join("");
					assert.equal(r.toolName, ex.tool, ex.where);
					assert.equal(r.isError, false, `${ex.where}: ${text}`);
					if (ex.tool === "patch_state") assert.equal(typeof r.details?.transitionId, "string", `${ex.where} changes nothing: ${text}`);
					else assert.ok(text.length > 2, `${ex.where}: empty read`);
				});
			});
		}
	}

	it("the Guide's intent deletion reports its cascade in the real tool result", async (t) => {
		const group = groups(SKILL_FILES[0] as string)[0] as Example[];
		const { results } = await runGroup(t, group);
		const i = group.findIndex((ex) => JSON.stringify(ex.input) === '{"intents":{"sso-login":null}}');
		assert.ok(i >= 0);
		assert.deepEqual(results[i]?.details?.cascades, [{ owner: "cwd", intent: "sso-login", targets: ["cwd.tactics.repro", "cwd.lazy.sso-notes"] }]);
	});

	it("the Guide's quoted reference owns its target, and deleting a target names the exact drop patch its next example sends", async (t) => {
		const group = groups(SKILL_FILES[0] as string)[0] as Example[];
		const { results } = await runGroup(t, group);
		const text = (i: number) => (results[i]?.content ?? []).map((c) => c.text ?? "").join("");
		const i = group.findIndex((ex) => JSON.stringify(ex.input) === '{"tactics":{"routes":null}}');
		assert.ok(i > 0);
		assert.deepEqual(results[i - 1]?.details?.danglingRefs, [], "the quoted reference resolves");
		assert.match(text(i), /^dangling refs \(target is gone; update or drop the ref\): intents\.api-v2 -> tactics\.routes$/m);
		const drop = /^to drop them: patch_state (.*)$/m.exec(text(i))?.[1];
		assert.ok(drop !== undefined, text(i));
		assert.deepEqual(JSON.parse(drop), group[i + 1]?.input, "the Guide sends exactly the patch the result names");
		assert.doesNotMatch(text(i + 1), /dangling/);
	});

	it("the Memory Skill's artifact examples compile, acquire and remove real Skills", async (t) => {
		const byOwners = (owners: string) => groups(SKILL_FILES[1] as string).find((g) => g[0]?.owners.join(",") === owners) as Example[];
		const [cwdGroup, globalGroup] = [byOwners("cwd"), byOwners("global,cwd")];
		const project = await runGroup(t, cwdGroup);
		assert.equal(existsSync(join(project.cwd, ".pi/skills/deploy/SKILL.md")), true, "the acquired Skill was copied where pi finds it");
		assert.equal(existsSync(join(project.cwd, ".pi/skills/release-notes")), false, "the removed Skill is gone");
		const global = await runGroup(t, globalGroup);
		assert.equal(existsSync(join(global.agentDir, "skills/commit-style/SKILL.md")), true);
		assert.equal(existsSync(join(global.cwd, ".pi/skills")), false);
	});
});
