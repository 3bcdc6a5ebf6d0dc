/**
 * The undo chain in the cases the replay properties do not reach: later work on other keys,
 * restores inside the chain, redo when the undone change is folded or shared, what each owner's
 * list marks as undone, logs whose owners disagree on the order of shared transitions or that
 * claim impossible reversals, and restores narrowed to a section, a path or the readable owners.
 * (Written against the survivors of the mutation run on `lib/core/undo.ts`, docs/decisions.md.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { newHistory } from "../../lib/core/history.js";
import type { CanonicalPatch, OwnerHistory, Provenance, Result, TransitionRecord, Who } from "../../lib/core/types.js";
import { latestRedoPlan, latestUndoPlan, movedSince, othersIn, restorePlan, reversalFor, selectedUndoPlan, type UndoPlan } from "../../lib/core/undo.js";
import { type LoadedHistories, timeline, undoneIn } from "../../lib/core/undo-chain.js";

type Two = Record<"cwd" | "session", OwnerHistory>;

const two = (cwdRetention = 1000): Two => ({ cwd: newHistory("cwd", cwdRetention), session: newHistory("session", 1000) });
const loaded = (h: Two): LoadedHistories => ({ cwd: { ok: true, value: h.cwd }, session: { ok: true, value: h.session } });
const ids = (rs: readonly TransitionRecord[]) => rs.map((r) => r.id);

function commit(h: Two, id: string, minute: number, patch: CanonicalPatch, by: Provenance = { kind: "system", reason: "test" }, who?: Who): string {
	const at = new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
	const exact = by.kind === "command";
	const r = stage(h, patch, { id, at, by, ...(exact ? { exact: true } : {}), ...(who ? { who } : {}) });
	assert.equal(r.noop, false, `${id} changes something`);
	commitStaged(h, r);
	return id;
}

function planned(r: Result<UndoPlan>): UndoPlan {
	assert.ok(r.ok, r.ok ? "" : r.why);
	return r.value;
}

function refusal<T>(r: Result<T>): string {
	assert.equal(r.ok, false, "refused");
	return r.ok ? "" : r.why;
}

/** Commit `plan` as the command that reverts it. */
function apply(h: Two, id: string, minute: number, plan: UndoPlan, who?: Who): string {
	return commit(h, id, minute, plan.patch, { kind: "command", command: plan.op, reverts: reversalFor(plan) }, who);
}

describe("later work and the undo of an earlier transition", () => {
	it("later work on other keys does not stop it; later work on the same key, or inside it, does", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: { x: 1 } } } });
		commit(h, "t2", 2, { cwd: { tactics: { b: 1 }, lazy: { a: 1 } } });
		assert.deepEqual(planned(selectedUndoPlan(loaded(h), "t1")).patch, { cwd: { tactics: { a: null } } });
		commit(h, "t3", 3, { cwd: { tactics: { a: { y: 2 } } } });
		assert.equal(refusal(selectedUndoPlan(loaded(h), "t1")), "cwd #3 (t3) changed the same keys later; undo that one first.");
	});

	it("names transitions by the first eight characters of their id", () => {
		const h = two();
		commit(h, "0123456789abcdef", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "fedcba9876543210", 2, { cwd: { tactics: { a: 2 } } });
		assert.equal(refusal(selectedUndoPlan(loaded(h), "0123456789abcdef")), "cwd #2 (fedcba98) changed the same keys later; undo that one first.");
		const undo = planned(latestUndoPlan(loaded(h), ["cwd"], true));
		apply(h, "aaaaaaaa-undo", 3, undo);
		commit(h, "bbbbbbbb-later", 4, { cwd: { tactics: { c: 1 } } });
		assert.equal(
			refusal(latestRedoPlan(loaded(h), ["cwd"], true)),
			"nothing to redo for cwd (transition bbbbbbbb came after the last undo; undo it, or undo the undo by its id).",
		);
	});

	it("a restore is not an undo of the transition it restored to: later work it did not revert still stops that undo", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "t2", 2, { cwd: { tactics: { a: 2 } } });
		apply(h, "r3", 3, planned(restorePlan(loaded(h), "t1", { owner: "cwd" })));
		assert.deepEqual(h.cwd.state.tactics, { a: 1 });
		assert.equal(refusal(selectedUndoPlan(loaded(h), "t1")), "cwd #2 (t2) changed the same keys later; undo that one first.");
	});

	it("a damaged record that claims to revert itself hides nothing: it is later work", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "x", 2, { cwd: { tactics: { a: 2 } } }, { kind: "command", command: "undo", reverts: { op: "undo", target: "x" } });
		assert.equal(refusal(selectedUndoPlan(loaded(h), "t1")), "cwd #2 (x) changed the same keys later; undo that one first.");
	});

	it("a record whose owners list names none it is kept in is no longer retained for an undo of all its owners", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		(h.cwd.tail[0] as TransitionRecord).owners = ["global"];
		assert.equal(refusal(latestUndoPlan(loaded(h), ["cwd"], false)), "transition t1 is no longer retained.");
	});
});

