/**
 * Owner history: commit, fold, replay, rebuild from records, temporal reads through
 * undo patches, `patches[N]`, per-path history and the refusals beyond the retained tail.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateError } from "../../lib/core/errors.js";
import { cloneJson } from "../../lib/core/json.js";
import { adoptionProblem, commitRecord, fold, historyFrom, historyOf, newHistory, patchAt, replay, stateAt, valueAt } from "../../lib/core/history.js";
import { emptyState, stateBytes } from "../../lib/core/state.js";
import { commitOn, recordOn } from "../helpers/history.js";
import type { JsonObject, OwnerHistory, OwnerState, PlanePatch, TransitionRecord } from "../../lib/core/types.js";

function snapshot(s: OwnerState): OwnerState {
	return cloneJson(s as unknown as JsonObject) as unknown as OwnerState;
}

/** Five transitions on `tactics.list` and `tactics.item`, with snapshots after each. */
function fixture(retention: number): { h: OwnerHistory; snaps: OwnerState[] } {
	const h = newHistory("cwd", retention);
	const snaps = [snapshot(h.state)];
	const patches: PlanePatch[] = [
		{ tactics: { list: ["a", "b"], item: { v: 1 } } },
		{ tactics: { list: ["a", "b", "c"] } },
		{ tactics: { item: { v: 2, w: true } } },
		{ tactics: { item: null }, lazy: { note: "x" } },
		{ tactics: { list: { now: "object" } } },
	];
	patches.forEach((p, i) => {
		commitOn(h, p, `t${i + 1}`);
		snaps.push(snapshot(h.state));
	});
	return { h, snaps };
}

function isCode(code: string, text: string): (e: unknown) => boolean {
	return (e: unknown) => {
		assert.ok(e instanceof StateError);
		assert.equal(e.code, code);
		assert.ok(e.message.includes(text), `message ${JSON.stringify(e.message)} should contain ${JSON.stringify(text)}`);
		return true;
	};
}

describe("commit and fold", () => {
	it("keeps at most R records and replay(checkpoint, tail) equals the state", () => {
		const { h, snaps } = fixture(2);
		assert.equal(h.tail.length, 2);
		assert.equal(h.checkpointSeq, 3);
		assert.equal(h.seq, 5);
		assert.deepEqual(h.checkpoint, snaps[3]);
		assert.deepEqual(replay(h.checkpoint, h.tail), h.state);
		assert.equal(h.bytes, stateBytes(h.state));
	});

	it("fold to a smaller retention moves records into the checkpoint", () => {
		const { h, snaps } = fixture(10);
		fold(h, 1);
		assert.equal(h.retention, 1);
		assert.deepEqual(
			h.tail.map((r) => r.id),
			["t5"],
		);
		assert.deepEqual(h.checkpoint, snaps[4]);
		fold(h, 0);
		assert.deepEqual(h.checkpoint, h.state);
		assert.equal(h.checkpointSeq, 5);
	});

	it("refuses a record that does not continue the sequence", () => {
		const h = newHistory("cwd", 5);
		const r = recordOn(h, { tactics: { a: 1 } }, "x");
		assert.throws(() => commitRecord(h, { ...r, seq: 2 }), isCode("corrupt", "expected 1"));
		assert.deepEqual(h.state, emptyState());
	});

	it("a commit without a size measures the state", () => {
		const h = newHistory("cwd", 5);
		commitRecord(h, recordOn(h, { tactics: { a: "x".repeat(10) } }, "t1"));
		assert.equal(h.bytes, stateBytes(h.state));
	});

	it("replay does not mutate the checkpoint", () => {
		const { h } = fixture(3);
		const cp = snapshot(h.checkpoint);
		replay(h.checkpoint, h.tail);
		assert.deepEqual(h.checkpoint, cp);
	});
});

