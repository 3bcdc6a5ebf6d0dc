/**
 * The real `state-flow` binary on real stores in temp folders: help and exit codes, show,
 * history, export/import round trips as ONE transition, refusals that write nothing, and
 * doctor repairing what real crashes (SIGKILL at the storage fault points) left behind.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { Who } from "../../lib/core/types.js";
import { formatWho, whoAmI } from "../../lib/storage/placement/who.js";
import { tempDir } from "../helpers/temp-dir.js";
import { literal, ME_FULL } from "../helpers/who.js";
import { runCli, unwrapped } from "./run.js";

interface Env {
	root: string;
	cwd: string;
	agent: string;
	/** Run with `--agent-dir` set; `cwd` is the project folder. */
	run(args: string[], extra?: { env?: Record<string, string>; input?: string }): ReturnType<typeof runCli>;
}

function setup(t: { after(fn: () => void): void }): Env {
	const root = tempDir(t, "state-flow-cli-");
	const cwd = join(root, "project");
	const agent = join(root, "agent");
	mkdirSync(cwd);
	mkdirSync(agent);
	return { root, cwd, agent, run: (args, extra) => runCli([...args, "--agent-dir", agent], { cwd, ...extra }) };
}

const cwdLog = (e: Env) => join(e.cwd, ".pi", "state-flow", "log.jsonl");
const globalLog = (e: Env) => join(e.agent, "state-flow", "global", "log.jsonl");
const journalDir = (e: Env) => join(e.agent, "state-flow", "journal");
const records = (file: string) =>
	readFileSync(file, "utf8")
		.split("\n")
		.filter((l) => l !== "")
		.map((l) => JSON.parse(l) as { id: string; seq: number; by: { kind: string; source?: string }; who?: Who });

const STATE = {
	intents: { ship: { goal: "release 1.0", owns: [{ $ref: "cwd.tactics.t1" }] } },
	strategy: { approach: "small steps" },
	tactics: { t1: "write the changelog" },
	artifacts: {},
	lazy: { "notes/plan.md": "a long plan" },
};

function writeJson(e: Env, name: string, value: unknown): string {
	const file = join(e.root, name);
	writeFileSync(file, JSON.stringify(value));
	return file;
}

function exportDoc(owners: Record<string, unknown>) {
	return { format: "state-flow/export", v: 1, owners: Object.fromEntries(Object.entries(owners).map(([o, s]) => [o, { seq: 0, state: s }])) };
}

