/**
 * Concurrent-change notices over histories built by the real engine: exact paths of the
 * shared owners' foreign transitions since the head, none for this run's own writes (also once
 * folded) or for Session, honest about transitions folded out of retention, never echoing values.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Owner, OwnerHistory } from "../../lib/core/types.js";
import { concurrentNotice } from "../../lib/model/notices.js";

type Histories = Partial<Record<Owner, OwnerHistory>>;

function histories(owners: readonly Owner[]): Histories {
	const h: Histories = {};
	for (const o of owners) h[o] = newHistory(o, 20);
	return h;
}

function commit(h: Histories, id: string, patch: CanonicalPatch, retention?: number): void {
	if (retention !== undefined) for (const owner of Object.values(h)) owner.retention = retention;
	commitStaged(h, stage(h, patch, { id, at: "2026-01-01T00:00:00.000Z", by: { kind: "system", reason: "test" } }));
}

describe("concurrentNotice", () => {
	it("names who made the foreign transitions, when recorded, so a teammate's change of the plan is visible", () => {
		const h = histories(["cwd"]);
		const seqAtHead = { cwd: 0 };
		const by = { kind: "system", reason: "test" } as const;
		const at = "2026-01-01T00:00:00.000Z";
		commitStaged(h, stage(h, { cwd: { intents: { i: 1 } } }, { id: "b1", at, by, who: { user: "bob", host: "desk" } }));
		commitStaged(h, stage(h, { cwd: { intents: { j: 1 } } }, { id: "b2", at, by, who: { user: "bob", host: "desk" } }));
		commitStaged(h, stage(h, { cwd: { tactics: { t: 1 } } }, { id: "c1", at, by, who: { user: "carol", host: "vm" } }));
		commitStaged(h, stage(h, { cwd: { tactics: { u: 1 } } }, { id: "old", at, by }));
		const notice = concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead, ownSeqs: {} });
		assert.match(
			notice ?? "",
			/^Note: cwd was changed by another process since this run's head \(4 transitions by bob@desk, carol@vm, now seq 4\): intents\.i, intents\.j, tactics\.t, tactics\.u\./,
		);
	});

	it("lists the exact paths another process changed in the flat owner since the head, relative", () => {
		const h = histories(["cwd"]);
		commit(h, "before", { cwd: { tactics: { a: { b: 1 } } } });
		const seqAtHead = { cwd: h.cwd?.seq as number };
		commit(h, "mine", { cwd: { tactics: { mine: true } } });
		commit(h, "theirs", { cwd: { tactics: { a: { b: 2, c: null } }, lazy: { "notes/x.md": "SECRET BODY" } } });
		const notice = concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead, ownSeqs: { cwd: new Set([2]) } });
		assert.equal(
			notice,
			'Note: cwd was changed by another process since this run\'s head (1 transition, now seq 3): tactics.a.b, tactics.a.c, lazy["notes/x.md"]. The head is not updated; read_state for current values.',
		);
	});

	it("qualifies paths in scoped form and ignores Session, which no other process writes", () => {
		const h = histories(["global", "cwd", "session"]);
		const seqAtHead = { global: 0, cwd: 0, session: 0 };
		commit(h, "x1", { global: { strategy: { s: 1 } }, session: { tactics: { t: 1 } } });
		commit(h, "x2", { global: { intents: { i: {} } } });
		const notice = concurrentNotice({ wanted: ["global", "cwd", "session"], histories: h, seqAtHead, ownSeqs: {} });
		assert.equal(
			notice,
			"Note: global was changed by another process since this run's head (2 transitions, now seq 2): global.strategy.s, global.intents.i. The head is not updated; read_state for current values.",
		);
	});

	it("says nothing when only this run wrote, nothing changed, or the owner is not wanted", () => {
		const h = histories(["global", "cwd"]);
		commit(h, "mine", { cwd: { tactics: { a: 1 } } });
		commit(h, "theirs", { global: { tactics: { a: 1 } } });
		assert.equal(concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead: { cwd: 0 }, ownSeqs: { cwd: new Set([1]) } }), undefined);
		assert.equal(concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead: { cwd: 1 }, ownSeqs: {} }), undefined);
		assert.equal(concurrentNotice({ wanted: ["cwd", "session"], histories: h, seqAtHead: { cwd: 1, global: 0 }, ownSeqs: {} }), undefined);
	});

	it("counts transitions folded out of retention instead of inventing their paths", () => {
		const h = histories(["cwd"]);
		for (let i = 1; i <= 4; i++) commit(h, `theirs${i}`, { cwd: { tactics: { [`k${i}`]: i } } }, 2);
		const notice = concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead: { cwd: 0 }, ownSeqs: {} });
		assert.equal(
			notice,
			"Note: cwd was changed by another process since this run's head (4 transitions, now seq 4; 2 no longer retained): tactics.k3, tactics.k4. The head is not updated; read_state for current values.",
		);
	});

	it("does not count this run's own transitions that retention already folded", () => {
		const h = histories(["cwd"]);
		commit(h, "mine1", { cwd: { tactics: { m1: 1 } } }, 0);
		commit(h, "theirs", { cwd: { tactics: { t: 1 } } }, 0);
		commit(h, "mine2", { cwd: { tactics: { m2: 1 } } }, 0);
		assert.equal(
			concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead: { cwd: 0 }, ownSeqs: { cwd: new Set([1, 3]) } }),
			"Note: cwd was changed by another process since this run's head (1 transition, now seq 3; 1 no longer retained). The head is not updated; read_state for current values.",
		);
		assert.equal(concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead: { cwd: 2 }, ownSeqs: { cwd: new Set([1, 3]) } }), undefined);
	});

	it("caps a long path list and counts the rest", () => {
		const h = histories(["cwd"]);
		const tactics: Record<string, number> = {};
		for (let i = 0; i < 15; i++) tactics[`k${i}`] = i;
		commit(h, "theirs", { cwd: { tactics } });
		const notice = concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead: { cwd: 0 }, ownSeqs: {} }) ?? "";
		assert.match(notice, /tactics\.k11 \+3 more\./);
		assert.ok(!notice.includes("tactics.k12"));
	});

	it("law: silent exactly when every transition since the head is this run's own, whatever retention folded and whatever own seqs lie beyond the loaded history", () => {
		assertProperty(
			fc.property(
				fc.array(fc.boolean(), { minLength: 1, maxLength: 24 }),
				fc.nat({ max: 24 }),
				fc.nat({ max: 6 }),
				fc.nat({ max: 3 }),
				(mine, sinceRaw, retention, beyond) => {
					const h = histories(["cwd"]);
					mine.forEach((_, i) => commit(h, `t${i}`, { cwd: { tactics: { [`k${i % 5}`]: i } } }, retention));
					const seq = mine.length;
					const since = Math.min(sinceRaw, seq);
					// Own seqs: those this run committed, plus some committed after this history was loaded.
					const own = new Set<number>();
					mine.forEach((m, i) => m && own.add(i + 1));
					for (let k = 1; k <= beyond; k++) own.add(seq + k);
					let foreign = false;
					for (let s = since + 1; s <= seq; s++) if (!own.has(s)) foreign = true;
					const notice = concurrentNotice({ wanted: ["cwd"], histories: h, seqAtHead: { cwd: since }, ownSeqs: { cwd: own } });
					assert.equal(notice !== undefined, foreign);
				},
			),
			{ numRuns: 500 },
		);
	});
});