describe("nothing to undo or redo", () => {
	it("says so for the owners asked, with the redo hint only when there is something to redo", () => {
		const h = two();
		assert.equal(refusal(latestUndoPlan(loaded(h), ["cwd", "session"], true)), "no retained transition to undo for cwd+session.");
		assert.equal(refusal(latestRedoPlan(loaded(h), ["cwd", "session"], true)), "nothing to redo for cwd+session.");
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		assert.equal(refusal(latestRedoPlan(loaded(h), ["cwd"], true)), "nothing to redo for cwd.");
	});
});

describe("redo: the change it applies again", () => {
	it("is the undone transition itself, not the first one retained", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "t2", 2, { cwd: { tactics: { b: 1 } } });
		apply(h, "u2", 3, planned(latestUndoPlan(loaded(h), ["cwd"], true)));
		const redo = planned(latestRedoPlan(loaded(h), ["cwd"], true));
		assert.equal(redo.again?.record.id, "t2");
	});

	it("of a shared transition is named in the first owner; an owner that folded it leaves it to the next", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } }, session: { tactics: { a: 1 } } });
		apply(h, "u1", 2, planned(latestUndoPlan(loaded(h), ["cwd", "session"], true)));
		assert.equal(planned(latestRedoPlan(loaded(h), ["cwd", "session"], true)).again?.owner, "cwd");
		const f = two(2);
		commit(f, "t1", 1, { cwd: { tactics: { a: 1 } }, session: { tactics: { a: 1 } } });
		commit(f, "x", 2, { cwd: { tactics: { b: 1 } } });
		apply(f, "u1", 3, planned(selectedUndoPlan(loaded(f), "t1")));
		assert.deepEqual(ids(f.cwd.tail), ["x", "u1"]);
		const redo = planned(latestRedoPlan(loaded(f), ["cwd", "session"], true));
		assert.deepEqual([redo.again?.owner, redo.again?.record.id], ["session", "t1"]);
	});

	it("folded everywhere: the redo still plans, and asks consent of whoever made the undo", () => {
		const me: Who = { user: "bob", host: "laptop" };
		const alice: Who = { user: "alice", host: "desk" };
		const h: Two = { cwd: newHistory("cwd", 1), session: newHistory("session", 1) };
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } }, undefined, { user: "carol", host: "box" });
		apply(h, "u1", 2, planned(latestUndoPlan(loaded(h), ["cwd"], true)), alice);
		const redo = planned(latestRedoPlan(loaded(h), ["cwd"], true));
		assert.equal(redo.again, undefined);
		assert.deepEqual(
			othersIn(redo, me).map((r) => r.record.who?.user),
			["alice"],
		);
	});

	it("an undo of a redo is an undo, with no change to apply again", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		apply(h, "u1", 2, planned(latestUndoPlan(loaded(h), ["cwd"], true)));
		apply(h, "r1", 3, planned(latestRedoPlan(loaded(h), ["cwd"], true)));
		const undo = planned(latestUndoPlan(loaded(h), ["cwd"], true));
		assert.deepEqual([undo.op, undo.id, undo.again], ["undo", "r1", undefined]);
	});

	it("an unrecorded author needs nobody's consent", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		assert.deepEqual(othersIn(planned(latestUndoPlan(loaded(h), ["cwd"], true)), { user: "bob", host: "laptop" }), []);
	});
});

