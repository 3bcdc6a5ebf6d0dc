/**
 * An acquired Skill brings its folder: the files beside its SKILL.md (scripts/, references/,
 * assets/) are copied with it, scripts stay executable, each file is recorded with its hash
 * (`compiledFiles`) and is State Flow's exactly as `SKILL.md` is — removed with the artifact
 * while unchanged, never written over a foreign file, written where missing in another
 * checkout from the same source, reported when edited or gone. Links and special files in the
 * source folder are never read; a forged `compiledFiles` can never aim outside the Skill's folder.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { execFileSync } from "node:child_process";
import type { JsonObject } from "../../lib/core/types.js";
import { SKILL_FOLDER_LIMITS } from "../../lib/storage/artifacts/compiler.js";
import { staleArtifacts } from "../../lib/storage/artifacts/stale.js";
import { materialiseCompiled } from "../../lib/storage/artifacts/compiled-skills.js";
import { refused, setup, tree } from "./artifact-fixture.js";

const SKILL = "---\nname: deploy\ndescription: Deploy the app with its script.\n---\nRun `scripts/deploy.sh`, read `references/env.md`.\n";
const SCRIPT = "#!/bin/sh\necho deployed\n";
const KEY = "vendor/deploy/SKILL.md";
const COPY = ".pi/skills/deploy";

const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

/** A project with a Skill folder under vendor/ holding a script, a nested reference and things never copied. */
function withSkillFolder(t: { after(fn: () => void): void }) {
	const s = setup(t);
	const src = join(s.cwd, "vendor/deploy");
	const put = (rel: string, text: string) => {
		mkdirSync(dirname(join(src, rel)), { recursive: true });
		writeFileSync(join(src, rel), text);
	};
	put("SKILL.md", SKILL);
	put("scripts/deploy.sh", SCRIPT);
	chmodSync(join(src, "scripts/deploy.sh"), 0o755);
	put("references/env.md", "# Environments\n");
	put("references/deep/notes.txt", "nested\n");
	put(".git/config", "[core]\n");
	put("node_modules/x/index.js", "module.exports = 1;\n");
	const copy = (rel: string) => join(s.cwd, COPY, rel);
	const acquire = () => s.commit({ cwd: { artifacts: { [KEY]: { kind: "skill" } } } });
	return { ...s, src, put, copy, acquire };
}

