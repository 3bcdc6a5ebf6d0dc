/**
 * Model-facing result texts and details: short, relative to the sole owner for the flat
 * interface, canonical in `details`, never echoing the whole state.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StageReport } from "../../lib/core/types.js";
import { patchResult, readResult } from "../../lib/model/results.js";

const report: StageReport = {
	scopes: ["cwd"],
	changed: ["/cwd/intents/login", "/cwd/tactics/t1"],
	missingDeletions: ["/cwd/tactics/old~1x"],
	cascades: [{ owner: "cwd", intent: "login", targets: ["cwd.tactics.t1"] }],
	danglingRefs: [{ owner: "cwd", intent: "other", ref: "cwd.lazy.gone" }],
};

describe("patch results", () => {
	it("present paths relative to the sole owner and keep details canonical", () => {
		const r = patchResult({ transitionId: "t-1", report, wanted: ["cwd"] });
		const text = r.content[0]?.text ?? "";
		assert.match(text, /^Committed transition t-1\.$/m);
		assert.match(text, /^changed: \/intents\/login, \/tactics\/t1$/m);
		assert.match(text, /^cascaded: intents\.login took tactics\.t1$/m);
		assert.match(text, /already absent \(null deleted nothing\): \/tactics\/old~1x$/m);
		assert.match(text, /intents\.other -> lazy\.gone$/m);
		assert.doesNotMatch(text, /\/cwd\//);
		assert.deepEqual(r.details.changed, report.changed);
		assert.deepEqual(r.details.missingDeletions, report.missingDeletions);
		assert.deepEqual(r.details.cascades, report.cascades);
		assert.equal(r.details.transitionId, "t-1");
	});

	it("keep owner-qualified paths for the scoped interface and say when nothing changed", () => {
		const scoped = patchResult({ transitionId: "t-2", report, wanted: ["cwd", "session"] });
		assert.match(scoped.content[0]?.text ?? "", /changed: \/cwd\/intents\/login/);
		assert.match(scoped.content[0]?.text ?? "", /cwd\.intents\.login took cwd\.tactics\.t1/);
		const none: StageReport = { scopes: [], changed: [], missingDeletions: [], cascades: [], danglingRefs: [] };
		const noop = patchResult({ transitionId: null, report: none, wanted: ["cwd"] });
		assert.equal(noop.content[0]?.text, "No change: the patch matches the current state, so nothing was committed.");
		assert.equal(noop.details.transitionId, null);
	});
});

describe("patch results name every change (issue 26)", () => {
	it("count per plane, relative in flat form, what the list does not spell out, and every deletion", () => {
		const changed = [...Array.from({ length: 300 }, (_, i) => `/cwd/tactics/step-${i}`), "/cwd/artifacts/src~1old.ts", "/cwd/roots/todos/a"];
		const big: StageReport = { scopes: ["cwd"], changed, missingDeletions: [], cascades: [], danglingRefs: [] };
		// The committed record's patch: the artifact and two steps deleted, the rest written.
		const patch = { tactics: { "step-0": null, "step-299": null }, artifacts: { "src/old.ts": null }, roots: { todos: { a: { text: "t" } } } };
		const records = { cwd: { patch } } as unknown as Parameters<typeof patchResult>[0]["records"];
		const text = patchResult({ transitionId: "t-3", report: big, wanted: ["cwd"], records }).content[0]?.text ?? "";
		const m = /^changed: (.*) \(\+(\d+) more: tactics (\d+), artifacts 1, todos 1\)$/m.exec(text);
		assert.ok(m, text);
		assert.equal((m[1] as string).split(", ").length + Number(m[2]), 302);
		assert.equal(Number(m[3]) + 2, Number(m[2]));
		assert.match(text, /^deleted: 3 \(tactics 2, artifacts 1\)$/m);
		assert.doesNotMatch(text, /cwd\./);
	});
});

describe("read results", () => {
	it("return the JSON value alone for one locator, with relative refs for flat", () => {
		const r = readResult({
			items: [{ locator: "intents.a", canonical: "cwd.intents.a", value: { owns: [{ $ref: "cwd.tactics.t" }] } }],
			batch: false,
			projection: "value",
			wanted: ["cwd"],
		});
		assert.equal(r.content[0]?.text, '{"owns":[{"$ref":"tactics.t"}]}');
		assert.deepEqual(r.details.canonical, ["cwd.intents.a"]);
	});

	it("return a batch in request order under a one-line header with the transition id of patches[N]", () => {
		const r = readResult({
			items: [
				{ locator: "cwd.patches[0]", canonical: "cwd.patches[0]", value: { id: "t-9" }, transitionId: "t-9" },
				{ locator: "session.tactics", canonical: "session.tactics", value: {} },
			],
			batch: true,
			projection: "value",
			wanted: ["cwd", "session"],
		});
		const [header, body, ...rest] = (r.content[0]?.text ?? "").split("\n");
		assert.equal(header, "2 values in request order: cwd.patches[0], session.tactics");
		assert.deepEqual(JSON.parse(body as string), [{ id: "t-9" }, {}]);
		assert.deepEqual(rest, []);
		assert.deepEqual(r.details.transitionIds, ["t-9", null]);
	});
});
