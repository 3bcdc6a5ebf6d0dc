/**
 * The outcome issue 36 aims for, checked on the first head of the long-lived project
 * (`tests/helpers/long-project.ts`): a model needs no `read_state` to say what is next on the
 * intent in progress, to tick off an item of the small root, or to give a standup of what is in
 * flight — those facts are in the head, whole. Ownership takes at most a tenth of it, the same
 * state gives the same bytes, and docs/model-surface.md shows this very head as its worked example.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { evaluate } from "../../lib/core/query.js";
import type { OwnerHistory } from "../../lib/core/types.js";
import { DEFAULT_HEAD_BUDGET, renderHead } from "../../lib/model/head.js";
import { utf8Bytes } from "../../lib/core/size.js";
import { toCanonicalLocator } from "../../lib/model/interface.js";
import { headAnswers, lineObject, ownershipBytes } from "../helpers/head-checks.js";
import { longProject } from "../helpers/long-project.js";

/** The first head of a new run on the fixture: Active mode, the project alone, the default budget. */
function firstHead(cwd: OwnerHistory, roots: string[]): string {
	return renderHead({ mode: "active", wanted: ["cwd"], histories: { cwd }, budget: DEFAULT_HEAD_BUDGET, roots });
}

/** Where the worked example sits in the docs, and the comment that marks it. */
const DOC = new URL("../../../docs/model-surface.md", import.meta.url);
const EXAMPLE_MARK = "<!-- head example: generated from tests/helpers/long-project.ts, checked by tests/model/head-answers.test.ts -->";

describe("the first head of a long-lived project answers the everyday questions", () => {
	const { cwd, work, roots } = longProject();
	const head = firstHead(cwd, roots);

	it("holds what is next on the intent in progress, the small root's items by id, and every item in flight, whole", () => {
		const answers = headAnswers(head, work);
		assert.deepEqual(answers, { next: [], tickOff: [], standup: [] }, head);
		// The checks are not vacuous: the fixture has one next step, two more in flight, three todos, three active intents.
		assert.equal((work.inflight[work.next.step] as { status: string }).status, "next");
		assert.deepEqual(Object.keys(work.inflight).sort(), ["pay-10", "rel-03", "rel-05"]);
		assert.equal(Object.keys(work.todos).length, 3);
		assert.equal(Object.keys(work.intents).length, 3);
		// And they fail on a head that cuts them: the same state at a quarter of the budget loses some.
		const small = renderHead({ mode: "active", wanted: ["cwd"], histories: { cwd }, budget: 2048, roots });
		const lost = headAnswers(small, work);
		assert.ok(lost.next.length + lost.tickOff.length + lost.standup.length > 0, small);
	});

	it("spends at most a tenth of the head on ownership, shown as one string per intent; read_state still returns the references", () => {
		const owns = ownershipBytes(head);
		assert.ok(owns > 0 && owns <= utf8Bytes(head) / 10, `${owns} of ${utf8Bytes(head)} B`);
		assert.equal((lineObject(head, "intents: ")["payments-refactor"] as { owns: string }).owns, 'refs: tactics.pay-01…pay-25 (25), lazy["design/payments.md"]');
		const [read] = evaluate({ wanted: ["cwd"], histories: { cwd } }, [toCanonicalLocator("intents.payments-refactor.owns", ["cwd"])]);
		const refs = read?.value as Array<{ $ref: string }>;
		assert.equal(refs.length, 26);
		assert.deepEqual(refs[0], { $ref: "cwd.tactics.pay-01" }, "storage keeps the array of references");
	});

	it("fills its budget, and renders the same bytes for the same state (cache-stable), from a cold copy too", () => {
		assert.ok(utf8Bytes(head) <= DEFAULT_HEAD_BUDGET && utf8Bytes(head) >= 0.85 * DEFAULT_HEAD_BUDGET, `${utf8Bytes(head)} B`);
		assert.equal(firstHead(cwd, roots), head);
		assert.equal(firstHead(structuredClone(cwd), roots), head);
		assert.equal(firstHead(longProject().cwd, roots), head, "a fresh build of the same project");
	});

	it("is the worked example of docs/model-surface.md, byte for byte", () => {
		const doc = readFileSync(DOC, "utf8");
		const at = doc.indexOf(EXAMPLE_MARK);
		assert.ok(at >= 0, `docs/model-surface.md marks its worked example with ${EXAMPLE_MARK}`);
		const block = /^```text\n([\s\S]*?)\n```$/m.exec(doc.slice(at + EXAMPLE_MARK.length));
		assert.equal(block?.[1], head, `paste the head below into docs/model-surface.md after the mark:\n${head}`);
	});
});
