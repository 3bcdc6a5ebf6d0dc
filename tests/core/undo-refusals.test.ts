/**
 * Undo, redo and restore where they refuse or pick: an unreadable owner, an id prefix that
 * names nothing or several transitions, a transition no longer retained, malformed `by.reverts`
 * that is no reversal, and the order of a timeline over owners that share transitions.
 * (Written against the survivors of the mutation run on `lib/core/undo.ts`, docs/decisions.md.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { newHistory } from "../../lib/core/history.js";
import type { CanonicalPatch, OwnerHistory, Provenance, Result, TransitionRecord } from "../../lib/core/types.js";
import { idUndoPlan, latestRedoPlan, latestUndoPlan, restorePlan, reversalFor, selectedUndoPlan, type UndoPlan } from "../../lib/core/undo.js";
import { type LoadedHistories, reversalOf, timeline, undoChain } from "../../lib/core/undo-chain.js";

type Two = Record<"cwd" | "session", OwnerHistory>;

function two(): Two {
	return { cwd: newHistory("cwd", 1000), session: newHistory("session", 1000) };
}

const loaded = (h: Two): LoadedHistories => ({ cwd: { ok: true, value: h.cwd }, session: { ok: true, value: h.session } });

function commit(h: Two, id: string, minute: number, patch: CanonicalPatch, by: Provenance = { kind: "system", reason: "test" }, exact = false): string {
	const at = new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
	const r = stage(h, patch, { id, at, by, ...(exact ? { exact: true } : {}) });
	assert.equal(r.noop, false, `${id} changes something`);
	commitStaged(h, r);
	return id;
}

function refusal<T>(r: Result<T>): string {
	assert.equal(r.ok, false, "refused");
	return r.ok ? "" : r.why;
}

function planned(r: Result<UndoPlan>): UndoPlan {
	assert.ok(r.ok, r.ok ? "" : r.why);
	return r.value;
}

describe("an owner that cannot be read", () => {
	const broken = (h: Two): LoadedHistories => ({ cwd: { ok: true, value: h.cwd }, session: { ok: false, why: "the log is damaged" } });

	it("refuses undo, redo and a scoped restore that asks for it, saying which owner and why", () => {
		const h = two();
		const id = commit(h, "a1", 1, { cwd: { tactics: { a: 1 } } });
		assert.equal(refusal(latestUndoPlan(broken(h), ["cwd", "session"], true)), "cannot undo session: the log is damaged");
		assert.equal(refusal(latestRedoPlan(broken(h), ["cwd", "session"], true)), "cannot redo session: the log is damaged");
		assert.equal(refusal(restorePlan(broken(h), id, { owner: "session" })), "cannot restore session: the log is damaged");
	});

	it("an owner asked for but not loaded at all is passed over, not an error", () => {
		const h = two();
		commit(h, "a1", 1, { cwd: { tactics: { a: 1 } } });
		assert.deepEqual(planned(latestUndoPlan({ cwd: { ok: true, value: h.cwd } }, ["cwd", "session"], true)).owners, ["cwd"]);
	});

	it("does not stop an undo of the owners that can be read", () => {
		const h = two();
		commit(h, "a1", 1, { cwd: { tactics: { a: 1 } } });
		const plan = planned(latestUndoPlan(broken(h), ["cwd"], true));
		assert.deepEqual(plan.owners, ["cwd"]);
		assert.deepEqual(plan.patch, { cwd: { tactics: { a: null } } });
	});
});

describe("ids and retention", () => {
	function many(): Two {
		const h = two();
		for (const [i, id] of ["abc-1", "abc-2", "abc-3", "abc-4", "abc-5", "xyz-1"].entries()) commit(h, id, i, { cwd: { tactics: { [id]: i } } });
		return h;
	}

	it("a prefix of several ids lists at most four of them and asks for more", () => {
		const h = many();
		assert.equal(
			refusal(idUndoPlan(loaded(h), "abc", "cwd", "history")),
			"`abc` starts 5 transition ids (abc-1, abc-2, abc-3, abc-4, …); type more of the id.",
		);
		assert.equal(
			refusal(idUndoPlan(loaded(h), "abc-", "cwd", "history")),
			"`abc-` starts 5 transition ids (abc-1, abc-2, abc-3, abc-4, …); type more of the id.",
		);
		const h2 = two();
		commit(h2, "ab-1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h2, "ab-2", 2, { cwd: { tactics: { b: 1 } } });
		assert.equal(refusal(idUndoPlan(loaded(h2), "ab", "cwd", "history")), "`ab` starts 2 transition ids (ab-1, ab-2); type more of the id.");
		commit(h2, "ab-3", 3, { cwd: { tactics: { c: 1 } } });
		commit(h2, "ab-4", 4, { cwd: { tactics: { d: 1 } } });
		assert.equal(refusal(idUndoPlan(loaded(h2), "ab", "cwd", "history")), "`ab` starts 4 transition ids (ab-1, ab-2, ab-3, ab-4); type more of the id.");
	});

	it("a prefix that names nothing says where it looked and what lists the ids", () => {
		assert.equal(
			refusal(idUndoPlan(loaded(many()), "q", "cwd, session", "/state history")),
			"no retained transition's id starts with `q`, and it is not an owner (cwd, session); /state history lists the ids.",
		);
	});

	it("a unique prefix plans the undo of that transition; a transition shared by two owners is counted once", () => {
		const h = many();
		const plan = planned(idUndoPlan(loaded(h), "xyz", "cwd", "history"));
		assert.equal(plan.id, "xyz-1");
		assert.deepEqual(plan.patch, { cwd: { tactics: { "xyz-1": null } } });
		const shared = two();
		commit(shared, "both-1", 1, { cwd: { tactics: { a: 1 } }, session: { tactics: { a: 1 } } });
		const both = planned(idUndoPlan(loaded(shared), "both", "cwd", "history"));
		assert.deepEqual(both.owners, ["cwd", "session"]);
		assert.deepEqual(
			both.reverts.map((r) => [r.owner, r.record.id]),
			[["cwd", "both-1"]],
		);
		assert.deepEqual(both.seqs, { cwd: 1, session: 1 });
	});

	it("selecting by a prefix instead of a whole id, or an id no owner retains, is refused as not retained", () => {
		const h = many();
		assert.equal(refusal(selectedUndoPlan(loaded(h), "xyz")), "transition xyz is no longer retained.");
		assert.equal(refusal(selectedUndoPlan(loaded(h), "gone")), "transition gone is no longer retained.");
	});

	it("restore to an id no owner retains names where it looked", () => {
		const h = many();
		assert.equal(refusal(restorePlan(loaded(h), "gone")), "transition gone is not retained in any owner.");
		assert.equal(refusal(restorePlan(loaded(h), "abc-1", { owner: "session" })), "transition abc-1 is not retained in session.");
		assert.equal(refusal(restorePlan(loaded(h), "xyz-1")), "nothing to restore: every owner that retains it is already as it was after xyz-1.");
		assert.equal(refusal(restorePlan(loaded(h), "xyz-1", { owner: "cwd" })), "nothing to restore: cwd is already as it was after xyz-1.");
	});
});

describe("a transition several owners share", () => {
	/** T writes different keys in cwd and session; later work changes one owner's key of T. */
	function sharedThenLater(later: "cwd" | "session"): Two {
		const h = two();
		commit(h, "T", 1, { cwd: { tactics: { a: 1 } }, session: { tactics: { b: 1 } } });
		commit(h, "L", 2, later === "cwd" ? { cwd: { tactics: { a: 2 } } } : { session: { tactics: { b: 2 } } });
		return h;
	}

	it("its undo is refused when later work in any of its owners changed that owner's keys of it", () => {
		for (const owner of ["cwd", "session"] as const) {
			const h = sharedThenLater(owner);
			assert.equal(refusal(selectedUndoPlan(loaded(h), "T")), `${owner} #2 (L) changed the same keys later; undo that one first.`, `later work in ${owner}`);
		}
	});

	it("undoing the later work first lets it go, and the undo takes back each owner's own keys", () => {
		const h = sharedThenLater("session");
		const undoL = planned(selectedUndoPlan(loaded(h), "L"));
		commit(h, "uL", 3, undoL.patch, { kind: "command", command: "undo", reverts: reversalFor(undoL) }, true);
		const plan = planned(selectedUndoPlan(loaded(h), "T"));
		assert.deepEqual(plan.patch, { cwd: { tactics: { a: null } }, session: { tactics: { b: null } } });
	});
});

