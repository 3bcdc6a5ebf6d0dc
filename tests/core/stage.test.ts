/**
 * Staging a canonical patch: validation of every field, excluded owners, limits,
 * no-op detection, multi-owner records, cascades merged into the effective patch, and
 * commitStaged applying the records.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateError } from "../../lib/core/errors.js";
import { newHistory, replay, stateAt } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { stateBytes } from "../../lib/core/state.js";
import { DEFAULT_LIMITS } from "../../lib/core/types.js";
import type { CanonicalPatch, Owner, OwnerHistory } from "../../lib/core/types.js";

const meta = (id: string) => ({ id, at: "2026-11-30T10:00:00.000Z", by: { kind: "tool", sessionId: "s1", toolCallId: id } as const });

function histories(...owners: Owner[]): Partial<Record<Owner, OwnerHistory>> {
	const out: Partial<Record<Owner, OwnerHistory>> = {};
	for (const o of owners) out[o] = newHistory(o, 20);
	return out;
}

function refused(fn: () => unknown, code: string, text: string): void {
	assert.throws(fn, (e: unknown) => {
		assert.ok(e instanceof StateError, String(e));
		assert.equal(e.code, code);
		assert.ok(e.message.includes(text), `message ${JSON.stringify(e.message)} should contain ${JSON.stringify(text)}`);
		return true;
	});
}

function run(hs: Partial<Record<Owner, OwnerHistory>>, patch: CanonicalPatch, id: string) {
	const r = stage(hs, patch, meta(id));
	commitStaged(hs, r);
	return r;
}

/** Store data as an older build could have written it: an exact delta skips reference checks. */
function legacy(hs: Partial<Record<Owner, OwnerHistory>>, patch: CanonicalPatch, id: string) {
	const r = stage(hs, patch, { ...meta(id), exact: true });
	commitStaged(hs, r);
	return r;
}

