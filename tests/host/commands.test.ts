/**
 * Real SDK `/state` commands: status, show, history with provenance, undo through the commit
 * path, the config defaults (the only config writer), a broken config reported and kept, and
 * bad arguments answered with usage while nothing changes.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SELECTION_ENTRY } from "../../lib/host/session/selection.js";
import { configPath } from "../../lib/storage/placement/config.js";
import { OUTPUT_TYPE } from "../../lib/host/commands/output.js";
import { completeStateArgs, USAGE, usageOf } from "../../lib/host/commands/index.js";
import { tempDir } from "../helpers/temp-dir.js";
import { literal, ME, ME_FULL } from "../helpers/who.js";
import { shortWho } from "../../lib/host/commands/status.js";
import { whoAmI } from "../../lib/storage/placement/who.js";
import { agentDirWithConfig, type Flow, flowDirs, userTexts, withFlow } from "./fixture.js";
import { commitMeta } from "../helpers/meta.js";
import { waitFor } from "../helpers/soon.js";

function selectionEntries(flow: Flow): number {
	return flow.harness.session.sessionManager.getEntries().filter((e) => e.type === "custom" && e.customType === SELECTION_ENTRY).length;
}

/** Run `fn` on a flow whose CWD already holds two transitions (an intent owning a tactic, then a change). */
function withWrites(fn: (flow: Flow) => Promise<void>): Promise<void> {
	return withFlow({}, async (flow) => {
		await flow.prompt("plan", [
			{
				calls: [
					{ id: "call-a", name: "patch_state", args: { cwd: { intents: { i: { goal: "g", owns: [{ $ref: "cwd.tactics.t" }] } }, tactics: { t: "step" } } } },
				],
			},
			{ calls: [{ id: "call-b", name: "patch_state", args: { cwd: { tactics: { t: "changed" } } } }] },
			{ text: "ok" },
		]);
		return fn(flow);
	});
}

