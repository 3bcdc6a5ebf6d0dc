/**
 * The artifact-key lens (issue 25): a stored key (relative to the checkout's root) shown to a
 * session in a subfolder names the same file from that folder, comes back exactly as stored,
 * and no two stored keys are ever shown alike. Laws by fast-check; the rest by example.
 */
import assert from "node:assert/strict";
import { posix } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { SAME_KEYS, keyLens, patchFromModel, pointerToModel, reportToModel, viewHistory } from "../../lib/core/artifact-keys.js";
import { isStateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import type { OwnerHistory } from "../../lib/core/types.js";

const segment = fc.constantFrom("src", "lib", "a.ts", ".", "..", "", ".pi", "skills", "x y", "ü");
const relKey = fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => s.join("/"));
/** Keys a store can hold: inside the checkout (the compiler refuses any other), or absolute. */
const inside = (k: string) => posix.resolve("/repo", k).startsWith("/repo/");
const storedKey = fc.oneof(
	relKey.filter(inside),
	relKey.map((k) => `/abs/${k}`),
);
const base = fc.array(fc.constantFrom("src", "lib", "deep", "a.b"), { minLength: 1, maxLength: 3 }).map((s) => s.join("/"));
const ROOT = "/repo";

describe("keyLens", () => {
	it("gives back every stored key exactly: fromModel(toModel(k)) === k", () => {
		fc.assert(
			fc.property(base, storedKey, (b, k) => {
				const lens = keyLens(b);
				assert.equal(lens.fromModel(lens.toModel(k), "f"), k);
			}),
		);
	});

	it("never shows two stored keys alike", () => {
		fc.assert(
			fc.property(base, storedKey, storedKey, (b, k1, k2) => {
				fc.pre(k1 !== k2);
				const lens = keyLens(b);
				assert.notEqual(lens.toModel(k1), lens.toModel(k2));
			}),
		);
	});

	it("shows a path that names the same file from the folder pi runs in", () => {
		fc.assert(
			fc.property(base, relKey.filter(inside), (b, k) => {
				const shown = keyLens(b).toModel(k);
				assert.equal(posix.resolve(ROOT, b, shown), posix.resolve(ROOT, k));
			}),
		);
	});

	it("stores what the model writes as the path from the checkout's root to the same file", () => {
		fc.assert(
			fc.property(base, relKey, (b, written) => {
				fc.pre(posix.resolve(ROOT, b, written).startsWith(`${ROOT}/`));
				const stored = keyLens(b).fromModel(written, "f");
				assert.equal(posix.resolve(ROOT, stored), posix.resolve(ROOT, b, written));
			}),
		);
	});

	it("shows plain keys below the folder short, others from the root, and refuses a key that leaves the checkout", () => {
		const lens = keyLens("src");
		assert.equal(lens.toModel("src/a.ts"), "a.ts");
		assert.equal(lens.toModel("README.md"), "../README.md");
		assert.equal(lens.toModel("src/./a.ts"), "../src/./a.ts", "not merged with src/a.ts");
		assert.equal(lens.toModel("/etc/x"), "/etc/x");
		assert.equal(lens.fromModel("lib/b.ts", "f"), "src/lib/b.ts");
		assert.equal(lens.fromModel("../.pi/skills/x/SKILL.md", "f"), ".pi/skills/x/SKILL.md");
		assert.throws(
			() => lens.fromModel("../../other/a.ts", '`artifacts["../../other/a.ts"]`'),
			(e) => isStateError(e) && e.code === "artifact" && /artifacts\["\.\.\/\.\.\/other\/a\.ts"\]` leaves the repository/.test(e.message),
		);
		assert.equal(keyLens(""), SAME_KEYS);
		assert.equal(keyLens("."), SAME_KEYS);
	});
});

describe("the model's view of state, patches and reports", () => {
	it("rebases the artifacts plane, references to artifacts and retained transitions; other owners and planes untouched", () => {
		const lens = keyLens("src");
		const h: OwnerHistory = newHistory("cwd", 20);
		h.state.artifacts = { "src/a.ts": { kind: "file" }, "README.md": { kind: "file" } };
		h.state.tactics = { t: { uses: { $ref: 'cwd.artifacts["src/a.ts"]' }, note: "src/a.ts stays text" } };
		h.tail = [
			{
				id: "x",
				at: "t",
				seq: 1,
				by: { kind: "command", command: "c" },
				patch: { artifacts: { "src/a.ts": { kind: "file" } } },
				undo: { artifacts: { "src/a.ts": null } },
				cascades: [],
				owners: ["cwd"],
			},
		];
		h.seq = 1;
		const v = viewHistory(lens, h);
		assert.deepEqual(Object.keys(v.state.artifacts), ["a.ts", "../README.md"]);
		assert.deepEqual(v.state.tactics, { t: { uses: { $ref: 'cwd.artifacts["a.ts"]' }, note: "src/a.ts stays text" } });
		assert.deepEqual(v.tail[0]?.patch, { artifacts: { "a.ts": { kind: "file" } } });
		assert.deepEqual(Object.keys(h.state.artifacts), ["src/a.ts", "README.md"], "the stored history is not touched");
		const g = newHistory("global", 20);
		g.state.artifacts = { "skills/x/SKILL.md": { kind: "skill" } };
		assert.equal(viewHistory(lens, g), g, "Global's keys are the agent directory's");
		assert.equal(viewHistory(SAME_KEYS, h), h, "at the root the view is the history itself");
	});

	it("turns a patch the model wrote back into stored keys, references included", () => {
		const lens = keyLens("src");
		const patch = patchFromModel(lens, {
			cwd: { artifacts: { "b.ts": { kind: "file" }, "../old.ts": null }, tactics: { t: { $ref: 'cwd.artifacts["b.ts"]' } } },
			global: { artifacts: { "skills/y/SKILL.md": { kind: "skill" } } },
		});
		assert.deepEqual(patch, {
			cwd: { artifacts: { "src/b.ts": { kind: "file" }, "old.ts": null }, tactics: { t: { $ref: 'cwd.artifacts["src/b.ts"]' } } },
			global: { artifacts: { "skills/y/SKILL.md": { kind: "skill" } } },
		});
	});

	it("spells a commit's pointers and references in the model's keys", () => {
		const lens = keyLens("src");
		assert.equal(pointerToModel(lens, "/cwd/artifacts/src~1a.ts/kind"), "/cwd/artifacts/a.ts/kind");
		assert.equal(pointerToModel(lens, "/global/artifacts/src~1a.ts"), "/global/artifacts/src~1a.ts");
		const report = reportToModel(lens, {
			scopes: ["cwd"],
			changed: ["/cwd/artifacts/README.md"],
			missingDeletions: [],
			cascades: [{ owner: "cwd", intent: "i", targets: ['cwd.artifacts["src/a.ts"]'] }],
			danglingRefs: [{ owner: "cwd", intent: "i", ref: 'cwd.artifacts["src/a.ts"]', drop: { uses: null } }],
		});
		assert.deepEqual(report.changed, ["/cwd/artifacts/..~1README.md"]);
		assert.deepEqual(report.cascades[0]?.targets, ['cwd.artifacts["a.ts"]']);
		assert.equal(report.danglingRefs[0]?.ref, 'cwd.artifacts["a.ts"]');
	});
});
