/**
 * The read evaluator's edges that query.test.ts leaves open: registered roots shown beside the
 * planes (current, temporal, `patches[N]`, overlay), which locators the `history` projection
 * refuses, the `effective` overlay with one or no histories and with arrays under objects,
 * the words of its refusals, index segments on objects, and fresh copies of every result.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { type Locator, parseLocator } from "../../lib/core/locator.js";
import { evaluate, type QueryView } from "../../lib/core/query.js";
import { emptyState } from "../../lib/core/state.js";
import type { Json, JsonObject, OwnerHistory } from "../../lib/core/types.js";
import { commitOn } from "../helpers/history.js";
import { codeAndWords as code, refusalOf } from "../helpers/refusal.js";

function read(view: QueryView, text: string, projection: "value" | "keys" | "history" = "value", form: "canonical" | "flat" = "canonical"): Json {
	return evaluate(view, [parseLocator(text, form)], projection)[0]?.value as Json;
}

/** The field path a refusal names. */
function pathOf(fn: () => unknown): readonly (string | number)[] {
	return refusalOf(fn).path;
}

/** cwd: t1 writes a tactic, a registered root and a dormant one; t2 changes the root; t3 a strategy. */
function withRoots(): OwnerHistory {
	const h = newHistory("cwd", 10);
	commitOn(h, { tactics: { a: 1 }, roots: { todos: { x: 1 }, dormant: { y: 2 } } });
	commitOn(h, { roots: { todos: { x: 2 } } });
	commitOn(h, { strategy: { s: 1 } });
	return h;
}

describe("registered roots beside the planes", () => {
	const h = withRoots();
	const view: QueryView = { wanted: ["cwd"], histories: { cwd: h }, roots: ["todos", "board"] };
	const planes = { intents: {}, strategy: {}, tactics: { a: 1 }, artifacts: {}, lazy: {} };

	it("a whole current state shows the planes, then each registered root that has a value; no namespace, no dormant root", () => {
		const v = read(view, "cwd") as JsonObject;
		assert.deepEqual(v, { ...planes, strategy: { s: 1 }, todos: { x: 2 } });
		assert.deepEqual(Object.keys(v), ["intents", "strategy", "tactics", "artifacts", "lazy", "todos"]);
		assert.deepEqual(read(view, "cwd", "keys"), ["artifacts", "intents", "lazy", "strategy", "tactics", "todos"]);
	});

	it("a whole temporal state is shown the same way; a temporal plane or value is read as it was", () => {
		assert.deepEqual(read(view, "cwd[1]"), { ...planes, todos: { x: 2 } });
		assert.deepEqual(read(view, "cwd[2]"), { ...planes, todos: { x: 1 } });
		assert.deepEqual(read(view, "cwd[1].tactics"), { a: 1 });
		assert.equal(read(view, "cwd[1].tactics.a"), 1);
	});

	it("a temporal read inside a namespace that did not exist then names the namespace as the parent", () => {
		assert.equal(
			code(() => read(view, "cwd[3].roots.todos.x")),
			"not_found: `cwd[3].roots.todos.x` does not exist; read `cwd[3].roots` with projection `keys` to see what is there",
		);
		assert.match(
			code(() => read(view, "cwd[3].roots.todos")),
			/; read `cwd\[3\].roots` with/,
		);
		// A history that never wrote a root has no namespace at any offset.
		const plain = newHistory("cwd", 10);
		commitOn(plain, { tactics: { a: 1 } });
		assert.equal(
			code(() => read({ wanted: ["cwd"], histories: { cwd: plain } }, "cwd[1].roots.todos")),
			"not_found: `cwd[1].roots.todos` does not exist; read `cwd[1].roots` with projection `keys` to see what is there",
		);
	});

	it("patches[N] show only the sections the transition wrote, its registered roots by name", () => {
		assert.deepEqual((read(view, "cwd.patches[1]") as JsonObject)["patch"], { todos: { x: 2 } });
		assert.deepEqual((read(view, "cwd.patches[2]") as JsonObject)["patch"], { tactics: { a: 1 }, todos: { x: 1 } });
		assert.deepEqual((read(view, "cwd.patches[0]") as JsonObject)["patch"], { strategy: { s: 1 } });
	});

	it("the overlay of whole states shows registered roots too", () => {
		const g = newHistory("global", 10);
		commitOn(g, { roots: { todos: { x: 0, z: 9 } } });
		const both: QueryView = { wanted: ["global", "cwd"], histories: { global: g, cwd: h }, roots: ["todos"] };
		assert.deepEqual(read(both, "effective"), { ...planes, strategy: { s: 1 }, todos: { x: 2, z: 9 } });
	});

	it("the canonical `roots` namespace reads as stored; a state without it reads it as empty", () => {
		assert.deepEqual(read(view, "cwd.roots"), { todos: { x: 2 }, dormant: { y: 2 } });
		assert.equal(read(view, "cwd.roots.todos.x"), 2);
		const fresh: QueryView = { wanted: ["cwd"], histories: { cwd: newHistory("cwd", 10) }, roots: ["todos"] };
		assert.deepEqual(read(fresh, "cwd.roots"), {});
		assert.deepEqual(read(fresh, "cwd"), emptyState());
	});

	it("without registered roots a whole state is the state as stored", () => {
		assert.deepEqual(read({ wanted: ["cwd"], histories: { cwd: h } }, "cwd"), { ...planes, strategy: { s: 1 }, roots: { todos: { x: 2 }, dormant: { y: 2 } } });
	});
});

