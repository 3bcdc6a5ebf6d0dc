/**
 * Real SDK: the host wires the other layers in — the artifact compiler runs in the commit
 * path (a Skill lands where pi discovers it), concurrent changes by another process are
 * noticed in tool results, and pi's own `read` of an untracked Skill gets the acquisition hint.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { withFlow } from "./fixture.js";

describe("host wiring", () => {
	it("compiles an inline Skill artifact through patch_state and reports it in details", async () => {
		await withFlow({}, async (flow) => {
			const key = ".pi/skills/release-notes/SKILL.md";
			await flow.prompt("make a skill", [
				{
					calls: [
						{
							id: "s",
							name: "patch_state",
							args: {
								cwd: {
									artifacts: { [key]: { kind: "skill", name: "release-notes", description: "Write release notes.", body: "# Release notes\nList changes." } },
								},
							},
						},
					],
				},
				{ text: "ok" },
			]);
			const r = flow.results().s;
			assert.equal(r?.isError, false, r?.text);
			const compiled = readFileSync(join(flow.harness.cwd, key), "utf8");
			assert.deepEqual(parseFrontmatter(compiled).frontmatter, { name: "release-notes", description: "Write release notes." });
			assert.match(compiled, /List changes\./);
			assert.equal((r?.details.artifacts as unknown[] | undefined)?.length, 1);
		});
	});

	it("notices a change another process made to a shared owner during the run", async () => {
		await withFlow({}, async (flow) => {
			const other = () => openStoresAt({ agentDir: join(flow.harness.agentDir), cwd: flow.harness.cwd });
			await flow.prompt("go", [
				{
					calls: [{ id: "r", name: "read_state", args: { path: "cwd.tactics" } }],
					before: async () => {
						await other().commit(
							{ cwd: { tactics: { theirs: 1 } } },
							{ by: { kind: "system", reason: "test" }, id: "other-1", at: "2026-11-30T08:00:00.000Z" },
						);
					},
				},
				{ text: "ok" },
			]);
			const r = flow.results().r;
			assert.equal(r?.isError, false, r?.text);
			assert.match(r?.text ?? "", /cwd was changed by another process/);
			assert.match(r?.text ?? "", /cwd\.tactics\.theirs/);
		});
	});

	it("adds the acquisition hint to pi's read of an untracked project Skill", async () => {
		await withFlow({ builtinTools: true }, async (flow) => {
			mkdirSync(join(flow.harness.cwd, "skills", "lint"), { recursive: true });
			writeFileSync(join(flow.harness.cwd, "skills", "lint", "SKILL.md"), "---\nname: lint\ndescription: Lint things.\n---\nRun the linter.\n");
			await flow.prompt("read it", [{ calls: [{ id: "rd", name: "read", args: { path: "skills/lint/SKILL.md" } }] }, { text: "ok" }]);
			const r = flow.results().rd;
			assert.equal(r?.isError, false, r?.text);
			assert.match(r?.text ?? "", /Run the linter\./);
			assert.match(r?.text ?? "", /State Flow: this Skill is not tracked yet/);
			assert.match(r?.text ?? "", /\{"cwd":\{"artifacts":\{"skills\/lint\/SKILL\.md":\{"kind":"skill"\}\}\}\}/);
		});
	});
});
