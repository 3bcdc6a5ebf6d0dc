/**
 * A hostile repository: a link (relative and absolute), a dangling link, a folder, a FIFO
 * or garbage at every path State Flow touches. Whatever is planted, a sentinel folder
 * outside the project and the agent directory stays byte-identical, and every access either
 * works or is refused with a StateError that names the path and says what to do. Nothing
 * blocks: a FIFO is never opened for reading or writing.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { isStateError, messageOf } from "../../lib/core/errors.js";
import { createArtifactCompiler } from "../../lib/storage/artifacts/compiler.js";
import { acquireLock, onLockWait } from "../../lib/storage/file/lock.js";
import { at } from "../helpers/at.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "../cli/run.js";
import { startFlow } from "../host/fixture.js";
import { AGENT_PATHS, CWD_PATHS, KINDS, assertClearRefusal, makeSentinel, plant, snapshot } from "./hostile.js";
import type { Kind } from "./hostile.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("h", "2026-12-01T00:00:00.000Z", by);

interface World {
	proj: string;
	agent: string;
	sentinel: string;
}

function world(t: { after(fn: () => void): void }): World {
	const base = tempDir(t, "state-flow-hostile-");
	const w = { proj: join(base, "proj"), agent: join(base, "agent"), sentinel: makeSentinel(join(base, "outside")) };
	mkdirSync(w.proj);
	mkdirSync(w.agent);
	return w;
}

const open = (w: World) => openStoresAt({ agentDir: w.agent, cwd: w.proj, lockTimeoutMs: 3_000 });

/** Stores that already wrote both owners, so every file exists before something is planted over it. */
async function seed(w: World): Promise<void> {
	await open(w).commit({ global: { tactics: { g: 1 } }, cwd: { tactics: { c: 1 } } }, meta());
}

/** Every access a session makes: reads, single-owner and multi-owner writes, status. Each works or is refused clearly. */
async function exercise(w: World, label: string): Promise<string[]> {
	const outcomes: string[] = [];
	const s = open(w);
	const step = async (name: string, fn: () => unknown) => {
		try {
			await fn();
			outcomes.push(`${name}: ok`);
		} catch (e) {
			assertClearRefusal(e, `${label} ${name}`);
			outcomes.push(`${name}: ${messageOf(e)}`);
		}
	};
	await step("load cwd", () => s.load("cwd"));
	await step("load global", () => s.load("global"));
	await step("commit cwd", () => s.commit({ cwd: { tactics: { after: 1 } } }, meta()));
	await step("commit global", () => s.commit({ global: { tactics: { after: 1 } } }, meta()));
	await step("commit both", () => s.commit({ global: { tactics: { both: 1 } }, cwd: { tactics: { both: 1 } } }, meta()));
	return outcomes;
}

