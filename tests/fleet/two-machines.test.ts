/**
 * Two "machines" (separate processes, each with its own agent directory and a checkout at its
 * own path, both linked to one project in a real PostgreSQL server) running real pi sessions
 * on the faux model: what one writes reaches the other's next head and, when written while
 * the other's run is going, that run's concurrent-change notice; several pi processes writing
 * one shared owner at once lose nothing.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Owner } from "../../lib/core/types.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { type DriverStep, headOf, machine, ok, startPi } from "./fleet.js";

const server = serverForFile(testDatabase);

describe("two machines on one shared project", () => {
	it("an intent written on A is in B's next head, and in B's mid-run notice when A writes while B's run is going (project and the user's shared Global)", async (t) => {
		const schema = server.schema();
		// The same user on both machines, sharing Global too: one transition over two database owners.
		const shared = { owners: ["global", "cwd", "session"] as Owner[], shareGlobal: true, user: "alice" };
		const a = machine(t, server.url, schema, shared);
		const b = machine(t, server.url, schema, shared);
		const [{ pi: onA }, { pi: onB }] = await Promise.all([startPi(t, a, { tag: "a" }), startPi(t, b, { tag: "b" })]);

		// B's session is already running when A writes.
		const wrote = await onA.prompt("plan the release", [
			{
				calls: [
					{
						id: "a1",
						name: "patch_state",
						args: { cwd: { intents: { ship: { goal: "release 2.0 by Friday" } } }, global: { strategy: { tabs: "alice indents with tabs" } } },
					},
				],
			},
			{ text: "noted" },
		]);
		ok(wrote.results, "a1");
		const next = await onB.prompt("what are we doing?", [{ text: "shipping" }]);
		const head = headOf(next.requests[0]);
		assert.match(head, /ship/);
		assert.match(head, /release 2\.0 by Friday/);
		assert.match(head, /alice indents with tabs/);

		// B's run renders its head, then waits in a scripted model turn until A has committed.
		const running = onB.begin("check the plan", [
			{ pause: "A writes now", calls: [{ id: "b1", name: "read_state", args: { path: "cwd.tactics" } }] },
			{ text: "done" },
		]);
		await onB.pausedAt("A writes now");
		const mid = await onA.prompt("add a tactic", [
			{
				calls: [
					{
						id: "a2",
						name: "patch_state",
						args: { cwd: { intents: { docs: { goal: "write the upgrade guide" } } }, global: { strategy: { review: "small PRs" } } },
					},
				],
			},
			{ text: "added" },
		]);
		ok(mid.results, "a2");
		onB.resume("A writes now");
		const run = await running;
		// The run's head is frozen from before A's write; the tool result names what A changed.
		assert.doesNotMatch(headOf(run.requests[0]), /upgrade guide/);
		const notice = ok(run.results, "b1");
		assert.match(notice, /global was changed by another process since this run's head \(1 transition by alice@[^,]+, now seq 2\): global\.strategy\.review\./);
		assert.match(notice, /cwd was changed by another process since this run's head \(1 transition by alice@[^,]+, now seq 2\): cwd\.intents\.docs\./);
		assert.doesNotMatch(notice, /write the upgrade guide|small PRs/, "a notice names paths, never values");
		// And B's next prompt shows it in the head.
		const later = await onB.prompt("and now?", [{ text: "ok" }]);
		assert.match(headOf(later.requests[0]), /write the upgrade guide/);
		assert.match(headOf(later.requests[0]), /small PRs/);
		await Promise.all([onA.exit(), onB.exit()]);
	});

	it("4 pi processes × 25 patch_state calls on one shared owner, all at once: every write is there afterwards", async (t) => {
		const schema = server.schema();
		const procs = 4;
		const calls = 25;
		const machines = Array.from({ length: procs }, () => machine(t, server.url, schema));
		const pis = await Promise.all(machines.map((m, p) => startPi(t, m, { tag: `w${p}` })));
		const script = (p: number): DriverStep[] => [
			...Array.from({ length: calls }, (_, i) => ({
				calls: [{ id: `w${p}-${i}`, name: "patch_state", args: { cwd: { tactics: { [`w${p}-${i}`]: i } } } }],
			})),
			{ text: "all written" },
		];
		const runs = await Promise.all(pis.map(({ pi }, p) => pi.prompt("write", script(p))));
		runs.forEach((run, p) => {
			for (let i = 0; i < calls; i++) ok(run.results, `w${p}-${i}`);
		});
		await Promise.all(pis.map(({ pi }) => pi.exit()));
		// A fresh reader on another machine: every write, one transition each, no gaps.
		const reader = machine(t, server.url, schema);
		const stores = openStoresAt({ agentDir: reader.agentDir, cwd: reader.cwd, placement: placementFor(reader.config, reader.cwd, {}) });
		const h = await stores.load("cwd");
		const want: Record<string, number> = {};
		for (let p = 0; p < procs; p++) for (let i = 0; i < calls; i++) want[`w${p}-${i}`] = i;
		assert.deepEqual(h.state.tactics, want);
		assert.equal(h.seq, procs * calls);
	});
});
