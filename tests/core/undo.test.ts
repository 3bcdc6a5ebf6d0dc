/**
 * The undo chain against replay (fast-check): for random histories over two owners, undo k
 * times equals the state after the first n−k transitions, redo after undo walks forward again,
 * restore(id) equals replay up to id, and each undo names what it reverted. The circular hints
 * of issue 27 (imports #1, #2, undo #3, then by id) cannot happen.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { cloneJson } from "../../lib/core/json.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { newHistory } from "../../lib/core/history.js";
import type { CanonicalPatch, JsonObject, Owner, OwnerHistory, Provenance, Result, Who } from "../../lib/core/types.js";
import {
	idUndoPlan,
	latestRedoPlan,
	latestUndoPlan,
	movedSince,
	othersIn,
	restorePlan,
	reversalFor,
	selectedUndoPlan,
	type UndoPlan,
} from "../../lib/core/undo.js";
import { type LoadedHistories, reversalOf, undoChain } from "../../lib/core/undo-chain.js";

const OWNERS2 = ["cwd", "session"] as const;

interface World {
	h: Record<"cwd" | "session", OwnerHistory>;
	n: number;
}

function world(): World {
	return { h: { cwd: newHistory("cwd", 1000), session: newHistory("session", 1000) }, n: 0 };
}

const loaded = (w: World): LoadedHistories => ({ cwd: { ok: true, value: w.h.cwd }, session: { ok: true, value: w.h.session } });

function commit(w: World, patch: CanonicalPatch, by: Provenance = { kind: "system", reason: "test" }, opts: { exact?: boolean; who?: Who } = {}): string {
	const id = `id-${String(++w.n).padStart(4, "0")}`;
	const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, w.n)).toISOString();
	const result = stage(w.h, patch, { id, at, by, ...(opts.exact ? { exact: true } : {}), ...(opts.who ? { who: opts.who } : {}) });
	assert.equal(result.noop, false, `transition ${id} changes something`);
	commitStaged(w.h, result);
	return id;
}

function apply(w: World, plan: Result<UndoPlan>): string {
	assert.ok(plan.ok, plan.ok ? "" : plan.why);
	assert.equal(movedSince(plan.value, w.h), undefined);
	return commit(w, plan.value.patch, { kind: "command", command: `test ${plan.value.op}`, reverts: reversalFor(plan.value) }, { exact: true });
}

function snap(w: World): JsonObject {
	return cloneJson({ cwd: w.h.cwd.state, session: w.h.session.state } as unknown as JsonObject);
}

/** A write: one to three tactics keys set or deleted, in cwd, session or both. */
const write = fc.record({
	owners: fc.constantFrom<readonly Owner[]>(["cwd"], ["session"], ["cwd", "session"]),
	keys: fc.dictionary(
		fc.constantFrom("a", "b", "c"),
		fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constant(null), fc.record({ x: fc.integer({ min: 0, max: 3 }) })),
		{
			minKeys: 1,
			maxKeys: 3,
		},
	),
});

/** Commit random writes (those that change nothing are skipped); returns the snapshot after each one kept. */
function history(w: World, writes: ReadonlyArray<{ owners: readonly Owner[]; keys: Record<string, unknown> }>): JsonObject[] {
	const snaps = [snap(w)];
	for (const wr of writes) {
		const patch: CanonicalPatch = {};
		for (const o of wr.owners) patch[o] = { tactics: cloneJson(wr.keys as JsonObject) };
		if (stage(w.h, patch, { id: "probe", at: "x", by: { kind: "system", reason: "probe" } }).noop) continue;
		commit(w, patch);
		snaps.push(snap(w));
	}
	return snaps;
}

