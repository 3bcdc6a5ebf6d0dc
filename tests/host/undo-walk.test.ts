/**
 * `/state undo`, `redo` and `restore` through the real SDK: repeated undo walks back one
 * transition at a time (issue 27's scenario: #1, #2, undo #3, then undo reverts #1), redo walks
 * forward, restore brings an owner or a path back to how it was after a transition as one
 * transition, and each names what it reverted in the output and in `/state history`.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ME } from "../helpers/who.js";
import { latestUndoPlan, reversalFor } from "../../lib/core/undo.js";
import { type Flow, flowDirs, withFlow } from "./fixture.js";

/** t-0001 sets tactics a and b, t-0002 changes both: two writes of the same keys. */
function twoWrites(fn: (flow: Flow) => Promise<void>): Promise<void> {
	return withFlow({}, async (flow) => {
		await flow.prompt("plan", [
			{ calls: [{ id: "call-1", name: "patch_state", args: { cwd: { tactics: { a: 1, b: 1 } } } }] },
			{ calls: [{ id: "call-2", name: "patch_state", args: { cwd: { tactics: { a: 2, b: 2 } } } }] },
			{ text: "ok" },
		]);
		return fn(flow);
	});
}

const said = async (flow: Flow, command: string) => (await flow.command(command)).join("\n");
const tactics = async (flow: Flow) => JSON.parse(/"tactics": (\{[^}]*\})/.exec(await said(flow, "/state show cwd"))?.[1] ?? "null");