describe("stage validation", () => {
	const hs = histories("cwd", "session");
	it("refuses unknown owners, response, unknown planes, non-object planes, naming the field", () => {
		refused(() => stage(hs, { project: {} } as unknown as CanonicalPatch, meta("x")), "invalid_input", "`project`");
		refused(() => stage(hs, { cwd: [] } as unknown as CanonicalPatch, meta("x")), "invalid_input", "`cwd`");
		refused(() => stage(hs, { session: { response: {} } } as unknown as CanonicalPatch, meta("x")), "invalid_input", "`session.response`");
		refused(() => stage(hs, { cwd: { notes: {} } } as unknown as CanonicalPatch, meta("x")), "invalid_input", "`cwd.notes`");
		refused(() => stage(hs, { cwd: { tactics: null } } as unknown as CanonicalPatch, meta("x")), "invalid_input", "`cwd.tactics`");
		refused(() => stage(hs, { cwd: { tactics: "x" } } as unknown as CanonicalPatch, meta("x")), "invalid_input", "`cwd.tactics`");
		refused(() => stage(hs, { cwd: { tactics: [] } } as unknown as CanonicalPatch, meta("x")), "invalid_input", "`cwd.tactics`");
		refused(() => stage(hs, null as unknown as CanonicalPatch, meta("x")), "invalid_input", "object keyed by owner");
	});

	it("refuses non-finite or non-JSON values naming the field", () => {
		refused(() => stage(hs, { cwd: { tactics: { a: { b: Number.NaN } } } }, meta("x")), "invalid_value", "`cwd.tactics.a.b`");
		refused(() => stage(hs, { cwd: { lazy: { d: new Date() } } } as unknown as CanonicalPatch, meta("x")), "invalid_value", "`cwd.lazy.d`");
	});

	it("refuses owners without a loaded history as excluded", () => {
		refused(() => stage(hs, { global: { tactics: { a: 1 } } }, meta("x")), "excluded_owner", "`global`");
	});

	it("refuses depth and key length over the limits", () => {
		const limits = { ...DEFAULT_LIMITS, maxDepth: 2, maxKeyLength: 8 };
		refused(
			() => stage(hs, { cwd: { tactics: { a: { b: { c: { d: 1 } } } } } }, meta("x"), limits),
			"limit",
			"`cwd.tactics.a.b.c` nests deeper than the depth limit of 2",
		);
		refused(() => stage(hs, { cwd: { tactics: { "long-key-here": 1 } } }, meta("x"), limits), "limit", "limit is 8");
		stage(hs, { cwd: { tactics: { a: { b: { c: 1 } } } } }, meta("x"), limits);
	});

	it("refuses growth past the owner size limit, naming owner, size and limit, and stages nothing", () => {
		const h = histories("cwd");
		const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 100 };
		refused(() => stage(h, { cwd: { lazy: { body: "x".repeat(100) } } }, meta("x"), limits), "limit", "`cwd` would grow to");
		assert.equal(h.cwd?.seq, 0);
		// A store already over a lowered limit can still shrink.
		run(h, { cwd: { lazy: { body: "x".repeat(100) } } }, "big");
		const r = stage(h, { cwd: { lazy: { body: "short" } } }, meta("y"), limits);
		assert.equal(r.noop, false);
	});

	it("lets a store that is over a lowered limit shrink, or change at its size, while it stays over; growing it is refused", () => {
		const h = histories("cwd");
		const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 100 };
		run(h, { cwd: { lazy: { body: "x".repeat(200) } } }, "big");
		const over = h.cwd?.bytes ?? 0;
		assert.ok(over > 2 * limits.maxOwnerBytes, `${over} bytes`);
		const shrunk = stage(h, { cwd: { lazy: { body: "x".repeat(150) } } }, meta("shrink"), limits);
		assert.equal(shrunk.noop, false, "a shrink that still ends over the limit is staged");
		if (shrunk.noop) return;
		assert.equal(shrunk.bytesAfter.cwd, over - 50);
		assert.ok((shrunk.bytesAfter.cwd ?? 0) > limits.maxOwnerBytes, "still over the limit after it");
		const same = stage(h, { cwd: { lazy: { body: "y".repeat(200) } } }, meta("same"), limits);
		assert.equal(same.noop, false, "a change that keeps the size is staged");
		refused(() => stage(h, { cwd: { lazy: { body: "x".repeat(201) } } }, meta("grow"), limits), "limit", `\`cwd\` would grow to ${over + 1} bytes`);
	});

	it("does not mutate the histories", () => {
		const h = histories("cwd");
		stage(h, { cwd: { tactics: { a: 1 } } }, meta("x"));
		assert.equal(h.cwd?.seq, 0);
		assert.deepEqual(h.cwd?.state.tactics, {});
	});
});

