/**
 * The model's view through the artifact-key lens (issue 25), piece by piece: which reads are
 * checked for spelling, which references and keys a view rewrites (a CWD or Session artifact's,
 * nothing else), that a view of an unchanged history is reused and a changed one is not, and
 * that at the checkout's root every view is the stored object itself.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	SAME_KEYS,
	checkEffectiveSpelling,
	checkReadSpelling,
	keyLens,
	patchFromModel,
	pointerToModel,
	recordsToModel,
	reportToModel,
	staleToModel,
	viewHistories,
	viewHistory,
	viewState,
} from "../../lib/core/artifact-keys.js";
import { isStateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import type { Locator } from "../../lib/core/locator.js";
import { emptyState } from "../../lib/core/state.js";
import type { OwnerHistory, PlanePatch, StageReport, TransitionRecord } from "../../lib/core/types.js";

const lens = keyLens("src");
const FILE = { kind: "file" };

function record(id: string, seq: number, patch: PlanePatch, undo: PlanePatch = {}): TransitionRecord {
	const cascades = [{ owner: "cwd" as const, intent: "i", targets: ['cwd.artifacts["src/gone.ts"]'] }];
	return { id, at: "t", seq, by: { kind: "command", command: "c" }, patch, undo, cascades, owners: ["cwd"] };
}

/** Keys of the artifacts plane of `h`'s state as the model is shown them. */
const shownKeys = (h: OwnerHistory, l = lens) => Object.keys(viewHistory(l, h).state.artifacts);

describe("checkReadSpelling", () => {
	const at = (over: Partial<Extract<Locator, { kind: "state" }>>): Locator => ({
		kind: "state",
		scope: "cwd",
		offset: 0,
		plane: "artifacts",
		path: ["./a.ts"],
		...over,
	});

	it("refuses a read of a CWD or Session artifact under a spelling the model is not shown, naming the one to use", () => {
		for (const scope of ["cwd", "session"] as const) {
			assert.throws(
				() => checkReadSpelling(lens, at({ scope }), `${scope}.artifacts["./a.ts"]`),
				(e) => isStateError(e) && e.code === "artifact" && e.message.startsWith(`\`${scope}.artifacts["./a.ts"]\` is spelled "a.ts" from the folder`),
			);
		}
		checkReadSpelling(lens, at({ path: ["a.ts", "kind"] }), 'cwd.artifacts["a.ts"].kind');
	});

	it("checks nothing else: at the root, Global's keys, other planes, the plane itself, patches", () => {
		checkReadSpelling(SAME_KEYS, at({}), "x");
		checkReadSpelling(lens, at({ scope: "global" }), "x");
		checkReadSpelling(lens, at({ plane: "tactics" }), "x");
		checkReadSpelling(lens, at({ path: [] }), "x");
		checkReadSpelling(lens, at({ path: [0] }), "x");
		checkReadSpelling(lens, { kind: "patches", owner: "cwd", index: 0, path: ["./a.ts"] }, "x");
	});
});