describe("what counts as a reversal", () => {
	const base = { id: "r", at: "t", seq: 1, patch: {}, undo: {}, cascades: [], owners: ["cwd" as const] };
	const rec = (by: unknown) => ({ ...base, by }) as TransitionRecord;

	it("only a command's well-formed `reverts` is one", () => {
		assert.deepEqual(reversalOf(rec({ kind: "command", command: "undo", reverts: { op: "undo", target: "x" } })), { op: "undo", target: "x" });
		assert.equal(reversalOf(rec({ kind: "command", command: "undo" })), undefined);
		assert.equal(reversalOf(rec({ kind: "command", command: "undo", reverts: "undo x" })), undefined);
		assert.equal(reversalOf(rec({ kind: "command", command: "undo", reverts: { op: "erase", target: "x" } })), undefined);
		assert.equal(reversalOf(rec({ kind: "command", command: "undo", reverts: { op: "undo", target: 7 } })), undefined);
		assert.equal(reversalOf(rec({ kind: "import", source: "f", reverts: { op: "undo", target: "x" } })), undefined);
	});

	it("a restore records what it reverted, and its path only when it has one", () => {
		const plan: UndoPlan = {
			op: "restore",
			id: "t1",
			owners: ["cwd"],
			patch: {},
			reverts: [{ owner: "cwd", record: { ...base, id: "t2", by: { kind: "system", reason: "x" } } }],
			seqs: {},
		};
		assert.deepStrictEqual(reversalFor(plan), { op: "restore", target: "t1", reverted: ["t2"] });
		assert.deepStrictEqual(reversalFor({ ...plan, path: "cwd.tactics.a" }), { op: "restore", target: "t1", reverted: ["t2"], path: "cwd.tactics.a" });
		assert.deepStrictEqual(reversalFor({ ...plan, op: "undo" }), { op: "undo", target: "t1" });
	});

	it("a malformed reversal in the log is ordinary work: undo reverts it, it cancels nothing", () => {
		const h = two();
		commit(h, "w1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "odd", 2, { cwd: { tactics: { b: 1 } } }, { kind: "command", command: "undo", reverts: { op: "undo", target: 5 } as never });
		assert.deepEqual(
			undoChain(loaded(h), ["cwd"]).done.map((r) => r.id),
			["w1", "odd"],
		);
		assert.equal(planned(latestUndoPlan(loaded(h), ["cwd"], true)).id, "odd");
	});
});

describe("the timeline of several owners", () => {
	it("merges the owners' tails by time, a shared transition once and after what precedes it in each owner", () => {
		const h = two();
		commit(h, "c1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "s1", 2, { session: { tactics: { a: 1 } } });
		commit(h, "both", 3, { cwd: { tactics: { b: 1 } }, session: { tactics: { b: 1 } } });
		commit(h, "s2", 4, { session: { tactics: { c: 1 } } });
		commit(h, "c2", 5, { cwd: { tactics: { c: 1 } } });
		assert.deepEqual(
			timeline(loaded(h), ["cwd", "session"]).map((r) => r.id),
			["c1", "s1", "both", "s2", "c2"],
		);
		assert.deepEqual(
			timeline(loaded(h), ["session", "cwd"]).map((r) => r.id),
			["c1", "s1", "both", "s2", "c2"],
		);
		assert.deepEqual(
			timeline(loaded(h), ["cwd"]).map((r) => r.id),
			["c1", "both", "c2"],
		);
	});

	it("a shared transition with an earlier time than its predecessor in one owner still waits for it", () => {
		const h = two();
		commit(h, "c1", 5, { cwd: { tactics: { a: 1 } } });
		commit(h, "both", 1, { cwd: { tactics: { b: 1 } }, session: { tactics: { b: 1 } } });
		commit(h, "s2", 2, { session: { tactics: { c: 1 } } });
		assert.deepEqual(
			timeline(loaded(h), ["cwd", "session"]).map((r) => r.id),
			["c1", "both", "s2"],
		);
	});

	it("transitions of two owners at the same instant come in the order the owners are asked (deterministic)", () => {
		const h = two();
		commit(h, "c1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "s1", 1, { session: { tactics: { a: 1 } } });
		assert.deepEqual(
			timeline(loaded(h), ["cwd", "session"]).map((r) => r.id),
			["c1", "s1"],
		);
		assert.deepEqual(
			timeline(loaded(h), ["session", "cwd"]).map((r) => r.id),
			["s1", "c1"],
		);
	});

	it("an undo chain with no new work after its undo names nothing that cleared the redo", () => {
		const h = two();
		commit(h, "w1", 1, { cwd: { tactics: { a: 1 } } });
		const undo = planned(latestUndoPlan(loaded(h), ["cwd"], true));
		commit(h, "u1", 2, undo.patch, { kind: "command", command: "undo", reverts: reversalFor(undo) }, true);
		const chain = undoChain(loaded(h), ["cwd"]);
		assert.deepStrictEqual(
			{ done: chain.done.map((r) => r.id), redo: chain.redo.map((r) => r.id), cleared: "clearedBy" in chain },
			{ done: [], redo: ["u1"], cleared: false },
		);
	});
});
