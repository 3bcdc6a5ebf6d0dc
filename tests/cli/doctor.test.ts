/**
 * `state-flow doctor` and a journal that can never be rolled forward (one of its stores was
 * restored to an older copy): doctor lists it with what blocks it, and `--drop-journal`
 * moves it aside (never deletes it) after saying what is given up; unknown ids are refused.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { UsageError } from "../../lib/cli/args.js";
import { parseArgs } from "../../lib/cli/verbs.js";
import { runDoctor } from "../../lib/cli/doctor/index.js";
import { acquireLock } from "../../lib/storage/file/lock.js";
import { storePaths } from "../../lib/storage/project/paths.js";
import { seenMarksOf } from "../../lib/storage/file/seen.js";
import { leaveJournal } from "../helpers/journal.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "./run.js";

const by = { kind: "system", reason: "test" } as const;

/** Global + CWD stores whose CWD store was restored to a copy older than a pending journal. */
async function blockedJournal(t: { after(fn: () => void): void }) {
	const root = tempDir(t, "state-flow-doctor-");
	const cwd = join(root, "project");
	const agent = join(root, "agent");
	mkdirSync(cwd);
	const journalDir = join(agent, "state-flow", "journal");
	const stores = openStoresAt({ agentDir: agent, cwd });
	await stores.commit({ global: { tactics: { g: 1 } }, cwd: { tactics: { c: 1 } } }, { by, id: "first", at: "x" });
	const cwdStore = join(cwd, ".pi", "state-flow");
	cpSync(cwdStore, join(root, "backup"), { recursive: true });
	await stores.commit({ cwd: { tactics: { c: 2 } } }, { by, id: "second", at: "x" });
	await leaveJournal(stores, journalDir, { global: { tactics: { g: 3 } }, cwd: { tactics: { c: 3 } } }, "third");
	rmSync(cwdStore, { recursive: true });
	cpSync(join(root, "backup"), cwdStore, { recursive: true });
	// The older copy is accepted (`doctor --accept-store cwd`, tested in tests/security/seen-marks.test.ts): only the journal blocks.
	const paths = storePaths(agent, cwd);
	assert.equal(seenMarksOf(paths).clear(paths.cwdRoot), true);
	const run = (args: string[]) => runCli([...args, "--agent-dir", agent], { cwd });
	const doctor = (extra: { dropJournal?: string; dryRun?: boolean }) => runDoctor({ ...parseArgs(["doctor", "--agent-dir", agent, "--cwd", cwd]), ...extra });
	return { agent, cwd, journalDir, run, doctor, dropped: join(agent, "state-flow", "journal-dropped") };
}

const jsonFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json")) : []);