describe("state-flow help and usage", () => {
	it("prints help with exit code 0, for the tool and for a command", (t) => {
		const e = setup(t);
		const main = e.run(["--help"]);
		assert.equal(main.code, 0);
		assert.match(unwrapped(main.stdout), /^state-flow: inspect and maintain/);
		const r = e.run(["doctor", "--help"]);
		assert.equal(r.code, 0);
		assert.match(unwrapped(r.stdout), /^Usage: state-flow doctor/);
	});

	it("exits 2 on a usage error, naming the argument, printing usage, touching nothing", (t) => {
		const e = setup(t);
		for (const [args, message] of [
			[["frobnicate"], /unknown command `frobnicate`/],
			[["show", "session"], /Session state lives in pi's session file/],
		] as Array<[string[], RegExp]>) {
			const r = e.run(args);
			assert.equal(r.code, 2, args.join(" "));
			assert.match(unwrapped(r.stderr), message);
			assert.match(unwrapped(r.stderr), /Usage: state-flow/);
			assert.equal(r.stdout, "");
		}
		assert.deepEqual(readdirSync(e.agent), []);
	});
});

describe("state-flow show, history and export", () => {
	it("reports empty stores without creating any file", (t) => {
		const e = setup(t);
		const [show, history, exported] = ["show", "history", "export"].map((cmd) => e.run([cmd]));
		for (const r of [show, history, exported]) assert.equal(r?.code, 0);
		assert.match(String(show?.stdout), /No State Flow stores yet/);
		assert.match(String(history?.stdout), /no transitions/);
		assert.deepEqual(JSON.parse(String(exported?.stdout)), { format: "state-flow/export", v: 1, owners: {} });
		assert.deepEqual(readdirSync(e.agent), []);
		assert.deepEqual(readdirSync(e.cwd), []);
	});

	it("shows planes readably with lazy bodies as a catalog, and bodies with --full", (t) => {
		const e = setup(t);
		assert.equal(e.run(["import", writeJson(e, "s.json", STATE), "--owner", "cwd"]).code, 0);
		const show = e.run(["show", "cwd"]);
		assert.equal(show.code, 0);
		assert.match(unwrapped(show.stdout), /^CWD {2}.*\.pi\/state-flow {2}\(seq 1, \d+ bytes\)/);
		assert.match(unwrapped(show.stdout), /"approach": "small steps"/);
		assert.match(unwrapped(show.stdout), /"notes\/plan\.md" {2}13 bytes/);
		assert.doesNotMatch(unwrapped(show.stdout), /a long plan/);
		assert.match(unwrapped(e.run(["show", "cwd", "--full"]).stdout), /"notes\/plan\.md": "a long plan"/);
	});

	it("lists transitions newest first with local time, who and the changed keys; --full with ISO times and every leaf", (t) => {
		const e = setup(t);
		const file = writeJson(e, "s.json", STATE);
		e.run(["import", file, "--owner", "cwd"]);
		e.run(["import", writeJson(e, "s2.json", { ...STATE, tactics: { t1: "done", t2: "tag" } }), "--owner", "cwd"]);
		const h = e.run(["history", "cwd"]);
		assert.equal(h.code, 0);
		assert.match(unwrapped(h.stdout), /\(seq 2; 2 retained\)/);
		assert.match(
			unwrapped(h.stdout),
			/^ {2}#2 \w{4,} \d\d:\d\d:\d\d import s2\.json .*tactics\.t1, tactics\.t2\n {2}#1 \w{4,} \d\d:\d\d:\d\d import s\.json /m,
		);
		const full = e.run(["history", "cwd", "--full"]);
		const path = file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
		assert.match(unwrapped(full.stdout), new RegExp(`^ {5}at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z by import ${path} ${ME_FULL}$`, "m"));
		assert.match(unwrapped(full.stdout), /^ {5}changed: .*tactics\.t1, tactics\.t2/m);
	});

	it("exports JSON that imports back to the same state (round trip)", (t) => {
		const e = setup(t);
		e.run(["import", writeJson(e, "s.json", exportDoc({ cwd: STATE, global: { ...STATE, intents: {}, tactics: {} } }))]);
		const first = JSON.parse(e.run(["export"]).stdout) as { owners: Record<string, { state: unknown }> };
		assert.deepEqual(first.owners.cwd?.state, STATE);
		const other = setup(t);
		const file = writeJson(other, "x.json", first);
		assert.equal(other.run(["import", file]).code, 0);
		const second = JSON.parse(other.run(["export"]).stdout) as { owners: Record<string, { state: unknown }> };
		assert.deepEqual(second.owners.cwd?.state, first.owners.cwd?.state);
		assert.deepEqual(second.owners.global?.state, first.owners.global?.state);
	});
});

describe("state-flow import", () => {
	it("commits a multi-owner import as ONE transition with import provenance", (t) => {
		const e = setup(t);
		const file = writeJson(e, "both.json", exportDoc({ cwd: STATE, global: { strategy: { s: 1 } } }));
		const r = e.run(["import", file]);
		assert.equal(r.code, 0, r.stderr);
		const [c] = records(cwdLog(e));
		const [g] = records(globalLog(e));
		assert.ok(c && g);
		assert.equal(c.id, g.id, "both owners carry the same transition id");
		assert.match(unwrapped(r.stdout), new RegExp(`transition ${c.id}`));
		assert.deepEqual(c.by, { kind: "import", source: file });
		assert.deepEqual([c.seq, g.seq], [1, 1]);
	});

	it("an exported state imported elsewhere is signed by whoever imported it (the config's user)", (t) => {
		const a = setup(t);
		const b = setup(t);
		for (const [e, user] of [
			[a, "alice"],
			[b, "bob"],
		] as const) {
			mkdirSync(join(e.agent, "state-flow"), { recursive: true });
			writeFileSync(join(e.agent, "state-flow", "config.json"), JSON.stringify({ user }));
		}
		assert.equal(a.run(["import", writeJson(a, "s.json", STATE), "--owner", "cwd"]).code, 0);
		assert.deepEqual(records(cwdLog(a))[0]?.who, whoAmI("alice"));
		const exported = a.run(["export", "cwd"]).stdout;
		assert.doesNotMatch(exported, /alice/, "export documents carry states, not who");
		assert.equal(b.run(["import", writeJson(b, "x.json", JSON.parse(exported))]).code, 0);
		assert.deepEqual(records(cwdLog(b))[0]?.who, whoAmI("bob"));
		assert.match(unwrapped(b.run(["history", "cwd", "--full"]).stdout), new RegExp(` by import \\S+ ${literal(formatWho(whoAmI("bob")))}$`, "m"));
	});

	it("records who imported on every owner's record, and history shows it", (t) => {
		const e = setup(t);
		assert.equal(e.run(["import", writeJson(e, "both.json", exportDoc({ cwd: STATE, global: { strategy: { s: 1 } } }))]).code, 0);
		const [c] = records(cwdLog(e));
		const [g] = records(globalLog(e));
		assert.deepEqual([c?.who, g?.who], [whoAmI(), whoAmI()], "the CLI writes as this OS user on this machine");
		const h = e.run(["history", "--full"]);
		assert.equal(h.code, 0, h.stderr);
		assert.equal(unwrapped(h.stdout).match(new RegExp(` by import \\S+ ${ME_FULL}$`, "gm"))?.length, 2, h.stdout);
	});

	it("replaces the state: keys absent from the file are deleted, and an equal file is a no-op", (t) => {
		const e = setup(t);
		e.run(["import", writeJson(e, "a.json", STATE), "--owner", "cwd"]);
		const smaller = { ...STATE, strategy: {}, lazy: {} };
		const file = writeJson(e, "b.json", smaller);
		assert.equal(e.run(["import", file, "--owner", "cwd"]).code, 0);
		const doc = JSON.parse(e.run(["export", "cwd"]).stdout) as { owners: { cwd: { seq: number; state: unknown } } };
		assert.deepEqual(doc.owners.cwd.state, smaller);
		const again = e.run(["import", file, "--owner", "cwd"]);
		assert.equal(again.code, 0);
		assert.match(unwrapped(again.stdout), /No change/);
		assert.equal(records(cwdLog(e)).length, 2);
	});

	it("reads standard input with `-`", (t) => {
		const e = setup(t);
		const r = e.run(["import", "-", "--owner", "global"], { input: JSON.stringify(STATE) });
		assert.equal(r.code, 0, r.stderr);
		assert.deepEqual(records(globalLog(e))[0]?.by, { kind: "import", source: "stdin" });
	});

	it("refuses invalid files with exit 1, a message naming the field, and nothing written", (t) => {
		const e = setup(t);
		const cases: Array<[unknown, string[], RegExp]> = [
			[{ ...STATE, notes: {} }, ["--owner", "cwd"], /`notes` is not a plane/],
			[exportDoc({ session: STATE }), [], /`owners\.session` cannot be imported/],
			[exportDoc({ cwd: STATE, global: { ...STATE, intents: { i: { owns: { $ref: "tactics.t1" } } } } }), [], /`global\.tactics\.t1`/],
		];
		for (const [content, args, message] of cases) {
			const r = e.run(["import", writeJson(e, "bad.json", content), ...args]);
			assert.equal(r.code, 1, `${JSON.stringify(content)}: ${r.stderr}`);
			assert.match(unwrapped(r.stderr), message);
		}
		const notJson = join(e.root, "broken.json");
		writeFileSync(notJson, "{ nope");
		const r = e.run(["import", notJson, "--owner", "cwd"]);
		assert.equal(r.code, 1);
		assert.match(unwrapped(r.stderr), /is not valid JSON/);
		assert.deepEqual(readdirSync(e.agent), []);
		assert.equal(existsSync(join(e.cwd, ".pi")), false);
	});
});

describe("state-flow import of artifacts (the artifact compiler, like patch_state)", () => {
	it("refuses an artifact key outside the project with exit 1 and nothing written", (t) => {
		const e = setup(t);
		for (const key of ["../outside.txt", join(e.root, "elsewhere.txt")]) {
			const r = e.run(["import", writeJson(e, "bad.json", { ...STATE, artifacts: { [key]: { kind: "file" } } }), "--owner", "cwd"]);
			assert.equal(r.code, 1, `${key}: ${r.stdout}`);
			assert.match(unwrapped(r.stderr), /is outside the checkout's root/);
		}
		assert.equal(existsSync(join(e.cwd, ".pi")), false);
	});

	it("compiles an inline Skill where pi discovers it and records the file's fingerprint", (t) => {
		const e = setup(t);
		writeFileSync(join(e.cwd, "notes.md"), "hello");
		const skill = { kind: "skill", name: "deploy", description: "How to deploy", body: "# Deploy\n" };
		const artifacts = { ".pi/skills/deploy/SKILL.md": skill, "notes.md": { kind: "file" } };
		const r = e.run(["import", writeJson(e, "s.json", { ...STATE, artifacts }), "--owner", "cwd"]);
		assert.equal(r.code, 0, r.stderr);
		assert.match(readFileSync(join(e.cwd, ".pi", "skills", "deploy", "SKILL.md"), "utf8"), /^---\nname: "deploy"\n/);
		const doc = JSON.parse(e.run(["export", "cwd"]).stdout) as { owners: { cwd: { state: { artifacts: Record<string, Record<string, unknown>> } } } };
		const fingerprint = doc.owners.cwd.state.artifacts["notes.md"]?.fingerprint as { size: number; mtimeMs: number };
		assert.equal(fingerprint.size, 5);
		assert.equal(typeof fingerprint.mtimeMs, "number");
		assert.equal(doc.owners.cwd.state.artifacts[".pi/skills/deploy/SKILL.md"]?.compiledTo, ".pi/skills/deploy/SKILL.md");
	});

	it("accepts exactly the README's export and import command lines", (t) => {
		const e = setup(t);
		e.run(["import", writeJson(e, "s.json", STATE), "--owner", "cwd"]);
		const exported = runCli(["export", "cwd", "--cwd", ".", "--agent-dir", e.agent], { cwd: e.cwd });
		assert.equal(exported.code, 0, exported.stderr);
		writeFileSync(join(e.cwd, "state-flow.json"), exported.stdout);
		const other = join(e.root, "clone");
		mkdirSync(other);
		writeFileSync(join(other, "state-flow.json"), exported.stdout);
		const imported = runCli(["import", "state-flow.json", "--owner", "cwd", "--cwd", ".", "--agent-dir", e.agent], { cwd: other });
		assert.equal(imported.code, 0, imported.stderr);
		const back = JSON.parse(runCli(["export", "cwd", "--cwd", other, "--agent-dir", e.agent], { cwd: e.root }).stdout) as {
			owners: { cwd: { state: unknown } };
		};
		assert.deepEqual(back.owners.cwd.state, STATE);
	});
});

describe("state-flow doctor", () => {
	it("reports healthy stores and exits 0", (t) => {
		const e = setup(t);
		e.run(["import", writeJson(e, "s.json", STATE), "--owner", "cwd"]);
		const r = e.run(["doctor"]);
		assert.equal(r.code, 0, r.stdout);
		assert.match(unwrapped(r.stdout), /global: no store/);
		assert.match(unwrapped(r.stdout), /cwd: ok, seq 1, 1 retained/);
		assert.match(unwrapped(r.stdout), /All stores are healthy\./);
	});

	it("cuts a torn last record left by a writer killed mid-append, after a dry run that changes nothing", (t) => {
		const e = setup(t);
		e.run(["import", writeJson(e, "a.json", STATE), "--owner", "cwd"]);
		const crash = e.run(["import", writeJson(e, "b.json", { ...STATE, tactics: { t9: "x" } }), "--owner", "cwd"], { env: { STATE_FLOW_FAULT: "mid-append" } });
		assert.equal(crash.signal, "SIGKILL", "the writer really crashed");
		const torn = readFileSync(cwdLog(e));
		assert.notEqual(torn.at(-1), 10, "the log ends in a partial line");
		assert.match(unwrapped(e.run(["show", "cwd"]).stdout), /\(seq 1,/, "readers ignore the torn line");

		const lockFile = join(e.cwd, ".pi", "state-flow", "lock");
		assert.ok(existsSync(lockFile), "the killed writer left its lock behind");
		const dry = e.run(["doctor", "--dry-run"]);
		assert.equal(dry.code, 0);
		assert.match(unwrapped(dry.stdout), /lock is held by pid \d+ on \S+, which no longer runs \(a crash\); would break it/);
		assert.match(unwrapped(dry.stdout), /cut short by a crash .* would cut it off/);
		assert.ok(existsSync(lockFile), "dry run left the lock");
		assert.deepEqual(readFileSync(cwdLog(e)), torn, "dry run changed nothing");

		const fix = e.run(["doctor"]);
		assert.equal(fix.code, 0, fix.stdout);
		assert.match(unwrapped(fix.stdout), /breaking it/);
		assert.match(unwrapped(fix.stdout), /cutting it off/);
		assert.equal(existsSync(lockFile), false, "the stale lock is gone");
		const after = readFileSync(cwdLog(e), "utf8");
		assert.ok(after.endsWith("\n"));
		assert.equal(records(cwdLog(e)).length, 1);
		assert.doesNotMatch(unwrapped(e.run(["doctor"]).stdout), /cut/, "a second run finds nothing to repair");
	});

	it("rolls a committed multi-owner transition forward after a crash at the journal commit point", (t) => {
		const e = setup(t);
		const crash = e.run(["import", writeJson(e, "both.json", exportDoc({ cwd: STATE, global: { strategy: { s: 1 } } }))], {
			env: { STATE_FLOW_FAULT: "after-journal" },
		});
		assert.equal(crash.signal, "SIGKILL");
		assert.equal(readdirSync(journalDir(e)).filter((n) => n.endsWith(".json")).length, 1);
		assert.equal(existsSync(cwdLog(e)) && records(cwdLog(e)).length > 0, false, "no owner has the record yet");

		const dry = e.run(["doctor", "--dry-run"]);
		assert.match(unwrapped(dry.stdout), /is committed but not yet on every owner .* would roll forward/);
		assert.equal(readdirSync(journalDir(e)).filter((n) => n.endsWith(".json")).length, 1);

		const fix = e.run(["doctor"]);
		assert.equal(fix.code, 0, fix.stdout);
		assert.match(unwrapped(fix.stdout), /rolling forward/);
		const [c] = records(cwdLog(e));
		const [g] = records(globalLog(e));
		assert.ok(c && g);
		assert.equal(c.id, g.id);
		assert.deepEqual(
			readdirSync(journalDir(e)).filter((n) => n.endsWith(".json")),
			[],
		);
		const doc = JSON.parse(e.run(["export"]).stdout) as { owners: Record<string, { state: unknown }> };
		assert.deepEqual(doc.owners.cwd?.state, STATE);
	});

	it("reports a damaged log with exit 1 and leaves its bytes untouched", (t) => {
		const e = setup(t);
		e.run(["import", writeJson(e, "s.json", STATE), "--owner", "cwd"]);
		writeFileSync(cwdLog(e), `${readFileSync(cwdLog(e), "utf8")}{"not":"a record"}\n`);
		const before = readFileSync(cwdLog(e));
		const r = e.run(["doctor"]);
		assert.equal(r.code, 1);
		assert.match(unwrapped(r.stdout), /cwd: DAMAGED: .*log\.jsonl/);
		assert.deepEqual(readFileSync(cwdLog(e)), before);
		assert.equal(e.run(["show", "cwd"]).code, 1, "show refuses a damaged store too");
	});
});

describe("state-flow agent directory", () => {
	it("defaults to $PI_CODING_AGENT_DIR like pi does", (t) => {
		const e = setup(t);
		const r = runCli(["import", "-", "--owner", "global"], { cwd: e.cwd, env: { PI_CODING_AGENT_DIR: e.agent }, input: JSON.stringify(STATE) });
		assert.equal(r.code, 0, r.stderr);
		assert.equal(records(globalLog(e)).length, 1);
	});
});
