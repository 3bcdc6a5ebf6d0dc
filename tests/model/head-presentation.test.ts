/**
 * How the head spells what is bookkeeping to the model (issue 36): arrays of references as one
 * `refs:` string (runs of keys in natural order as `first…last (n)`), relative in flat form, and
 * the status vocabulary that decides what is in flight, open or closed. Presentation only: the
 * engine stores and `read_state` returns the references as written.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { evaluate } from "../../lib/core/query.js";
import type { Json } from "../../lib/core/types.js";
import { renderHead } from "../../lib/model/head.js";
import { headRefs, refsText } from "../../lib/model/head-refs.js";
import { toCanonicalLocator } from "../../lib/model/interface.js";
import { statusClass } from "../../lib/model/status.js";
import { build } from "./head-fixture.js";
import { assertProperty } from "../helpers/seed.js";

const refs = (...locs: string[]): Json[] => locs.map(($ref) => ({ $ref }));

describe("references in the head", () => {
	it("spells an array of references as one string: runs of one plane's keys in natural order as a range with its count", () => {
		const pay = Array.from({ length: 25 }, (_, i) => `cwd.tactics.pay-${String(i + 1).padStart(2, "0")}`);
		assert.equal(refsText([...pay, 'cwd.lazy["design/payments.md"]'], "cwd"), 'refs: tactics.pay-01…pay-25 (25), lazy["design/payments.md"]');
		assert.equal(refsText([...pay, 'cwd.lazy["design/payments.md"]'], undefined), 'refs: cwd.tactics.pay-01…pay-25 (25), cwd.lazy["design/payments.md"]');
		// Natural order: s2 before s10; a run breaks where the order does, and two in a row are listed.
		assert.equal(
			refsText(["cwd.tactics.s2", "cwd.tactics.s9", "cwd.tactics.s10", "cwd.tactics.s3", "cwd.tactics.s4"], "cwd"),
			"refs: tactics.s2…s10 (3), tactics.s3, tactics.s4",
		);
		// Another owner, a quoted key, a path below a key, a temporal locator: each listed as written.
		assert.equal(
			refsText(['cwd.lazy["a.md"]', 'cwd.lazy["b.md"]', 'cwd.lazy["c.md"]', "session.tactics.x", "cwd.tactics.t.sub", "cwd[1].tactics.y"], "cwd"),
			'refs: lazy["a.md"]…["c.md"] (3), session.tactics.x, tactics.t.sub, cwd[1].tactics.y',
		);
	});

	it("leaves a single reference, other arrays and every other value as they are (the same objects when nothing changes)", () => {
		const one = { owns: refs("cwd.tactics.a") };
		assert.deepEqual(headRefs(one, "cwd"), { owns: [{ $ref: "tactics.a" }] });
		const plain = { list: ["a", { $ref: "cwd.tactics.a" }], n: 1 };
		assert.equal(headRefs(plain, undefined), plain, "nothing to change: the value itself");
		assert.deepEqual(headRefs(plain, "cwd"), { list: ["a", { $ref: "tactics.a" }], n: 1 });
		assert.deepEqual(headRefs([refs("cwd.tactics.a", "cwd.tactics.b")], "cwd"), ["refs: tactics.a, tactics.b"], "nested arrays too");
	});

	it("lists every reference of the array it stands for, in order (any references)", () => {
		const key = fc.constantFrom("a", "a1", "a2", "a10", "b", "x y", "n.md");
		const ref = fc
			.tuple(fc.constantFrom("cwd", "session"), fc.constantFrom("tactics", "lazy"), key)
			.map(([o, p, k]) => `${o}.${p}${/^[a-z][a-z0-9]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`}`);
		assertProperty(
			fc.property(fc.array(ref, { minLength: 2, maxLength: 12 }), (list) => {
				const text = refsText(list, undefined);
				assert.ok(text.startsWith("refs: "));
				// Expanding the ranges' counts gives back the array's length.
				const parts = text.slice(6).split(", ");
				const counted = parts.reduce((n, p) => n + Number(/ \((\d+)\)$/.exec(p)?.[1] ?? 1), 0);
				assert.equal(counted, list.length, text);
				for (const p of parts) {
					const range = /^(.*)…(.*) \((\d+)\)$/.exec(p);
					if (range === null) assert.ok(list.includes(p), `${p} is one of the references`);
					else assert.ok(list.includes(range[1] as string), `${range[1]} starts a run`);
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("shows ownership compactly in the head while the engine keeps the array", () => {
		const owns = refs("cwd.tactics.s1", "cwd.tactics.s2", "cwd.tactics.s3", 'cwd.lazy["n.md"]');
		const histories = build(["cwd"], [{ cwd: { intents: { i: { goal: "g", owns } }, tactics: { s1: "a", s2: "b", s3: "c" }, lazy: { "n.md": "body" } } }]);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 8192 });
		assert.ok(head.includes('intents: {"i":{"goal":"g","owns":"refs: tactics.s1…s3 (3), lazy[\\"n.md\\"]"}}'), head);
		const [read] = evaluate({ wanted: ["cwd"], histories }, [toCanonicalLocator("intents.i.owns", ["cwd"])]);
		assert.deepEqual(read?.value, owns);
	});
});

describe("status vocabulary", () => {
	it("reads in flight, open and closed from status, state, done and closed", () => {
		const cases: Array<[Json, string]> = [
			[{ status: "next" }, "inflight"],
			[{ status: "In Progress" }, "inflight"],
			[{ status: "in-progress" }, "inflight"],
			[{ status: "doing" }, "inflight"],
			[{ status: "blocked: waiting on the security review" }, "inflight"],
			[{ state: "waiting for finance" }, "inflight"],
			[{ status: "active" }, "inflight"],
			[{ status: "todo" }, "open"],
			[{ status: "planned" }, "open"],
			[{ status: "not started" }, "open"],
			[{ status: "reviewed" }, "open"],
			[{ done: false }, "open"],
			["a plain string step", "open"],
			[{ status: "done" }, "closed"],
			[{ status: "Done (merged in #12)" }, "closed"],
			[{ status: "dropped" }, "closed"],
			[{ status: "active", state: "done" }, "closed"],
			[{ status: "doing", done: true }, "closed"],
			[{ closed: true }, "closed"],
		];
		for (const [value, cls] of cases) assert.equal(statusClass(value), cls, JSON.stringify(value));
	});
});
