/**
 * The write-only-where-nothing-is primitive for compiled Skills, on real files: it creates
 * the folder and the file, and it never replaces or follows anything already at the place —
 * a file, a link to a file, a dangling link — nor writes through a Skill folder linked out of
 * the owner's folder. No temp file is left behind either way.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { isStateError } from "../../lib/core/errors.js";
import { writeCompiledIfMissing } from "../../lib/storage/artifacts/files.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild } from "../storage/children/spawn.js";
import { setup, skill } from "./artifact-fixture.js";

function place(t: { after(fn: () => void): void }) {
	const base = tempDir(t, "state-flow-compiled-write-");
	const root = join(base, "proj");
	mkdirSync(root);
	return { base, root, dir: join(root, ".pi/skills/notes"), file: join(root, ".pi/skills/notes/SKILL.md") };
}

const BYTES = Buffer.from("---\nname: notes\ndescription: d\n---\nbody\n");

describe("writeCompiledIfMissing", () => {
	it("creates the missing folders and the file with exactly the bytes, and leaves no temp file", (t) => {
		const p = place(t);
		assert.equal(writeCompiledIfMissing(p.file, p.root, BYTES), true);
		assert.deepEqual(readFileSync(p.file), BYTES);
		assert.deepEqual(readdirSync(p.dir), ["SKILL.md"]);
	});

	it("replaces nothing: a file, a link to a file and a dangling link stay as they were", (t) => {
		const p = place(t);
		mkdirSync(p.dir, { recursive: true });
		const outside = join(p.base, "outside.md");
		const cases: Array<[string, () => void, () => void]> = [
			["a file", () => writeFileSync(p.file, "mine\n"), () => assert.equal(readFileSync(p.file, "utf8"), "mine\n")],
			[
				"a link to a file",
				() => {
					writeFileSync(outside, "outside\n");
					symlinkSync(outside, p.file);
				},
				() => assert.equal(readFileSync(outside, "utf8"), "outside\n"),
			],
			["a dangling link", () => symlinkSync(outside, p.file), () => assert.equal(existsSync(outside), false)],
		];
		for (const [what, plant, unchanged] of cases) {
			plant();
			assert.equal(writeCompiledIfMissing(p.file, p.root, BYTES), false, what);
			unchanged();
			assert.deepEqual(readdirSync(p.dir), ["SKILL.md"], `${what}: no temp file left`);
			if (what !== "a file") assert.equal(readlinkSync(p.file), outside);
			// Clear the place for the next case.
			rmSync(p.file);
			rmSync(outside, { force: true });
		}
	});

	it("refuses a Skill folder linked out of the owner's folder, writing nothing there", (t) => {
		const p = place(t);
		const elsewhere = join(p.base, "elsewhere");
		mkdirSync(elsewhere);
		mkdirSync(join(p.root, ".pi/skills"), { recursive: true });
		symlinkSync(elsewhere, p.dir);
		assert.throws(
			() => writeCompiledIfMissing(p.file, p.root, BYTES),
			(e: unknown) => isStateError(e) && /outside/.test(e.message),
		);
		assert.deepEqual(readdirSync(elsewhere), []);
	});
});

describe("materialising one compiled Skill from several processes at once", () => {
	it("exactly one process writes it, the others find State Flow's bytes; nothing else is left", async (t) => {
		const s = setup(t);
		const key = ".pi/skills/release-notes/SKILL.md";
		s.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } });
		const file = join(s.cwd, key);
		const bytes = readFileSync(file);
		const value = JSON.stringify(s.art("cwd", key));
		for (let round = 0; round < 3; round++) {
			rmSync(join(s.cwd, ".pi/skills"), { recursive: true });
			const children = Array.from({ length: 4 }, () => runChild("materialise-child", ["cwd", s.cwd, s.agentDir, key, value]));
			await Promise.all(children.map((c) => c.ready));
			for (const c of children) c.proc.kill("SIGUSR2");
			const outcomes = await Promise.all(children.map((c) => c.done));
			const statuses = outcomes.map((o) => (JSON.parse(o.stdout.split("\n")[1] ?? "null") as { status: string } | null)?.status).sort();
			assert.deepEqual(statuses, ["present", "present", "present", "written"], JSON.stringify(outcomes));
			assert.deepEqual(readFileSync(file), bytes);
			assert.deepEqual(readdirSync(dirname(file)), ["SKILL.md"], "no temp file left");
		}
	});
});
