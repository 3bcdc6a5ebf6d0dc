/**
 * A record line, a checkpoint and a journal are serialised once, their `sum` appended to the
 * text (`sealedText` in storage/format.ts). The law: the bytes are exactly those of
 * `JSON.stringify` of the value with `sum` as its last member, and they read back (integrity
 * checked) to the value written — so files written before and after are byte-identical.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError } from "../../lib/core/errors.js";
import type { Json, JsonObject, OwnerState, TransitionRecord } from "../../lib/core/types.js";
import {
	FORMAT_VERSION,
	checkpointText,
	journalText,
	parseCheckpoint,
	parseJournal,
	parseRecordLine,
	recordLine,
	recordValue,
	sumOf,
} from "../../lib/storage/format.js";

const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
const entries = fc.dictionary(fc.string({ unit: "binary", maxLength: 12 }), json, { maxKeys: 5 }) as fc.Arbitrary<JsonObject>;
const record: fc.Arbitrary<TransitionRecord> = fc.record({
	id: fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== ""),
	at: fc.constant("2026-12-01T00:00:00.000Z"),
	seq: fc.integer({ min: 1, max: 1_000_000 }),
	by: fc.constant({ kind: "system", reason: "test" } as const),
	patch: fc.record({ tactics: entries }),
	undo: fc.record({ tactics: entries }),
	cascades: fc.constant([]),
	owners: fc.constant(["cwd" as const]),
});

/** What the writer produced before: the sealed value stringified whole. */
function sealedWhole(value: object): string {
	return JSON.stringify({ ...value, sum: sumOf(value) });
}

/** The same data with ordinary prototypes, as a parse gives it (fast-check builds some objects without one). */
function plain<T>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

describe("sealed text", () => {
	it("law: a record line is JSON.stringify of the record with `sum` last, and reads back to the record", () => {
		assertProperty(
			fc.property(record, (r) => {
				const line = recordLine(r);
				assert.equal(line, JSON.stringify(recordValue(r)));
				assert.equal(line, sealedWhole({ v: FORMAT_VERSION, ...r }));
				assert.deepEqual(parseRecordLine(line, "log", "line 1"), plain(r));
			}),
		);
	});

	it("law: a checkpoint's text is its sealed value stringified whole, and reads back to its state", () => {
		assertProperty(
			fc.property(entries, fc.integer({ min: 0, max: 1_000_000 }), (tactics, seq) => {
				const state = { intents: {}, strategy: {}, tactics, artifacts: {}, lazy: {} } as OwnerState;
				const text = checkpointText("cwd", seq, state);
				assert.equal(text, sealedWhole({ format: "state-flow/checkpoint", v: FORMAT_VERSION, owner: "cwd", seq, state }));
				assert.deepEqual(parseCheckpoint(text, "checkpoint.json", "cwd"), plain({ seq, state }));
			}),
		);
	});

	it("law: a format-2 value whose `sum` member was removed is refused, its value edited or not (record line, checkpoint, journal, a journal's part)", () => {
		const integrity = (where: string) => (e: unknown) => isStateError(e) && e.code === "corrupt" && e.message.includes(`${where} fails its integrity check`);
		type Sealed = { sum?: string; seq: number; id: string; parts?: Array<{ record: Sealed }> };
		assertProperty(
			fc.property(record, fc.boolean(), (r, edit) => {
				const line = JSON.parse(recordLine(r)) as Sealed;
				delete line.sum;
				if (edit) line.seq += 1;
				assert.throws(() => parseRecordLine(JSON.stringify(line), "log", "line 1"), integrity("line 1"));

				const state = { intents: {}, strategy: {}, tactics: r.patch.tactics ?? {}, artifacts: {}, lazy: {} } as OwnerState;
				const checkpoint = JSON.parse(checkpointText("cwd", r.seq, state)) as Sealed;
				delete checkpoint.sum;
				if (edit) checkpoint.seq += 1;
				assert.throws(() => parseCheckpoint(JSON.stringify(checkpoint), "checkpoint.json", "cwd"), integrity("the checkpoint"));

				const g = { ...r, owners: ["global" as const, "cwd" as const] };
				const parts = [
					{ owner: "global" as const, root: "/a/state-flow/global", record: g },
					{ owner: "cwd" as const, root: "/p/.pi/state-flow", record: g },
				];
				const journal = JSON.parse(journalText({ id: r.id, parts })) as Sealed;
				delete journal.sum;
				if (edit) journal.id += "x";
				assert.throws(() => parseJournal(JSON.stringify(journal), "journal"), integrity("the journal"));
				// The journal's own check holds, one part's record lost its sum.
				const part = JSON.parse(journalText({ id: r.id, parts })) as Sealed;
				const first = (part.parts ?? [])[0] as { record: Sealed };
				delete first.record.sum;
				if (edit) first.record.seq += 1;
				const { sum: _, ...unsealed } = part;
				assert.throws(() => parseJournal(JSON.stringify({ ...unsealed, sum: sumOf(unsealed) }), "journal"), integrity("part 0 of the journal"));
			}),
		);
	});

	it("law: a journal's text is its sealed value stringified whole, and reads back to its parts", () => {
		assertProperty(
			fc.property(record, (r) => {
				// A journal is a multi-owner transition: at least two parts.
				const g = { ...r, owners: ["global" as const, "cwd" as const] };
				const parts = [
					{ owner: "global" as const, root: "/a/state-flow/global", record: g },
					{ owner: "cwd" as const, root: "/p/.pi/state-flow", record: g },
				];
				const journal = { id: r.id, parts };
				const text = journalText(journal);
				const value = { format: "state-flow/journal", v: FORMAT_VERSION, id: r.id, parts: parts.map((p) => ({ ...p, record: recordValue(g) })) };
				assert.equal(text, sealedWhole(value));
				assert.deepEqual(parseJournal(text, "journal"), plain(journal));
			}),
		);
	});
});