describe("the history projection", () => {
	const h = withRoots();
	const view: QueryView = { wanted: ["cwd", "session"], histories: { cwd: h }, response: { r: 1 } };

	it("refuses every locator that is not a current owner's state", () => {
		for (const [text, form] of [
			["cwd[1].tactics", "canonical"],
			["cwd.patches[0]", "canonical"],
			["session.response", "canonical"],
			["effective.tactics", "canonical"],
		] as const) {
			assert.equal(
				code(() => read(view, text, "history", form)),
				`invalid_input: projection \`history\` needs a current owner locator such as \`cwd.tactics.step1\`, not \`${text}\``,
			);
		}
		const flat: Locator = { kind: "state", scope: null, offset: 0, plane: "tactics", path: ["a"] };
		assert.match(
			code(() => evaluate(view, [flat], "history")),
			/^invalid_input: projection `history` needs a current owner locator/,
		);
	});

	it("of a whole owner lists every transition, newest first", () => {
		const got = read(view, "cwd", "history") as JsonObject[];
		assert.deepEqual(
			got.map((e) => e["id"]),
			["t3", "t2", "t1"],
		);
		const newest = got[0] as JsonObject;
		assert.deepEqual((newest["after"] as JsonObject)["strategy"], { s: 1 });
		assert.deepEqual((newest["before"] as JsonObject)["strategy"], {});
	});
});

describe("the effective overlay", () => {
	it("with several owners refuses an offset, naming a per-owner read", () => {
		const h = withRoots();
		const view: QueryView = { wanted: ["cwd", "session"], histories: { cwd: h } };
		assert.equal(
			code(() => read(view, "effective[1].tactics")),
			"invalid_input: `effective[1].tactics`: history is per owner; read e.g. `cwd[1]` instead of `effective[1]`",
		);
	});

	it("with one wanted owner is that owner, offsets included", () => {
		const h = withRoots();
		const view: QueryView = { wanted: ["cwd"], histories: { cwd: h } };
		assert.deepEqual(read(view, "effective[3].tactics"), {});
		assert.deepEqual(read(view, "effective[2].tactics"), { a: 1 });
		assert.deepEqual(read(view, "effective[1].strategy"), {});
	});

	it("skips a wanted owner that was never written, and is empty when none was", () => {
		const c = newHistory("cwd", 10);
		commitOn(c, { tactics: { a: 1 } });
		assert.deepEqual(read({ wanted: ["cwd", "session"], histories: { cwd: c } }, "effective.tactics"), { a: 1 });
		const none: QueryView = { wanted: ["cwd", "session"], histories: {} };
		assert.deepEqual(read(none, "effective.tactics"), {});
		assert.deepEqual(read(none, "effective"), emptyState());
	});

	it("an object over an array or a scalar hides it: only the run of objects on top is merged", () => {
		const g = newHistory("global", 10);
		const c = newHistory("cwd", 10);
		const s = newHistory("session", 10);
		commitOn(g, { tactics: { a: ["g0", "g1"], b: "scalar" } });
		commitOn(c, { tactics: { a: { y: 1 }, b: { k: 1 } } });
		commitOn(s, { tactics: { a: { x: 1 } } });
		const view: QueryView = { wanted: ["global", "cwd", "session"], histories: { global: g, cwd: c, session: s } };
		assert.deepEqual(read(view, "effective.tactics.a"), { y: 1, x: 1 });
		assert.deepEqual(read(view, "effective.tactics"), { a: { y: 1, x: 1 }, b: { k: 1 } });
	});
});