describe("movedSince and undoneIn", () => {
	it("an owner that is no longer loaded has moved", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		const plan = planned(latestUndoPlan(loaded(h), ["cwd"], true));
		assert.equal(movedSince(plan, h), undefined);
		assert.equal(movedSince(plan, {}), "cwd changed while the undo was being prepared (now seq ?, planned at 1)");
	});

	it("marks what an undo reverted, unmarks it on redo, and leaves restores unmarked", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		commit(h, "t2", 2, { cwd: { tactics: { a: 2 } } });
		apply(h, "u2", 3, planned(latestUndoPlan(loaded(h), ["cwd"], true)));
		assert.deepEqual([...undoneIn(h.cwd.tail)], [["t2", "u2"]]);
		apply(h, "r2", 4, planned(latestRedoPlan(loaded(h), ["cwd"], true)));
		assert.deepEqual([...undoneIn(h.cwd.tail)], [["u2", "r2"]]);
		apply(h, "s1", 5, planned(restorePlan(loaded(h), "t1", { owner: "cwd" })));
		assert.deepEqual([...undoneIn(h.cwd.tail)], [["u2", "r2"]]);
		assert.deepEqual([...undoneIn([])], []);
	});

	it("after an undo of a redo, shows the marks of the undo's time again: the first undo is in effect, what it reverted is out", () => {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1 } } });
		apply(h, "u1", 2, planned(latestUndoPlan(loaded(h), ["cwd"], true)));
		apply(h, "r1", 3, planned(latestRedoPlan(loaded(h), ["cwd"], true)));
		const v1 = planned(latestUndoPlan(loaded(h), ["cwd"], true));
		assert.deepEqual([v1.op, v1.id], ["undo", "r1"], "the latest undo reverts the redo");
		apply(h, "v1", 4, v1);
		assert.deepEqual(h.cwd.state.tactics, {}, "t1 is out of effect again");
		// The marks say the same: t1 undone by u1 (in effect again), r1 undone by v1, u1 unmarked.
		assert.deepEqual(
			new Map(undoneIn(h.cwd.tail)),
			new Map([
				["t1", "u1"],
				["r1", "v1"],
			]),
		);
		// And a redo of v1 brings back the marks of r1's time.
		apply(h, "r2", 5, planned(latestRedoPlan(loaded(h), ["cwd"], true)));
		assert.deepEqual(h.cwd.state.tactics, { a: 1 });
		assert.deepEqual(
			new Map(undoneIn(h.cwd.tail)),
			new Map([
				["u1", "r1"],
				["v1", "r2"],
			]),
		);
	});

	it("stops at a cycle a damaged log claims instead of walking it for ever", () => {
		const rec = (id: string, target: string, op: "undo" | "redo"): TransitionRecord => ({
			id,
			at: "2026-01-01T00:00:00.000Z",
			seq: 1,
			by: { kind: "command", command: op, reverts: { op, target } },
			patch: {},
			undo: {},
			cascades: [],
			owners: ["cwd"],
		});
		assert.deepEqual(
			new Map(undoneIn([rec("a", "b", "undo"), rec("b", "a", "redo")])),
			new Map([
				["b", "a"],
				["a", "b"],
			]),
		);
		assert.deepEqual(new Map(undoneIn([rec("a", "a", "undo")])), new Map());
	});
});

