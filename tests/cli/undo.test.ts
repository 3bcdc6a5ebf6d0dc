/**
 * `state-flow undo` through the real binary: the latest transition of the file owners (or of
 * the one named, or the one an id prefix names) reverted as a new transition recorded as a
 * command; refusals (nothing to undo, unknown or ambiguous id, a later change of the same keys,
 * the Session owner) write nothing.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { latestUndoPlan, reversalFor } from "../../lib/core/undo.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "./run.js";

const by = { kind: "system", reason: "test" } as const;

/** A message as one line: the CLI wraps what it prints at 80 columns. */
const flat = (text: string) => unwrapped(text).replace(/\n/g, " ");

async function setup(t: { after(fn: () => void): void }) {
	const { cwd, agentDir: agent } = projectDirs(t, "state-flow-undo-");
	const stores = () => openStoresAt({ agentDir: agent, cwd });
	const s = stores();
	// aaa1: both owners; bbb2: cwd tactics.t again; ccc3: global only.
	await s.commit({ global: { tactics: { g: 1 } }, cwd: { tactics: { t: "step", keep: 1 } } }, { by, id: "aaa1-0000", at: "2026-12-01T10:00:00.000Z" });
	await s.commit({ cwd: { tactics: { t: "changed" } } }, { by, id: "bbb2-0000", at: "2026-12-01T10:00:01.000Z" });
	await s.commit({ global: { tactics: { g: 2 } } }, { by, id: "ccc3-0000", at: "2026-12-01T10:00:02.000Z" });
	const run = (...args: string[]) => runCli([...args, "--agent-dir", agent], { cwd });
	const tactics = async (owner: "global" | "cwd") => (await stores().load(owner)).state.tactics;
	const logs = () => [join(agent, "state-flow", "global", "log.jsonl"), join(cwd, ".pi", "state-flow", "log.jsonl")].map((f) => readFileSync(f, "utf8"));
	return { run, tactics, logs, globalLog: join(agent, "state-flow", "global", "log.jsonl") };
}

