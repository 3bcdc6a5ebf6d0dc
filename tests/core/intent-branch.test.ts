/** Intents record their branch (issue 26): the runtime stamps new intents; the model can drop the record, never set it. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { intentBranch, isBranchName, stampIntentBranches } from "../../lib/core/intent-branch.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Json, OwnerHistory } from "../../lib/core/types.js";

function withIntent(): Record<"cwd" | "global", OwnerHistory> {
	const histories = { cwd: newHistory("cwd", 20), global: newHistory("global", 20) };
	commitStaged(
		histories,
		stage(
			histories,
			{ cwd: { intents: { old: { goal: "g", gitBranch: "main" } } } },
			{ id: "1", at: "2026-01-01T00:00:00.000Z", by: { kind: "system", reason: "t" } },
		),
	);
	return histories;
}

describe("stampIntentBranches", () => {
	it("stamps new intents with the branch, replaces a sent value, leaves it out on existing intents but keeps null", () => {
		const h = withIntent();
		const patch: CanonicalPatch = {
			cwd: { intents: { fresh: { goal: "new", gitBranch: "forged" }, old: { gitBranch: "forged", goal: "g2" }, text: "a string intent" } },
			global: { intents: { g: { goal: "global spans projects" } } },
		};
		const out = stampIntentBranches(patch, h, "feature/x");
		assert.deepEqual(out.cwd?.intents, { fresh: { goal: "new", gitBranch: "feature/x" }, old: { goal: "g2" }, text: "a string intent" });
		assert.deepEqual(out.global, patch.global, "global intents record no branch");
		assert.deepEqual(patch.cwd?.intents?.fresh, { goal: "new", gitBranch: "forged" }, "the input is not changed");
		const drop = stampIntentBranches({ cwd: { intents: { old: { gitBranch: null } } } }, h, "feature/x");
		assert.deepEqual(drop.cwd?.intents, { old: { gitBranch: null } }, "null drops the record");
		const off = stampIntentBranches({ cwd: { intents: { fresh: { goal: "n", gitBranch: "forged" } } } }, h, undefined);
		assert.deepEqual(off.cwd?.intents, { fresh: { goal: "n" } }, "outside a branch nothing is recorded, and nothing forged");
		const same = { cwd: { tactics: { a: 1 } } };
		assert.equal(stampIntentBranches(same, h, "feature/x"), same, "a patch without intents is returned as is");
	});

	it("accepts git's branch names only", () => {
		for (const ok of ["main", "feature/login", "release-1.2", "a_b"]) assert.ok(isBranchName(ok), ok);
		for (const bad of ["", "a b", "a..b", "-x", "x/", "x.lock", "a\nb", "a~1", "/x", "x//y", "@", "a@{1}", "x".repeat(256), "a.lock/b", "a/b.lock/c", "a/.b"])
			assert.ok(!isBranchName(bad), JSON.stringify(bad));
	});

	it("stamps a new intent that sent no branch, keeping its members, in the conversation's intents too", () => {
		const h = withIntent();
		const out = stampIntentBranches({ cwd: { intents: { fresh: { goal: "new", steps: ["a"] }, old: { goal: "g2" } } } }, h, "main");
		assert.deepEqual(out.cwd?.intents, { fresh: { goal: "new", steps: ["a"], gitBranch: "main" }, old: { goal: "g2" } });
		// No session history loaded yet: every session intent of the patch is new.
		const session = stampIntentBranches({ session: { intents: { s: { goal: "talk" } } } }, h, "main");
		assert.deepEqual(session, { session: { intents: { s: { goal: "talk", gitBranch: "main" } } } });
	});

	it("outside a branch a patch that sends no branch is returned as is", () => {
		const h = withIntent();
		const patch: CanonicalPatch = { cwd: { intents: { fresh: { goal: "new" }, old: { goal: "g2" } } } };
		assert.equal(stampIntentBranches(patch, h, undefined), patch);
	});

	it("accepts git's longest branch name and a name that only contains `.lock`; refuses a non-string", () => {
		assert.ok(isBranchName("x".repeat(255)), "255 characters");
		assert.ok(isBranchName("x.locked"), "x.locked");
		assert.ok(isBranchName("x.lock.y"), "x.lock.y");
		for (const bad of [["main"], 7, null, undefined, { length: 4 }]) assert.ok(!isBranchName(bad), JSON.stringify(bad));
	});

	it("intentBranch reads a well-formed recorded branch only", () => {
		assert.equal(intentBranch({ goal: "g", gitBranch: "feature/x" }), "feature/x");
		for (const v of [{ goal: "g" }, { gitBranch: "a..b" }, { gitBranch: ["main"] }, { gitBranch: null }, "main", ["main"], null, undefined] as (
			| Json
			| undefined
		)[])
			assert.equal(intentBranch(v), undefined, JSON.stringify(v));
	});
});