describe("state-flow doctor and a journal that cannot be rolled forward", () => {
	it("lists the pending journal with what blocks it and how to drop it; changes nothing", async (t) => {
		const e = await blockedJournal(t);
		// Loading Global completes the Global part, then stops at the CWD part: the journal blocks that owner too.
		await assert.rejects(openStoresAt({ agentDir: e.agent, cwd: e.cwd }).load("global"), /journal/i);
		const before = readFileSync(join(e.journalDir, "third.json"), "utf8");
		const r = e.run(["doctor"]);
		assert.equal(r.code, 1, r.stderr);
		assert.match(
			unwrapped(r.stdout),
			/transition third is committed but not yet on every owner \(global .* \(has it\); cwd .*BLOCKED: the record continues seq 2 but the store is at seq 1.*\); it cannot be rolled forward\./,
		);
		assert.match(unwrapped(r.stdout), /run `state-flow doctor --drop-journal third`/);
		assert.equal(readFileSync(join(e.journalDir, "third.json"), "utf8"), before);
		assert.equal(existsSync(e.dropped), false);
	});

	it("--drop-journal moves the journal aside after naming what is given up, and the stores work again", async (t) => {
		const e = await blockedJournal(t);
		const text = readFileSync(join(e.journalDir, "third.json"), "utf8");
		const dry = await e.doctor({ dropJournal: "third", dryRun: true });
		assert.match(unwrapped(dry.stdout), /dropping third gives up completing transition third on: global .*; cwd /);
		assert.match(unwrapped(dry.stdout), /would move/);
		assert.deepEqual(jsonFiles(e.journalDir), ["third.json"]);

		const out = await e.doctor({ dropJournal: "third" });
		assert.match(unwrapped(out.stdout), /dropping third gives up completing transition third on: global .*; cwd .*Owners that already have it keep it\./);
		assert.equal(out.code, 0, out.stdout);
		assert.deepEqual(jsonFiles(e.journalDir), []);
		assert.equal(readFileSync(join(e.dropped, "third.json"), "utf8"), text, "the journal is kept, unchanged, in journal-dropped/");
		const stores = openStoresAt({ agentDir: e.agent, cwd: e.cwd });
		assert.deepEqual((await stores.load("global")).state.tactics, { g: 1 });
		assert.deepEqual((await stores.load("cwd")).state.tactics, { c: 1 });
		const again = e.run(["doctor"]);
		assert.equal(again.code, 0, again.stdout);
	});

	it("--drop-journal waits for a writer holding the journal's locks, and drops nothing that writer completed", async (t) => {
		const e = await blockedJournal(t);
		// A writer holds CWD's lock (here: this process, as a pi session would while it commits).
		const lock = await acquireLock(join(e.cwd, ".pi", "state-flow", "lock"), 1000);
		const running = e.doctor({ dropJournal: "third" });
		// While the lock is held the doctor cannot move anything; the writer completes its journal and lets go.
		rmSync(join(e.journalDir, "third.json"));
		lock.release();
		const out = await running;
		assert.match(unwrapped(out.stdout), /journal: third was completed by its writer meanwhile; nothing was dropped\./);
		assert.deepEqual(jsonFiles(e.dropped), []);
	});

	it("--drop-journal refuses an unknown id as a usage error and changes nothing", async (t) => {
		const e = await blockedJournal(t);
		await assert.rejects(
			e.doctor({ dropJournal: "nope" }),
			(err: unknown) => err instanceof UsageError && /no pending journal `nope`.*pending: `third`.*nothing was changed/.test(err.message),
		);
		await assert.rejects(
			e.doctor({ dropJournal: "../journal/third" }),
			(err: unknown) => err instanceof UsageError && /no pending journal `\.\.\/journal\/third`/.test(err.message),
		);
		assert.deepEqual(jsonFiles(e.journalDir), ["third.json"]);
		assert.equal(existsSync(e.dropped), false);
	});

	it("the real binary takes `--drop-journal <id>`: an unknown id exits 2 and changes nothing, the pending one is moved aside", async (t) => {
		const e = await blockedJournal(t);
		const unknown = e.run(["doctor", "--drop-journal", "nope"]);
		assert.equal(unknown.code, 2, unknown.stderr);
		assert.deepEqual(jsonFiles(e.journalDir), ["third.json"]);
		const dropped = e.run(["doctor", "--drop-journal", "third"]);
		assert.equal(dropped.code, 0, dropped.stdout + dropped.stderr);
		assert.deepEqual(jsonFiles(e.journalDir), []);
		assert.deepEqual(jsonFiles(e.dropped), ["third.json"]);
	});

	it("lists a damaged journal file as blocking and drops it by its file name", async (t) => {
		const e = await blockedJournal(t);
		rmSync(join(e.journalDir, "third.json"));
		writeFileSync(join(e.journalDir, "broken.json"), "{ not json");
		const r = e.run(["doctor", "--dry-run"]);
		assert.equal(r.code, 1);
		assert.match(unwrapped(r.stdout), /--drop-journal broken`/);
		const out = await e.doctor({ dropJournal: "broken" });
		assert.equal(out.code, 0, out.stdout);
		assert.equal(readFileSync(join(e.dropped, "broken.json"), "utf8"), "{ not json");
	});
});

describe("doctor on odd and damaged stores", () => {
	it("--move-aside with --dry-run only says what it would move; without it the folder is renamed, never deleted", async (t) => {
		const root = tempDir(t, "state-flow-doctor-aside-");
		const cwd = join(root, "project");
		const agent = join(root, "agent");
		mkdirSync(cwd);
		const stores = openStoresAt({ agentDir: agent, cwd });
		await stores.commit({ cwd: { tactics: { a: 1 } } }, { by, id: "a1", at: "2026-11-30T00:00:00.000Z" });
		const store = stores.identity().cwdRoot;
		const dry = runCli(["doctor", "--dry-run", "--move-aside", "cwd"], { cwd, env: { PI_CODING_AGENT_DIR: agent } });
		assert.match(unwrapped(dry.stdout), /would move .* \(kept, not deleted\)/);
		assert.ok(existsSync(join(store, "log.jsonl")));
		const log = readFileSync(join(store, "log.jsonl"));
		const moved = runCli(["doctor", "--move-aside", "cwd"], { cwd, env: { PI_CODING_AGENT_DIR: agent } });
		const dest = /moved \S+ to (\S+) \(kept/.exec(unwrapped(moved.stdout))?.[1];
		assert.ok(dest, moved.stdout);
		assert.deepEqual(readFileSync(join(dest, "log.jsonl")), log);
		assert.ok(!existsSync(store));
		const bad = runCli(["doctor", "--move-aside", "session"], { cwd, env: { PI_CODING_AGENT_DIR: agent } });
		assert.equal(bad.code, 2, bad.stderr);
	});

	it("reports a folder at the lock path with how to clear it, and never calls the store healthy", async (t) => {
		const root = tempDir(t, "state-flow-doctor-odd-");
		const cwd = join(root, "project");
		const agent = join(root, "agent");
		mkdirSync(cwd);
		const stores = openStoresAt({ agentDir: agent, cwd });
		await stores.commit({ cwd: { tactics: { a: 1 } } }, { by, id: "o1", at: "2026-11-30T00:00:00.000Z" });
		const lock = join(stores.identity().cwdRoot, "lock");
		mkdirSync(lock);
		const r = runCli(["doctor"], { cwd, env: { PI_CODING_AGENT_DIR: agent } });
		assert.equal(r.code, 1, r.stdout);
		assert.ok(r.stdout.includes(`rm -r '${lock}'`), r.stdout);
		assert.ok(existsSync(lock), "doctor removes nothing by itself");
	});
});
