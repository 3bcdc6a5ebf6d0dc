/**
 * The head of a long-lived project (issues 26 and 36): relevance, not key order. On the fixture of
 * `tests/helpers/long-project.ts` the 8 KiB head shows every active intent's goal and status,
 * every owned step's key and status, every lazy note's and artifact's key and the todos whole;
 * steps in flight come whole and first, a shortened step keeps its status, small sections are
 * whole, and a plane's marker says what kinds of entries it counts, how old and how to read them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, JsonObject, Owner, OwnerHistory } from "../../lib/core/types.js";
import { DEFAULT_HEAD_BUDGET, renderHead } from "../../lib/model/head.js";
import { utf8Bytes } from "../../lib/core/size.js";
import { activeWorkShown, lineObject } from "../helpers/head-checks.js";
import { longProject } from "../helpers/long-project.js";

describe("head relevance", () => {
	it("shows the active work of a 75 KB project at 8 KiB: every active intent's goal and status, every owned step's status, names, the todos whole", () => {
		const { cwd, work, roots } = longProject();
		assert.ok(cwd.bytes > 70_000 && cwd.bytes < 90_000, `${cwd.bytes} B of state`);
		assert.equal(Object.keys(cwd.state.tactics).length, 311);
		assert.equal(Object.keys(cwd.state.intents).length, 5);
		const head = renderHead({ mode: "active", wanted: ["cwd"], histories: { cwd }, budget: DEFAULT_HEAD_BUDGET, roots });
		if (process.env.SHOW_HEAD) console.log(head);
		assert.ok(utf8Bytes(head) <= DEFAULT_HEAD_BUDGET);
		const { share, missing } = activeWorkShown(head, work);
		assert.deepEqual(missing, []);
		assert.equal(share, 1);
	});
});

type Histories = Partial<Record<Owner, OwnerHistory>>;

function build(patches: CanonicalPatch[], owners: readonly Owner[] = ["cwd"]): Histories {
	const histories: Histories = {};
	for (const o of owners) histories[o] = newHistory(o, 20);
	patches.forEach((patch, i) => {
		const at = new Date(Date.UTC(2026, 0, 1 + i)).toISOString();
		commitStaged(histories, stage(histories, patch, { id: `t${i + 1}`, at, by: { kind: "system", reason: "test" } }));
	});
	return histories;
}

/** Steps `p-0` … of about 120 B. */
function steps(prefix: string, count: number, status?: string): JsonObject {
	const out: JsonObject = {};
	for (let i = 0; i < count; i++)
		out[`${prefix}-${i}`] = status === undefined ? `${prefix} step ${i} `.padEnd(120, "x") : { step: `${prefix} ${i} `.padEnd(100, "y"), status };
	return out;
}