describe("words of the refusals", () => {
	const c = newHistory("cwd", 10);
	commitOn(c, { tactics: { a: 1, items: [null, "s"], obj: { "0": "zero" } } });
	const view: QueryView = { wanted: ["cwd", "session"], histories: { cwd: c } };

	it("an excluded owner is named with the wanted ones", () => {
		assert.equal(
			code(() => read(view, "global.tactics")),
			"excluded_owner: owner `global` is not wanted in this session (wanted: cwd, session); it cannot be read. Change the selection with `/state owners` first",
		);
	});

	it("a locator without an owner, with several wanted, names each way to write it", () => {
		const loc: Locator = { kind: "state", scope: null, offset: 0, plane: "tactics", path: ["a"] };
		assert.equal(
			code(() => evaluate(view, [loc], "value")),
			"invalid_input: `tactics.a` names no owner; with several wanted owners write e.g. `cwd.tactics.a` or `session.tactics.a`",
		);
		const patches: Locator = { kind: "patches", owner: null, index: 0, path: ["id"] };
		assert.equal(evaluate({ wanted: ["cwd"], histories: { cwd: c } }, [patches], "value")[0]?.value, "t1");
	});

	it("keys of null and of a string name what the value is", () => {
		assert.equal(
			code(() => read(view, "cwd.tactics.items[0]", "keys")),
			"invalid_input: projection `keys` needs an object or an array; `cwd.tactics.items[0]` is null; read it with projection `value`",
		);
		assert.match(
			code(() => read(view, "cwd.tactics.items[1]", "keys")),
			/`cwd.tactics.items\[1\]` is a string;/,
		);
	});

	it("an index reads arrays only, a name objects only", () => {
		assert.equal(read(view, 'cwd.tactics.obj["0"]'), "zero");
		assert.match(
			code(() => read(view, "cwd.tactics.obj[0]")),
			/^not_found: `cwd.tactics.obj\[0\]` does not exist; read `cwd.tactics.obj`/,
		);
		assert.match(
			code(() => read(view, 'cwd.tactics.items["1"]')),
			/^not_found/,
		);
		assert.equal(read(view, "cwd.tactics.items[1]"), "s");
	});
});

describe("refusals name their field", () => {
	const c = newHistory("cwd", 10);
	commitOn(c, { tactics: { a: 1 } });
	const view: QueryView = { wanted: ["cwd", "session"], histories: { cwd: c } };

	it("a projection refusal names `projection`, an excluded owner the owner, the rest no field", () => {
		assert.deepEqual(
			pathOf(() => read(view, "cwd.patches[0]", "history")),
			["projection"],
		);
		assert.deepEqual(
			pathOf(() => read(view, "cwd.tactics.a", "keys")),
			["projection"],
		);
		assert.deepEqual(
			pathOf(() => read(view, "global.tactics")),
			["global"],
		);
		assert.deepEqual(
			pathOf(() => read(view, "effective[1].tactics")),
			[],
		);
		assert.deepEqual(
			pathOf(() => evaluate(view, [{ kind: "state", scope: null, offset: 0, plane: "tactics", path: [] }], "value")),
			[],
		);
		assert.deepEqual(
			pathOf(() => read(view, "cwd.tactics.b")),
			[],
		);
	});
});

describe("results", () => {
	it("carry a transition id only for patches[N]", () => {
		const c = newHistory("cwd", 10);
		commitOn(c, { tactics: { a: 1 } });
		const view: QueryView = { wanted: ["cwd"], histories: { cwd: c } };
		assert.deepEqual(evaluate(view, [parseLocator("cwd.tactics.a", "canonical")]), [{ locator: "cwd.tactics.a", value: 1 }]);
		assert.deepEqual(evaluate(view, [parseLocator("cwd.patches[0].id", "canonical")]), [{ locator: "cwd.patches[0].id", value: "t1", transitionId: "t1" }]);
	});

	it("are copies: changing one changes neither the response nor a stored patch", () => {
		const c = newHistory("cwd", 10);
		commitOn(c, { tactics: { a: { deep: 1 } } });
		const view: QueryView = { wanted: ["cwd", "session"], histories: { cwd: c }, response: { last: { text: "done" } } };
		(read(view, "session.response.last") as JsonObject)["text"] = "changed";
		assert.deepEqual(view.response, { last: { text: "done" } });
		((read(view, "cwd.patches[0].patch.tactics") as JsonObject)["a"] as JsonObject)["deep"] = 2;
		assert.deepEqual(c.tail[0]?.patch, { tactics: { a: { deep: 1 } } });
	});
});
