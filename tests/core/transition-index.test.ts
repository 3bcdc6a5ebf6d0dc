/**
 * `transitionIn`: the retained transition with an id, asked on every commit (is this id held
 * already?), answered from an index `commitRecord` and `fold` keep up to date. It must answer
 * exactly what a scan of the tail answers, whatever commits, folds and outside changes came before.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { commitRecord, fold, newHistory, transitionIn } from "../../lib/core/history.js";
import type { OwnerHistory, TransitionRecord } from "../../lib/core/types.js";
import { recordOn } from "../helpers/history.js";
import { assertProperty } from "../helpers/seed.js";

/** The next transition of `h`, named `id`: one of three tactics set to the seq. */
const next = (h: OwnerHistory, id: string): TransitionRecord => recordOn(h, { tactics: { [`k${h.seq % 3}`]: h.seq } }, id);

const scan = (h: OwnerHistory, id: string): TransitionRecord | undefined => h.tail.find((r) => r.id === id);

describe("transitionIn", () => {
	it("answers what a scan of the tail answers, through commits, folds and lowered retention (fast-check)", () => {
		let asked = 0;
		assertProperty(
			fc.property(
				fc.integer({ min: 0, max: 8 }),
				fc.array(fc.oneof(fc.constant("commit" as const), fc.constant("ask" as const), fc.integer({ min: 0, max: 8 })), { minLength: 1, maxLength: 40 }),
				(retention, steps) => {
					const h = newHistory("cwd", retention);
					for (const step of steps) {
						if (step === "commit") commitRecord(h, next(h, `t${h.seq + 1}`));
						else if (step === "ask") {
							// Every id ever committed, and one never committed.
							for (let seq = 1; seq <= h.seq + 1; seq++) assert.equal(transitionIn(h, `t${seq}`), scan(h, `t${seq}`), `t${seq}`);
							asked++;
						} else fold(h, step);
					}
					for (let seq = 1; seq <= h.seq + 1; seq++) assert.equal(transitionIn(h, `t${seq}`), scan(h, `t${seq}`), `t${seq}`);
				},
			),
			{ numRuns: 200 },
		);
		assert.ok(asked >= 100, `only ${asked} questions asked mid-way`);
	});

	it("follows a tail replaced from outside, and finds the first of a repeated id as a scan does", () => {
		const h = newHistory("cwd", 10);
		for (let i = 0; i < 3; i++) commitRecord(h, next(h, `t${i + 1}`));
		assert.equal(transitionIn(h, "t2")?.seq, 2);
		// Another array of the same length, as a salvage or a test builds it.
		h.tail = h.tail.map((r) => ({ ...r, id: `x${r.seq}` }));
		assert.equal(transitionIn(h, "t2"), undefined);
		assert.equal(transitionIn(h, "x2")?.seq, 2);
		// A hand-edited log may repeat an id: the first one counts, before and after a commit.
		h.tail = [h.tail[0] as TransitionRecord, { ...(h.tail[1] as TransitionRecord), id: "x1" }, h.tail[2] as TransitionRecord];
		assert.equal(transitionIn(h, "x1")?.seq, 1);
		commitRecord(h, next(h, "x1"));
		assert.equal(transitionIn(h, "x1")?.seq, 1);
		assert.equal(transitionIn(h, "x3")?.seq, 3);
	});
});
