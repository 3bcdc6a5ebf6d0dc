/**
 * Stores apart (issue 25), with the real `state-flow` binary on real git: a store an older
 * build made in a subfolder or a worktree is reported by `show` and `doctor`, and `adopt`
 * moves it into the project's store with its history, adds it as one transition when the
 * project's store holds state (refused over a key both hold, nothing written), or keeps it
 * apart on purpose; the store apart is never deleted. `show` names the project in one line.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { TransitionRecord } from "../../lib/core/types.js";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { projectOf, storeInRoot } from "../../lib/storage/project/project.js";
import { git, repo } from "../helpers/git-repo.js";
import { runCli, unwrapped } from "./run.js";

const by = { kind: "system", reason: "older build" } as const;

/** Write a store the way an older build did: straight into `<folder>/.pi/state-flow`, one transition per record. */
async function olderRecords(
	folder: string,
	records: ReadonlyArray<Pick<TransitionRecord, "patch" | "undo"> & { id?: string }>,
	idPrefix = "old",
): Promise<void> {
	const store = new FileOwnerStore({ owner: "cwd", root: storeInRoot(folder), retention: 20, gitignore: true });
	for (const [i, r] of records.entries()) {
		const c = await store.commit({ id: `${idPrefix}-${i}`, seq: i + 1, at: "2026-01-01T00:00:00.000Z", by, ...r, cascades: [], owners: ["cwd"] }, i);
		assert.equal(c.kind, "committed");
	}
}

/** An older build's store of tactics, one transition per tactic. */
async function olderStore(folder: string, tactics: Record<string, number>): Promise<void> {
	await olderRecords(
		folder,
		Object.entries(tactics).map(([k, v]) => ({ id: `old-${k}`, patch: { tactics: { [k]: v } }, undo: { tactics: { [k]: null } } })),
	);
}