describe("/state", () => {
	it("reports mode, owners, stores with sizes and retention", async () => {
		await withWrites(async (flow) => {
			const [status] = await flow.command("/state");
			assert.ok(status);
			assert.match(status, /^active cwd\+session — scoped interface, from defaults and config$/m);
			assert.match(status, /global\s+not wanted\s+empty/);
			assert.match(status, /cwd\s+wanted\s+\d+(\.\d)? (B|KB), 2 transitions, 2 retained/);
			assert.match(status, /session\s+wanted\s+empty\n\s+memory only/);
			assert.match(status, /retention: 200 transitions per owner/);
		});
	});

	it("lays /state show out in 80 columns: a long value wraps under its member, no word lost", async () => {
		const long = Array.from({ length: 10 }, (_, i) => `step ${i + 1} of porting the payment calls`).join(", ");
		await withFlow({}, async (flow) => {
			await flow.prompt("plan", [{ calls: [{ id: "w", name: "patch_state", args: { cwd: { tactics: { plan: long } } } }] }, { text: "ok" }]);
			const [shown] = await flow.command("/state show cwd");
			const lines = (shown ?? "").split("\n");
			for (const line of lines) assert.ok([...line].length <= 80, line);
			const at = lines.findIndex((l) => l.startsWith('    "plan": "step 1 of porting'));
			assert.ok(at >= 0, shown);
			// Continued two columns under the member, never at a key's column.
			assert.match(lines[at + 1] ?? "", /^ {6}\S/);
			const joined = lines
				.slice(at, lines.findIndex((l, i) => i > at && l.trimEnd().endsWith('"')) + 1)
				.map((l, i) => (i === 0 ? l : l.trimStart()))
				.join(" ");
			assert.equal(joined, `    "plan": ${JSON.stringify(long)}`);
		});
	});

	it("shows an owner's state and its history with who and when", async () => {
		await withWrites(async (flow) => {
			const [shown] = await flow.command("/state show cwd");
			assert.match(shown ?? "", /"t": "changed"/);
			const [history] = await flow.command("/state history cwd");
			assert.match(history ?? "", new RegExp(`^ {2}#2 t-0002 \\d\\d:\\d\\d:\\d\\d model call-b ${ME} set tactics\\.t$`, "m"));
			assert.match(history ?? "", new RegExp(`^ {2}#1 t-0001 \\d\\d:\\d\\d:\\d\\d model call-a ${ME} set intents\\.i, tactics\\.t$`, "m"));
			const [full] = await flow.command("/state history cwd --full");
			assert.match(full ?? "", new RegExp(`^ {2}#2 t-0002\n {5}at 2026-11-30T09:00:01\\.000Z by model call-b ${ME_FULL}\n {5}changed: tactics\\.t$`, "m"));
			const [bad] = await flow.command("/state history cwd session");
			assert.match(bad ?? "", /`history` takes at most one owner/);
		});
	});

	it("signs each change with the config's user on this machine: history shows user@host, --full the whole host", async (t) => {
		const agentDir = agentDirWithConfig(t, JSON.stringify({ user: "alice" }));
		await withFlow({ agentDir }, async (flow) => {
			await flow.prompt("plan", [{ calls: [{ id: "call-w", name: "patch_state", args: { cwd: { tactics: { t: "step" } } } }] }, { text: "ok" }]);
			const record = JSON.parse(readFileSync(join(flow.harness.cwd, ".pi", "state-flow", "log.jsonl"), "utf8")) as { who?: unknown };
			assert.deepEqual(record.who, { user: "alice", host: hostname() });
			const [history] = await flow.command("/state history cwd");
			assert.match(history ?? "", new RegExp(`^ {2}#1 t-00 \\d\\d:\\d\\d:\\d\\d model call-w ${literal(shortWho(whoAmI("alice")))} set tactics\\.t$`, "m"));
			const [full] = await flow.command("/state history cwd --full");
			assert.match(full ?? "", new RegExp(` {5}at \\S+ by model call-w ${literal(`alice@${hostname()}`)}\n`));
		});
	});

	it("keeps output in the chat as State Flow messages; given mid-run it waits for the run's end and never reaches the model", async () => {
		await withWrites(async (flow) => {
			await flow.prompt("busy", [{ text: "ok", before: async () => void (await flow.command("/state history")) }]);
			const requests = flow.seen.length;
			const messages = flow.harness.session.messages;
			const isOutput = (m: (typeof messages)[number]) => m.role === "custom" && m.customType === OUTPUT_TYPE;
			// Delivered right after agent_end, once pi is idle (a timer pi's run does not wait for).
			await waitFor(() => messages.some(isOutput), { what: "the /state history output after the run" });
			const shown = messages.findIndex(isOutput);
			const answer = messages.findIndex((m) => m.role === "assistant" && m.content.some((c) => c.type === "text" && c.text === "ok") && m.timestamp > 0);
			assert.ok(shown > answer && answer >= 0, `output after the run's answer (output ${shown}, answer ${answer})`);
			await flow.command("/state");
			await flow.prompt("next", [{ text: "ok" }]);
			assert.equal(flow.seen.length, requests + 1, "no extra model turn");
			assert.ok(userTexts(flow.seen.at(-1) as NonNullable<Flow["seen"][number]>).every((t) => !t.includes("retained of") && !t.includes("stores:")));
		});
	});

	it("undoes the latest transition as a new transition recorded as a user command", async () => {
		await withWrites(async (flow) => {
			const [done] = await flow.command("/state undo");
			assert.match(done ?? "", /Reverted t-0002 \(cwd\) as transition t-0003/);
			const [shown] = await flow.command("/state show cwd");
			assert.match(shown ?? "", /"t": "step"/);
			const [history] = await flow.command("/state history cwd");
			// The undo names the transition it reverted.
			assert.match(history ?? "", new RegExp(`^ {2}#3 t-0003 \\d\\d:\\d\\d:\\d\\d undo of t-0002 ${ME} set tactics\\.t$`, "m"));
			// And the transition it reverted is marked undone.
			assert.match(history ?? "", new RegExp(`^ {2}#2 t-0002 \\d\\d:\\d\\d:\\d\\d \\(undone\\) model call-b ${ME} set tactics\\.t$`, "m"));
			const [nothing] = await flow.command("/state undo global");
			assert.match(nothing ?? "", /no retained transition to undo for global/);
		});
	});

	it("undoes a transition named by (a prefix of) its id, as /state history shows it; refuses an id that is unknown, ambiguous, or changed later", async () => {
		await withWrites(async (flow) => {
			// t-0001 set intents.i and tactics.t; t-0002 changed tactics.t again.
			const [later] = await flow.command("/state undo t-0001");
			assert.match(later ?? "", /cwd #2 \(t-0002\) changed the same keys later; undo that one first/);
			const [ambiguous] = await flow.command("/state undo t-000");
			assert.match(ambiguous ?? "", /`t-000` starts 2 transition ids \(t-0001, t-0002\); type more of the id/);
			const [unknown] = await flow.command("/state undo nope");
			assert.match(unknown ?? "", /no retained transition's id starts with `nope`, and it is not an owner \(global, cwd, session\)/);
			const [none] = await flow.command("/state show cwd");
			assert.match(none ?? "", /"t": "changed"/, "nothing was written by a refused undo");
			const [done] = await flow.command("/state undo t-0002");
			assert.match(done ?? "", /Reverted t-0002 \(cwd\) as transition t-0003/);
			assert.match((await flow.command("/state show cwd"))[0] ?? "", /"t": "step"/);
			// An undo named by its id is redone: the change comes back.
			const [again] = await flow.command("/state undo t-0003");
			assert.match(again ?? "", /Redid what t-0003 undid \(cwd\) as transition t-0004/);
			assert.match((await flow.command("/state show cwd"))[0] ?? "", /"t": "changed"/);
		});
	});

	it("undoing an intent's creation restores the prior state exactly, without cascading away older tactics it referenced", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("plan", [
				{ calls: [{ id: "u1", name: "patch_state", args: { cwd: { tactics: { t: "older step" } } } }] },
				{ calls: [{ id: "u2", name: "patch_state", args: { cwd: { intents: { i: { owns: [{ $ref: "cwd.tactics.t" }] } } } } }] },
				{ text: "ok" },
			]);
			const [done] = await flow.command("/state undo");
			assert.match(done ?? "", /Reverted t-0002 \(cwd\) as transition t-0003/);
			const [shown] = await flow.command("/state show cwd");
			assert.match(shown ?? "", /"t": "older step"/);
			assert.doesNotMatch(shown ?? "", /"i":/);
		});
	});

	it("undoing a Skill artifact's creation removes the Skill it compiled, and redo brings it back", async () => {
		await withFlow({}, async (flow) => {
			const key = ".pi/skills/demo-skill/SKILL.md";
			const file = join(flow.harness.cwd, key);
			await flow.prompt("skill", [
				{
					calls: [
						{
							id: "s1",
							name: "patch_state",
							args: { cwd: { artifacts: { [key]: { kind: "skill", name: "demo-skill", description: "A demo.", body: "# Demo" } } } },
						},
					],
				},
				{ text: "ok" },
			]);
			assert.ok(existsSync(file), "the Skill was compiled");
			await flow.command("/state undo");
			assert.equal(existsSync(file), false, "undo removed the compiled Skill");
			await flow.command("/state redo");
			assert.match(readFileSync(file, "utf8"), /# Demo/, "redo compiled it again");
		});
	});

	it("undoes a multi-owner transition in every owner atomically", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("both", [
				{ calls: [{ id: "w1", name: "patch_state", args: { cwd: { tactics: { a: 1 } } } }] },
				{ calls: [{ id: "w2", name: "patch_state", args: { cwd: { tactics: { a: 2 } }, session: { strategy: { s: "x" } } } }] },
				{ text: "ok" },
			]);
			const [done] = await flow.command("/state undo");
			assert.match(done ?? "", /Reverted t-0002 \(cwd\+session\) as transition t-0003/);
			const [shown] = await flow.command("/state show");
			assert.match(shown ?? "", /"a": 1/);
			assert.doesNotMatch(shown ?? "", /"s": "x"/);
		});
	});

	it("applies the configured per-owner size limit: a write past it is refused and nothing is written", async (t) => {
		const agentDir = tempDir(t, "state-flow-agent-");
		mkdirSync(join(agentDir, "state-flow"));
		writeFileSync(configPath(agentDir), JSON.stringify({ maxStateBytes: 65536 }));
		await withFlow({ agentDir }, async (flow) => {
			await flow.prompt("big", [
				{ calls: [{ id: "small", name: "patch_state", args: { cwd: { lazy: { a: "x".repeat(30000) } } } }] },
				{ calls: [{ id: "big", name: "patch_state", args: { cwd: { lazy: { b: "y".repeat(40000) } } } }] },
				{ text: "ok" },
			]);
			const r = flow.results();
			assert.equal(r.small?.isError, false, r.small?.text);
			assert.equal(r.big?.isError, true);
			assert.match(r.big?.text ?? "", /size limit of 65536/);
			const [shown] = await flow.command("/state history cwd");
			assert.doesNotMatch(shown ?? "", /#2/);
		});
	});

	it("answers bad arguments with usage and changes nothing", async () => {
		await withFlow({}, async (flow) => {
			for (const bad of [
				"/state loud",
				"/state owners cwd,projects",
				"/state active now",
				"/state show moon",
				"/state default",
				"/state default owners cwd,cwd",
			]) {
				const notes = await flow.command(bad);
				assert.equal(notes.length, 1, bad);
				assert.match(notes[0] as string, /Usage:/, bad);
			}
			assert.equal(selectionEntries(flow), 0);
			assert.match((await flow.command("/state"))[0] as string, /active cwd\+session/);
		});
	});
});