describe("checkEffectiveSpelling", () => {
	const deep = keyLens("src/deep");
	const effective = (key: string | number, over: Partial<Extract<Locator, { kind: "state" }>> = {}): Locator => ({
		kind: "state",
		scope: "effective",
		offset: 0,
		plane: "artifacts",
		path: [key, "note"],
		...over,
	});
	const holding = (owner: "global" | "cwd" | "session", keys: string[]): OwnerHistory => {
		const h = newHistory(owner, 20);
		h.state.artifacts = Object.fromEntries(keys.map((k) => [k, FILE]));
		return h;
	};
	const refusal = (text: string, shown: string) => (e: unknown) =>
		isStateError(e) &&
		e.code === "artifact" &&
		e.message ===
			`\`${text}\` is spelled ${JSON.stringify(shown)} from the folder pi runs in (src/deep/ in the checkout): read that key, the one the head and results use.`;

	it("refuses a key that names a CWD or Session entry shown under another spelling, naming the one to read", () => {
		for (const owner of ["cwd", "session"] as const) {
			const histories = { [owner]: holding(owner, ["src/a.ts"]) };
			// From the root (climbing out of src/deep first), from the folder with a detour, with `./`.
			for (const key of ["../../src/a.ts", "../../src/./a.ts", "./../a.ts", "../deep/../a.ts"]) {
				assert.throws(
					() => checkEffectiveSpelling(deep, effective(key), `effective.artifacts[${JSON.stringify(key)}]`, histories),
					refusal(`effective.artifacts[${JSON.stringify(key)}]`, "../a.ts"),
				);
			}
		}
	});

	it("leaves to evaluation a key the view holds: the spelling shown, Global's own key, an entry stored under the very text", () => {
		const cwd = holding("cwd", ["src/a.ts", "src/./b.ts"]);
		checkEffectiveSpelling(deep, effective("../a.ts"), "x", { cwd });
		// Global's keys are not lensed: a Global entry under the text is what the read finds.
		checkEffectiveSpelling(deep, effective("../../src/a.ts"), "x", { cwd, global: holding("global", ["../../src/a.ts"]) });
		// `src/./b.ts` is shown `../../src/./b.ts` (never merged with `src/b.ts`): that text names it,
		// also when `src/b.ts` is an entry too (shown `../b.ts`).
		checkEffectiveSpelling(deep, effective("../../src/./b.ts"), "x", { cwd });
		checkEffectiveSpelling(deep, effective("../../src/./b.ts"), "x", { cwd: holding("cwd", ["src/./b.ts", "src/b.ts"]) });
	});

	it("checks nothing where no entry is spelled otherwise: a missing file, an unavailable owner, at the root, other scopes and planes", () => {
		const histories = { cwd: holding("cwd", ["src/a.ts"]) };
		checkEffectiveSpelling(deep, effective("../../src/z.ts"), "x", histories);
		checkEffectiveSpelling(deep, effective("../../src/a.ts"), "x", {});
		checkEffectiveSpelling(SAME_KEYS, effective("./src/a.ts"), "x", histories);
		checkEffectiveSpelling(deep, effective("../../src/a.ts", { scope: "cwd" }), "x", histories);
		// A tactic keyed like a file is no artifact, even with an artifact of that file beside it.
		checkEffectiveSpelling(deep, effective("../../src/a.ts", { plane: "tactics" }), "x", histories);
		checkEffectiveSpelling(deep, effective("../../src/a.ts", { path: [] }), "x", histories);
		checkEffectiveSpelling(deep, effective(0), "x", histories);
		checkEffectiveSpelling(deep, effective(""), "x", { cwd: holding("cwd", ["src/deep"]) });
		checkEffectiveSpelling(deep, effective("/abs/a.ts"), "x", { cwd: holding("cwd", ["/abs/a.ts"]) });
		checkEffectiveSpelling(deep, { kind: "patches", owner: "cwd", index: 0, path: ["../../src/a.ts"] }, "x", histories);
	});
});

describe("viewState and staleToModel", () => {
	it("rewrites the artifacts plane's keys and references to CWD or Session artifacts only", () => {
		const state = emptyState();
		state.artifacts = { "src/a.ts": FILE };
		const kept = [{ $ref: "cwd.tactics.src" }, { $ref: 'global.artifacts["src/a.ts"]' }, { $ref: "cwd.artifacts" }, { $ref: "not a locator (artifacts" }];
		state.tactics = { t: { uses: [{ $ref: 'session.artifacts["src/a.ts"]' }, ...kept] }, plain: { note: "names nothing" } };
		const v = viewState(lens, "session", state);
		assert.deepEqual(Object.keys(v.artifacts), ["a.ts"]);
		assert.deepEqual(v.tactics.t, { uses: [{ $ref: 'session.artifacts["a.ts"]' }, ...kept] });
		assert.equal(v.tactics.plain, state.tactics.plain, "a value naming no artifact is shared, not copied");
		assert.equal(viewState(lens, "global", state), state, "Global's keys are the agent directory's");
		assert.equal(viewState(SAME_KEYS, "cwd", state), state);
	});

	it("shows a stale note's key as the model is shown it, for CWD and Session only", () => {
		for (const owner of ["cwd", "session"] as const) {
			assert.deepEqual(staleToModel(lens, { owner, key: "src/a.ts", note: "n" }), { owner, key: "a.ts", note: "n" });
		}
		const global = { owner: "global" as const, key: "src/a.ts", note: "n" };
		assert.equal(staleToModel(lens, global), global);
		const atRoot = { owner: "cwd" as const, key: "src/a.ts", note: "n" };
		assert.equal(staleToModel(SAME_KEYS, atRoot), atRoot);
	});
});