describe("historyFrom", () => {
	it("rebuilds the same history from a checkpoint and records, folding beyond retention", () => {
		const { h, snaps } = fixture(100);
		const rebuilt = historyFrom("cwd", emptyState(), 0, h.tail, 3);
		assert.deepEqual(rebuilt.state, h.state);
		assert.equal(rebuilt.seq, 5);
		assert.equal(rebuilt.checkpointSeq, 2);
		assert.deepEqual(rebuilt.checkpoint, snaps[2]);
		assert.equal(rebuilt.bytes, stateBytes(h.state));
		const from2 = historyFrom("cwd", snaps[2] as OwnerState, 2, h.tail.slice(2), 10);
		assert.deepEqual(from2.state, h.state);
	});

	it("refuses records that skip or repeat a sequence number", () => {
		const { h } = fixture(100);
		assert.throws(
			() => historyFrom("cwd", emptyState(), 0, [h.tail[0] as TransitionRecord, h.tail[2] as TransitionRecord], 5),
			isCode("corrupt", "`t3` has seq 3 but 2 was expected"),
		);
		assert.throws(() => historyFrom("cwd", emptyState(), 1, h.tail, 5), isCode("corrupt", "`t1` has seq 1 but 2 was expected"));
	});
});

describe("adoptionProblem (migrate adopts a whole history)", () => {
	it("accepts a tail that continues its checkpoint seq by seq, names the owner and ends at the head", () => {
		const { h } = fixture(3);
		assert.equal(h.checkpointSeq, 2);
		assert.equal(adoptionProblem(h, "cwd"), undefined);
		assert.equal(adoptionProblem(newHistory("cwd", 5), "cwd"), undefined);
	});

	it("names the first record out of sequence, or one that does not name the owner", () => {
		const { h } = fixture(100);
		const gap = { ...h, tail: [h.tail[0], h.tail[2], h.tail[3]] as TransitionRecord[] };
		assert.equal(adoptionProblem(gap, "cwd"), "the history to adopt is inconsistent at transition `t3` (seq 3)");
		const foreign = { ...h, tail: h.tail.map((r, i) => (i === 1 ? { ...r, owners: ["session" as const] } : r)) };
		assert.equal(adoptionProblem(foreign, "cwd"), "the history to adopt is inconsistent at transition `t2` (seq 2)");
		assert.equal(adoptionProblem(h, "session"), "the history to adopt is inconsistent at transition `t1` (seq 1)");
	});

	it("names a tail that stops before the head", () => {
		const { h } = fixture(100);
		assert.equal(adoptionProblem({ ...h, tail: h.tail.slice(0, 3) }, "cwd"), "the history to adopt ends at seq 3, not at its head 5");
	});
});