describe("stage results", () => {
	it("stages one record per changed owner with shared id, seq and owners list", () => {
		const hs = histories("global", "cwd", "session");
		const r = stage(hs, { session: { tactics: { a: 1 } }, global: { strategy: { s: "x" } }, cwd: { tactics: {} } }, meta("t1"));
		assert.equal(r.noop, false);
		if (r.noop) return;
		assert.deepEqual(Object.keys(r.records).sort(), ["global", "session"]);
		assert.deepEqual(r.report.scopes, ["global", "session"]);
		assert.deepEqual(r.report.changed, ["/global/strategy/s", "/session/tactics/a"]);
		assert.deepEqual(r.records.global?.owners, ["global", "session"]);
		assert.equal(r.records.session?.seq, 1);
		assert.equal(r.records.session?.id, "t1");
		assert.deepEqual(r.records.session?.by, { kind: "tool", sessionId: "s1", toolCallId: "t1" });
		assert.equal(r.bytesAfter.global, stateBytes({ intents: {}, strategy: { s: "x" }, tactics: {}, artifacts: {}, lazy: {} }));
		commitStaged(hs, r);
		assert.equal(hs.global?.seq, 1);
		assert.equal(hs.cwd?.seq, 0);
		assert.deepEqual(hs.session?.state.tactics, { a: 1 });
		assert.equal(hs.session?.bytes, stateBytes(hs.session?.state as never));
	});

	it("reports a no-op, with missing deletions, and stages no record", () => {
		const hs = histories("cwd");
		run(hs, { cwd: { tactics: { a: 1 } } }, "t1");
		const r = stage(hs, { cwd: { tactics: { a: 1, gone: null } } }, meta("t2"));
		assert.equal(r.noop, true);
		assert.deepEqual(r.report.missingDeletions, ["/cwd/tactics/gone"]);
		assert.deepEqual(r.report.scopes, []);
		assert.equal("records" in r, false);
		commitStaged(hs, r);
		assert.equal(hs.cwd?.seq, 1);
	});

	it("keeps exact sizes on a large plane across many adds and deletes", () => {
		const hs = histories("cwd");
		const many: Record<string, number> = {};
		for (let i = 0; i < 5000; i++) many[`k${i}`] = i;
		run(hs, { cwd: { tactics: many } }, "t1");
		const h = hs.cwd as OwnerHistory;
		for (let i = 0; i < 200; i++) run(hs, { cwd: { tactics: i % 2 === 0 ? { [`k${i}`]: null } : { [`n${i}`]: i } } }, `w${i}`);
		assert.equal(h.bytes, stateBytes(h.state));
		run(hs, { cwd: { tactics: Object.fromEntries(Object.keys(h.state.tactics).map((k) => [k, null])) } }, "clear");
		assert.deepEqual(h.state.tactics, {});
		assert.equal(h.bytes, stateBytes(h.state));
	});

	it("stores a detached copy of the caller's patch", () => {
		const hs = histories("cwd");
		const patch = { cwd: { tactics: { list: [1] } } };
		const r = stage(hs, patch, meta("t1"));
		patch.cwd.tactics.list.push(2);
		assert.ok(!r.noop);
		if (!r.noop) assert.deepEqual(r.records.cwd?.patch, { tactics: { list: [1] } });
	});

	it("keeps `__proto__` keys as data in records and state", () => {
		const hs = histories("cwd");
		const patch = JSON.parse('{"cwd":{"tactics":{"__proto__":{"polluted":true}}}}') as CanonicalPatch;
		const r = run(hs, patch, "t1");
		assert.deepEqual(r.report.changed, ["/cwd/tactics/__proto__"]);
		assert.ok(Object.hasOwn(hs.cwd?.state.tactics ?? {}, "__proto__"));
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
	});
});

