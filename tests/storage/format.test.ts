/**
 * The on-disk format's refusals and flags, one by one (storage/format.ts): what a damaged record,
 * checkpoint or journal is refused with (the field and the words), which values were written in
 * the 0.1.0 format, and where two histories' stored texts differ. The byte-level laws are in
 * sealed-text.test.ts; these are the cases its properties do not name.
 * (Written against the survivors of the mutation run on format.ts, docs/decisions.md.)
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isStateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { OwnerHistory, TransitionRecord } from "../../lib/core/types.js";
import {
	LEGACY_VERSION,
	checkRecord,
	checkpointText,
	parseCheckpoint,
	parseJournal,
	parseLogLine,
	recordLine,
	sameHistoryText,
	stateShapeProblem,
	sumOf,
} from "../../lib/storage/format.js";

const record: TransitionRecord = {
	id: "t1",
	at: "2026-12-01T00:00:00.000Z",
	seq: 1,
	by: { kind: "system", reason: "test" },
	patch: { tactics: { a: 1 } },
	undo: { tactics: { a: null } },
	cascades: [],
	owners: ["cwd"],
};
const empty = { intents: {}, strategy: {}, tactics: {}, artifacts: {}, lazy: {} };

/** A refusal of kind `corrupt` whose message holds `words` (each, in order). */
function corrupt(...words: string[]) {
	return (e: unknown) => {
		assert.ok(isStateError(e), `a StateError, got ${String(e)}`);
		assert.equal(e.code, "corrupt");
		let from = 0;
		for (const w of words) {
			const at = e.message.indexOf(w, from);
			assert.ok(at >= 0, `"${w}" in: ${e.message}`);
			from = at + w.length;
		}
		return true;
	};
}

describe("a record refused for its shape names the field and what is wrong with it", () => {
	it("a field below its minimum: the field's path and ajv's words", () => {
		const line = JSON.stringify({ v: 2, ...record, seq: 0 });
		assert.throws(() => parseLogLine(line, "log.jsonl", "line 3"), corrupt("line 3 is not a transition record (`/seq` must be >= 1)"));
	});

	it("a member missing at the top: the root, spelled `/`", () => {
		const { id: _id, ...rest } = record;
		assert.throws(
			() => checkRecord({ v: 2, ...rest }, "session.jsonl", "entry 2"),
			corrupt("entry 2 is not a transition record (`/` must have required property 'id')"),
		);
	});

	it("a user name with a control character: said in words, not as the pattern", () => {
		const value = { v: 2, ...record, who: { user: "a\u0007b", host: "box" } };
		assert.throws(
			() => checkRecord(value, "log.jsonl", "line 1"),
			corrupt("line 1 is not a transition record (`/who/user` holds a control or invisible character)"),
		);
	});

	it("another pattern (the integrity check's) keeps ajv's words", () => {
		const value = { v: 2, ...record, sum: "not-hex" };
		assert.throws(() => checkRecord(value, "log.jsonl", "line 1"), corrupt('(`/sum` must match pattern "^[0-9a-f]{16}$")'));
	});

	it("the state's shape: undefined for a state, the field and the words for anything else", () => {
		assert.equal(stateShapeProblem(empty), undefined);
		assert.equal(stateShapeProblem({ ...empty, roots: {} }), undefined);
		assert.equal(stateShapeProblem({ ...empty, tactics: [] }), "`/tactics` must be object");
		assert.equal(stateShapeProblem({ ...empty, extra: {} }), "`/` must NOT have additional properties");
	});
});

