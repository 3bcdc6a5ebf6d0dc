/**
 * The head of a long-lived project (issue 26): relevance, not key order. On the fixture of
 * `tests/helpers/long-project.ts` the 8 KiB head shows every active intent's goal, every owned
 * step's key and status, every lazy note's and artifact's key and the todo texts, and folds the
 * closed intents and old tactics into one line that says how many, how old and how to read them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, JsonObject, Owner, OwnerHistory } from "../../lib/core/types.js";
import { DEFAULT_HEAD_BUDGET, renderHead } from "../../lib/model/head.js";
import { utf8Bytes } from "../../lib/core/size.js";
import { activeWorkShown, longProject } from "../helpers/long-project.js";

describe("head relevance", () => {
	it("shows the active work of a 75 KB project whole at 8 KiB", () => {
		const { cwd, work, roots } = longProject();
		assert.ok(cwd.bytes > 70_000 && cwd.bytes < 90_000, `${cwd.bytes} B of state`);
		assert.equal(Object.keys(cwd.state.tactics).length, 311);
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
	it("puts the active intent's steps before loose and closed ones, and folds those into one line saying how many, how old, how to read them", () => {
		const histories = build([
			{ cwd: { tactics: steps("old", 120, "done"), intents: { was: { goal: "old goal", status: "done" } } } },
			{ cwd: { tactics: steps("loose", 40) } },
			{
				cwd: {
					intents: { now: { goal: "the current goal", owns: [{ $ref: "cwd.tactics.now-0" }, { $ref: "cwd.tactics.now-1" }] } },
					tactics: steps("now", 2, "todo"),
				},
			},
		]);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 2048 });
		assert.ok(utf8Bytes(head) <= 2048);
		const tactics = head.split("\n").find((l) => l.startsWith("tactics: ")) ?? "";
		assert.match(tactics, /"now-0":\{"step":"now 0[^"]*","status":"todo"\}/);
		assert.match(tactics, /"now-1":\{"step":"now 1[^"]*","status":"todo"\}/);
		assert.ok(head.includes('intents: {"now":{"goal":"the current goal"'), "the active intent is whole");
		const fold = head.split("\n").find((l) => l.startsWith("folded: ")) ?? "";
		const m =
			/^folded: (1 closed intent, )?(\d+) tactics no active intent owns, none changed after (\S+): read_state (intents, )?tactics with projection keys$/.exec(
				fold,
			);
		assert.ok(m, fold);
		// Leftover bytes may show the small closed intent; the fold names it exactly when it is not shown.
		assert.equal(m[1] !== undefined, !head.includes('"was":'));
		assert.equal(m[4] !== undefined, m[1] !== undefined);
		m.splice(1, 1);
		const shownLoose = (tactics.match(/"(old|loose)-\d+":/g) ?? []).length;
		assert.equal(Number(m[1]) + shownLoose, 160, "the fold counts exactly the hidden loose and finished tactics");
		assert.equal(m[2], "2026-01-02", "the newest hidden change (the loose steps), by day");
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
	it("fills the bytes a fold line was reserved but turned out not to need (all loose tactics shown)", () => {
		const owners = ["global", "session"] as const;
		const tactics = { a: "check the build", b: "then the docs" };
		const histories = build(
			[{ global: { strategy: { rule: "r".repeat(3000) }, tactics } }, { session: { tactics, artifacts: { "notes.md": "n".repeat(3000) } } }],
			owners,
		);
		const budget = 1100;
		const head = renderHead({ mode: "passive", wanted: owners, histories, budget });
		assert.ok(head.includes('global.tactics: {"a":"check the build","b":"then the docs"}'), head);
		assert.ok(!head.includes("\nfolded: "), "every loose tactic is shown, so nothing is folded");
		// The longest fold lines (about 120 B an owner) were set aside first; the strings give way to fill them.
		assert.ok(utf8Bytes(head) <= budget && utf8Bytes(head) >= budget - 24, `${utf8Bytes(head)} of ${budget} B`);
	});
});