describe("state-flow undo", () => {
	it("reverts the latest transition as a new one recorded as the command, then the owner named, then by id", async (t) => {
		const e = await setup(t);
		const latest = e.run("undo");
		assert.equal(latest.code, 0, latest.stderr);
		assert.match(unwrapped(latest.stdout), /^Reverted ccc3-000 \(global\) as transition [0-9a-f]{8}\.$/m);
		assert.deepEqual(await e.tactics("global"), { g: 1 });
		assert.match(e.run("history", "global").stdout, /^ {2}#3 \S+ (?:\d\d:\d\d:\d\d|\d\d-\d\d \d\d:\d\d|\d{4}-\d\d-\d\d) undo of ccc3-000 \S+ set tactics\.g$/m);

		const cwd = e.run("undo", "cwd");
		assert.equal(cwd.code, 0, cwd.stderr);
		assert.match(unwrapped(cwd.stdout), /Reverted bbb2-000 \(cwd\)/);
		assert.deepEqual(await e.tactics("cwd"), { t: "step", keep: 1 });

		// ccc3 and bbb2 are undone (their undos cancel them), so aaa1 is undone next, in both owners.
		const walk = e.run("undo");
		assert.equal(walk.code, 0, walk.stderr);
		assert.match(
			unwrapped(walk.stdout),
			/^Reverted aaa1-000 \(global\+cwd\) as transition [0-9a-f]{8}\.\nIt reverts:\n {2}global #1 aaa1-000 (?:\d\d:\d\d:\d\d|\d\d-\d\d \d\d:\d\d|\d{4}-\d\d-\d\d) system test set tactics\.\w+$/m,
		);
		assert.deepEqual(await e.tactics("global"), {});
		assert.deepEqual(await e.tactics("cwd"), {});
		// Redo walks forward again, newest undo first; an undone transition is not undone twice.
		const redo = e.run("redo");
		assert.equal(redo.code, 0, redo.stderr);
		assert.match(unwrapped(redo.stdout), /^Redid what [0-9a-f]{8} undid \(global\+cwd\)/);
		assert.deepEqual(await e.tactics("cwd"), { t: "step", keep: 1 });
		const before = e.logs();
		const twice = e.run("undo", "ccc3");
		assert.equal(twice.code, 1);
		assert.match(
			flat(twice.stderr),
			/global #2 \(ccc3-000\) was already reverted by global #3 \([0-9a-f]{8}\); undo that one to apply it again\. Nothing was written\./,
		);
		assert.deepEqual(e.logs(), before);
	});

	it("refuses an unknown or ambiguous id and the Session owner, writing nothing", async (t) => {
		const e = await setup(t);
		const before = e.logs();
		const unknown = e.run("undo", "zzz");
		assert.equal(unknown.code, 1);
		assert.match(
			flat(unknown.stderr),
			/no retained transition's id starts with `zzz`, and it is not an owner \(global, cwd\); `state-flow history` lists the ids\. Nothing was written\./,
		);
		const ambiguous = e.run("undo", "");
		assert.equal(ambiguous.code, 1);
		assert.match(flat(ambiguous.stderr), /`` starts 3 transition ids \(aaa1-0000, ccc3-0000, bbb2-0000\); type more of the id/);
		const session = e.run("undo", "session");
		assert.equal(session.code, 2);
		assert.match(unwrapped(session.stderr), /use `\/state undo session` inside pi/);
		assert.deepEqual(e.logs(), before);
		// A damaged owner is planned around: naming the other owner works, an undo that needs it is refused.
		const damaged = e.logs()[0] as string;
		appendFileSync(e.globalLog, "{not a record}\n");
		const whole = e.run("undo");
		assert.equal(whole.code, 1);
		assert.match(flat(whole.stderr), /cannot undo global: .*is damaged/);
		const cwd = e.run("undo", "cwd");
		assert.equal(cwd.code, 0, cwd.stderr);
		assert.match(unwrapped(cwd.stdout), /Reverted bbb2-000 \(cwd\)/);
		writeFileSync(e.globalLog, damaged);
		// By id, in every owner that retains it, when nothing changed its keys since.
		const byId = e.run("undo", "ccc");
		assert.equal(byId.code, 0, byId.stderr);
		assert.match(unwrapped(byId.stdout), /Reverted ccc3-000 \(global\)/);
		assert.deepEqual(await e.tactics("global"), { g: 1 });
	});
});

describe("state-flow undo, redo and restore: whose, and --yes", () => {
	it("refuses to revert another user's transition without --yes, naming them; --yes reverts it", async (t) => {
		const { cwd, agentDir: agent } = projectDirs(t, "state-flow-undo-team-");
		const bob = openStoresAt({ agentDir: agent, cwd, who: { user: "bob", host: "desk" } });
		await bob.commit({ cwd: { tactics: { b: 1 } } }, { by, id: "bob1-0000", at: "2026-12-01T10:00:00.000Z" });
		const run = (...args: string[]) => runCli([...args, "--agent-dir", agent], { cwd });
		const log = join(cwd, ".pi", "state-flow", "log.jsonl");
		const before = readFileSync(log, "utf8");
		const refused = run("undo");
		assert.equal(refused.code, 1);
		assert.match(
			unwrapped(refused.stderr),
			/^It reverts:\n {2}cwd #1 bob1-000 (?:\d\d:\d\d:\d\d|\d\d-\d\d \d\d:\d\d|\d{4}-\d\d-\d\d) system test bob@desk set tactics\.b\n/m,
		);
		assert.match(unwrapped(refused.stderr), /^state-flow: This undo reverts changes made by bob@desk\.\nNothing was written; add --yes to go ahead\.$/m);
		assert.equal(readFileSync(log, "utf8"), before);
		const done = run("undo", "--yes");
		assert.equal(done.code, 0, done.stderr);
		assert.match(unwrapped(done.stdout), /^Reverted bob1-000 \(cwd\) as transition /);
		assert.deepEqual((await bob.load("cwd")).state.tactics, {});
	});

	it("redoes my own change that alice undid without asking or naming her", async (t) => {
		const { cwd, agentDir: agent } = projectDirs(t, "state-flow-redo-own-");
		await openStoresAt({ agentDir: agent, cwd }).commit({ cwd: { tactics: { mine: 1 } } }, { by, id: "mine-0000", at: "2026-12-01T10:00:00.000Z" });
		const alice = openStoresAt({ agentDir: agent, cwd, who: { user: "alice", host: "lap" } });
		const plan = latestUndoPlan({ cwd: { ok: true, value: await alice.load("cwd") } }, ["cwd"], true);
		assert.ok(plan.ok);
		const reverts = reversalFor(plan.value);
		await alice.commit(plan.value.patch, {
			by: { kind: "command", command: "state-flow undo cwd", reverts },
			id: "alic-0000",
			at: "2026-12-01T10:00:01.000Z",
			exact: true,
		});
		const redo = runCli(["redo", "--agent-dir", agent], { cwd });
		assert.equal(redo.code, 0, redo.stderr);
		assert.doesNotMatch(unwrapped(redo.stdout) + redo.stderr, /made by|someone else|--yes/);
		assert.deepEqual((await alice.load("cwd")).state.tactics, { mine: 1 });
	});

	it("restore <id> [--path] brings an owner or one path back as one transition that names it", async (t) => {
		const e = await setup(t);
		const path = e.run("restore", "aaa1", "--path", "cwd.tactics.t");
		assert.equal(path.code, 0, path.stderr);
		assert.match(
			unwrapped(path.stdout),
			/^Restored cwd\.tactics\.t to after aaa1-000 as transition [0-9a-f]{8} \(1 reverted\)\.\nIt restores cwd\.tactics\.t to after aaa1-000, reverting 1 transition:\n {2}cwd #2 /,
		);
		assert.deepEqual(await e.tactics("cwd"), { t: "step", keep: 1 });
		assert.match(unwrapped(e.run("history", "cwd", "--full").stdout), / by restore to aaa1-0000 \(cwd\.tactics\.t\) /);
		const whole = e.run("restore", "aaa1");
		assert.equal(whole.code, 0, whole.stderr);
		assert.deepEqual(await e.tactics("global"), { g: 1 });
		const again = e.run("restore", "aaa1");
		assert.equal(again.code, 1);
		assert.match(flat(again.stderr), /nothing to restore: every owner that retains it is already as it was after aaa1-000/);
		assert.equal(e.run("restore").code, 2);
		assert.equal(e.run("restore", "aaa1", "--path", "effective.tactics").code, 2);
	});
});
