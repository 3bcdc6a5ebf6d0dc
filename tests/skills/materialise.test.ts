/**
 * Compiled Skills of a shared owner on "another machine": a checkout whose CWD store was
 * copied from another checkout (what a shared owner looks like to this one) gets the compiled
 * Skills the state names, written where missing, never over a different file or through a
 * link, with pi listing them, without a transition and without looking again each prompt.
 * Real pi sessions (faux model), real files.
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { bytesUnder } from "../host/fixture.js";
import { KEY, type Machine, commitOn, count, deployNotes, headOf, machines, open, releaseNotes, wrote } from "./materialise-fixture.js";

/** What sharing the owner looks like to checkout `b`: `a`'s CWD store, as it is now. */
function share(a: Machine, b: Machine): void {
	rmSync(join(b.cwd, ".pi/state-flow"), { recursive: true, force: true });
	cpSync(join(a.cwd, ".pi/state-flow"), join(b.cwd, ".pi/state-flow"), { recursive: true });
}

const store = (m: Machine) => bytesUnder(join(m.cwd, ".pi/state-flow"));

describe("compiled Skills of a shared owner in another checkout", () => {
	it("a missing compiled Skill is written at session start, pi loads and lists it, and no transition is made", async (t) => {
		const { a, b } = machines(t);
		await commitOn(a, { [KEY]: releaseNotes });
		share(a, b);
		const storeBefore = store(b);
		const s = await open(b);
		try {
			const file = join(b.cwd, KEY);
			assert.deepEqual(readFileSync(file), readFileSync(join(a.cwd, KEY)), "the same bytes as the committing checkout");
			assert.deepEqual(s.skills(), [["release-notes", file]], "pi loaded the Skill written at session start");
			assert.deepEqual(wrote(s.notes), [`State Flow: wrote the compiled Skill ${file} (CWD state names it; it was missing here).`]);
			const seen = await s.prompt();
			assert.equal(count(seen.systemPrompt, `<location>${file}</location>`), 1, "listed once, by pi");
			assert.doesNotMatch(headOf(seen), /stale artifact/);
			assert.equal(store(b), storeBefore, "materialising made no transition");
		} finally {
			s.dispose();
		}
	});

	it("a Skill compiled elsewhere during the session is written before the next prompt and listed in that prompt", async (t) => {
		const { a, b } = machines(t);
		await commitOn(a, { [KEY]: releaseNotes });
		share(a, b);
		const s = await open(b);
		try {
			await s.prompt();
			await commitOn(a, { ".pi/skills/deploy-notes/SKILL.md": deployNotes });
			share(a, b);
			const seen = await s.prompt();
			assert.doesNotMatch(headOf(seen), /stale artifact/, "checked after it was written");
			const file = join(b.cwd, ".pi/skills/deploy-notes/SKILL.md");
			assert.deepEqual(readFileSync(file), readFileSync(join(a.cwd, ".pi/skills/deploy-notes/SKILL.md")));
			assert.deepEqual(
				s.skills().map(([n]) => n),
				["release-notes"],
				"pi itself discovers Skills only at session start",
			);
			assert.match(seen.systemPrompt, /<name>deploy-notes<\/name>\n {4}<description>Write the deploy log.<\/description>/);
			assert.equal(count(seen.systemPrompt, `<location>${file}</location>`), 1);
			assert.equal(count(seen.systemPrompt, "<available_skills>"), 1, "one Skill list, pi's");
			assert.equal(count(seen.systemPrompt, "<name>release-notes</name>"), 1);
		} finally {
			s.dispose();
		}
	});

	it("an identical file is left untouched", async (t) => {
		const { a, b } = machines(t);
		await commitOn(a, { [KEY]: releaseNotes });
		share(a, b);
		const file = join(b.cwd, KEY);
		mkdirSync(join(b.cwd, ".pi/skills/release-notes"), { recursive: true });
		writeFileSync(file, readFileSync(join(a.cwd, KEY)));
		const before = statSync(file);
		const s = await open(b);
		try {
			const seen = await s.prompt();
			const after = statSync(file);
			assert.deepEqual([after.ino, after.mtimeMs], [before.ino, before.mtimeMs]);
			assert.deepEqual(wrote(s.notes), []);
			assert.doesNotMatch(headOf(seen), /stale artifact/);
		} finally {
			s.dispose();
		}
	});

	it("a different file is never overwritten: the head carries the usual note, the user is told once", async (t) => {
		const { a, b } = machines(t);
		await commitOn(a, { [KEY]: releaseNotes });
		share(a, b);
		const file = join(b.cwd, KEY);
		mkdirSync(join(b.cwd, ".pi/skills/release-notes"), { recursive: true });
		const mine = "---\nname: release-notes\ndescription: My own.\n---\nMine.\n";
		writeFileSync(file, mine);
		const s = await open(b);
		try {
			const first = await s.prompt();
			const second = await s.prompt();
			assert.equal(readFileSync(file, "utf8"), mine);
			const line = `! stale artifact: artifacts[\\"${KEY}\\"]: compiled Skill ${KEY} was edited outside State Flow`;
			assert.ok(headOf(first).includes(line), headOf(first));
			assert.ok(headOf(second).includes(line), "still named while it lasts");
			assert.deepEqual(
				s.notes.filter((n) => n.includes("edited outside State Flow")),
				[`State Flow: CWD artifacts["${KEY}"]: compiled Skill ${KEY} was edited outside State Flow.`],
			);
			assert.deepEqual(wrote(s.notes), []);
		} finally {
			s.dispose();
		}
	});

	for (const target of ["an existing file", "nothing (a dangling link)"]) {
		it(`a link at the Skill's place is refused and never followed: it points to ${target}`, async (t) => {
			const { a, b, base } = machines(t);
			await commitOn(a, { [KEY]: releaseNotes });
			share(a, b);
			const outside = join(base, "outside.md");
			if (target === "an existing file") writeFileSync(outside, "outside\n");
			mkdirSync(join(b.cwd, ".pi/skills/release-notes"), { recursive: true });
			const file = join(b.cwd, KEY);
			symlinkSync(outside, file);
			const s = await open(b);
			try {
				const seen = await s.prompt();
				assert.equal(lstatSync(file).isSymbolicLink(), true);
				if (target === "an existing file") assert.equal(readFileSync(outside, "utf8"), "outside\n");
				else assert.equal(existsSync(outside), false, "a write through the link would have created its target");
				assert.ok(headOf(seen).includes(`! stale artifact: artifacts[\\"${KEY}\\"]: compiled Skill ${KEY} was not written:`), headOf(seen));
				assert.match(headOf(seen), /is a symbolic link where State Flow keeps a regular file/);
				assert.equal(s.notes.filter((n) => n.includes("symbolic link")).length, 1);
			} finally {
				s.dispose();
			}
		});
	}

	it("unchanged state is not looked at again each prompt; a transition touching the Skill is", async (t) => {
		const { a, b } = machines(t);
		await commitOn(a, { [KEY]: releaseNotes });
		share(a, b);
		const s = await open(b);
		try {
			const file = join(b.cwd, KEY);
			assert.equal(existsSync(file), true);
			rmSync(file);
			await s.prompt();
			assert.equal(existsSync(file), false, "same seq: the file is not looked at again");
			await commitOn(a, { ".pi/skills/deploy-notes/SKILL.md": deployNotes });
			share(a, b);
			await s.prompt();
			assert.equal(existsSync(join(b.cwd, ".pi/skills/deploy-notes/SKILL.md")), true, "the Skill it touched is written");
			assert.equal(existsSync(file), false, "a transition that did not touch the Skill does not look at it");
			await commitOn(a, { [KEY]: { body: "# Release notes\n\nGroup by type, newest first." } });
			share(a, b);
			await s.prompt();
			assert.match(readFileSync(file, "utf8"), /newest first/, "a transition touching the Skill does");
			assert.equal(wrote(s.notes).length, 3);
		} finally {
			s.dispose();
		}
	});

	it("an acquired Skill's copy is written from this checkout's source when it is the same, else the head says why", async (t) => {
		const { a, b } = machines(t);
		const source = "---\nname: deploy\ndescription: Deploy checklist.\n---\nTag, then ship.\n";
		for (const m of [a, b]) {
			mkdirSync(join(m.cwd, "vendor/deploy"), { recursive: true });
			writeFileSync(join(m.cwd, "vendor/deploy/SKILL.md"), source);
		}
		await commitOn(a, { "vendor/deploy/SKILL.md": { kind: "skill" } });
		share(a, b);
		const copy = join(b.cwd, ".pi/skills/deploy/SKILL.md");
		const same = await open(b);
		same.dispose();
		assert.equal(readFileSync(copy, "utf8"), source);
		rmSync(join(b.cwd, ".pi/skills"), { recursive: true });
		writeFileSync(join(b.cwd, "vendor/deploy/SKILL.md"), source.replace("Tag", "Tag twice"));
		const other = await open(b);
		try {
			const seen = await other.prompt();
			assert.equal(existsSync(copy), false);
			assert.ok(
				headOf(seen).includes(
					"compiled Skill .pi/skills/deploy/SKILL.md is missing and its source here is missing or differs from the one acquired; patch the same artifact again once this checkout holds the source",
				),
				headOf(seen),
			);
		} finally {
			other.dispose();
		}
	});

	it("a Global Skill is written into this machine's agent folder", async (t) => {
		const { a, b } = machines(t, () => ({ owners: ["global"] }));
		await commitOn(a, { "skills/release-notes/SKILL.md": releaseNotes });
		cpSync(join(a.agentDir, "state-flow/global"), join(b.agentDir, "state-flow/global"), { recursive: true });
		const s = await open(b);
		try {
			const file = join(b.agentDir, "skills/release-notes/SKILL.md");
			assert.deepEqual(readFileSync(file), readFileSync(join(a.agentDir, "skills/release-notes/SKILL.md")));
			assert.deepEqual(s.skills(), [["release-notes", file]]);
			assert.equal(existsSync(join(b.cwd, ".pi")), false);
		} finally {
			s.dispose();
		}
	});

	it("a Skill this session compiles is listed from its next prompt, and by pi itself (once) in the next session", async (t) => {
		const { a } = machines(t);
		const s = await open(a);
		try {
			const during = await s.prompt([{ artifacts: { [KEY]: releaseNotes } }]);
			assert.equal(count(during.systemPrompt, "<name>release-notes</name>"), 0, "the run that compiles it keeps its system prompt");
			const next = await s.prompt();
			assert.equal(count(next.systemPrompt, `<location>${join(a.cwd, KEY)}</location>`), 1);
			assert.deepEqual(s.skills(), [], "pi's own loader has it from the next session");
			assert.deepEqual(wrote(s.notes), [], "the commit wrote it, not materialising");
		} finally {
			s.dispose();
		}
		const later = await open(a);
		try {
			const seen = await later.prompt();
			assert.equal(count(seen.systemPrompt, "<name>release-notes</name>"), 1);
		} finally {
			later.dispose();
		}
	});
});