describe("/state undo walks back, redo walks forward", () => {
	it("a second undo reverts the transition before the first (never the undo), until nothing is left; redo walks forward again", async () => {
		await twoWrites(async (flow) => {
			const first = await said(flow, "/state undo");
			assert.match(first, /^Reverted t-0002 \(cwd\) as transition t-0003\.$/m);
			assert.match(
				first,
				new RegExp(`^ {2}cwd #2 t-0002 \\d\\d:\\d\\d:\\d\\d model call-2 ${ME} set tactics\\.a, tactics\\.b$`, "m"),
				"says what it reverts and whose",
			);
			assert.match(first, /^changes: cwd\.tactics\.a, cwd\.tactics\.b$/m);
			assert.deepEqual(await tactics(flow), { a: 1, b: 1 });
			const second = await said(flow, "/state undo");
			assert.match(second, /Reverted t-0001 \(cwd\) as transition t-0004\./);
			assert.deepEqual(await tactics(flow), {}, "the state before #1 is reached");
			assert.match(await said(flow, "/state undo cwd"), /no retained transition to undo for cwd \(every retained one is undone/);
			// Redo: the latest undo first.
			assert.match(await said(flow, "/state redo"), /Redid what t-0004 undid \(cwd\) as transition t-0005\./);
			assert.deepEqual(await tactics(flow), { a: 1, b: 1 });
			assert.match(await said(flow, "/state redo"), /Redid what t-0003 undid \(cwd\) as transition t-0006\./);
			assert.deepEqual(await tactics(flow), { a: 2, b: 2 });
			assert.match(await said(flow, "/state redo"), /nothing to redo for cwd\+session\./);
			const history = await said(flow, "/state history cwd");
			// Each line says what it did and which are undone now: #3 and #4 were, by the redos #6 and #5.
			assert.match(history, /^ {2}#3 t-0003 \S+ \(undone\) undo of t-0002 \S+ set tactics\.a, tactics\.b$/m);
			assert.match(history, /^ {2}#4 t-0004 \S+ \(undone\) undo of t-0001 \S+ delete tactics\.a, tactics\.b$/m);
			assert.match(history, /^ {2}#5 t-0005 \S+ redo of t-0004 /m);
			assert.match(history, /^ {2}#2 t-0002 \S+ model call-2 /m, "in effect again: no mark");
		});
	});

	it("issue 27 by ids: undo <#2> after undo #3 says #3 reverted it; undo <#1> goes through; the state before #1 is reached", async () => {
		await twoWrites(async (flow) => {
			await said(flow, "/state undo");
			assert.match(await said(flow, "/state undo t-0002"), /cwd #2 \(t-0002\) was already reverted by cwd #3 \(t-0003\); undo that one to apply it again/);
			assert.match(await said(flow, "/state undo t-0001"), /Reverted t-0001 \(cwd\) as transition t-0004\./);
			assert.deepEqual(await tactics(flow), {});
		});
	});

	it("new work after an undo ends the redo and the refusal names it", async () => {
		await twoWrites(async (flow) => {
			await said(flow, "/state undo");
			await flow.prompt("more", [{ calls: [{ id: "call-3", name: "patch_state", args: { cwd: { tactics: { c: 3 } } } }] }, { text: "ok" }]);
			assert.match(await said(flow, "/state redo"), /nothing to redo for cwd\+session \(transition t-0004 came after the last undo/);
		});
	});
});

describe("/state redo of my own change", () => {
	it("brings back my change that alice undid without asking, naming her or needing --yes", async (t) => {
		const dirs = flowDirs(t, "state-flow-redo-own-");
		await withFlow({ cwd: dirs.cwd, agentDir: dirs.agentDir }, async (flow) => {
			await flow.prompt("plan", [{ calls: [{ id: "call-1", name: "patch_state", args: { cwd: { tactics: { mine: 1 } } } }] }, { text: "ok" }]);
			const alice = openStoresAt({ agentDir: dirs.agentDir, cwd: dirs.cwd, who: { user: "alice", host: "lap" } });
			const plan = latestUndoPlan({ cwd: { ok: true, value: await alice.load("cwd") } }, ["cwd"], true);
			assert.ok(plan.ok);
			const by = { kind: "command", command: "state-flow undo cwd", reverts: reversalFor(plan.value) } as const;
			await alice.commit(plan.value.patch, { by, id: "alic-0000", at: "2026-11-30T09:30:00.000Z", exact: true });
			const out = await said(flow, "/state redo cwd");
			assert.doesNotMatch(out, /made by|someone else|--yes/);
			assert.deepEqual(await tactics(flow), { mine: 1 });
		});
	});
});

describe("/state restore", () => {
	it("brings an owner back to how it was after a transition as ONE transition naming it and what it reverted", async () => {
		await twoWrites(async (flow) => {
			await flow.prompt("more", [{ calls: [{ id: "call-3", name: "patch_state", args: { cwd: { tactics: { c: 3 } } } }] }, { text: "ok" }]);
			const out = await said(flow, "/state restore t-0001");
			assert.match(out, /^Restored cwd to after t-0001 as transition t-0004 \(2 reverted\)\.$/m);
			assert.match(out, /It restores cwd to after t-0001, reverting 2 transitions:/);
			assert.match(out, /^ {2}cwd #2 t-0002 .* model call-2 /m);
			assert.match(out, /^ {2}cwd #3 t-0003 .* model call-3 /m);
			assert.deepEqual(await tactics(flow), { a: 1, b: 1 });
			assert.match(await said(flow, "/state history cwd"), /^ {2}#4 t-0004 \S+ restore to t-0001 /m);
			// Undo of the restore brings everything back.
			await said(flow, "/state undo");
			assert.deepEqual(await tactics(flow), { a: 2, b: 2, c: 3 });
		});
	});

	it("restores one path only; nothing to restore and bad words are refused, writing nothing", async () => {
		await twoWrites(async (flow) => {
			const out = await said(flow, "/state restore t-0001 cwd.tactics.a");
			assert.match(out, /^Restored cwd\.tactics\.a to after t-0001 as transition t-0003 \(1 reverted\)\.$/m);
			assert.deepEqual(await tactics(flow), { a: 1, b: 2 });
			assert.match(await said(flow, "/state restore t-0001 cwd.tactics.a"), /nothing to restore: cwd\.tactics\.a is already as it was after t-0001/);
			assert.match(await said(flow, "/state restore"), /`restore` needs a transition id/);
			assert.match(await said(flow, "/state restore nope"), /no retained transition's id starts with `nope`/);
			assert.match(await said(flow, "/state restore t-0001 effective.tactics"), /`effective\.tactics` is no owner or locator to restore/);
			assert.deepEqual(await tactics(flow), { a: 1, b: 2 }, "refusals wrote nothing");
		});
	});
});