describe("timelines of damaged or partial histories", () => {
	const rec = (id: string, minute: number): TransitionRecord => ({
		id,
		at: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
		seq: 1,
		by: { kind: "system", reason: "t" },
		patch: {},
		undo: {},
		cascades: [],
		owners: ["cwd", "session"],
	});

	it("owners whose logs disagree on the order of shared transitions still yield each once, by time", () => {
		const x = rec("x", 1);
		const y = rec("y", 2);
		const h: Two = { cwd: { ...newHistory("cwd", 10), tail: [x, y] }, session: { ...newHistory("session", 10), tail: [y, x] } };
		assert.deepEqual(ids(timeline(loaded(h), ["cwd", "session"])), ["x", "y"]);
		assert.deepEqual(ids(timeline(loaded(h), ["session", "cwd"])), ["x", "y"]);
	});

	it("an owner absent or unreadable adds nothing", () => {
		const h = two();
		commit(h, "c1", 1, { cwd: { tactics: { a: 1 } } });
		assert.deepEqual(ids(timeline({ cwd: { ok: true, value: h.cwd } }, ["cwd", "session"])), ["c1"]);
		assert.deepEqual(ids(timeline({ cwd: { ok: true, value: h.cwd }, session: { ok: false, why: "damaged" } }, ["cwd", "session"])), ["c1"]);
	});
});

describe("restore narrowed", () => {
	function three(): Two {
		const h = two();
		commit(h, "t1", 1, { cwd: { tactics: { a: 1, o: { x: 1 } }, lazy: { n: "one" } } });
		commit(h, "t2", 2, { cwd: { tactics: { a: null, b: 2, o: { y: 2 } }, lazy: { n: "two" } } });
		commit(h, "t3", 3, { cwd: { strategy: { s: 1 } }, session: { tactics: { z: 1 } } });
		return h;
	}

	it("to one section changes only that section, and reverts only the transitions that touched it", () => {
		const p = planned(restorePlan(loaded(three()), "t1", { owner: "cwd", section: "lazy", locator: "cwd.lazy" }));
		assert.deepEqual(p.patch, { cwd: { lazy: { n: "one" } } });
		assert.deepEqual(
			p.reverts.map((r) => r.record.id),
			["t2"],
		);
		assert.equal(p.path, "cwd.lazy");
	});

	it("to one path writes what it was, removes what was added since, and diffs objects", () => {
		const h = three();
		const at = (path: string[]) => restorePlan(loaded(h), "t1", { owner: "cwd", section: "tactics", path, locator: `cwd.tactics.${path.join(".")}` });
		assert.deepEqual(planned(at(["a"])).patch, { cwd: { tactics: { a: 1 } } });
		assert.deepEqual(planned(at(["b"])).patch, { cwd: { tactics: { b: null } } });
		assert.deepEqual(planned(at(["o"])).patch, { cwd: { tactics: { o: { y: null } } } });
		assert.deepEqual(planned(at(["o", "y"])).patch, { cwd: { tactics: { o: { y: null } } } });
		assert.equal(refusal(at(["o", "x"])), "nothing to restore: cwd.tactics.o.x is already as it was after t1.");
		assert.equal(refusal(at(["c"])), "nothing to restore: cwd.tactics.c is already as it was after t1.");
		assert.equal(refusal(at(["a", "deeper"])), "nothing to restore: cwd.tactics.a.deeper is already as it was after t1.");
	});

	it("without an owner: each readable owner retaining the id, the others untouched, and no path recorded", () => {
		const h = three();
		const p = planned(restorePlan(loaded(h), "t1"));
		assert.deepEqual(p.owners, ["cwd"]);
		assert.equal("path" in p, false);
		assert.deepEqual(
			p.reverts.map((r) => r.record.id),
			["t2", "t3"],
		);
		const partial = planned(restorePlan({ cwd: { ok: true, value: h.cwd }, session: { ok: false, why: "damaged" } }, "t1"));
		assert.deepEqual(partial.owners, ["cwd"]);
		assert.deepEqual(planned(restorePlan({ cwd: { ok: true, value: h.cwd } }, "t1")).owners, ["cwd"]);
	});
});