describe("hostile repository", () => {
	for (const rel of CWD_PATHS) {
		for (const kind of KINDS) {
			it(`${kind} at <project>/${rel}: nothing outside changes, every access works or is refused clearly`, async (t) => {
				const w = world(t);
				const inner = rel.startsWith(".pi/state-flow/");
				if (inner) await seed(w);
				const before = snapshot(w.sentinel);
				plant(join(w.proj, rel), rel, kind, w.sentinel);
				// A lock file checked out from git is as fresh as the checkout; an old one is judged abandoned at once.
				if (kind === "garbage" && rel.endsWith("/lock")) utimesSync(join(w.proj, rel), new Date(0), new Date(0));
				const outcomes = await exercise(w, `${kind} at ${rel}`);
				assert.deepEqual(snapshot(w.sentinel), before, `the sentinel changed: ${outcomes.join("\n")}`);
				expectations(rel, kind, outcomes);
			});
		}
	}

	for (const rel of AGENT_PATHS) {
		for (const kind of KINDS) {
			it(`${kind} at <agentDir>/${rel}: nothing outside changes, every access works or is refused clearly`, async (t) => {
				const w = world(t);
				if (rel.startsWith("state-flow/global/")) await seed(w);
				const before = snapshot(w.sentinel);
				plant(join(w.agent, rel), rel, kind, w.sentinel);
				if (kind === "garbage" && rel.endsWith("/lock")) utimesSync(join(w.agent, rel), new Date(0), new Date(0));
				const outcomes = await exercise(w, `${kind} at ${rel}`);
				assert.deepEqual(snapshot(w.sentinel), before, `the sentinel changed: ${outcomes.join("\n")}`);
			});
		}
	}

	for (const rel of [".pi/skills", ".pi/skills/alpha", ".pi/skills/alpha/SKILL.md"]) {
		for (const kind of KINDS) {
			it(`${kind} at <project>/${rel}: compiling and deleting a Skill never touches the outside`, async (t) => {
				const w = world(t);
				const compile = createArtifactCompiler({ cwd: w.proj, agentDir: w.agent }, { parseFrontmatter });
				const key = ".pi/skills/alpha/SKILL.md";
				const skill = { kind: "skill", name: "alpha", description: "Formats release notes. Use when writing a changelog.", body: "# Notes" };
				const before = snapshot(w.sentinel);
				plant(join(w.proj, rel), rel, kind, w.sentinel);
				const s = open(w);
				for (const patch of [{ cwd: { artifacts: { [key]: skill } } }, { cwd: { artifacts: { [key]: null } } }]) {
					try {
						await s.commit(patch, { ...meta(), prepare: compile });
					} catch (e) {
						// An artifact refusal names the key relative to the project; a file-system one names the path.
						assert.ok(
							isStateError(e) && (e.code === "artifact" || e.code === "corrupt"),
							`${kind} at ${rel}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`,
						);
					}
				}
				assert.deepEqual(snapshot(w.sentinel), before);
			});
		}
	}

	it("a store folder swapped for a link to another store while a process runs: no lock or holder file is written there", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const root = s.identity().cwdRoot;
		// The outside folder holds a complete store (say, another project's), so the log exists through the link.
		cpSync(root, join(w.sentinel, "other-store"), { recursive: true });
		rmSync(join(w.sentinel, "other-store", "lock.holders"), { recursive: true, force: true });
		const before = snapshot(w.sentinel);
		renameSync(root, `${root}.mine`);
		symlinkSync(join(w.sentinel, "other-store"), root);
		// Twice: a lock attempt leaves holder files behind until the process exits, so a second one would show.
		for (let i = 0; i < 2; i++) {
			await assert.rejects(s.commit({ cwd: { tactics: { b: i } } }, meta()), (e: unknown) => {
				assertClearRefusal(e, "swapped store folder");
				assert.match(messageOf(e), /outside/);
				return true;
			});
		}
		await assert.rejects(s.load("cwd"), /outside/);
		assert.deepEqual(snapshot(w.sentinel), before);
	});

	it("a store folder swapped for a link while a writer waits for its lock: the writer proves containment again under the lock and writes nothing there", async (t) => {
		const w = world(t);
		const s = open(w);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const root = s.identity().cwdRoot;
		cpSync(root, join(w.sentinel, "other-store"), { recursive: true });
		rmSync(join(w.sentinel, "other-store", "lock.holders"), { recursive: true, force: true });
		const before = snapshot(w.sentinel);
		// Held by this process: the commit below proves the folder, then waits; the swap happens during the wait.
		const lockPath = join(root, "lock");
		const lock = await acquireLock(lockPath, 3_000);
		let swapped = false;
		const stop = onLockWait((path) => {
			if (path !== lockPath) return;
			stop();
			renameSync(root, `${root}.mine`);
			symlinkSync(join(w.sentinel, "other-store"), root);
			swapped = true;
			lock.release();
		});
		await assert.rejects(s.commit({ cwd: { tactics: { b: 1 } } }, meta()), (e: unknown) => {
			assertClearRefusal(e, "store folder swapped during the lock wait");
			assert.match(messageOf(e), /outside/);
			return true;
		});
		assert.ok(swapped, "the commit waited for the lock, so the folder was swapped after its first proof");
		assert.deepEqual(snapshot(w.sentinel), before);
	});

	it("a link to a folder inside the project is followed: containment is judged by real paths", async (t) => {
		const w = world(t);
		mkdirSync(join(w.proj, "elsewhere"));
		symlinkSync("elsewhere", join(w.proj, ".pi"));
		await open(w).commit({ cwd: { tactics: { a: 1 } } }, meta());
		assert.ok(existsSync(join(w.proj, "elsewhere", "state-flow", "log.jsonl")));
		assert.equal((await open(w).load("cwd")).seq, 1);
	});

	it("deleting a compiled Skill never follows a Skill folder swapped for a link out of the project", async (t) => {
		const w = world(t);
		const compile = createArtifactCompiler({ cwd: w.proj, agentDir: w.agent }, { parseFrontmatter });
		const s = open(w);
		const key = ".pi/skills/alpha/SKILL.md";
		const skill = { kind: "skill", name: "alpha", description: "Formats release notes. Use when writing a changelog.", body: "# Notes" };
		await s.commit({ cwd: { artifacts: { [key]: skill } } }, { ...meta(), prepare: compile });
		const compiled = readFileSync(join(w.proj, key));
		// The attacker's folder outside holds a byte-identical SKILL.md, and the project's Skill folder becomes a link to it.
		mkdirSync(join(w.sentinel, "skill-alpha"));
		writeFileSync(join(w.sentinel, "skill-alpha", "SKILL.md"), compiled);
		const before = snapshot(w.sentinel);
		rmSync(join(w.proj, ".pi/skills/alpha"), { recursive: true });
		symlinkSync(join(w.sentinel, "skill-alpha"), join(w.proj, ".pi/skills/alpha"));
		await assert.rejects(s.commit({ cwd: { artifacts: { [key]: null } } }, { ...meta(), prepare: compile }), (e: unknown) => {
			assertClearRefusal(e, "delete through a linked Skill folder");
			assert.match(messageOf(e), /outside/);
			return true;
		});
		assert.deepEqual(snapshot(w.sentinel), before);
		assert.equal((await s.load("cwd")).seq, 1, "the refused delete wrote no transition");
	});

	it("compiling a Skill into a skills folder that links out of the project is refused before anything is written", async (t) => {
		const w = world(t);
		const compile = createArtifactCompiler({ cwd: w.proj, agentDir: w.agent }, { parseFrontmatter });
		mkdirSync(join(w.proj, ".pi"));
		symlinkSync(join(w.sentinel, "dir-.pi"), join(w.proj, ".pi/skills"));
		const before = snapshot(w.sentinel);
		const skill = { kind: "skill", name: "beta", description: "Formats release notes. Use when writing a changelog.", body: "# Notes" };
		await assert.rejects(open(w).commit({ cwd: { artifacts: { ".pi/skills/beta/SKILL.md": skill } } }, { ...meta(), prepare: compile }), (e: unknown) => {
			assert.ok(isStateError(e), String(e));
			assert.match(e.message, /outside|link/);
			return true;
		});
		assert.deepEqual(snapshot(w.sentinel), before);
	});
});

