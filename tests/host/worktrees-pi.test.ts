/**
 * Two whole pi agent sessions in two worktrees of one real git repository, writing at once
 * (issue 25): each is its own OS process running createAgentSession on the faux provider with
 * State Flow loaded (tests/fleet/driver.ts), one started in a subfolder of the main worktree,
 * the other in a linked worktree made by `git worktree add`. Both scripted models call
 * patch_state many times, released together by a barrier over the processes' pipes. Every
 * write lands in the one project store (the repository's `.git/state-flow`), its log reads
 * whole, and `state-flow undo` from the linked worktree reverts the last write afterwards.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { TransitionRecord } from "../../lib/core/types.js";
import { configPath } from "../../lib/storage/placement/config.js";
import { parseRecordLine } from "../../lib/storage/format.js";
import { projectOf } from "../../lib/storage/project/project.js";
import { runCli, unwrapped } from "../cli/run.js";
import { type DriverStep, type Machine, ok, startPi } from "../fleet/fleet.js";
import { git, repo } from "../helpers/git-repo.js";

/** patch_state calls per process. */
const CALLS = 20;

/** Every record of a log file, each line parsed and its checksum verified (a torn line fails here). */
function logRecords(file: string): TransitionRecord[] {
	const text = readFileSync(file, "utf8");
	assert.ok(text.endsWith("\n"), `${file} ends inside a record`);
	return text
		.slice(0, -1)
		.split("\n")
		.map((line, i) => parseRecordLine(line, file, `line ${i + 1}`));
}

describe("two pi processes in two worktrees", () => {
	it("write one project store at once: every write lands, seq counts them all, the log reads whole, undo works after", { timeout: 60_000 }, async (t) => {
		const { base, dir } = repo(t);
		const wt = join(base, "wt2");
		git(dir, "worktree", "add", "-q", "-b", "feat", wt);
		const agentDir = join(base, "agent");
		mkdirSync(join(agentDir, "state-flow"), { recursive: true });
		// All three owners wanted, so each call is one transition over the shared Global store,
		// the shared project store and the process's own session file (the multi-owner journal path).
		writeFileSync(configPath(agentDir), `${JSON.stringify({ owners: ["global", "cwd", "session"] })}\n`);
		const store = join(dir, ".git", "state-flow");
		const starts = [join(dir, "src"), wt];
		// The rule the sessions follow: both folders belong to the repository's one store.
		for (const cwd of starts) assert.equal(projectOf(cwd).store, store, cwd);

		const tags = ["w0", "w1"];
		// One agent directory, as two pi processes on one machine share it; file-backed sessions of their own.
		const machines: Machine[] = starts.map((cwd, p) => ({ agentDir, cwd, sessionDir: join(base, `sessions-${p}`), config: {} }));
		const pis = await Promise.all(machines.map((m, p) => startPi(t, m, { tag: tags[p] as string, fileSession: {} })));
		const script = (tag: string): DriverStep[] => [
			...Array.from({ length: CALLS }, (_, i) => ({
				// The first reply waits for the parent's `resume`: both sessions are running when either writes.
				...(i === 0 ? { pause: "go" } : {}),
				calls: [
					{
						id: `${tag}-${i}`,
						name: "patch_state",
						args: {
							global: { tactics: { [`${tag}-${i}`]: i } },
							// `both` is one key both processes update: a lost update would drop the other's field.
							cwd: { tactics: { [`${tag}-${i}`]: i, both: { [tag]: i } } },
							session: { tactics: { [`${tag}-${i}`]: i } },
						},
					},
				],
			})),
			{ text: "all written" },
		];
		const runs = pis.map(({ pi }, p) => pi.begin("write", script(tags[p] as string)));
		// The barrier: each process says `paused` over its stdout and waits for `resume` on its stdin.
		await Promise.all(pis.map(({ pi }) => pi.pausedAt("go")));
		for (const { pi } of pis) pi.resume("go");
		const results = await Promise.all(runs);
		results.forEach((run, p) => {
			for (let i = 0; i < CALLS; i++) ok(run.results, `${tags[p]}-${i}`);
		});
		await Promise.all(pis.map(({ pi }) => pi.exit()));

		// No store of its own appeared in the subfolder or the linked worktree.
		assert.equal(existsSync(join(dir, "src", ".pi")), false);
		assert.equal(existsSync(join(wt, ".pi")), false);
		const total = tags.length * CALLS;
		const keys: Record<string, number> = {};
		for (const tag of tags) for (let i = 0; i < CALLS; i++) keys[`${tag}-${i}`] = i;
		const last = Object.fromEntries(tags.map((tag) => [tag, CALLS - 1]));
		const stores = () => openStoresAt({ agentDir, cwd: wt });
		const reader = stores();
		const cwd = await reader.load("cwd");
		const global = await reader.load("global");
		await reader.close();
		assert.deepEqual(cwd.state.tactics, { ...keys, both: last });
		assert.equal(cwd.seq, total);
		assert.deepEqual(global.state.tactics, keys);
		assert.equal(global.seq, total);

		// The logs read whole: every line parses with its checksum, seqs run 1..total, one record per
		// tool call, and both owners hold the transitions in the same order (one commit order).
		const cwdLog = logRecords(join(store, "log.jsonl"));
		const globalLog = logRecords(join(agentDir, "state-flow", "global", "log.jsonl"));
		for (const log of [cwdLog, globalLog]) {
			assert.deepEqual(
				log.map((r) => r.seq),
				Array.from({ length: total }, (_, i) => i + 1),
			);
			assert.deepEqual(new Set(log.map((r) => (r.by.kind === "tool" ? r.by.toolCallId : r.by.kind))), new Set(Object.keys(keys)));
		}
		assert.deepEqual(
			cwdLog.map((r) => r.id),
			globalLog.map((r) => r.id),
		);

		// Undo from the linked worktree reverts the last write, whichever process made it, in both owners.
		const newest = cwdLog.at(-1) as TransitionRecord;
		const lastCall = newest.by.kind === "tool" ? newest.by.toolCallId : "";
		const lastTag = lastCall.split("-")[0] as string;
		assert.equal(lastCall, `${lastTag}-${CALLS - 1}`);
		const undo = runCli(["undo", "--agent-dir", agentDir], { cwd: wt });
		assert.equal(undo.code, 0, undo.stderr);
		assert.match(unwrapped(undo.stdout), new RegExp(`^Reverted ${newest.id.slice(0, 8)} \\(global\\+cwd\\) as transition`, "m"));
		const after = stores();
		const undone = await after.load("cwd");
		const { [lastCall]: _gone, ...kept } = keys;
		assert.deepEqual(undone.state.tactics, { ...kept, both: { ...last, [lastTag]: CALLS - 2 } });
		assert.equal(undone.seq, total + 1);
		assert.deepEqual((await after.load("global")).state.tactics, kept);
		await after.close();
	});
});
