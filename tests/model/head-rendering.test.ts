/**
 * The head renderer over histories built by the real engine: content and order, flat and
 * scoped spelling, determinism, and bootstrap detection. The budget laws are in head.test.ts.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CanonicalPatch } from "../../lib/core/types.js";
import { HEAD_CLOSE, HEAD_OPEN, isBootstrap, renderHead } from "../../lib/model/head.js";
import { utf8Bytes } from "../../lib/core/size.js";
import { build } from "./head-fixture.js";

const BODY = "the full plan body, never shown in the head ".repeat(4);
const FIXTURE: CanonicalPatch[] = [
	{
		cwd: {
			intents: { login: { goal: "fix login", owns: [{ $ref: "cwd.tactics.t1" }, { $ref: "cwd.tactics.t2" }] } },
			tactics: { t1: "reproduce", t2: "patch" },
		},
	},
	{ cwd: { tactics: { t2: null }, lazy: { "notes/plan.md": BODY }, artifacts: { "src/a.ts": { kind: "file" } } } },
	{ cwd: { strategy: { approach: "smallest fix first" } }, session: { tactics: { s1: { $ref: 'cwd.lazy["notes/plan.md"]' } } } },
];

describe("head rendering", () => {
	it("shows the flat owner's planes in stable order, lazy as a catalog, refs relative, flags and recent keys", () => {
		const histories = build(
			["cwd"],
			FIXTURE.map((p) => ({ cwd: p.cwd ?? {} })),
		);
		const head = renderHead({
			mode: "active",
			wanted: ["cwd"],
			histories,
			budget: 8192,
			staleArtifacts: [{ owner: "cwd", key: "src/a.ts", note: "file changed since recorded" }],
		});
		const lines = head.split("\n");
		assert.equal(lines[0], HEAD_OPEN);
		assert.equal(lines.at(-1), HEAD_CLOSE);
		assert.equal(lines[1], "# cwd seq 3");
		assert.deepEqual(
			lines.slice(2, 7).map((l) => l.split(/[ :]/)[0]),
			["intents", "strategy", "tactics", "artifacts", "lazy"],
		);
		// Ownership is one string naming the references, relative in flat form; storage keeps the array.
		assert.equal(lines[2], 'intents: {"login":{"goal":"fix login","owns":"refs: tactics.t1, tactics.t2"}}');
		assert.equal(lines[6], `lazy (catalog, bytes): {"notes/plan.md":${utf8Bytes(JSON.stringify(BODY))}}`);
		assert.ok(!head.includes("never shown"), "no lazy body in the head");
		assert.ok(lines.includes("! dangling ref: intents.login -> tactics.t2 (missing)"));
		assert.ok(lines.includes('! stale artifact: artifacts["src/a.ts"]: file changed since recorded'));
		const recent = lines.slice(lines.indexOf("recent transitions (newest first):") + 1, -1);
		assert.deepEqual(recent, [
			"- #3 2026-01-01T00:02:00.000Z set strategy.approach",
			'- #2 2026-01-01T00:01:00.000Z set artifacts["src/a.ts"], lazy["notes/plan.md"]; del tactics.t2',
			"- #1 2026-01-01T00:00:00.000Z set intents.login, tactics.t1, tactics.t2",
		]);
	});

	it("shows artifacts without the compiler's bookkeeping (read_state has it) and every other plane as stored", () => {
		const skill = {
			kind: "skill",
			name: "lint-fix",
			description: "Fix lint",
			compiledTo: ".pi/skills/lint-fix/SKILL.md",
			compiledHash: "a".repeat(64),
			sourceHash: "b".repeat(64),
			fingerprint: { size: 120, mtimeMs: 1764598765432.5 },
			provenance: { acquiredFrom: "/home/me/proj/vendor/lint/SKILL.md" },
		};
		const histories = build(
			["cwd"],
			[
				{
					cwd: {
						artifacts: { "vendor/lint/SKILL.md": skill, "src/app.ts": { kind: "file", note: "entry", fingerprint: { size: 3, mtimeMs: 4 } } },
						tactics: { check: { fingerprint: "kept: a tactic's own field" } },
					},
				},
			],
		);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 8192 });
		assert.ok(
			head.includes(
				'artifacts: {"src/app.ts":{"kind":"file","note":"entry"},"vendor/lint/SKILL.md":{"kind":"skill","name":"lint-fix","description":"Fix lint","compiledTo":".pi/skills/lint-fix/SKILL.md"}}',
			),
			head,
		);
		assert.ok(head.includes('tactics: {"check":{"fingerprint":"kept: a tactic\'s own field"}}'), head);
		assert.ok(!/compiledHash|sourceHash|acquiredFrom|mtimeMs/.test(head));
	});

	it("shows no recent transitions in Passive mode", () => {
		const histories = build(
			["cwd"],
			FIXTURE.map((p) => ({ cwd: p.cwd ?? {} })),
		);
		const head = renderHead({ mode: "passive", wanted: ["cwd"], histories, budget: 8192 });
		assert.ok(!head.includes("recent transitions"));
		assert.ok(!head.includes("2026-01-01"));
	});

	it("qualifies every scoped locator, keeps refs as stored and never shows an excluded owner", () => {
		const histories = build(["global", "cwd", "session"], [{ global: { strategy: { secret: "global only" } } }, ...FIXTURE]);
		const head = renderHead({ mode: "active", wanted: ["session", "cwd"], histories, budget: 8192, recent: 2 });
		assert.ok(!head.includes("global only") && !head.includes("# global"));
		const lines = head.split("\n");
		assert.ok(lines.indexOf("# cwd seq 3") < lines.indexOf("# session seq 1"));
		assert.ok(lines.includes('session.tactics: {"s1":{"$ref":"cwd.lazy[\\"notes/plan.md\\"]"}}'));
		assert.ok(lines.includes("! dangling ref: cwd.intents.login -> cwd.tactics.t2 (missing)"));
		assert.ok(lines.includes("- session#1 2026-01-01T00:03:00.000Z set session.tactics.s1"));
		assert.ok(lines.includes("- cwd#3 2026-01-01T00:03:00.000Z set cwd.strategy.approach"));
		assert.ok(!lines.some((l) => l.startsWith("- cwd#2")), "only the last two transitions");
	});

	it("renders the same bytes for the same input, whatever the owner order, without touching the histories", () => {
		const histories = build(["cwd", "session"], FIXTURE);
		const before = JSON.stringify(histories);
		const a = renderHead({ mode: "active", wanted: ["cwd", "session"], histories, budget: 300 });
		const b = renderHead({ mode: "active", wanted: ["session", "cwd"], histories, budget: 300 });
		assert.equal(a, b);
		assert.equal(JSON.stringify(histories), before);
	});

	it("marks an owner that was never written or is emptied as empty", () => {
		const histories = build(["cwd"], [{ cwd: { tactics: { a: 1 } } }, { cwd: { tactics: { a: null } } }]);
		assert.equal(
			renderHead({ mode: "passive", wanted: ["cwd", "session"], histories, budget: 8192 }),
			`${HEAD_OPEN}\n# cwd seq 2 (empty)\n# session seq 0 (empty)\n${HEAD_CLOSE}`,
		);
	});
});

describe("isBootstrap", () => {
	it("is true only while every wanted owner has no plane entry", () => {
		assert.equal(isBootstrap({}, ["cwd", "session"]), true);
		const written = build(["global", "cwd"], [{ global: { intents: { a: 1 } } }]);
		assert.equal(isBootstrap(written, ["cwd"]), true, "an excluded owner's entries do not count");
		assert.equal(isBootstrap(written, ["global", "cwd"]), false);
		const emptied = build(["cwd"], [{ cwd: { lazy: { a: "x" } } }, { cwd: { lazy: { a: null } } }]);
		assert.equal(isBootstrap(emptied, ["cwd"]), true, "history does not count");
	});
});