describe("/state in the user's words (issue 27)", () => {
	it("suggests the nearest command or option and answers with one usage line, not the whole help", async () => {
		await withFlow({}, async (flow) => {
			const [typo] = await flow.command("/state histroy");
			assert.equal(typo, "unknown command `histroy`. Did you mean `history`?\nUsage: /state <command> (/state help lists every command)");
			const [flag] = await flow.command("/state history --ful");
			assert.equal(
				flag,
				"unknown option `--ful`. Did you mean `--full`?\nUsage:\n  /state history [owner] [--full]  retained transitions: who, when, what\n(/state help lists every command)",
			);
			const [owner] = await flow.command("/state show cdw");
			assert.match(owner ?? "", /^unknown owner "cdw" — owners are global, cwd, session\. Did you mean `cwd`\?\nUsage:\n {2}\/state show /);
			const [help] = await flow.command("/state help");
			assert.match(help ?? "", /^Usage:\n[\s\S]*\/state tidy[\s\S]*\/state help/);
			for (const text of [typo, flag, owner, help]) for (const line of (text ?? "").split("\n")) assert.ok(line.length <= 80, line);
			assert.equal(selectionEntries(flow), 0);
		});
	});

	it("shows the owners when none is named, and says a new grammar only when it changes", async () => {
		await withFlow({}, async (flow) => {
			assert.deepEqual(await flow.command("/state owners"), [
				"State Flow: owners cwd+session (active); choose others with /state owners <list>, e.g. cwd,session",
			]);
			assert.equal(selectionEntries(flow), 0);
			// cwd+session → global+cwd: still scoped, the same grammar.
			assert.deepEqual(await flow.command("/state owners global,cwd"), ["State Flow: active global+cwd"]);
			assert.deepEqual(await flow.command("/state owners cwd"), ["State Flow: active cwd (new tool grammar from the next prompt)"]);
			assert.deepEqual(await flow.command("/state owners global"), ["State Flow: active global"]);
			assert.deepEqual(await flow.command("/state owners global,session"), ["State Flow: active global+session (new tool grammar from the next prompt)"]);
		});
	});
});