describe("acquired Skills bring their folder", () => {
	it("copies the files beside SKILL.md, keeps scripts executable, records each hash, leaves hidden entries and node_modules out", (t) => {
		const s = withSkillFolder(t);
		s.acquire();
		assert.equal(readFileSync(s.copy("SKILL.md"), "utf8"), SKILL);
		assert.equal(readFileSync(s.copy("scripts/deploy.sh"), "utf8"), SCRIPT);
		assert.equal(statSync(s.copy("scripts/deploy.sh")).mode & 0o111, 0o111, "the script stays executable");
		assert.equal(statSync(s.copy("references/env.md")).mode & 0o111, 0, "a plain file stays plain");
		assert.equal(execFileSync(s.copy("scripts/deploy.sh"), { encoding: "utf8" }), "deployed\n", "the copied script runs");
		assert.equal(readFileSync(s.copy("references/deep/notes.txt"), "utf8"), "nested\n");
		assert.equal(existsSync(s.copy(".git")), false);
		assert.equal(existsSync(s.copy("node_modules")), false);
		assert.deepEqual(s.art("cwd", KEY)?.compiledFiles, {
			"references/deep/notes.txt": { hash: sha("nested\n") },
			"references/env.md": { hash: sha("# Environments\n") },
			"scripts/deploy.sh": { hash: sha(SCRIPT), executable: true },
		});
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), [], "a fresh copy is not stale");
	});

	it("does not follow or copy a link or a FIFO in the source folder, and the result says what was left", (t) => {
		const s = withSkillFolder(t);
		const secret = join(s.base, "secret.txt");
		writeFileSync(secret, "outside the project\n");
		symlinkSync(secret, join(s.src, "references/leak.md"));
		symlinkSync(join(s.base), join(s.src, "linked-dir"));
		execFileSync("mkfifo", [join(s.src, "scripts/pipe")]);
		const effects = s.acquire();
		assert.equal(existsSync(s.copy("references/leak.md")), false);
		assert.equal(existsSync(s.copy("linked-dir")), false);
		assert.equal(existsSync(s.copy("scripts/pipe")), false);
		assert.match(
			effects.notes.join("\n"),
			/not copied from the Skill's folder \(regular files only\): linked-dir \(a symbolic link\), references\/leak\.md \(a symbolic link\), scripts\/pipe \(a FIFO \(named pipe\)\)/,
		);
		assert.deepEqual(Object.keys(s.art("cwd", KEY)?.compiledFiles as JsonObject).sort(), [
			"references/deep/notes.txt",
			"references/env.md",
			"scripts/deploy.sh",
		]);
	});

	it("removing the artifact deletes the copied files and their folders; an edited one stays, with a note", (t) => {
		const s = withSkillFolder(t);
		s.acquire();
		s.commit({ cwd: { artifacts: { [KEY]: null } } });
		assert.equal(existsSync(join(s.cwd, COPY)), false, "the whole copied folder is gone");
		assert.equal(readFileSync(join(s.src, "scripts/deploy.sh"), "utf8"), SCRIPT, "the source folder is never touched");
		s.acquire();
		writeFileSync(s.copy("references/env.md"), "my own notes\n");
		const effects = s.commit({ cwd: { artifacts: { [KEY]: null } } });
		assert.equal(readFileSync(s.copy("references/env.md"), "utf8"), "my own notes\n");
		assert.equal(existsSync(s.copy("scripts/deploy.sh")), false);
		assert.equal(existsSync(s.copy("SKILL.md")), false);
		assert.match(effects.notes.join("\n"), /Left .*references\/env\.md in place: it changed after State Flow compiled it/);
	});

	it("acquiring again follows the source folder: a new file is copied, a changed one replaced, a removed one deleted", (t) => {
		const s = withSkillFolder(t);
		s.acquire();
		s.put("scripts/rollback.sh", "#!/bin/sh\necho back\n");
		s.put("references/env.md", "# Environments (v2)\n");
		rmSync(join(s.src, "references/deep"), { recursive: true });
		chmodSync(join(s.src, "scripts/deploy.sh"), 0o644);
		s.commit({ cwd: { artifacts: { [KEY]: { note: "refreshed" } } } });
		assert.equal(readFileSync(s.copy("scripts/rollback.sh"), "utf8"), "#!/bin/sh\necho back\n");
		assert.equal(readFileSync(s.copy("references/env.md"), "utf8"), "# Environments (v2)\n");
		assert.equal(existsSync(s.copy("references/deep")), false, "a file gone from the source goes from the copy, with its empty folder");
		assert.equal(statSync(s.copy("scripts/deploy.sh")).mode & 0o111, 0, "the executable bit follows the source");
		assert.deepEqual(Object.keys(s.art("cwd", KEY)?.compiledFiles as JsonObject).sort(), ["references/env.md", "scripts/deploy.sh", "scripts/rollback.sh"]);
	});

	it("says when the source folder changed beside SKILL.md (a file edited, added or removed), until acquired again", (t) => {
		const s = withSkillFolder(t);
		s.acquire();
		const note = () => staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note;
		s.put("scripts/deploy.sh", "#!/bin/sh\necho deployed v2\n");
		assert.equal(note(), "source Skill changed since it was acquired (scripts/deploy.sh edited); patch the artifact again to recompile");
		s.put("scripts/rollback.sh", "#!/bin/sh\necho back\n");
		rmSync(join(s.src, "references/deep"), { recursive: true });
		s.put("references/a\u001b[31m.md", "red\n");
		assert.equal(
			note(),
			"source Skill changed since it was acquired (references/a\\u001b[31m.md added, scripts/deploy.sh edited, scripts/rollback.sh added and 1 more); patch the artifact again to recompile",
			"names spelled out, at most three named",
		);
		// Links and special files were never copied, and are not changes of the folder either.
		rmSync(join(s.src, "references/a\u001b[31m.md"));
		symlinkSync(join(s.base), join(s.src, "linked-dir"));
		execFileSync("mkfifo", [join(s.src, "scripts/pipe")]);
		s.commit({ cwd: { artifacts: { [KEY]: { note: "refreshed" } } } });
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), [], "acquired again: the copy follows the source");
		// Another checkout (or machine) sees the path it was acquired from elsewhere: the source is where the key leads here.
		const elsewhere = {
			...s.histories.cwd.state,
			artifacts: { [KEY]: { ...(s.art("cwd", KEY) as JsonObject), provenance: { acquiredFrom: "/nowhere/deploy/SKILL.md" } } },
		};
		assert.deepEqual(staleArtifacts("cwd", elsewhere, s.roots), []);
		// A Skill tracked where pi finds it is its own source: nothing to fall behind.
		const inPlace = ".pi/skills/local/SKILL.md";
		mkdirSync(join(s.cwd, ".pi/skills/local/scripts"), { recursive: true });
		writeFileSync(join(s.cwd, inPlace), "---\nname: local\ndescription: A local Skill.\n---\nBody.\n");
		s.commit({ cwd: { artifacts: { [inPlace]: { kind: "skill" } } } });
		writeFileSync(join(s.cwd, ".pi/skills/local/scripts/run.sh"), "echo\n");
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), []);
		// A copied file swapped for a link (to anything, e.g. a secret outside) is never read through: it is gone as a file.
		const secret = join(s.base, "secret.txt");
		writeFileSync(secret, SCRIPT);
		rmSync(join(s.src, "scripts/deploy.sh"));
		symlinkSync(secret, join(s.src, "scripts/deploy.sh"));
		assert.equal(note(), "source Skill changed since it was acquired (scripts/deploy.sh removed); patch the artifact again to recompile");
	});

	it("never writes over a file State Flow did not write, and refuses a folder over the limits, writing nothing", (t) => {
		const s = withSkillFolder(t);
		mkdirSync(dirname(s.copy("scripts/deploy.sh")), { recursive: true });
		writeFileSync(s.copy("scripts/deploy.sh"), "#!/bin/sh\necho mine\n");
		const before = tree(s.cwd);
		refused(
			() => s.acquire(),
			/\.pi\/skills\/deploy\/scripts\/deploy\.sh` \(a file of the Skill's folder\) already exists and State Flow did not write it .*move it away first/,
		);
		assert.deepEqual(tree(s.cwd), before, "nothing written");
		assert.equal(s.art("cwd", KEY), undefined);
		rmSync(join(s.cwd, ".pi"), { recursive: true });
		for (let i = 0; i < SKILL_FOLDER_LIMITS.files; i++) s.put(`assets/a${i}.txt`, "x");
		const big = tree(s.cwd);
		refused(() => s.acquire(), /the Skill's folder holds more than 64 files besides SKILL\.md; acquiring copies the whole folder .*Slim the folder/);
		assert.deepEqual(tree(s.cwd), big, "nothing written");
	});

	it("reports a copied file that was edited or removed, and writes a missing one in another checkout from the same source", (t) => {
		const s = withSkillFolder(t);
		s.acquire();
		writeFileSync(s.copy("references/env.md"), "edited\n");
		assert.match(
			staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "",
			/compiled Skill \.pi\/skills\/deploy\/SKILL\.md: references\/env\.md was edited outside State Flow/,
		);
		rmSync(s.copy("references/env.md"));
		assert.match(staleArtifacts("cwd", s.histories.cwd.state, s.roots)[0]?.note ?? "", /is missing its references\/env\.md; patch the same artifact again/);
		// Another checkout: the state arrives, the copy does not. It is written from this checkout's source.
		rmSync(join(s.cwd, ".pi"), { recursive: true });
		const value = s.art("cwd", KEY);
		assert.equal(materialiseCompiled("cwd", KEY, value, s.roots)?.status, "written");
		assert.equal(readFileSync(s.copy("scripts/deploy.sh"), "utf8"), SCRIPT);
		assert.equal(statSync(s.copy("scripts/deploy.sh")).mode & 0o111, 0o111);
		assert.equal(readFileSync(s.copy("references/deep/notes.txt"), "utf8"), "nested\n");
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), []);
		// A source file that differs here is not copied: the head says why.
		rmSync(s.copy("references/env.md"));
		s.put("references/env.md", "other checkout's text\n");
		const m = materialiseCompiled("cwd", KEY, value, s.roots);
		assert.equal(m?.status, "problem");
		assert.match(m?.status === "problem" ? m.note : "", /missing its references\/env\.md and the source here is missing or differs/);
		assert.equal(existsSync(s.copy("references/env.md")), false);
	});

	it("a forged compiledFiles in a stored value can aim neither a write nor a deletion outside the Skill's folder", (t) => {
		const s = withSkillFolder(t);
		s.acquire();
		const victim = join(s.cwd, "README.md");
		writeFileSync(victim, "keep me\n");
		const value = s.art("cwd", KEY) as JsonObject;
		// A store planted in a repository may say anything: a path out of the folder, a hidden one, an absolute one.
		value.compiledFiles = {
			...(value.compiledFiles as JsonObject),
			"../../../README.md": { hash: sha("keep me\n") },
			"/etc/passwd": { hash: "x" },
			".hidden": { hash: "x" },
		};
		rmSync(join(s.cwd, ".pi"), { recursive: true });
		materialiseCompiled("cwd", KEY, value, s.roots);
		s.commit({ cwd: { artifacts: { [KEY]: null } } });
		assert.equal(readFileSync(victim, "utf8"), "keep me\n");
		assert.equal(existsSync(join(s.cwd, COPY)), false);
	});
});