describe("temporal reads", () => {
	it("stateAt(N) equals the state N commits back", () => {
		const { h, snaps } = fixture(5);
		for (let n = 0; n <= 5; n++) assert.deepEqual(stateAt(h, n), snaps[5 - n], `offset ${n}`);
	});

	it("valueAt reads paths through undo patches, with array indexes", () => {
		const { h } = fixture(5);
		assert.deepEqual(valueAt(h, 0, ["tactics", "list"]), { now: "object" });
		assert.equal(valueAt(h, 0, ["tactics", "list", 0]), undefined, "a number on an object is undefined");
		assert.equal(valueAt(h, 1, ["tactics", "list", 2]), "c");
		assert.equal(valueAt(h, 1, ["tactics", "list", "0"]), undefined, "a string on an array is undefined");
		assert.equal(valueAt(h, 3, ["tactics", "list", 2]), "c");
		assert.equal(valueAt(h, 4, ["tactics", "list", 2]), undefined);
		assert.equal(valueAt(h, 3, ["tactics", "list", 1]), "b");
		assert.deepEqual(valueAt(h, 2, ["tactics", "item"]), { v: 2, w: true });
		assert.equal(valueAt(h, 1, ["tactics", "item"]), undefined);
		assert.equal(valueAt(h, 4, ["tactics", "item", "v"]), 1);
		assert.equal(valueAt(h, 5, ["tactics", "item"]), undefined);
		assert.deepEqual(valueAt(h, 5, ["tactics"]), {});
		assert.equal(valueAt(h, 0, ["lazy", "note"]), "x");
		assert.equal(valueAt(h, 2, ["lazy", "note"]), undefined);
		assert.deepEqual(valueAt(h, 2, []), stateAt(h, 2));
	});

	it("valueAt returns copies", () => {
		const { h } = fixture(5);
		const v = valueAt(h, 0, ["tactics", "list"]) as JsonObject;
		v.now = "changed";
		assert.deepEqual(h.state.tactics.list, { now: "object" });
	});

	it("refuses folded offsets naming the oldest retained transition and the retention", () => {
		const { h } = fixture(2);
		assert.deepEqual(valueAt(h, 2, ["tactics", "item"]), { v: 2, w: true });
		assert.throws(() => valueAt(h, 3, ["tactics"]), isCode("folded", "history before transition t4 was folded; retention is 2"));
		assert.throws(() => stateAt(h, 3), isCode("folded", "retention is 2"));
		const zero = fixture(0).h;
		assert.deepEqual(valueAt(zero, 0, ["lazy", "note"]), "x");
		const onlyCurrent = "retention is 0: only the current state is kept; read the current state, or raise `retention` in config";
		assert.throws(() => valueAt(zero, 1, ["lazy"]), isCode("folded", `cwd history up to transition t5 was folded; ${onlyCurrent}`));
		// Loaded from a checkpoint alone (checkpoint files keep no id): it says what is possible.
		const loaded = historyFrom("cwd", zero.checkpoint, zero.checkpointSeq, [], 0);
		assert.throws(() => stateAt(loaded, 1), isCode("folded", `cwd history was folded; ${onlyCurrent}`));
	});

	it("refuses offsets beyond a short history as not_found, never inventing state", () => {
		const { h } = fixture(10);
		assert.throws(() => valueAt(h, 6, ["tactics"]), isCode("not_found", "cwd has only 5 transitions"));
		assert.throws(() => valueAt(newHistory("session", 5), 1, ["tactics"]), isCode("not_found", "session has only 0 transitions"));
		assert.throws(() => valueAt(h, -1, ["tactics"]), isCode("invalid_input", "-1"));
		assert.throws(() => valueAt(h, 1.5, ["tactics"]), isCode("invalid_input", "1.5"));
	});
});

describe("patchAt", () => {
	it("returns the latest retained transitions, newest first", () => {
		const { h } = fixture(3);
		assert.equal(patchAt(h, 0).id, "t5");
		assert.equal(patchAt(h, 2).id, "t3");
		assert.deepEqual(patchAt(h, 0).patch, { tactics: { list: { now: "object" } } });
	});

	it("refuses beyond the tail: folded or not_found", () => {
		assert.throws(() => patchAt(fixture(3).h, 3), isCode("folded", "before transition t3 was folded; retention is 3"));
		assert.throws(() => patchAt(fixture(10).h, 5), isCode("not_found", "cwd has only 5 transitions"));
		assert.throws(() => patchAt(newHistory("cwd", 3), 0), isCode("not_found", "cwd has only 0 transitions"));
	});

	it("says what to do when no transition is retained, instead of `at most -1`", () => {
		const young = (e: unknown) =>
			e instanceof StateError &&
			e.code === "not_found" &&
			e.message === "cwd has only 0 transitions; no transition is retained, so read the current state instead";
		assert.throws(() => patchAt(newHistory("cwd", 3), 0), young);
		const zero = fixture(0).h;
		assert.throws(
			() => patchAt(zero, 0),
			(e: unknown) =>
				e instanceof StateError && e.code === "folded" && !/-1/.test(e.message) && /retention is 0: only the current state is kept/.test(e.message),
		);
		assert.throws(() => patchAt(fixture(3).h, 3), isCode("folded", "retention is 3; read a patch index of at most 2, or raise retention"));
	});
});