describe("stage cascades", () => {
	it("merges cascade deletions into the effective patch and reports them", () => {
		const hs = histories("cwd");
		run(
			hs,
			{
				cwd: {
					intents: { goal: { text: "ship", steps: [{ $ref: "cwd.tactics.step1" }], notes: { $ref: "cwd.lazy.plan" } } },
					tactics: { step1: "do it", other: 1 },
					lazy: { plan: "long body" },
				},
			},
			"t1",
		);
		const r = run(hs, { cwd: { intents: { goal: null } } }, "t2");
		assert.ok(!r.noop);
		if (r.noop) return;
		assert.deepEqual(r.records.cwd?.patch, { intents: { goal: null }, tactics: { step1: null }, lazy: { plan: null } });
		assert.deepEqual(r.report.cascades, [{ owner: "cwd", intent: "goal", targets: ["cwd.tactics.step1", "cwd.lazy.plan"] }]);
		assert.deepEqual(r.records.cwd?.cascades, r.report.cascades);
		assert.deepEqual(r.report.changed, ["/cwd/intents/goal", "/cwd/tactics/step1", "/cwd/lazy/plan"]);
		assert.deepEqual(hs.cwd?.state, { intents: {}, strategy: {}, tactics: { other: 1 }, artifacts: {}, lazy: {} });
		const h = hs.cwd as OwnerHistory;
		assert.deepEqual(replay(h.checkpoint, h.tail), h.state);
		assert.deepEqual(stateAt(h, 1).lazy, { plan: "long body" });
	});

	it("reports dangling references when a target is deleted directly", () => {
		const hs = histories("cwd");
		run(hs, { cwd: { intents: { goal: { step: { $ref: "cwd.tactics.step1" } } }, tactics: { step1: 1 } } }, "t1");
		const r = run(hs, { cwd: { tactics: { step1: null } } }, "t2");
		assert.deepEqual(r.report.danglingRefs, [{ owner: "cwd", intent: "goal", ref: "cwd.tactics.step1", drop: { step: null } }]);
		assert.deepEqual(hs.cwd?.state.intents, { goal: { step: { $ref: "cwd.tactics.step1" } } });
	});

	it("anchors stored `$ref` data (written before references were checked) that a deletion of its siblings turns into a reference", () => {
		const hs = histories("cwd");
		const data = { $ref: "lazy.plan", note: "draft" };
		refused(
			() => run(hs, { cwd: { intents: { ship: { owns: data } } } }, "t0"),
			"invalid_input",
			"`cwd.intents.ship.owns` has `$ref` beside other members (`note`)",
		);
		legacy(hs, { cwd: { intents: { ship: { owns: data, keep: data } }, strategy: { s: data }, lazy: { plan: "body" } } }, "t1");
		const r = run(hs, { cwd: { intents: { ship: { owns: { note: null } } }, strategy: { s: { note: null, gone: null } } } }, "t2");
		assert.ok(!r.noop);
		if (r.noop) return;
		assert.deepEqual(r.records.cwd?.patch, {
			intents: { ship: { owns: { note: null, $ref: "cwd.lazy.plan" } } },
			strategy: { s: { note: null, gone: null, $ref: "cwd.lazy.plan" } },
		});
		const h = hs.cwd as OwnerHistory;
		assert.deepEqual(h.state.intents, { ship: { owns: { $ref: "cwd.lazy.plan" }, keep: data } });
		assert.deepEqual(h.state.strategy, { s: { $ref: "cwd.lazy.plan" } });
		assert.deepEqual(replay(h.checkpoint, h.tail), h.state);
		assert.deepEqual(stateAt(h, 1), { ...h.state, intents: { ship: { owns: data, keep: data } }, strategy: { s: data } });
		// The revealed reference owns its target: deleting the intent cascades.
		const del = run(hs, { cwd: { intents: { ship: null } } }, "t3");
		assert.deepEqual(del.report.cascades, [{ owner: "cwd", intent: "ship", targets: ["cwd.lazy.plan"] }]);
	});

	it("judges stored `$ref` data only where a patch touches it; exact (undo) deltas pass as they are", () => {
		const hs = histories("cwd");
		const stored = {
			two: { $ref: "lazy.a", x: 1, y: 2 },
			qualified: { $ref: "global.lazy.a", x: 1 },
			notRef: { $ref: 5, x: 1 },
			rewritten: { $ref: "lazy.a", x: 1 },
		};
		legacy(hs, { cwd: { tactics: stored } }, "t1");
		refused(
			() => stage(hs, { cwd: { tactics: { two: { x: null } } } }, meta("t2")),
			"invalid_input",
			"`cwd.tactics.two` has `$ref` beside other members (`y`)",
		);
		refused(() => stage(hs, { cwd: { tactics: { notRef: { x: null } } } }, meta("t2")), "invalid_input", "`cwd.tactics.notRef.$ref` must be a locator string");
		refused(() => stage(hs, { cwd: { tactics: { two: { z: 1 } } } }, meta("t2")), "invalid_input", "beside other members");
		const patch = { cwd: { tactics: { qualified: { x: null }, rewritten: { $ref: "cwd.lazy.b", x: null }, other: 1 } } };
		const r = stage(hs, patch, meta("t2"));
		assert.ok(!r.noop);
		if (r.noop) return;
		assert.deepEqual(r.records.cwd?.patch, patch.cwd);
		const exact = stage(hs, { cwd: { tactics: { two: { x: null } } } }, { ...meta("t3"), exact: true });
		assert.ok(!exact.noop);
		if (exact.noop) return;
		assert.deepEqual(exact.records.cwd?.patch, { tactics: { two: { x: null } } });
	});

	it("adding a member beside a stored reference is refused: it would silently turn into data", () => {
		const hs = histories("cwd");
		run(hs, { cwd: { intents: { m: { owns: { $ref: "cwd.tactics.a" } } }, tactics: { a: 1 } } }, "t1");
		refused(
			() => run(hs, { cwd: { intents: { m: { owns: { note: "x" } } } } }, "t2"),
			"invalid_input",
			"`cwd.intents.m.owns` has `$ref` beside other members (`note`)",
		);
		// Replacing the whole member, or deleting its `$ref`, is fine.
		run(hs, { cwd: { intents: { m: { owns: { $ref: null, note: "x" } } } } }, "t3");
		assert.deepEqual(hs.cwd?.state.intents, { m: { owns: { note: "x" } } });
	});
});

