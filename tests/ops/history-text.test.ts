/**
 * History in words (`ops/history-text.ts`, used by `/state history`, the browser and
 * `state-flow history`): each line says what its transition did — the keys it set and the keys
 * it deleted, an undo or a redo and of what — and whether it is undone now, so two different
 * transitions never print the same line, even read without their seq and id.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { PlanePatch, Provenance, TransitionRecord } from "../../lib/core/types.js";
import { undoneIn } from "../../lib/core/undo.js";
import { historyText } from "../../lib/ops/history-text.js";

const text = historyText((s) => [...s].length);
const now = new Date(2026, 11, 1, 12, 0, 0);
const at = new Date(2026, 11, 1, 11, 0, 0).toISOString();
const model: Provenance = { kind: "tool", sessionId: "s", toolCallId: "call-1" };

function record(seq: number, id: string, patch: PlanePatch, by: Provenance = model): TransitionRecord {
	return { id, at, seq, by, who: { user: "me", host: "box" }, patch, undo: {}, cascades: [], owners: ["cwd"] };
}

/** A line without its `#seq id` lead: what it says about the transition. */
const said = (r: TransitionRecord, undone: ReadonlyMap<string, string> = new Map()) =>
	text.transitionLine(r, r.id, { now, full: false, undone }).replace(/^ {2}#\d+ \S+ /, "");

describe("history lines say what each transition did", () => {
	it("marks the keys set and the keys deleted", () => {
		assert.equal(said(record(1, "a", { tactics: { x: "step" } })), "11:00:00 model call-1 me@box set tactics.x");
		assert.equal(said(record(2, "b", { tactics: { x: null } })), "11:00:00 model call-1 me@box delete tactics.x");
		assert.equal(
			said(record(3, "c", { tactics: { x: 1, y: null }, lazy: { n: "v" } })),
			"11:00:00 model call-1 me@box set tactics.x, lazy.n, delete tactics.y",
		);
	});

	it("marks an undo and a redo by what they reverted, and a transition that is undone now", () => {
		const set = record(1, "aaaa1111", { tactics: { x: "step" } });
		const undo = record(2, "bbbb2222", { tactics: { x: null } }, { kind: "command", command: "/state undo cwd", reverts: { op: "undo", target: "aaaa1111" } });
		const redo = record(
			3,
			"cccc3333",
			{ tactics: { x: "step" } },
			{ kind: "command", command: "/state redo cwd", reverts: { op: "redo", target: "bbbb2222" } },
		);
		// After the undo, the set is undone; after the redo, the undo is (and the set is in effect again).
		const afterUndo = undoneIn([set, undo]);
		assert.deepEqual([...afterUndo], [["aaaa1111", "bbbb2222"]]);
		assert.equal(said(set, afterUndo), "11:00:00 (undone) model call-1 me@box set tactics.x");
		assert.equal(said(undo, afterUndo), "11:00:00 undo of aaaa1111 me@box delete tactics.x");
		const afterRedo = undoneIn([set, undo, redo]);
		assert.deepEqual([...afterRedo], [["bbbb2222", "cccc3333"]]);
		assert.equal(said(set, afterRedo), "11:00:00 model call-1 me@box set tactics.x");
		assert.equal(said(undo, afterRedo), "11:00:00 (undone) undo of aaaa1111 me@box delete tactics.x");
		assert.equal(said(redo, afterRedo), "11:00:00 redo of bbbb2222 me@box set tactics.x");
		// In full form the undo that reverted it is named on a line of its own.
		assert.match(text.transitionLine(set, set.id, { now, full: true, undone: afterUndo }), /^ {5}undone by bbbb2222$/m);
	});

	it("two transitions of the same keys by the same writer at the same time differ in what they say when they did different things", () => {
		const key = fc.constantFrom("a", "b", "c");
		const change = fc.dictionary(key, fc.oneof(fc.constant(null), fc.constant("v")), { minKeys: 1 });
		fc.assert(
			fc.property(change, change, fc.boolean(), fc.boolean(), (p, q, pUndone, qUndone) => {
				const [r, s] = [record(1, "same", { tactics: p }), record(1, "same", { tactics: q })];
				const mark = (u: boolean) => new Map(u ? [["same", "later"]] : []);
				// Set/delete per key, and undone or not, is what the lines must tell apart (values are not listed).
				const kinds = (c: Record<string, string | null>) =>
					Object.keys(c)
						.sort()
						.map((k) => `${k}:${c[k] === null}`)
						.join();
				fc.pre(kinds(p) !== kinds(q) || pUndone !== qUndone);
				assert.notEqual(said(r, mark(pUndone)), said(s, mark(qUndone)));
			}),
		);
	});
});