describe("historyOf", () => {
	it("lists the retained transitions that changed a path, newest first, absent as null", () => {
		const { h } = fixture(5);
		assert.deepEqual(historyOf(h, ["tactics", "item"]), [
			{ id: "t4", at: h.tail[3]?.at, before: { v: 2, w: true }, after: null },
			{ id: "t3", at: h.tail[2]?.at, before: { v: 1 }, after: { v: 2, w: true } },
			{ id: "t1", at: h.tail[0]?.at, before: null, after: { v: 1 } },
		]);
		assert.deepEqual(
			historyOf(h, ["tactics", "list", 2]).map((e) => [e.id, e.before, e.after]),
			[
				["t5", "c", null],
				["t2", null, "c"],
			],
		);
		assert.deepEqual(historyOf(h, ["strategy"]), []);
	});

	it("covers only the retained tail", () => {
		const { h } = fixture(2);
		assert.deepEqual(
			historyOf(h, ["tactics", "item"]).map((e) => e.id),
			["t4"],
		);
	});
});

describe("refusals name the owner's history as their path", () => {
	const at = (code: string, text: string, path: readonly (string | number)[]) => (e: unknown) => {
		assert.ok(isCode(code, text)(e));
		assert.deepEqual((e as StateError).path, path);
		return true;
	};

	it("a damaged sequence names the record's place; a commit out of sequence, an offset or a fold name the owner", () => {
		const { h } = fixture(100);
		assert.throws(
			() => historyFrom("cwd", emptyState(), 0, [h.tail[0] as TransitionRecord, h.tail[2] as TransitionRecord], 5),
			at("corrupt", "seq 3", ["cwd", "history", 1]),
		);
		assert.throws(() => commitRecord(h, { ...(h.tail[0] as TransitionRecord), seq: 9 }), at("corrupt", "has seq 9, expected 6", ["cwd"]));
		assert.throws(() => stateAt(h, -1), at("invalid_input", "an offset `-1` must be a whole number >= 0", ["cwd"]));
		assert.throws(() => patchAt(h, -1), at("invalid_input", "a patch index `-1` must be a whole number >= 0", ["cwd"]));
		assert.throws(() => stateAt(h, 6), at("not_found", "cwd has only 5 transitions; read an offset of at most 5", ["cwd"]));
		assert.throws(() => stateAt(fixture(2).h, 3), at("folded", "history before transition t4 was folded", ["cwd"]));
		assert.throws(() => stateAt(fixture(0).h, 1), at("folded", "cwd history up to transition t5 was folded", ["cwd"]));
	});

	it("one retained transition: a patch index of at most 0", () => {
		const h = newHistory("cwd", 5);
		commitOn(h, { tactics: { a: 1 } }, "t1");
		assert.throws(() => patchAt(h, 1), at("not_found", "cwd has only 1 transition; read a patch index of at most 0", ["cwd"]));
	});
});

describe("copies and roots", () => {
	it("historyFrom keeps its own copy of the checkpoint unless it is handed over", () => {
		const { h } = fixture(100);
		const cp = emptyState();
		const rebuilt = historyFrom("cwd", cp, 0, h.tail, 1);
		assert.deepEqual(cp, emptyState(), "the caller's checkpoint is not folded into");
		assert.notDeepEqual(rebuilt.checkpoint, emptyState());
		const owned = emptyState();
		assert.equal(historyFrom("cwd", owned, 0, [], 1, true).checkpoint, owned);
	});

	it("registered roots survive replay, temporal reads and rebuilding", () => {
		const h = newHistory("cwd", 5);
		commitOn(h, { roots: { todos: { milk: { text: "buy" } } } }, "t1");
		commitOn(h, { tactics: { a: 1 } }, "t2");
		assert.deepEqual(stateAt(h, 1).roots, { todos: { milk: { text: "buy" } } });
		assert.deepEqual(replay(h.checkpoint, h.tail).roots, { todos: { milk: { text: "buy" } } });
		const rebuilt = historyFrom("cwd", stateAt(h, 0), 2, [], 5);
		assert.deepEqual(rebuilt.state.roots, { todos: { milk: { text: "buy" } } });
		assert.deepEqual(rebuilt.checkpoint.roots, { todos: { milk: { text: "buy" } } });
	});
});