describe("references are references", () => {
	it("refuses a reference the grammar cannot parse, showing the quoted spelling of the key", () => {
		const hs = histories("cwd");
		const bad = { cwd: { lazy: { "plans/api-v2.md": "the plan" }, intents: { m: { goal: "migrate", owns: [{ $ref: "lazy.plans/api-v2.md" }] } } } };
		refused(() => run(hs, bad, "t1"), "invalid_input", "`cwd.intents.m.owns[0].$ref` is `lazy.plans/api-v2.md`, which is not a locator");
		refused(() => run(hs, bad, "t1"), "invalid_input", 'write {"$ref":"cwd.lazy[\\"plans/api-v2.md\\"]"}');
		assert.equal(hs.cwd?.seq, 0, "nothing written");
		// Arrays hold values literally: a `$ref` object with a null member is not a reference there.
		refused(
			() => run(hs, { cwd: { intents: { m: [{ $ref: "cwd.tactics.a", n: null }] } } }, "t1"),
			"invalid_input",
			"`cwd.intents.m[0]` has `$ref` beside other members (`n`)",
		);
		refused(() => run(hs, { cwd: { strategy: { s: { $ref: ["x"] } } } }, "t1"), "invalid_input", "`cwd.strategy.s.$ref` must be a locator string");
		refused(() => run(hs, { cwd: { tactics: { t: { $ref: "" } } } }, "t1"), "invalid_input", "which is not a locator; a reference names a plane and keys");
	});

	it("refuses a dotted spelling of an existing key that would name another key, stored or written in the same patch", () => {
		const hs = histories("cwd");
		refused(
			() => run(hs, { cwd: { lazy: { "plan.md": "x" }, intents: { m: { owns: [{ $ref: "cwd.lazy.plan.md" }] } } } }, "t1"),
			"invalid_input",
			"names the key `plan` (missing), not the existing key `plan.md`",
		);
		run(hs, { cwd: { lazy: { "plan.md": "x" } } }, "t1");
		refused(() => run(hs, { cwd: { intents: { m: { $ref: "cwd.lazy.plan.md" } } } }, "t2"), "invalid_input", 'write {"$ref":"cwd.lazy[\\"plan.md\\"]"}');
		// The quoted spelling is the reference; a dotted path into an existing entry stays a path.
		run(hs, { cwd: { intents: { m: { owns: [{ $ref: 'cwd.lazy["plan.md"]' }] } }, lazy: { plan: { md: 1 } } } }, "t2");
		const ok = run(hs, { cwd: { intents: { n: { $ref: "cwd.lazy.plan.md" } } } }, "t3");
		assert.deepEqual(ok.report.danglingRefs, []);
		// Unknown in both spellings: a well-formed dangling reference, reported.
		const d = run(hs, { cwd: { intents: { o: { x: { $ref: 'cwd.tactics["a/b c"]' } } } } }, "t4");
		assert.deepEqual(d.report.danglingRefs, [{ owner: "cwd", intent: "o", ref: 'cwd.tactics["a/b c"]', drop: { x: null } }]);
	});
});