/** What must be refused (not merely survived), per planted path and kind. */
function expectations(rel: string, kind: Kind, outcomes: string[]): void {
	const cwdSteps = outcomes.filter((o) => o.startsWith("load cwd") || o.startsWith("commit cwd") || o.startsWith("commit both"));
	const isLink = kind.startsWith("link");
	if ((rel === ".pi" || rel === ".pi/state-flow") && (kind === "link-relative" || kind === "link-absolute")) {
		for (const o of cwdSteps) assert.match(o, /outside/, `a store folder linking out of the project must be refused: ${o}`);
	}
	if ((rel.endsWith("log.jsonl") || rel.endsWith("checkpoint.json")) && (isLink || kind === "folder" || kind === "fifo")) {
		for (const o of cwdSteps) assert.match(o, /where State Flow keeps a regular file/, o);
	}
	if (rel.endsWith("/lock") && kind !== "garbage") {
		for (const o of outcomes.filter((x) => x.startsWith("commit cwd"))) assert.match(o, /lock path .* never creates there/, o);
	}
	// Global keeps working whatever the project holds.
	if (!["fifo", "garbage", "folder"].includes(kind) || rel !== ".pi") {
		assert.match(outcomes.find((o) => o.startsWith("commit global")) ?? "", /^commit global: ok/, outcomes.join("\n"));
	}
}