describe("/state's verbs are one table", () => {
	it("every verb /state help lists has its own usage lines and, but status and help, a completion", () => {
		const rows = USAGE.split("\n").slice(1);
		const verbs = rows.flatMap((row) => (/^ {2}\/state(?: (\S+))?/.exec(row)?.[1] ?? "status").split("|"));
		assert.ok(verbs.length >= 18, verbs.join(" "));
		for (const verb of verbs) {
			const own = rows.filter(
				(row) =>
					row.startsWith(`  /state ${verb}`) || (verb === "status" && /^ {2}\/state {2}/.test(row)) || row.includes(`${verb}|`) || row.includes(`|${verb}`),
			);
			assert.ok(own.length > 0 && own.every((row) => usageOf(verb).includes(row)), `usage of ${verb}`);
			const offered = completeStateArgs(verb)?.map((i) => i.label) ?? [];
			assert.equal(offered.includes(verb), verb !== "status" && verb !== "help", `completion of ${verb}`);
		}
	});
});

describe("/state of a damaged store (issue 27)", () => {
	it("keeps every line within 80 columns, continuation lines indented under their owner", async (t) => {
		const dirs = flowDirs(t);
		const stores = openStoresAt({ agentDir: dirs.agentDir, cwd: dirs.cwd });
		await stores.commit({ cwd: { tactics: { t: "value one" } } }, commitMeta("d", "2026-12-01T00:00:00.000Z")());
		const file = join(stores.identity().cwdRoot, "log.jsonl");
		writeFileSync(file, readFileSync(file, "utf8").replace("value one", "value 0ne"));
		await withFlow({ cwd: dirs.cwd, agentDir: dirs.agentDir }, async (flow) => {
			for (const command of ["/state", "/state show", "/state history"]) {
				const [text] = await flow.command(command);
				assert.match(text ?? "", /damaged|corrupt/, command);
				const lines = (text ?? "").split("\n");
				for (const line of lines) assert.ok(line.length <= 80, `${command}: ${line}`);
				// A wrapped reason never leaves a word alone at column 1: continuation lines are indented.
				for (const line of lines) assert.doesNotMatch(line, /^[a-z]+$/, `${command}: a lone word\n${text}`);
			}
		});
	});
});

