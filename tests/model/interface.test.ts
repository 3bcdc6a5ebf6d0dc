/**
 * The model interface: flat/scoped patch admission (every docs/spec.md §3.1 refusal), locator
 * resolution and presentation, pointer presentation and `read_state` argument checks.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStateError } from "../../lib/core/errors.js";
import { formatLocator } from "../../lib/core/locator.js";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { Json, Owner } from "../../lib/core/types.js";
import { presentLocator, presentPointer, presentValue, toCanonicalLocator, toCanonicalPatch, toReadRequest } from "../../lib/model/interface.js";

function refusal(fn: () => unknown): { code: string; message: string; path: string } {
	try {
		fn();
	} catch (e) {
		assert.ok(isStateError(e), String(e));
		return { code: e.code, message: e.message, path: e.path.join("/") };
	}
	return assert.fail("expected a refusal");
}

const FLAT: Owner[] = ["cwd"];
const SCOPED: Owner[] = ["cwd", "session"];

describe("toCanonicalPatch", () => {
	it("wraps flat input into the sole owner and anchors relative refs", () => {
		assert.deepEqual(toCanonicalPatch({ tactics: { ready: true } }, FLAT), { cwd: { tactics: { ready: true } } });
		assert.deepEqual(toCanonicalPatch({ intents: { ship: { owns: { $ref: "lazy.plan" } } }, lazy: {} }, ["global"]), {
			global: { intents: { ship: { owns: { $ref: "global.lazy.plan" } } }, lazy: {} },
		});
	});

	it("passes scoped input through for wanted owners", () => {
		const input = { cwd: { tactics: { a: 1 } }, session: { lazy: { n: { $ref: "cwd.lazy.x" } } } };
		assert.deepEqual(toCanonicalPatch(input, SCOPED), input);
	});

	it("detaches first: later mutation and getters cannot change the result", () => {
		let reads = 0;
		const input = {
			tactics: {
				get step() {
					reads++;
					return reads === 1 ? "first" : "second";
				},
			},
		};
		const out = toCanonicalPatch(input, FLAT);
		(input.tactics as Record<string, unknown>)["extra"] = 1;
		assert.deepEqual(out, { cwd: { tactics: { step: "first" } } });
		assert.equal(reads, 1);
	});

	const refusals: Array<[string, unknown, Owner[], string, RegExp, string]> = [
		["empty input", {}, FLAT, "invalid_input", /the patch is empty/, ""],
		["a non-object", [1], FLAT, "invalid_input", /must be an object.*array/, ""],
		["mixed flat and scoped keys", { tactics: {}, cwd: {} }, SCOPED, "invalid_input", /mixes plane keys \(`tactics`\) and owner keys \(`cwd`\)/, "cwd"],
		["owner keys with one wanted owner", { cwd: { tactics: {} } }, FLAT, "invalid_input", /one owner \(cwd\): send planes at the top level/, "cwd"],
		[
			"plane keys with several wanted owners",
			{ tactics: { a: 1 } },
			SCOPED,
			"invalid_input",
			/several owners \(cwd, session\): wrap planes in an owner, e.g. \{ "cwd": \{ "tactics"/,
			"tactics",
		],
		[
			"an excluded owner",
			{ global: { tactics: {} } },
			SCOPED,
			"excluded_owner",
			/owner `global` is not wanted in this session \(wanted: cwd, session\)/,
			"global",
		],
		["flat `response`", { response: { last: 1 } }, FLAT, "invalid_input", /`response` is runtime-owned/, "response"],
		["scoped `response`", { session: { response: {} } }, SCOPED, "invalid_input", /`session.response` is runtime-owned/, "session/response"],
		["an unknown flat plane", { tasks: {} }, FLAT, "invalid_input", /unknown key `tasks`; expected planes `intents`/, "tasks"],
		["an unknown scoped plane", { cwd: { tasks: {} } }, SCOPED, "invalid_input", /unknown plane `cwd.tasks`/, "cwd/tasks"],
		["a whole plane set to null", { lazy: null }, FLAT, "invalid_input", /`lazy` is null: a whole plane cannot be deleted/, "lazy"],
		[
			"a whole plane set to an array",
			{ cwd: { tactics: [1] } },
			SCOPED,
			"invalid_input",
			/`cwd.tactics` must be an object of entries.*not an array/,
			"cwd/tactics",
		],
		["a whole plane set to a string", { tactics: "x" }, FLAT, "invalid_input", /not a string/, "tactics"],
		["a scoped owner set to null", { cwd: null }, SCOPED, "invalid_input", /`cwd` must be an object of planes/, "cwd"],
		["a non-finite number", { tactics: { n: Number.NaN } }, FLAT, "invalid_value", /`tactics.n` is NaN/, "tactics/n"],
		["undefined", { tactics: { u: undefined } }, FLAT, "invalid_value", /`tactics.u` is undefined/, "tactics/u"],
		["a class instance", { tactics: { d: new Date(0) } }, FLAT, "invalid_value", /`tactics.d` is a Date instance/, "tactics/d"],
		[
			"an unqualified scoped ref",
			{ cwd: { intents: { i: { $ref: "lazy.plan" } } } },
			SCOPED,
			"invalid_input",
			/`cwd.intents.i.\$ref` is `lazy.plan`; in scoped mode write `cwd.lazy.plan` or `session.lazy.plan`/,
			"cwd/intents/i/$ref",
		],
	];
	for (const [name, input, wanted, code, re, path] of refusals) {
		it(`refuses ${name}`, () => {
			const r = refusal(() => toCanonicalPatch(input, wanted));
			assert.equal(r.code, code, r.message);
			assert.match(r.message, re);
			assert.equal(r.path, path);
		});
	}

	it("accepts empty plane objects as no-ops", () => {
		assert.deepEqual(toCanonicalPatch({ tactics: {} }, FLAT), { cwd: { tactics: {} } });
		assert.deepEqual(toCanonicalPatch({ session: { lazy: {} } }, SCOPED), { session: { lazy: {} } });
	});
});

describe("locators and presentation", () => {
	it("presents canonical locators in the flat form", () => {
		const cases: Array<[string, string]> = [
			["cwd.tactics.a", "tactics.a"],
			["cwd[1].tactics", "effective[1].tactics"],
			["cwd.patches[0]", "patches[0]"],
			["cwd", "effective"],
		];
		for (const [canonical, flat] of cases) assert.equal(presentLocator(toCanonicalLocator(canonical, SCOPED), FLAT), flat);
		assert.equal(presentLocator(toCanonicalLocator("session.response", ["session"]), ["session"]), "response");
	});

	it("presents values relative for a sole owner and unchanged for scoped", () => {
		const v = { a: { $ref: "cwd.lazy.plan" }, b: { $ref: "session.lazy.plan" } };
		assert.deepEqual(presentValue(v, FLAT), { a: { $ref: "lazy.plan" }, b: { $ref: "session.lazy.plan" } });
		assert.equal(presentValue(v, SCOPED), v);
	});

	it("presents pointers relative for flat, keeping escapes literal", () => {
		assert.equal(presentPointer("/cwd/tactics/old", FLAT), "/tactics/old");
		assert.equal(presentPointer("/cwd/lazy/a~1b~0c", FLAT), "/lazy/a~1b~0c");
		assert.equal(presentPointer("/cwdx/lazy", FLAT), "/cwdx/lazy");
		assert.equal(presentPointer("/cwd/tactics/old", SCOPED), "/cwd/tactics/old");
	});
});

describe("references written as merge patches", () => {
	it("a `$ref` patch that also deletes a sibling is stored anchored and owns its target", () => {
		const h = newHistory("cwd", 5);
		const commit = (input: unknown, id: string) => {
			const r = stage({ cwd: h }, toCanonicalPatch(input, FLAT), { id, at: "2026-11-30T00:00:00.000Z", by: { kind: "system", reason: "test" } });
			commitStaged({ cwd: h }, r);
			return r.report;
		};
		commit({ intents: { ship: { owns: { note: "draft" } } }, lazy: { plan: "body" } }, "t1");
		// The model turns `owns` into a reference and drops the old note in one merge patch.
		commit({ intents: { ship: { owns: { $ref: "lazy.plan", note: null } } } }, "t2");
		assert.deepEqual(h.state.intents, { ship: { owns: { $ref: "cwd.lazy.plan" } } });
		assert.deepEqual(presentValue(h.state.intents as Json, FLAT), { ship: { owns: { $ref: "lazy.plan" } } });
		const report = commit({ intents: { ship: null } }, "t3");
		assert.deepEqual(report.cascades, [{ owner: "cwd", intent: "ship", targets: ["cwd.lazy.plan"] }]);
		assert.deepEqual(h.state.lazy, {});
	});
});

describe("toReadRequest", () => {
	it("resolves one path or an ordered batch", () => {
		const one = toReadRequest({ path: "tactics" }, FLAT);
		assert.deepEqual(
			{ ...one, locators: one.locators.map(formatLocator) },
			{ texts: ["tactics"], locators: ["cwd.tactics"], projection: "value", batch: false },
		);
		const many = toReadRequest({ paths: ["cwd.lazy", "session.patches[1]"], projection: "keys" }, SCOPED);
		assert.deepEqual(
			{ ...many, locators: many.locators.map(formatLocator) },
			{
				texts: ["cwd.lazy", "session.patches[1]"],
				locators: ["cwd.lazy", "session.patches[1]"],
				projection: "keys",
				batch: true,
			},
		);
	});

	it("reads each argument once: the texts it returns are the ones it resolved", () => {
		// The tool shows `texts` as the model's locators; re-reading the caller's object could disagree.
		let reads = 0;
		const args = {
			get path() {
				reads++;
				return reads === 1 ? "tactics" : "lazy";
			},
		};
		const r = toReadRequest(args, FLAT);
		assert.deepEqual([r.texts, r.locators.map(formatLocator), reads], [["tactics"], ["cwd.tactics"], 1]);
		const list = ["lazy.a", "tactics"];
		const batch = toReadRequest({ paths: list }, FLAT);
		list[0] = "changed";
		assert.deepEqual(batch.texts, ["lazy.a", "tactics"]);
	});

	const bad: Array<[string, unknown, RegExp, string]> = [
		["neither path nor paths", {}, /exactly one of `path`/, ""],
		["both path and paths", { path: "tactics", paths: ["lazy"] }, /exactly one of `path`/, ""],
		["an empty batch", { paths: [] }, /non-empty list/, "paths"],
		["a non-string path", { paths: ["tactics", 3] }, /`paths\[1\]` must be a locator string/, "paths/1"],
		["an unknown projection", { path: "tactics", projection: "all" }, /`projection` must be one of/, "projection"],
		["an unknown parameter", { path: "tactics", depth: 2 }, /unknown parameter `depth`/, "depth"],
		["a parse error in a batch", { paths: ["tactics", "lazy.]"] }, /^`paths\[1\]`: unexpected `\]` at column 6/, "paths/1"],
	];
	for (const [name, args, re, path] of bad) {
		it(`refuses ${name}`, () => {
			const r = refusal(() => toReadRequest(args, FLAT));
			assert.match(r.message, re);
			assert.equal(r.path, path);
		});
	}
});