describe("viewHistory, viewHistories, recordsToModel", () => {
	it("rewrites each retained transition's patch, undo and cascades", () => {
		const h = newHistory("cwd", 20);
		h.tail = [record("x", 1, { artifacts: { "src/a.ts": FILE } }, { artifacts: { "src/a.ts": null } })];
		h.seq = 1;
		const [r] = viewHistory(lens, h).tail;
		assert.deepEqual(r?.undo, { artifacts: { "a.ts": null } });
		assert.deepEqual(r?.cascades, [{ owner: "cwd", intent: "i", targets: ['cwd.artifacts["gone.ts"]'] }]);
		const shown = recordsToModel(lens, {
			cwd: record("x", 1, { artifacts: { "src/a.ts": FILE } }),
			global: record("y", 1, { artifacts: { "src/a.ts": FILE } }),
		});
		assert.deepEqual(shown.cwd?.patch, { artifacts: { "a.ts": FILE } });
		assert.deepEqual(shown.global?.patch, { artifacts: { "src/a.ts": FILE } });
		const stored = { cwd: record("x", 1, {}) };
		assert.equal(recordsToModel(SAME_KEYS, stored), stored);
	});

	it("reuses the view of an unchanged history, and sees every change of seq, fold point or last transition", () => {
		const h = newHistory("cwd", 20);
		h.state.artifacts = { "src/a.ts": FILE };
		const first = viewHistory(lens, h);
		assert.deepEqual(Object.keys(first.state.artifacts), ["a.ts"], "a history with nothing retained");
		assert.equal(viewHistory(lens, h), first, "the same history, the same view");
		assert.deepEqual(shownKeys(h, keyLens("lib")), ["../src/a.ts"], "another folder, another view");
		h.state.artifacts = { "src/b.ts": FILE };
		h.seq = 1;
		h.tail = [record("x", 1, { artifacts: { "src/b.ts": FILE } })];
		assert.deepEqual(shownKeys(h), ["b.ts"], "a commit");
		h.state.artifacts = { "src/c.ts": FILE };
		h.tail = [record("y", 1, { artifacts: { "src/c.ts": FILE } })];
		assert.deepEqual(shownKeys(h), ["c.ts"], "the same seq and tail length with another last transition");
		h.state.artifacts = { "src/d.ts": FILE };
		h.checkpointSeq = 1;
		h.checkpoint.artifacts = { "src/c.ts": FILE };
		assert.deepEqual(shownKeys(h), ["d.ts"], "a fold");
	});

	it("views each wanted owner's history, skipping an owner without one", () => {
		const cwd = newHistory("cwd", 20);
		cwd.state.artifacts = { "src/a.ts": FILE };
		const global = newHistory("global", 20);
		const views = viewHistories(lens, { cwd, global, session: undefined });
		assert.deepEqual(Object.keys(views), ["cwd", "global"]);
		assert.deepEqual(Object.keys(views.cwd?.state.artifacts ?? {}), ["a.ts"]);
		assert.equal(views.global, global);
		const stored = { cwd };
		assert.equal(viewHistories(SAME_KEYS, stored), stored);
	});
});

describe("patchFromModel, pointerToModel, reportToModel", () => {
	it("stores a Session patch's keys too, names the entry a refusal is about, and passes over an absent plane", () => {
		assert.deepEqual(patchFromModel(lens, { session: { artifacts: { "a.ts": FILE } } }), { session: { artifacts: { "src/a.ts": FILE } } });
		assert.throws(
			() => patchFromModel(lens, { cwd: { artifacts: { "./a.ts": FILE } } }),
			(e) => isStateError(e) && e.message.startsWith('`cwd.artifacts["./a.ts"]` is spelled "a.ts"'),
		);
		assert.deepEqual(patchFromModel(lens, { cwd: { artifacts: { "a.ts": FILE }, tactics: undefined } }), {
			cwd: { artifacts: { "src/a.ts": FILE }, tactics: undefined },
		});
		const patch = { cwd: { artifacts: { "a.ts": FILE } } };
		assert.equal(patchFromModel(SAME_KEYS, patch), patch);
	});

	it("rewrites a pointer into a CWD or Session artifact only", () => {
		assert.equal(pointerToModel(lens, "/session/artifacts/src~1a.ts"), "/session/artifacts/a.ts");
		assert.equal(pointerToModel(lens, "/cwd/tactics/src"), "/cwd/tactics/src");
		assert.equal(pointerToModel(lens, "/cwd/artifacts"), "/cwd/artifacts");
	});

	it("rewrites missing deletions and a dangling reference's drop patch; a reference without one stays without", () => {
		const report: StageReport = {
			scopes: ["cwd"],
			changed: [],
			missingDeletions: ["/cwd/artifacts/src~1a.ts"],
			cascades: [],
			danglingRefs: [
				{ owner: "cwd", intent: "i", ref: 'cwd.artifacts["src/a.ts"]', drop: { uses: [{ $ref: 'cwd.artifacts["src/b.ts"]' }] } },
				{ owner: "cwd", intent: "j", ref: 'cwd.artifacts["src/a.ts"]' },
			],
		};
		const shown = reportToModel(lens, report);
		assert.deepEqual(shown.missingDeletions, ["/cwd/artifacts/a.ts"]);
		assert.deepEqual(shown.danglingRefs, [
			{ owner: "cwd", intent: "i", ref: 'cwd.artifacts["a.ts"]', drop: { uses: [{ $ref: 'cwd.artifacts["b.ts"]' }] } },
			{ owner: "cwd", intent: "j", ref: 'cwd.artifacts["a.ts"]' },
		]);
		assert.equal(reportToModel(SAME_KEYS, report), report);
	});
});