describe("/state default", () => {
	it("writes only the config file, keeping its other keys, and applies where no session choice overrides it", async (t) => {
		const agentDir = agentDirWithConfig(t, JSON.stringify({ retention: 5, mine: [1] }));
		await withFlow({ agentDir }, async (flow) => {
			await flow.command("/state default passive");
			await flow.command("/state default owners global,cwd");
			assert.deepEqual(JSON.parse(readFileSync(configPath(agentDir), "utf8")), { retention: 5, mine: [1], mode: "passive", owners: ["global", "cwd"] });
			assert.match((await flow.command("/state"))[0] as string, /passive global\+cwd .*from defaults and config[\s\S]*retention: 5/);
			assert.equal(selectionEntries(flow), 0);
		});
	});

	it("reports a broken config at start, uses the defaults and never overwrites it", async (t) => {
		const agentDir = agentDirWithConfig(t, "{ broken");
		await withFlow({ agentDir }, async (flow) => {
			assert.ok(flow.notes.some((n) => /not valid JSON/.test(n)));
			assert.match((await flow.command("/state"))[0] as string, /active cwd\+session/);
			const [refused] = await flow.command("/state default off");
			assert.match(refused ?? "", /left untouched/);
			assert.equal(readFileSync(configPath(agentDir), "utf8"), "{ broken");
		});
	});
});

describe("flags", () => {
	it("--state-mode and --state-owners override the config and yield to /state commands", async (t) => {
		const agentDir = agentDirWithConfig(t, JSON.stringify({ mode: "off", owners: ["cwd"] }));
		await withFlow({ agentDir }, async (flow) => {
			// pi parses flags before session start; the SDK path sets them and reloads the extension.
			const runtime = (flow.harness.extensionsResult as unknown as { runtime: { flagValues: Map<string, string> } }).runtime;
			runtime.flagValues.set("state-mode", "passive");
			runtime.flagValues.set("state-owners", "global,session");
			await flow.harness.session.reload();
			assert.match((await flow.command("/state"))[0] as string, /passive global\+session — scoped interface, from CLI flags/);
			await flow.command("/state active");
			assert.match((await flow.command("/state"))[0] as string, /active global\+session .*this session's \/state choice/);
		});
	});

	it("report a bad flag value and keep the rest", async () => {
		await withFlow({}, async (flow) => {
			const runtime = (flow.harness.extensionsResult as unknown as { runtime: { flagValues: Map<string, string> } }).runtime;
			runtime.flagValues.set("state-mode", "loud");
			runtime.flagValues.set("state-owners", "cwd");
			await flow.harness.session.reload();
			assert.ok(flow.notes.some((n) => /--state-mode "loud" is not a mode/.test(n)));
			assert.match((await flow.command("/state"))[0] as string, /active cwd — flat interface/);
		});
	});
});
