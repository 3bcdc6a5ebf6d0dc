/**
 * Skill artifacts through the compiler with real files and pi's own Skill loader: inline
 * Skills compiled where pi discovers them, acquired Skills copied byte for byte, atomic
 * refusal, territory, and removal of only what State Flow wrote (also as a property).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { loadSkills, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError } from "../../lib/core/errors.js";
import type { JsonObject } from "../../lib/core/types.js";
import { createArtifactCompiler } from "../../lib/storage/artifacts/compiler.js";
import { staleArtifacts } from "../../lib/storage/artifacts/stale.js";
import { refused, setup, skill, tree } from "./artifact-fixture.js";

describe("inline Skills", () => {
	it("compiles a CWD Skill into .pi/skills/<name>/SKILL.md where pi's loader discovers it next session", (t) => {
		const s = setup(t);
		const key = ".pi/skills/release-notes/SKILL.md";
		s.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		const file = join(s.cwd, key);
		const bytes = readFileSync(file);
		assert.match(bytes.toString(), /# Release notes/);
		const a = s.art("cwd", key);
		assert.equal(a?.compiledTo, key);
		assert.equal(a?.compiledHash, createHash("sha256").update(bytes).digest("hex"));
		const { skills, diagnostics } = loadSkills({ cwd: s.cwd, agentDir: s.agentDir, skillPaths: [], includeDefaults: true });
		assert.deepEqual(diagnostics, []);
		assert.deepEqual(
			skills.map((k) => [k.name, k.description, k.sourceInfo.scope]),
			[["release-notes", "Formats release notes. Use when writing a changelog.", "project"]],
		);
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), []);
	});

	it("compiles a Global Skill into <agentDir>/skills and keeps any description text exact", (t) => {
		const s = setup(t);
		const description = 'Quotes "x", colons: y, # hash, newline\nand unicode ü ✓';
		s.commit({ global: { artifacts: { "skills/notes/SKILL.md": skill("notes", description) } } });
		const { skills } = loadSkills({ cwd: s.cwd, agentDir: s.agentDir, skillPaths: [], includeDefaults: true });
		assert.deepEqual(
			skills.map((k) => [k.name, k.description, k.sourceInfo.scope]),
			[["notes", description, "user"]],
		);
		assert.equal(existsSync(join(s.cwd, ".pi")), false);
	});

	it("refuses an invalid Skill with no byte written, and a corrected retry succeeds", (t) => {
		const s = setup(t);
		const before = tree(s.base);
		const bad: Array<[string, JsonObject, RegExp]> = [
			[".pi/skills/Bad_Name/SKILL.md", skill("Bad_Name"), /lowercase/],
			[".pi/skills/-lead/SKILL.md", skill("-lead"), /hyphen/],
			[".pi/skills/a--b/SKILL.md", skill("a--b"), /consecutive/],
			[`.pi/skills/${"a".repeat(65)}/SKILL.md`, skill("a".repeat(65)), /at most 64/],
			[".pi/skills/other/SKILL.md", skill("release-notes"), /use artifacts\[".pi\/skills\/release-notes\/SKILL.md"\]/],
			[".pi/skills/release-notes/SKILL.md", { ...skill("release-notes"), description: "" }, /`description` is required/],
			[".pi/skills/release-notes/SKILL.md", { ...skill("release-notes"), description: "d".repeat(1025) }, /at most 1024/],
			[".pi/skills/release-notes/SKILL.md", { ...skill("release-notes"), body: 7 }, /`body`/],
		];
		for (const [key, value, pattern] of bad) {
			// A valid file artifact in the same patch must not be half-applied either.
			refused(() => s.commit({ cwd: { artifacts: { "ok.txt": { kind: "file" }, [key]: value } } }), pattern);
		}
		assert.deepEqual(tree(s.base), before);
		assert.deepEqual(s.histories.cwd.state.artifacts, {});
		s.commit({ cwd: { artifacts: { ".pi/skills/release-notes/SKILL.md": skill("release-notes") } } });
		assert.equal(existsSync(join(s.cwd, ".pi/skills/release-notes/SKILL.md")), true);
	});

	it("never compiles a Global Skill into the project", (t) => {
		const s = setup(t);
		refused(() => s.compile({ global: { artifacts: { ".pi/skills/x/SKILL.md": skill("x") } } }, s.histories), /use artifacts\["skills\/x\/SKILL.md"\]/);
		refused(() => s.compile({ global: { artifacts: { [join(s.cwd, ".pi/skills/x/SKILL.md")]: skill("x") } } }, s.histories), /outside/);
		refused(() => s.compile({ global: { artifacts: { "../proj/.pi/skills/x/SKILL.md": skill("x") } } }, s.histories), /outside/);
		assert.equal(existsSync(join(s.cwd, ".pi")), false);
	});

	it("refuses the other owner's territory when one root lies inside the other", (t) => {
		const s = setup(t);
		const nested = { cwd: s.cwd, agentDir: join(s.cwd, ".agent") };
		mkdirSync(nested.agentDir);
		const compile = createArtifactCompiler(nested, { parseFrontmatter });
		refused(() => compile({ cwd: { artifacts: { ".agent/skills/x/SKILL.md": skill("x") } } }, s.histories), /Global's territory/);
	});

	it("removing the artifact deletes the compiled Skill and its folder, then pi no longer finds it", (t) => {
		const s = setup(t);
		const key = ".pi/skills/release-notes/SKILL.md";
		s.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		s.commit({ cwd: { artifacts: { [key]: null } } });
		assert.equal(existsSync(join(s.cwd, ".pi/skills/release-notes")), false);
		assert.deepEqual(loadSkills({ cwd: s.cwd, agentDir: s.agentDir, skillPaths: [], includeDefaults: true }).skills, []);
	});

	it("leaves a compiled Skill that was edited afterwards, and says so", (t) => {
		const s = setup(t);
		const key = ".pi/skills/release-notes/SKILL.md";
		s.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		writeFileSync(join(s.cwd, key), "---\nname: release-notes\ndescription: mine now\n---\nhand edited\n");
		assert.match(staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "", /edited outside State Flow/);
		refused(() => s.compile({ cwd: { artifacts: { [key]: { body: "new" } } } }, s.histories), /did not write it \(or it was edited since\)/);
		const effects = s.commit({ cwd: { artifacts: { [key]: null } } });
		assert.match(readFileSync(join(s.cwd, key), "utf8"), /hand edited/);
		assert.match(effects.notes.join("\n"), /changed after State Flow compiled it/);
	});

	it("refuses to overwrite a SKILL.md State Flow did not write", (t) => {
		const s = setup(t);
		const key = ".pi/skills/release-notes/SKILL.md";
		mkdirSync(join(s.cwd, ".pi/skills/release-notes"), { recursive: true });
		writeFileSync(join(s.cwd, key), "---\nname: release-notes\ndescription: theirs\n---\n");
		refused(() => s.compile({ cwd: { artifacts: { [key]: skill("release-notes") } } }, s.histories), /Acquire it instead/);
		assert.match(readFileSync(join(s.cwd, key), "utf8"), /theirs/);
	});

	it("adopts a SKILL.md byte-identical to its own compiled output (a teammate's clone importing shared state), and can update it", (t) => {
		const a = setup(t);
		const b = setup(t);
		const key = ".pi/skills/release-notes/SKILL.md";
		a.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		mkdirSync(join(b.cwd, ".pi/skills/release-notes"), { recursive: true });
		writeFileSync(join(b.cwd, key), readFileSync(join(a.cwd, key)));
		b.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		assert.equal(b.art("cwd", key)?.compiledHash, a.art("cwd", key)?.compiledHash);
		b.commit({ cwd: { artifacts: { [key]: { body: "Updated." } } } });
		assert.match(readFileSync(join(b.cwd, key), "utf8"), /Updated\.\n$/);
	});

	it("ignores compiler-owned fields sent by the model: a forged `compiledTo` cannot aim a deletion", (t) => {
		const s = setup(t);
		mkdirSync(join(s.cwd, ".pi/skills/victim"), { recursive: true });
		const victim = join(s.cwd, ".pi/skills/victim/SKILL.md");
		writeFileSync(victim, "precious");
		const key = ".pi/skills/release-notes/SKILL.md";
		s.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		const hash = createHash("sha256").update("precious").digest("hex");
		s.commit({ cwd: { artifacts: { [key]: { compiledTo: ".pi/skills/victim/SKILL.md", compiledHash: hash, fingerprint: 1 } } } });
		assert.equal(s.art("cwd", key)?.compiledTo, key);
		assert.equal(s.art("cwd", key)?.fingerprint, undefined);
		s.commit({ cwd: { artifacts: { [key]: null } } });
		assert.equal(readFileSync(victim, "utf8"), "precious");
	});

	it("patching an unchanged Skill whose compiled file was deleted by hand plans the file again", (t) => {
		const s = setup(t);
		const key = ".pi/skills/alpha/SKILL.md";
		s.commit({ cwd: { artifacts: { [key]: skill("alpha") } } });
		const bytes = readFileSync(join(s.cwd, key));
		assert.equal(s.compile({ cwd: { artifacts: { [key]: skill("alpha") } } }, s.histories).hasEffects, false, "nothing to do while the file is intact");
		rmSync(join(s.cwd, ".pi/skills/alpha"), { recursive: true });
		assert.match(staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "", /is gone/);
		const effects = s.compile({ cwd: { artifacts: { [key]: { kind: "skill" } } } }, s.histories);
		assert.deepEqual(effects.patch, { cwd: { artifacts: {} } }, "the state does not change");
		assert.equal(effects.hasEffects, true);
		effects.apply();
		assert.deepEqual(readFileSync(join(s.cwd, key)), bytes);
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), []);
	});

	it("revert undoes apply: created files go, overwritten and deleted files come back", (t) => {
		const s = setup(t);
		const a = ".pi/skills/alpha/SKILL.md";
		const b = ".pi/skills/beta/SKILL.md";
		s.commit({ cwd: { artifacts: { [a]: skill("alpha") } } });
		const before = tree(s.base);
		const effects = s.compile({ cwd: { artifacts: { [a]: null, [b]: skill("beta") } } }, s.histories);
		effects.apply();
		assert.equal(existsSync(join(s.cwd, a)), false);
		assert.equal(existsSync(join(s.cwd, b)), true);
		effects.revert();
		assert.deepEqual(tree(s.base), before);
	});
});

describe("acquired Skills", () => {
	const source = "---\nname: lint-fix\ndescription: Fix lint errors the house way.\n---\n\n# Lint\r\nExact bytes matter.\n";

	it("copies the exact bytes where pi finds them, with sha256 `sourceHash` and provenance", (t) => {
		const s = setup(t);
		mkdirSync(join(s.cwd, "vendor/lint"), { recursive: true });
		writeFileSync(join(s.cwd, "vendor/lint/SKILL.md"), source);
		s.commit({ cwd: { artifacts: { "vendor/lint/SKILL.md": { kind: "skill" } } } });
		const a = s.art("cwd", "vendor/lint/SKILL.md");
		const hash = createHash("sha256").update(source).digest("hex");
		assert.equal(a?.sourceHash, hash);
		assert.equal(a?.compiledHash, hash);
		assert.equal(a?.name, "lint-fix");
		assert.equal(a?.compiledTo, ".pi/skills/lint-fix/SKILL.md");
		assert.deepEqual(a?.provenance, { acquiredFrom: join(s.cwd, "vendor/lint/SKILL.md") });
		assert.equal(readFileSync(join(s.cwd, ".pi/skills/lint-fix/SKILL.md"), "utf8"), source);
		assert.deepEqual(
			loadSkills({ cwd: s.cwd, agentDir: s.agentDir, skillPaths: [], includeDefaults: true }).skills.map((k) => k.name),
			["lint-fix"],
		);
		writeFileSync(join(s.cwd, "vendor/lint/SKILL.md"), source.replace("house", "new"));
		assert.match(staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "", /source Skill changed/);
		s.commit({ cwd: { artifacts: { "vendor/lint/SKILL.md": null } } });
		assert.equal(existsSync(join(s.cwd, ".pi/skills/lint-fix")), false);
		assert.equal(existsSync(join(s.cwd, "vendor/lint/SKILL.md")), true, "the source is never removed");
	});

	it("judges an acquired Skill's source by its bytes when only its mtime moved (another checkout or machine, a git checkout)", (t) => {
		const s = setup(t);
		const src = join(s.cwd, "vendor/lint/SKILL.md");
		mkdirSync(dirname(src), { recursive: true });
		writeFileSync(src, source);
		s.commit({ cwd: { artifacts: { "vendor/lint/SKILL.md": { kind: "skill" } } } });
		utimesSync(src, new Date(1_000_000), new Date(1_000_000));
		writeFileSync(src, source);
		const recorded = s.art("cwd", "vendor/lint/SKILL.md")?.fingerprint as { mtimeMs?: number } | undefined;
		assert.equal(typeof recorded?.mtimeMs, "number");
		assert.notEqual(statSync(src).mtimeMs, recorded?.mtimeMs);
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), [], "the same bytes under another mtime are not a change");
		// Same size, other bytes: changed.
		writeFileSync(src, source.replace("house", "HOUSE"));
		assert.equal(statSync(src).size, Buffer.byteLength(source));
		assert.match(staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "", /source Skill changed/);
		// Back to the recorded bytes, while the compiled copy was edited: that is still reported.
		writeFileSync(src, source);
		writeFileSync(join(s.cwd, ".pi/skills/lint-fix/SKILL.md"), `${source}\nedited`);
		assert.match(staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "", /edited outside State Flow/);
	});

	it("never reads a compiled Skill through a link: one to a byte-identical copy outside is reported, and removing the artifact is refused", (t) => {
		const s = setup(t);
		const key = ".pi/skills/release-notes/SKILL.md";
		s.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		const file = join(s.cwd, key);
		const outside = join(s.base, "outside-SKILL.md");
		writeFileSync(outside, readFileSync(file));
		const before = statSync(outside);
		rmSync(file);
		symlinkSync(outside, file);
		const note = staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "";
		assert.match(note, /cannot be checked: .*is a symbolic link where State Flow keeps a regular file/);
		assert.throws(
			() => s.commit({ cwd: { artifacts: { [key]: null } } }),
			(e: unknown) => isStateError(e) && /symbolic link/.test(e.message),
		);
		assert.ok(s.art("cwd", key) !== undefined, "the refused removal left the artifact");
		assert.equal(readFileSync(outside, "utf8"), readFileSync(file, "utf8"), "the outside copy is untouched");
		assert.equal(statSync(outside).mtimeMs, before.mtimeMs);
	});

	it("tracks a Skill already in the owner's Skill folder without copying, and removal leaves it", (t) => {
		const s = setup(t);
		const key = "skills/lint-fix/SKILL.md";
		mkdirSync(join(s.agentDir, "skills/lint-fix"), { recursive: true });
		writeFileSync(join(s.agentDir, key), source);
		s.commit({ global: { artifacts: { [key]: { kind: "skill", why: "house style" } } } });
		assert.equal(s.art("global", key)?.compiledTo, key);
		assert.equal(s.art("global", key)?.compiledHash, undefined);
		s.commit({ global: { artifacts: { [key]: null } } });
		assert.equal(readFileSync(join(s.agentDir, key), "utf8"), source);
	});

	it("refuses to copy an acquired Skill through a Skill folder that links out of the project", (t) => {
		const s = setup(t);
		mkdirSync(join(s.cwd, "vendor/lint"), { recursive: true });
		writeFileSync(join(s.cwd, "vendor/lint/SKILL.md"), source);
		mkdirSync(join(s.base, "elsewhere"));
		mkdirSync(join(s.cwd, ".pi"));
		symlinkSync(join(s.base, "elsewhere"), join(s.cwd, ".pi/skills"));
		refused(() => s.commit({ cwd: { artifacts: { "vendor/lint/SKILL.md": { kind: "skill" } } } }), /symbolic link/);
		assert.deepEqual(readdirSync(join(s.base, "elsewhere")), []);
	});

	it("refuses a missing source or invalid frontmatter with nothing written", (t) => {
		const s = setup(t);
		mkdirSync(join(s.cwd, "vendor/bad"), { recursive: true });
		writeFileSync(join(s.cwd, "vendor/bad/SKILL.md"), "---\nname: bad\n---\nno description\n");
		mkdirSync(join(s.cwd, "vendor/yaml"), { recursive: true });
		writeFileSync(join(s.cwd, "vendor/yaml/SKILL.md"), "---\nname: [yaml\ndescription: broken\n---\n");
		const before = tree(s.base);
		refused(() => s.commit({ cwd: { artifacts: { "vendor/none/SKILL.md": { kind: "skill" } } } }), /no Skill file there/);
		refused(() => s.commit({ cwd: { artifacts: { "vendor/bad/SKILL.md": { kind: "skill" } } } }), /`description` is required/);
		refused(
			() => s.commit({ cwd: { artifacts: { "vendor/yaml/SKILL.md": { kind: "skill" } } } }),
			/artifacts\["vendor\/yaml\/SKILL.md"\]`: the Skill's frontmatter is not valid YAML .*Fix the file/,
		);
		assert.deepEqual(tree(s.base), before);
	});
});

describe("ownership of compiled files (property)", () => {
	it("whatever the sequence of writes, removals and hand edits, State Flow never deletes or overwrites a file it did not write, and a refusal changes nothing", () => {
		const names = ["a", "b"] as const;
		const op = fc.oneof(
			fc.record({ op: fc.constant("author"), name: fc.constantFrom(...names), v: fc.constantFrom(1, 2) }),
			fc.record({ op: fc.constant("remove"), name: fc.constantFrom(...names) }),
			fc.record({ op: fc.constant("edit"), name: fc.constantFrom(...names) }),
			fc.record({ op: fc.constant("unlink"), name: fc.constantFrom(...names) }),
		);
		let run = 0;
		// Both outcomes are checked often: a bug refusing every write would otherwise pass.
		let committed = 0;
		let refused = 0;
		assertProperty(
			fc.property(fc.array(op, { maxLength: 8 }), (ops) => {
				const after: Array<() => void> = [];
				const s = setup({ after: (fn) => after.push(fn) });
				try {
					const foreign = new Map<string, string>(); // path -> bytes a person wrote
					for (const o of ops) {
						const key = `.pi/skills/${o.name}/SKILL.md`;
						const file = join(s.cwd, key);
						if (o.op === "edit") {
							mkdirSync(join(s.cwd, ".pi/skills", o.name), { recursive: true });
							const text = `hand ${run++}`;
							writeFileSync(file, text);
							foreign.set(file, text);
						} else if (o.op === "unlink") {
							if (existsSync(file)) rmSync(file);
							foreign.delete(file);
						} else {
							const before = tree(s.base);
							const state = JSON.stringify(s.histories.cwd.state);
							const value = o.op === "author" ? { ...skill(o.name), body: `v${"v" in o ? o.v : 0}` } : null;
							try {
								s.commit({ cwd: { artifacts: { [key]: value } } });
								committed++;
							} catch (e) {
								assert.ok(isStateError(e) && e.code === "artifact", String(e));
								assert.deepEqual(tree(s.base), before);
								assert.equal(JSON.stringify(s.histories.cwd.state), state);
								refused++;
							}
						}
						for (const [path, text] of foreign) assert.equal(readFileSync(path, "utf8"), text, `${path} was touched`);
					}
				} finally {
					for (const fn of after) fn();
				}
			}),
			{ numRuns: 60 },
		);
		assert.ok(committed >= 50 && refused >= 2, `${committed} writes committed and ${refused} refused in 60 runs`);
	});
});