describe("hostile repository through the CLI", () => {
	const cases: Array<[string, Kind]> = [
		[".pi", "link-relative"],
		[".pi/state-flow", "link-absolute"],
		[".pi/state-flow/log.jsonl", "link-relative"],
		[".pi/state-flow/checkpoint.json", "fifo"],
		[".pi/state-flow/lock", "folder"],
		[".pi/state-flow/lock", "link-dangling"],
		[".pi/state-flow/lock.holders", "link-absolute"],
	];
	for (const [rel, kind] of cases) {
		it(`${kind} at ${rel}: show, import and doctor leave the outside alone and explain`, async (t) => {
			const w = world(t);
			if (rel.startsWith(".pi/state-flow/")) await seed(w);
			const before = snapshot(w.sentinel);
			plant(join(w.proj, rel), rel, kind, w.sentinel);
			const env = { PI_CODING_AGENT_DIR: w.agent };
			const runs = [
				runCli(["show", "cwd"], { cwd: w.proj, env }),
				runCli(["import", "-", "--owner", "cwd"], { cwd: w.proj, env, input: JSON.stringify({ tactics: { imported: 1 } }) }),
				runCli(["doctor"], { cwd: w.proj, env }),
				runCli(["doctor", "--move-aside", "cwd"], { cwd: w.proj, env }),
			];
			assert.deepEqual(snapshot(w.sentinel), before);
			for (const r of runs) {
				assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);
				assert.doesNotMatch(unwrapped(r.stderr), /\n\s+at /, "no stack trace");
			}
			const doctor = at(runs, 2);
			assert.equal(doctor.code, 1, `doctor must not call this healthy:\n${doctor.stdout}`);
			assert.ok(doctor.stdout.includes(join(w.proj, ".pi")), doctor.stdout);
		});
	}
});

describe("hostile repository through a live pi session", () => {
	it("a store folder linking out of the project: patch_state and read_state answer with an error naming it; Global keeps working", async (t) => {
		const w = world(t);
		mkdirSync(join(w.proj, ".pi"));
		symlinkSync(join(w.sentinel, "dir-state-flow"), join(w.proj, ".pi", "state-flow"));
		const before = snapshot(w.sentinel);
		const flow = await startFlow({ cwd: w.proj, agentDir: w.agent });
		try {
			await flow.command("/state owners global cwd");
			await flow.prompt("remember", [
				{
					calls: [
						{ id: "c", name: "patch_state", args: { cwd: { tactics: { x: 1 } } } },
						{ id: "g", name: "patch_state", args: { global: { tactics: { y: 1 } } } },
					],
				},
				{ text: "done" },
			]);
			const r = flow.results();
			assert.equal(r.c?.isError, true, r.c?.text);
			assert.match(r.c?.text ?? "", /outside/);
			assert.ok(r.c?.text.includes(join(w.proj, ".pi", "state-flow")), r.c?.text);
			assert.equal(r.g?.isError, false, r.g?.text);
		} finally {
			flow.dispose();
		}
		assert.deepEqual(snapshot(w.sentinel), before);
	});
});