describe("undo chain against replay", () => {
	it("undo k times == the state after the first n−k transitions; redo j times walks forward again", () => {
		assertProperty(
			fc.property(fc.array(write, { minLength: 1, maxLength: 12 }), fc.nat(), fc.nat(), (writes, k0, j0) => {
				const w = world();
				const snaps = history(w, writes);
				const n = snaps.length - 1;
				fc.pre(n > 0);
				const k = 1 + (k0 % n);
				for (let i = 1; i <= k; i++) {
					apply(w, latestUndoPlan(loaded(w), OWNERS2, false));
					assert.deepEqual(snap(w), snaps[n - i], `after ${i} undos`);
				}
				if (k === n) assert.equal(latestUndoPlan(loaded(w), OWNERS2, false).ok, false, "nothing left to undo");
				const j = j0 % (k + 1);
				for (let i = 1; i <= j; i++) {
					apply(w, latestRedoPlan(loaded(w), OWNERS2, false));
					assert.deepEqual(snap(w), snaps[n - k + i], `after ${i} redos`);
				}
				if (j === k) assert.equal(latestRedoPlan(loaded(w), OWNERS2, false).ok, false, "nothing left to redo");
				// Undo after redo walks back again.
				if (j > 0) {
					apply(w, latestUndoPlan(loaded(w), OWNERS2, false));
					assert.deepEqual(snap(w), snaps[n - k + j - 1]);
				}
			}),
			{ numRuns: 150 },
		);
	});

	it("restore(id) == replay up to id, as one transition naming the id and what it reverted; undoing it brings the state back", () => {
		// Restores checked: restoring to the latest transition is refused, and skipped here.
		let restored = 0;
		assertProperty(
			fc.property(fc.array(write, { minLength: 2, maxLength: 10 }), fc.nat(), (writes, i0) => {
				const w = world();
				const snaps = history(w, writes);
				const ids = w.h.cwd.tail.map((r) => r.id);
				fc.pre(ids.length > 0);
				// A transition cwd retains; restore only cwd to it, and compare with replaying cwd up to it.
				const at = i0 % ids.length;
				const id = ids[at] as string;
				const before = snap(w);
				const expected = (() => {
					const r = world();
					for (const rec of w.h.cwd.tail.slice(0, at + 1)) commit(r, { cwd: rec.patch });
					return cloneJson(r.h.cwd.state as unknown as JsonObject);
				})();
				const plan = restorePlan(loaded(w), id, { owner: "cwd" });
				if (at === ids.length - 1 || !plan.ok) {
					assert.equal(plan.ok, false, "nothing to restore after the latest");
					assert.deepEqual(expected, cloneJson(w.h.cwd.state as unknown as JsonObject));
					return;
				}
				const seq = w.h.cwd.seq;
				const restoreId = apply(w, plan);
				restored++;
				assert.equal(w.h.cwd.seq, seq + 1, "one transition");
				assert.deepEqual(cloneJson(w.h.cwd.state as unknown as JsonObject), expected);
				assert.deepEqual(w.h.session.state, before.session as unknown as typeof w.h.session.state, "session untouched");
				const rev = reversalOf(w.h.cwd.tail.at(-1) as never);
				assert.equal(rev?.op, "restore");
				assert.equal(rev?.target, id);
				assert.ok((rev?.reverted ?? []).length > 0 && (rev?.reverted ?? []).every((r) => ids.slice(at + 1).includes(r)));
				apply(w, latestUndoPlan(loaded(w), OWNERS2, false));
				assert.deepEqual(snap(w), before, `undo of restore ${restoreId}`);
				assert.equal(snaps.length > 0, true);
			}),
			{ numRuns: 150 },
		);
		assert.ok(restored >= 50, `only ${restored} of 150 cases restored a transition`);
	});

	it("restore of one path changes only that path, to its value after id", () => {
		const w = world();
		const first = commit(w, { cwd: { tactics: { a: 1, b: 1 } } });
		commit(w, { cwd: { tactics: { a: 2, b: 2 } } });
		commit(w, { cwd: { tactics: { a: null, c: 3 } } });
		const plan = restorePlan(loaded(w), first, { owner: "cwd", section: "tactics", path: ["a"], locator: "cwd.tactics.a" });
		apply(w, plan);
		assert.deepEqual(w.h.cwd.state.tactics, { a: 1, b: 2, c: 3 });
		assert.equal(plan.ok && plan.value.reverts.length, 2, "both later transitions changed tactics.a");
		assert.equal(reversalOf(w.h.cwd.tail.at(-1) as never)?.path, "cwd.tactics.a");
		const again = restorePlan(loaded(w), first, { owner: "cwd", section: "tactics", path: ["a"], locator: "cwd.tactics.a" });
		assert.equal(again.ok, false);
		assert.match(again.ok ? "" : again.why, /nothing to restore: cwd\.tactics\.a is already as it was after id-0001/);
		const element = restorePlan(loaded(w), first, { owner: "cwd", section: "tactics", path: ["a", 0], locator: "cwd.tactics.a[0]" });
		assert.match(element.ok ? "" : element.why, /names an array element/);
	});
});