describe("head relevance: what goes first and what folds", () => {
	it("puts steps in flight whole first, then the active intent's other steps (status first), and says what its marker counts: how many of each kind, how old, where to read them", () => {
		const histories = build([
			{ cwd: { tactics: steps("old", 120, "done"), intents: { was: { goal: "old goal", status: "done" } } } },
			{ cwd: { tactics: steps("loose", 40) } },
			{
				cwd: {
					intents: { now: { goal: "the current goal", owns: [{ $ref: "cwd.tactics.now-0" }, { $ref: "cwd.tactics.now-1" }] } },
					tactics: { ...steps("now", 2, "todo"), "now-0": { step: "now 0 ".padEnd(100, "y"), status: "next", notes: "n".repeat(150) } },
				},
			},
		]);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 2048 });
		assert.ok(utf8Bytes(head) <= 2048);
		const tactics = lineObject(head, "tactics: ");
		assert.deepEqual(tactics["now-0"], (histories.cwd as OwnerHistory).state.tactics["now-0"], "the step in flight is whole");
		assert.equal((tactics["now-1"] as JsonObject).status, "todo");
		assert.ok(head.includes('intents: {"now":{"goal":"the current goal","owns":"refs: tactics.now-0, tactics.now-1"}'), head);
		const marker = tactics["…"] as string;
		const m = /^(\d+) more \((\d+) open, (\d+) closed; none changed after (\S+)\), [\d.]+ KB: read_state tactics with projection keys$/.exec(marker);
		assert.ok(m, marker);
		const shownOld = Object.keys(tactics).filter((k) => k.startsWith("old-")).length;
		const shownLoose = Object.keys(tactics).filter((k) => k.startsWith("loose-")).length;
		assert.equal(Number(m[1]), 160 - shownOld - shownLoose, "the marker counts exactly the hidden tactics");
		assert.equal(Number(m[2]), 40 - shownLoose, "the loose steps (no status) are open");
		assert.equal(Number(m[3]), 120 - shownOld, "the finished ones are closed");
		assert.equal(m[4], "2026-01-02", "the newest hidden change (the loose steps), by day");
		// The closed intent: shown, or counted by the intents marker as closed, never twice.
		const intents = lineObject(head, "intents: ");
		assert.equal(Object.hasOwn(intents, "was"), !Object.hasOwn(intents, "…"));
		if (Object.hasOwn(intents, "…")) assert.match(intents["…"] as string, /^1 more \(closed; none changed after 2026-01-01\), /);
		assert.ok(!head.includes("\nfolded: "), "no separate fold line: the markers say what they count");
	});

	it("folds another branch's intents and their steps into one line each; on their own branch they are shown first; without a branch nothing folds", () => {
		const histories = build([
			{
				cwd: {
					intents: {
						mine: { goal: "my goal", gitBranch: "feature/a", owns: [{ $ref: "cwd.tactics.m1" }] },
						theirs: { goal: "their goal", gitBranch: "feature/b", owns: [{ $ref: "cwd.tactics.b1" }, { $ref: "cwd.tactics.b2" }, { $ref: "cwd.tactics.b3" }] },
						shared: { goal: "on every branch" },
					},
					tactics: { m1: "mine", b1: "theirs 1", b2: { step: "theirs 2", status: "done" }, b3: "theirs 3" },
				},
			},
		]);
		const input = { mode: "passive" as const, wanted: ["cwd" as const], histories, budget: 8192 };
		const onA = renderHead({ ...input, git: { branch: "feature/a", defaultBranch: "main" } });
		assert.ok(onA.includes('~ intents.theirs of branch "feature/b": 2 open steps'), onA);
		assert.ok(!onA.includes("their goal") && !onA.includes("theirs 1"), "their intent and steps are folded");
		assert.ok(onA.includes('"mine":{"goal":"my goal"') && onA.includes('"shared":{"goal":"on every branch"}') && onA.includes('"m1":"mine"'));
		const merged = renderHead({ ...input, git: { branch: "feature/a", defaultBranch: "main", gone: { "feature/b": "merged" } } });
		assert.ok(
			merged.includes(
				'~ intents.theirs of branch "feature/b": 2 open steps; the branch was merged into "main": close the intent, or keep it on every branch with gitBranch null',
			),
			merged,
		);
		const plain = renderHead(input);
		assert.ok(plain.includes("their goal") && !plain.includes("~ "), "no branch (outside git, detached HEAD): as before");
		// At a tight budget this branch's intent comes before the branchless one.
		const tight = renderHead({ ...input, budget: 700, git: { branch: "feature/b" } });
		assert.ok(tight.includes('"theirs":{"goal":"their goal"'), tight);
	});
	it("shows small sections whole, ids and all, and fills what is left to the budget", () => {
		const owners = ["global", "session"] as const;
		const tactics = { a: "check the build", b: "then the docs" };
		const histories = build(
			[{ global: { strategy: { rule: "r".repeat(3000) }, tactics } }, { session: { tactics, artifacts: { "notes.md": "n".repeat(3000) } } }],
			owners,
		);
		const budget = 1100;
		const head = renderHead({ mode: "passive", wanted: owners, histories, budget });
		assert.ok(head.includes('global.tactics: {"a":"check the build","b":"then the docs"}'), head);
		assert.ok(head.includes('session.tactics: {"a":"check the build","b":"then the docs"}'), head);
		assert.ok(utf8Bytes(head) <= budget && utf8Bytes(head) >= budget - 24, `${utf8Bytes(head)} of ${budget} B`);
	});

	it("shortens a long step with its status first, whole, and only its text cut (the cut says so)", () => {
		const status = "blocked: waiting on the security review of the new token store";
		const step = { step: "Cut the release branch and tag it, then ".padEnd(400, "z"), status };
		const histories = build([{ cwd: { tactics: steps("filler", 60, "todo") } }, { cwd: { tactics: { "rel-02": { ...step, status: "todo" } } } }]);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 1500 });
		const shown = lineObject(head, "tactics: ")["rel-02"] as JsonObject;
		assert.deepEqual(Object.keys(shown), ["status", "step"], "the status first, then the text");
		assert.equal(shown.status, "todo");
		assert.match(shown.step as string, /^Cut the release.*…$/);
		// In flight, the same step is whole (up to a sixth of the budget); a status longer than a preview is never cut.
		const inflight = build([{ cwd: { tactics: steps("filler", 60, "todo") } }, { cwd: { tactics: { "rel-02": step } } }]);
		const whole = renderHead({ mode: "passive", wanted: ["cwd"], histories: inflight, budget: 4096 });
		assert.deepEqual(lineObject(whole, "tactics: ")["rel-02"], step);
		const tight = lineObject(renderHead({ mode: "passive", wanted: ["cwd"], histories: inflight, budget: 1500 }), "tactics: ")["rel-02"] as JsonObject;
		assert.deepEqual(Object.keys(tight), ["status", "step"]);
		assert.equal(tight.status, status);
		assert.match(tight.step as string, /…$/);
	});
});
