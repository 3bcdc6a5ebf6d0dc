/**
 * pi's Skill format as State Flow applies it: the name and description rules agree with pi's
 * loader, an inline Skill renders to bytes pi reads back exactly (any description text), and
 * the fallback frontmatter parser agrees with pi's YAML parser on the forms Skills use.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadSkillsFromDir, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { renderSkill, simpleFrontmatter, skillDescriptionProblem, skillKey, skillNameProblem } from "../../lib/storage/artifacts/skill-format.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("Skill name and description rules", () => {
	it("accept exactly the names pi's loader accepts without a warning", (t) => {
		const dir = tempDir(t, "state-flow-skillfmt-");
		const names = ["a", "ab-c", "x1-2", "-a", "a-", "a--b", "A", "a_b", "a.b", "a".repeat(64), "b".repeat(65), "ü"];
		for (const name of names) {
			mkdirSync(join(dir, name));
			writeFileSync(join(dir, name, "SKILL.md"), `---\nname: ${JSON.stringify(name)}\ndescription: d\n---\n`);
		}
		const { diagnostics } = loadSkillsFromDir({ dir, source: "path" });
		for (const name of names) {
			const piWarns = diagnostics.some((d) => d.path === join(dir, name, "SKILL.md"));
			assert.equal(skillNameProblem(name, name) !== undefined, piWarns, `name ${JSON.stringify(name)}`);
		}
		assert.match(skillNameProblem("a", "b") ?? "", /must equal its folder "b"/);
	});

	it("require a description of 1 to 1024 characters", () => {
		assert.equal(skillDescriptionProblem("x"), undefined);
		assert.equal(skillDescriptionProblem("x".repeat(1024)), undefined);
		assert.match(skillDescriptionProblem("x".repeat(1025)) ?? "", /at most 1024/);
		for (const bad of ["", "  ", undefined, 3]) assert.match(skillDescriptionProblem(bad) ?? "", /required/);
	});

	it("place each owner's Skills where pi discovers them", () => {
		assert.equal(skillKey("cwd", "x"), ".pi/skills/x/SKILL.md");
		assert.equal(skillKey("global", "x"), "skills/x/SKILL.md");
	});
});

describe("rendering an inline Skill", () => {
	it("round-trips any name and description through pi's own frontmatter parser (and the fallback)", () => {
		const name = fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/);
		const description = fc.string({ unit: "grapheme", minLength: 1, maxLength: 200 }).filter((d) => d.trim() !== "");
		assertProperty(
			fc.property(name, description, fc.string(), (n, d, body) => {
				const text = renderSkill("cwd", skillKey("cwd", n), n, d, body);
				const { frontmatter, body: parsedBody } = parseFrontmatter(text);
				assert.equal(frontmatter.name, n);
				assert.equal(frontmatter.description, d);
				assert.ok(parsedBody.includes(body.trim()));
				assert.deepEqual(simpleFrontmatter(text).frontmatter.description, d, "the fallback parser reads it back too");
			}),
			{ numRuns: 300 },
		);
	});
});

describe("regressions", () => {
	it("reads a description that holds a line separator (U+2028), which JSON.stringify leaves unescaped", () => {
		const d = "\u2028!";
		const text = renderSkill("cwd", skillKey("cwd", "x"), "x", d, "");
		assert.equal(parseFrontmatter(text).frontmatter.description, d);
		assert.equal(simpleFrontmatter(text).frontmatter.description, d);
	});
});

describe("the fallback frontmatter parser", () => {
	it("agrees with pi's YAML parser on the forms Skill frontmatter uses", () => {
		const samples = [
			"---\nname: deploy\ndescription: Deploy the app.\n---\nbody",
			'---\nname: \'quoted\'\ndescription: "with: colon and \\"quotes\\""\n---\n',
			"---\nname: multi\ndescription: first line\n  continues here\nlicense: MIT\n---\n",
			"---\nname: block\ndescription: |\n  line one\n  line two\n---\n",
			"---\nname: folded\ndescription: >-\n  folded one\n  folded two\n---\n",
			"---\r\nname: crlf\r\ndescription: Windows line ends\r\n---\r\n",
			"---\nname: flag\ndescription: d # a comment\ndisable-model-invocation: true\n---\n",
			"no frontmatter at all",
		];
		for (const text of samples) {
			const ours = simpleFrontmatter(text).frontmatter;
			const theirs = parseFrontmatter(text).frontmatter;
			for (const key of ["name", "description", "disable-model-invocation"]) assert.deepEqual(ours[key], theirs[key], `${key} of ${JSON.stringify(text)}`);
		}
	});
});
