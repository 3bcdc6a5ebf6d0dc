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
import { undoneIn } from "../../lib/core/undo-chain.js";
import { historyText } from "../../lib/ops/history-text.js";
import { assertProperty } from "../helpers/seed.js";

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
		const key = fc.constantFrom("a", "b", "c", "d");
		const change = fc.dictionary(key, fc.oneof(fc.constant(null), fc.constant("v")), { minKeys: 1 });
		// Set/delete per key, and undone or not, is what the lines must tell apart (values are not listed).
		const kinds = (c: Record<string, string | null>) =>
			Object.keys(c)
				.sort()
				.map((k) => `${k}:${c[k] === null}`)
				.join();
		const counts = (c: Record<string, string | null>) => `${Object.values(c).filter((v) => v === null).length}/${Object.keys(c).length}`;
		const checked = assertProperty(
			fc.property(change, change, fc.boolean(), fc.boolean(), fc.integer({ min: 20, max: 80 }), (p, q, pUndone, qUndone, width) => {
				const [r, s] = [record(1, "same", { tactics: p }), record(1, "same", { tactics: q })];
				const mark = (u: boolean) => new Map(u ? [["same", "later"]] : []);
				fc.pre(kinds(p) !== kinds(q) || pUndone !== qUndone);
				// Undone or not is always said; so is what was done when the keys fit, and its counts by kind when they do not.
				if (pUndone !== qUndone || counts(p) !== counts(q)) assert.notEqual(said(r, mark(pUndone)), said(s, mark(qUndone)));
				if (kinds(p) !== kinds(q)) assert.notEqual(text.changeList(r, 200), text.changeList(s, 200), "every key listed");
				if (counts(p) !== counts(q)) assert.notEqual(text.changeList(r, width), text.changeList(s, width), `in ${width} columns`);
			}),
			{ numRuns: 300 },
		);
		assert.ok(checked.numRuns >= 200, `${checked.numRuns} cases checked`);
	});

	it("counts what does not fit in the list's verbs: 'set tactics.a, tactics.b +1' no longer reads the same for a set and for a delete of c", () => {
		const set = record(1, "same", { tactics: { a: "v", b: "v", c: "v" } });
		const del = record(1, "same", { tactics: { a: "v", b: "v", c: null } });
		// Each in the fewest columns that hold its first two keys and the count.
		assert.equal(text.changeList(set, 34), "set tactics.a, tactics.b +1");
		assert.equal(text.changeList(del, 35), "set tactics.a, tactics.b, delete +1");
		assert.equal(text.changeList(del, 18), "set +2, delete +1", "no key fits: the counts, not a clipped key");
		const mixed = record(1, "m", { tactics: { a: "v", b: null, c: null, d: "v" } });
		assert.equal(text.changeList(mixed, 31), "set tactics.a +1, delete +2");
		assert.equal(text.changeList(mixed, 200), "set tactics.a, tactics.d, delete tactics.b, tactics.c");
	});
});

describe("fitLine: a line laid out in a width", () => {
	const fit = (line: string, width = 40) => text.fitLine(line, width);

	it("leaves a line that fits; breaks a longer one between words, two columns under its own indentation", () => {
		assert.deepEqual(fit("  short enough"), ["  short enough"]);
		assert.deepEqual(fit('    "plan": "one two three four five six seven eight"'), ['    "plan": "one two three four five six', '      seven eight"']);
	});

	it("never breaks a quoted command, a path or a URL (only one longer than a line passes the width); breaks a long hash", () => {
		const cmd = "run `state-flow doctor --salvage cwd` to rebuild it from its intact transitions";
		for (const line of fit(cmd)) assert.equal((line.match(/`/g) ?? []).length % 2, 0, line);
		assert.ok(fit(cmd).some((l) => l.includes("`state-flow doctor --salvage cwd`")));
		const path = `moved aside to /home/someone/projects/a-long-name/.pi/state-flow.damaged-2026`;
		assert.ok(fit(path).includes("  /home/someone/projects/a-long-name/.pi/state-flow.damaged-2026"), fit(path).join("\n"));
		assert.ok(fit("see https://example.com/a/very/long/address/that/goes/on.html now").includes("  https://example.com/a/very/long/address/that/goes/on.html"));
		const hash = `"sourceHash": "${"ab12".repeat(16)}"`;
		const lines = fit(hash);
		for (const l of lines) assert.ok(l.length <= 40, l);
		assert.equal(
			lines
				.map((l) => l.trimStart())
				.join("")
				.replace('"sourceHash":', '"sourceHash": '),
			hash,
		);
	});

	it("property: every line fits, unless it holds one unbroken word longer than a line; no word is lost, added or reordered", () => {
		const word = fc.oneof(
			fc.stringMatching(/^[a-z]{1,12}$/),
			fc.stringMatching(/^[a-z]{30,70}$/),
			fc.stringMatching(/^\/[a-z/]{1,60}$/),
			fc.stringMatching(/^`[a-z]{1,8}( [a-z-]{1,10}){0,4}`$/),
		);
		assertProperty(
			fc.property(fc.nat({ max: 8 }), fc.array(word, { minLength: 1, maxLength: 30 }), fc.integer({ min: 20, max: 100 }), (lead, ws, width) => {
				const line = " ".repeat(lead) + ws.join(" ");
				const lines = text.fitLine(line, width);
				for (const l of lines.slice(1)) assert.ok(l.startsWith(" ".repeat(Math.min(lead + 2, Math.floor(width / 2)))), l);
				for (const l of lines) {
					const over = [...l].length > width;
					if (over) assert.match(l.trim(), /^(`[^`]*`|\S+)$/, `${l} is over ${width} with more than one word`);
					assert.equal((l.match(/`/g) ?? []).length % 2, 0, l);
				}
				// A broken word joins back without a space: compare the characters, not the spaces.
				assert.equal(lines.join("").replace(/\s+/g, ""), line.replace(/\s+/g, ""));
			}),
		);
	});
});