describe("format 1 (State Flow 0.1.0)", () => {
	it("a line without a version byte change reads as legacy; a line of today's format does not", () => {
		const legacy = parseLogLine(JSON.stringify({ v: LEGACY_VERSION, ...record }), "log.jsonl", "line 1");
		assert.deepEqual(legacy, { record, legacy: true });
		assert.deepEqual(parseLogLine(recordLine(record), "log.jsonl", "line 1"), { record, legacy: false });
	});

	it("a line marked format 1 that carries a sum is refused: its version was changed to switch the check off", () => {
		const sealed = JSON.parse(recordLine(record)) as object;
		const turned = JSON.stringify({ ...sealed, v: LEGACY_VERSION });
		assert.throws(
			() => parseLogLine(turned, "log.jsonl", "line 4"),
			corrupt("line 4 is marked format 1 but carries an integrity check (its version was changed after it was written)"),
		);
	});

	it("a checkpoint of format 1 reads as legacy; one of today's format has no legacy flag", () => {
		const old = JSON.stringify({ format: "state-flow/checkpoint", v: LEGACY_VERSION, owner: "cwd", seq: 3, state: empty });
		assert.deepEqual(parseCheckpoint(old, "checkpoint.json", "cwd"), { seq: 3, state: empty, legacy: true });
		assert.deepEqual(parseCheckpoint(checkpointText("cwd", 3, empty), "checkpoint.json", "cwd"), { seq: 3, state: empty });
	});
});

describe("a damaged checkpoint or journal is refused with what is wrong", () => {
	it("a cut checkpoint is not valid JSON", () => {
		const text = checkpointText("cwd", 3, empty);
		assert.throws(
			() => parseCheckpoint(text.slice(0, -5), "checkpoint.json", "cwd"),
			corrupt("State store file `checkpoint.json` is damaged: the checkpoint is not valid JSON (truncated or overwritten)"),
		);
	});

	it("a checkpoint of another owner is refused naming both", () => {
		assert.throws(
			() => parseCheckpoint(checkpointText("global", 3, empty), "checkpoint.json", "cwd"),
			corrupt("the checkpoint belongs to owner `global`, not `cwd`"),
		);
	});

	it("a checkpoint of the wrong shape names the field", () => {
		const body = { format: "state-flow/checkpoint", v: 2, owner: "cwd", seq: -1, state: empty };
		assert.throws(
			() => parseCheckpoint(JSON.stringify({ ...body, sum: sumOf(body) }), "checkpoint.json", "cwd"),
			corrupt("the checkpoint has an invalid shape (`/seq` must be >= 0)"),
		);
	});

	it("a cut journal is refused as a journal, not as a store file", () => {
		assert.throws(
			() => parseJournal('{"format":"state-flow/jour', "j.json"),
			corrupt("Journal `j.json` is damaged: the journal is not valid JSON (truncated or overwritten)"),
		);
	});
});

describe("sameHistoryText names the first place two histories' stored texts differ", () => {
	function history(values: number[], retention = 10): OwnerHistory {
		const h = newHistory("cwd", retention);
		values.forEach((v, i) => {
			const at = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
			commitStaged({ cwd: h }, stage({ cwd: h }, { cwd: { tactics: { a: v } } }, { id: `t${i}`, at, by: { kind: "system", reason: "test" } }));
		});
		return h;
	}

	it("the same history: undefined", () => {
		assert.equal(sameHistoryText(history([1, 2, 3]), history([1, 2, 3])), undefined);
	});

	it("each difference, in the order they are checked", () => {
		assert.equal(sameHistoryText(history([1, 2]), history([1, 2, 3])), "head seq 2 vs 3");
		// Retention 1 folds the first transitions into the checkpoint.
		assert.equal(sameHistoryText(history([1, 2, 3], 1), history([1, 2, 3])), "checkpoint seq 2 vs 0");
		const a = history([1, 2, 3], 1);
		const b = history([1, 2, 3], 1);
		b.checkpoint = { ...b.checkpoint, tactics: { a: 9 } };
		assert.equal(sameHistoryText(a, b), "the checkpoint at seq 2");
		const short = history([1, 2, 3]);
		short.tail = short.tail.slice(1);
		assert.equal(sameHistoryText(history([1, 2, 3]), short), "3 vs 2 retained transitions");
		assert.equal(sameHistoryText(history([1, 2, 3]), history([1, 5, 3])), "transition seq 2");
		const other = history([1, 2, 3]);
		other.state = { ...other.state, lazy: { n: "x" } };
		assert.equal(sameHistoryText(history([1, 2, 3]), other), "the current state");
	});
});