describe("state-flow adopt", () => {
	it("reports a subfolder's store apart, then moves it into the empty project store with its history", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		await olderStore(join(dir, "src"), { a: 1, b: 2 });
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const show = runCli(["show", "cwd"], { cwd: join(dir, "src"), env });
		assert.match(unwrapped(show.stdout), /^project .*proj \(git root above\)$/m);
		for (const l of show.stdout.split("\n")) if (l.startsWith("project ")) assert.ok(l.length <= 80, l);
		assert.match(unwrapped(show.stdout), /store apart from this project's memory: .*src\/\.pi\/state-flow \(subfolder\)/);
		const doctor = runCli(["doctor"], { cwd: dir, env });
		assert.match(unwrapped(doctor.stdout), /state-flow adopt .*src/);
		const adopt = runCli(["adopt", join(dir, "src")], { cwd: join(dir, "src"), env });
		assert.equal(adopt.code, 0, adopt.stderr);
		assert.match(unwrapped(adopt.stdout), /seq 2, 2 retained transition\(s\)\) into the project's store/);
		const back = runCli(["history", "cwd"], { cwd: dir, env });
		assert.match(unwrapped(back.stdout), /old-a|#1/);
		const after = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual([after.seq, after.state.tactics], [2, { a: 1, b: 2 }]);
		assert.ok(existsSync(join(storeInRoot(join(dir, "src")), "log.jsonl")), "the store apart is kept");
		assert.match(readFileSync(join(storeInRoot(join(dir, "src")), "apart"), "utf8"), /^adopted into /);
		assert.doesNotMatch(unwrapped(runCli(["show", "cwd"], { cwd: dir, env }).stdout), /store apart/);
	});

	it("a subfolder's artifact keys are rebased onto the checkout's root, history and references included", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const sub = join(dir, "src");
		const art = { kind: "file", note: "entry" };
		const ref = { $ref: 'cwd.artifacts["a.txt"]' };
		const records: Array<Pick<TransitionRecord, "patch" | "undo">> = [
			{ patch: { artifacts: { "a.txt": art } }, undo: { artifacts: { "a.txt": null } } },
			{ patch: { tactics: { use: { uses: ref } }, artifacts: { "../README.md": art } }, undo: { tactics: { use: null }, artifacts: { "../README.md": null } } },
		];
		await olderRecords(sub, records);
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const run = runCli(["adopt", sub], { cwd: dir, env });
		assert.equal(run.code, 0, run.stderr);
		const after = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual(Object.keys(after.state.artifacts).sort(), ["README.md", "src/a.txt"], "keys name the same files from the checkout's root");
		assert.deepEqual(after.state.tactics, { use: { uses: { $ref: 'cwd.artifacts["src/a.txt"]' } } });
		assert.deepEqual(
			after.tail.map((r) => Object.keys(r.patch.artifacts ?? {})),
			[["src/a.txt"], ["README.md"]],
			"every retained transition is rebased: undo walks back over the same files",
		);
		assert.deepEqual(after.tail[1]?.undo.artifacts, { "README.md": null });
	});

	it("a subfolder's compiled Skill moves to the checkout's Skill place; one the project already compiles there refuses it", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const key = ".pi/skills/x/SKILL.md";
		const skill = { kind: "skill", name: "x", description: "d", body: "b", compiledTo: key, compiledHash: "h" };
		const older = (folder: string, id: string) => olderRecords(folder, [{ patch: { artifacts: { [key]: skill } }, undo: { artifacts: { [key]: null } } }], id);
		await older(join(dir, "src"), "s-1");
		const run = runCli(["adopt", join(dir, "src")], { cwd: dir, env });
		assert.equal(run.code, 0, run.stderr);
		assert.match(unwrapped(run.stdout), /Its Skills now compile at the checkout's root \(\.pi\/skills\/x\/SKILL\.md\).*left in place/s);
		const after = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual(after.state.artifacts, { [key]: skill }, "the Skill's place is the project's, not src/.pi/skills");

		mkdirSync(join(dir, "docs"));
		await older(join(dir, "docs"), "d-1");
		const refused = runCli(["adopt", join(dir, "docs")], { cwd: dir, env });
		assert.equal(refused.code, 1);
		assert.match(
			unwrapped(refused.stderr),
			/both hold artifacts\["\.pi\/skills\/x\/SKILL\.md"\], a Skill compiled to \.pi\/skills\/x\/SKILL\.md; nothing was written/,
		);
	});

	it("a worktree's store apart joins a project store that holds state as one transition; a shared key refuses it whole", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const wt = join(base, "wt2");
		git(dir, "worktree", "add", "-q", "-b", "feat", wt);
		await olderStore(dir, { main: 1 });
		await olderStore(wt, { main: 5, mine: 2 });
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const refused = runCli(["adopt", wt], { cwd: wt, env });
		assert.equal(refused.code, 1);
		assert.match(
			unwrapped(refused.stderr),
			/both hold tactics\.main; nothing was written\. Delete it \(`state-flow delete cwd\.tactics\.main`\) from the project's store and adopt again, or keep the store apart with `--keep`\./,
		);
		const root = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true });
		assert.equal(root.read().seq, 1);
		const keep = runCli(["adopt", wt, "--keep"], { cwd: wt, env });
		assert.equal(keep.code, 0, keep.stderr);
		assert.doesNotMatch(unwrapped(runCli(["doctor"], { cwd: wt, env }).stdout), /store apart/);
		assert.equal(runCli(["adopt", wt], { cwd: wt, env }).code, 1, "a decided store is no longer adoptable");
	});

	it("adds a worktree's disjoint store as one transition", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const wt = join(base, "wt2");
		git(dir, "worktree", "add", "-q", "-b", "feat", wt);
		await olderStore(dir, { main: 1 });
		await olderStore(wt, { mine: 2 });
		const run = runCli(["adopt", wt], { cwd: dir, env: { PI_CODING_AGENT_DIR: agentDir } });
		assert.equal(run.code, 0, run.stderr);
		const root = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual([root.seq, root.state.tactics], [2, { main: 1, mine: 2 }]);
	});

	it("doctor names every store apart on its own line; a folder name's line break never breaks `show`'s note", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const odd = join(dir, "we\nird");
		await olderStore(odd, { a: 1 });
		await olderStore(join(dir, "docs"), { b: 2 });
		await olderStore(join(dir, "my docs"), { c: 3 });
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const doctor = unwrapped(runCli(["doctor"], { cwd: dir, env }).stdout).split("\n");
		const named = doctor.filter((l) => l.startsWith("cwd: a store apart"));
		assert.equal(named.length, 3, doctor.join("\n"));
		assert.ok(
			named.some((l) => l.includes("state-flow adopt '/") && l.includes("/my docs'")),
			"a folder with a space is one shell word",
		);
		const show = unwrapped(runCli(["show", "cwd"], { cwd: odd, env }).stdout);
		const note = show.split("\n").find((l) => l.startsWith("Note: a store apart"));
		assert.match(note ?? "", /we\\u000aird\/\.pi\/state-flow \(subfolder\); run `state-flow adopt .*` to move it in, or `--keep` to keep it apart$/, show);
	});

	it("moves an older build's root store into the repository's git dir with its history; a writer that opened it before refuses it after", async (t) => {
		const { base, dir } = repo(t);
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		await olderStore(dir, { a: 1, b: 2 });
		const env = { PI_CODING_AGENT_DIR: agentDir };
		const common = join(dir, ".git", "state-flow");
		assert.equal(projectOf(dir).store, storeInRoot(dir));
		const advice = runCli(["doctor"], { cwd: join(dir, "src"), env }).stdout.replace(/\s+/g, " ");
		assert.match(
			advice,
			/this project's memory is in \S*proj\/\.pi\/state-flow, inside the work tree, .* `state-flow adopt \S*proj` moves it, with its history, into \S*proj\/\.git\/state-flow/,
		);
		// A process that opened the root store before the move (a running session, a long command).
		const before = openStoresAt({ agentDir, cwd: dir });
		assert.deepEqual((await before.load("cwd")).state.tactics, { a: 1, b: 2 });
		const moved = runCli(["adopt", dir], { cwd: join(dir, "src"), env });
		assert.equal(moved.code, 0, moved.stderr);
		assert.match(
			unwrapped(moved.stdout),
			/Moved this project's memory from \S*\.pi\/state-flow into \S*\.git\/state-flow \(seq 2, 2 retained transition\(s\)\), with its history; read back and verified/,
		);
		const after = new FileOwnerStore({ owner: "cwd", root: common, retention: 20, gitignore: true }).read();
		assert.deepEqual([after.seq, after.state.tactics, after.tail.map((r) => r.id)], [2, { a: 1, b: 2 }, ["old-a", "old-b"]]);
		assert.equal(projectOf(dir).store, common);
		assert.match(readFileSync(join(storeInRoot(dir), "apart"), "utf8"), /^moved into \S*\.git\/state-flow/);
		await assert.rejects(
			before.commit({ cwd: { tactics: { late: 1 } } }, { by, id: "late", at: "2026-01-01T00:00:00.000Z" }),
			/no longer where this project's memory is kept/,
		);
		await before.close();
		assert.equal(
			new FileOwnerStore({ owner: "cwd", root: storeInRoot(dir), retention: 20, gitignore: true }).read().seq,
			2,
			"nothing was written to the old store",
		);
		const show = runCli(["show", "cwd"], { cwd: dir, env });
		assert.match(unwrapped(show.stdout), /^CWD {2}\S*\.git\/state-flow/m);
		assert.doesNotMatch(unwrapped(show.stdout), /store apart/);
		assert.doesNotMatch(unwrapped(runCli(["doctor"], { cwd: dir, env }).stdout), /inside the work tree/);
	});

	it("names a hostile repository folder as data when it moves its root store into .git", async (t) => {
		const { base } = repo(t);
		const odd = join(base, "we\nird");
		mkdirSync(odd);
		git(odd, "init", "-q");
		await olderStore(odd, { a: 1 });
		const agentDir = join(base, "agent");
		mkdirSync(agentDir);
		const moved = runCli(["adopt", odd], { cwd: odd, env: { PI_CODING_AGENT_DIR: agentDir } });
		assert.equal(moved.code, 0, moved.stderr);
		const line = unwrapped(moved.stdout).split("\n")[0] ?? "";
		assert.match(line, /^Moved this project's memory from \S*we\\u000aird\/\.pi\/state-flow into \S*we\\u000aird\/\.git\/state-flow \(seq 1/);
	});
});