describe("issue 27: undo never goes in circles", () => {
	/** Two imports of the same keys, then an undo (of #2). */
	function imports(): { w: World; one: string; two: string; three: string } {
		const w = world();
		const one = commit(w, { cwd: { tactics: { a: 1, b: 1 } } }, { kind: "import", source: "one.json" });
		const two = commit(w, { cwd: { tactics: { a: 2, b: 2 } } }, { kind: "import", source: "two.json" });
		const three = apply(w, latestUndoPlan(loaded(w), ["cwd"], true));
		assert.deepEqual(w.h.cwd.state.tactics, { a: 1, b: 1 });
		return { w, one, two, three };
	}

	it("a second undo reverts #1 (the state before #1), never the undo", () => {
		const { w, one } = imports();
		const plan = latestUndoPlan(loaded(w), ["cwd"], true);
		assert.ok(plan.ok);
		assert.equal(plan.value.id, one);
		apply(w, plan);
		assert.deepEqual(w.h.cwd.state.tactics, {});
		assert.match((latestUndoPlan(loaded(w), ["cwd"], true) as { why: string }).why, /no retained transition to undo for cwd \(every retained one is undone/);
	});

	it("by id: undo <#1> succeeds, undo <#2> says it was already reverted by #3, undo <#3> redoes #2 and then <#1> names #4", () => {
		const { w, one, two, three } = imports();
		const ofTwo = idUndoPlan(loaded(w), two.slice(0, 7), "cwd", "history");
		assert.equal(ofTwo.ok, false);
		assert.match((ofTwo as { why: string }).why, /cwd #2 \(id-0002\) was already reverted by cwd #3 \(id-0003\); undo that one to apply it again/);
		const ofOne = selectedUndoPlan(loaded(w), one);
		assert.ok(ofOne.ok, "the cancelled pair #2, #3 is not later work");
		// Redo by undoing the undo, then #1 names the redo as the later work, which undoing lets #1 go.
		const redo = selectedUndoPlan(loaded(w), three);
		assert.equal(redo.ok && redo.value.op, "redo");
		const four = apply(w, redo);
		assert.deepEqual(w.h.cwd.state.tactics, { a: 2, b: 2 });
		assert.match(
			(selectedUndoPlan(loaded(w), one) as { why: string }).why,
			new RegExp(`cwd #4 \\(${four}\\) changed the same keys later; undo that one first`),
		);
		apply(w, selectedUndoPlan(loaded(w), four));
		apply(w, selectedUndoPlan(loaded(w), one));
		assert.deepEqual(w.h.cwd.state.tactics, {}, "the state before #1 is reached");
	});

	it("new work after an undo ends its redo, and says which transition did", () => {
		const { w } = imports();
		const later = commit(w, { cwd: { tactics: { c: 1 } } });
		const redo = latestRedoPlan(loaded(w), ["cwd"], true);
		assert.equal(redo.ok, false);
		assert.match((redo as { why: string }).why, new RegExp(`nothing to redo for cwd \\(transition ${later} came after the last undo`));
		assert.deepEqual(
			undoChain(loaded(w), ["cwd"]).done.map((r) => r.id),
			["id-0001", later],
		);
	});
});

describe("whose transitions a plan reverts", () => {
	it("names another user's or machine's transitions, not the caller's or unrecorded ones", () => {
		const w = world();
		const me = { user: "alice", host: "laptop" };
		commit(w, { cwd: { tactics: { a: 1 } } });
		commit(w, { cwd: { tactics: { b: 1 } } }, undefined, { who: me });
		commit(w, { cwd: { tactics: { c: 1 } } }, undefined, { who: { user: "alice", host: "desktop" } });
		commit(w, { cwd: { tactics: { d: 1 } } }, undefined, { who: { user: "bob", host: "laptop" } });
		const plan = restorePlan(loaded(w), "id-0001", { owner: "cwd" });
		assert.ok(plan.ok);
		assert.deepEqual(
			othersIn(plan.value, me).map((r) => r.record.id),
			["id-0003", "id-0004"],
		);
		const latest = latestUndoPlan(loaded(w), ["cwd"], true);
		assert.ok(latest.ok);
		assert.equal(othersIn(latest.value, { user: "bob", host: "laptop" }).length, 0);
	});

	it("a redo of my own change that someone else undid reverts nobody's work; a redo of a third person's change names whose undo it reverts", () => {
		const me: Who = { user: "bob", host: "laptop" };
		const alice: Who = { user: "alice", host: "desk" };
		const w = world();
		commit(w, { cwd: { tactics: { mine: 1 } } }, undefined, { who: me });
		const undo = latestUndoPlan(loaded(w), ["cwd"], true);
		assert.ok(undo.ok);
		commit(w, undo.value.patch, { kind: "command", command: "test undo", reverts: reversalFor(undo.value) }, { exact: true, who: alice });
		const redo = latestRedoPlan(loaded(w), ["cwd"], true);
		assert.ok(redo.ok);
		assert.equal(redo.value.again?.record.id, "id-0001", "the plan knows the change it applies again");
		assert.deepEqual(othersIn(redo.value, me), [], "bringing my own change back needs nobody's consent");
		// Carol's change, undone by Alice: a redo by me reverts Alice's undo, and asks.
		const carol: Who = { user: "carol", host: "box" };
		const v = world();
		commit(v, { cwd: { tactics: { hers: 1 } } }, undefined, { who: carol });
		const u = latestUndoPlan(loaded(v), ["cwd"], true);
		assert.ok(u.ok);
		commit(v, u.value.patch, { kind: "command", command: "test undo", reverts: reversalFor(u.value) }, { exact: true, who: alice });
		const r = latestRedoPlan(loaded(v), ["cwd"], true);
		assert.ok(r.ok);
		assert.deepEqual(
			othersIn(r.value, me).map((o) => o.record.who?.user),
			["alice"],
		);
	});

	it("a plan is not committed once an owner moved since it was made", () => {
		const w = world();
		commit(w, { cwd: { tactics: { a: 1 } } });
		const plan = latestUndoPlan(loaded(w), ["cwd"], true);
		assert.ok(plan.ok);
		commit(w, { cwd: { tactics: { b: 1 } } });
		assert.match(movedSince(plan.value, w.h) ?? "", /cwd changed while the undo was being prepared \(now seq 2, planned at 1\)/);
	});
});
