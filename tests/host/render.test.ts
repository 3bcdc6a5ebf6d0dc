/**
 * The TUI renderers, rendered to strings through pi-tui's real `Text` component with a
 * real pi `Theme` (every colour mapped to a distinct 256-colour code, so colour use is checkable).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { type Component, visibleWidth } from "@mariozechner/pi-tui";
import {
	changedLocators,
	readLocators,
	renderPatchCall,
	renderPatchResult,
	renderReadCall,
	renderReadResult,
	summarizePatchArgs,
} from "../../lib/host/tools/render.js";
import { code, draw, plain, raw, theme } from "../helpers/render-theme.js";

const text = (t: string) => [{ type: "text", text: t }];

const patchDetails = {
	transitionId: "0b9f5c1e-1111-4222-8333-944445555666",
	scopes: ["cwd"],
	changed: ["/cwd/tactics/a", "/cwd/tactics/b", "/cwd/tactics/c", "/cwd/tactics/d", "/cwd/tactics/e", "/cwd/tactics/f"],
	missingDeletions: ["/cwd/lazy/old"],
	cascades: [{ owner: "cwd", intent: "ship", targets: ["cwd.tactics.step1", "cwd.lazy.plan"] }],
	danglingRefs: [{ owner: "cwd", intent: "keep", ref: "cwd.tactics.gone" }],
	artifacts: [],
};

describe("renderer signatures", () => {
	it("fit pi's ToolDefinition renderCall/renderResult slots", () => {
		const slots: Array<Pick<ToolDefinition, "renderCall" | "renderResult">> = [
			{ renderCall: renderPatchCall, renderResult: renderPatchResult },
			{ renderCall: renderReadCall, renderResult: renderReadResult },
		];
		assert.equal(slots.length, 2);
	});
});

describe("renderPatchCall", () => {
	it("shows the tool name and the flat keys it touches, marking deletions", () => {
		const lines = draw(renderPatchCall({ tactics: { ready: true, old: null }, intents: {} }, theme));
		assert.deepEqual(lines, ["patch_state tactics.ready, tactics.old (delete), intents (no-op)"]);
	});

	it("prefixes scoped keys with their owner and quotes keys that are not identifiers", () => {
		const lines = draw(renderPatchCall({ cwd: { lazy: { "notes/a.md": "x" } }, session: { tactics: { t: 1 } } }, theme));
		assert.deepEqual(lines, ['patch_state cwd.lazy["notes/a.md"], session.tactics.t']);
	});

	it("collapses long key lists to a count and expands to the full arguments", () => {
		const args = { tactics: Object.fromEntries(["a", "b", "c", "d", "e", "f"].map((k) => [k, 1])) };
		assert.deepEqual(draw(renderPatchCall(args, theme)), ["patch_state tactics.a, tactics.b, tactics.c, tactics.d +2"]);
		const expanded = draw(renderPatchCall(args, theme, { expanded: true }));
		assert.equal(expanded[0], "patch_state");
		assert.deepEqual(JSON.parse(expanded.slice(1).join("\n")), args);
	});

	it("renders streaming or malformed arguments without throwing", () => {
		for (const args of [undefined, null, "{", 42, [], {}]) {
			assert.deepEqual(draw(renderPatchCall(args, theme)), ["patch_state …"]);
		}
	});

	it("keeps __proto__ keys as data when summarizing", () => {
		const args = JSON.parse('{"tactics":{"__proto__":{"x":1}}}') as unknown;
		assert.deepEqual(summarizePatchArgs(args), ["tactics.__proto__"]);
		assert.equal(({} as Record<string, unknown>).x, undefined);
	});
});

describe("renderPatchResult", () => {
	const result = { content: text("Committed 0b9f5c1e…: changed /tactics/a …"), details: patchDetails };

	it("summarizes owner, change count, short id, first paths, cascades, missing deletions and dangling refs", () => {
		const lines = draw(renderPatchResult(result, { expanded: false, isPartial: false }, theme, { isError: false }));
		assert.deepEqual(lines, [
			"✓ · cwd · 6 changed · 0b9f5c1e",
			"  cwd.tactics.a",
			"  cwd.tactics.b",
			"  cwd.tactics.c",
			"  cwd.tactics.d",
			"  … 2 more",
			"cascaded:",
			"  cwd.intents.ship → cwd.tactics.step1, cwd.lazy.plan",
			"already absent:",
			"  cwd.lazy.old",
			"dangling refs:",
			"  cwd.intents.keep → cwd.tactics.gone",
		]);
	});

	it("expands to every path, each shown once, and the full transition id", () => {
		const lines = draw(renderPatchResult(result, { expanded: true, isPartial: false }, theme, { isError: false }));
		assert.equal(lines[0], `✓ · cwd · 6 changed · ${patchDetails.transitionId}`);
		for (const p of patchDetails.changed) {
			const loc = `cwd.tactics.${p.slice("/cwd/tactics/".length)}`;
			assert.equal(lines.filter((l) => l.trim() === loc).length, 1, loc);
		}
		assert.ok(!lines.some((l) => l.includes("more")));
		assert.ok(!lines.some((l) => l.includes("Committed")), "the model-facing prose is not repeated");
	});

	it("shows an error's first line in the error colour, and the whole message expanded", () => {
		const err = { content: text("`tactics` must be an object.\nSend { tactics: { … } }."), details: {} };
		const collapsed = renderPatchResult(err, { expanded: false, isPartial: false }, theme, { isError: true });
		assert.deepEqual(draw(collapsed), ["`tactics` must be an object.…"]);
		assert.ok(raw(collapsed).includes(code("error")));
		const full = draw(renderPatchResult(err, { expanded: true, isPartial: false }, theme, { isError: true }));
		assert.deepEqual(full, ["`tactics` must be an object.", "Send { tactics: { … } }."]);
	});

	it("shows the result text for a no-op that committed nothing", () => {
		const noop = { content: text("No change: the patch matches the current state."), details: { changed: [], scopes: [] } };
		assert.deepEqual(draw(renderPatchResult(noop, { expanded: false, isPartial: false }, theme)), ["No change: the patch matches the current state."]);
	});

	it("always shows concurrent-change notices, collapsed or not", () => {
		const withNotice = {
			content: text("ok"),
			details: {
				...patchDetails,
				changed: ["/cwd/tactics/a"],
				cascades: [],
				missingDeletions: [],
				danglingRefs: [],
				notices: ["cwd changed since the head: /cwd/tactics/x"],
			},
		};
		for (const expanded of [false, true]) {
			const lines = draw(renderPatchResult(withNotice, { expanded, isPartial: false }, theme));
			assert.ok(lines.includes("! cwd changed since the head: /cwd/tactics/x"), String(expanded));
		}
		const read = { content: text("{}"), details: { canonical: ["cwd.tactics"], notices: ["global changed"] } };
		assert.equal(draw(renderReadResult(read, { expanded: false, isPartial: false }, theme))[1], "! global changed");
	});

	it("lists what the artifact compiler did, with where a Skill compiled to when that is another path", () => {
		const artifacts = [
			{ owner: "cwd", key: "vendor/lint/SKILL.md", action: "acquired", compiledTo: ".pi/skills/lint/SKILL.md" },
			{ owner: "cwd", key: ".pi/skills/notes/SKILL.md", action: "compiled", compiledTo: ".pi/skills/notes/SKILL.md" },
			{ owner: "global", key: "old.md", action: "removed" },
		];
		const withArtifacts = {
			content: text("ok"),
			details: { ...patchDetails, changed: ["/cwd/artifacts/x"], cascades: [], missingDeletions: [], danglingRefs: [], artifacts },
		};
		assert.deepEqual(draw(renderPatchResult(withArtifacts, { expanded: false, isPartial: false }, theme)).slice(2), [
			"artifacts:",
			'  cwd.artifacts["vendor/lint/SKILL.md"] acquired → .pi/skills/lint/SKILL.md',
			'  cwd.artifacts[".pi/skills/notes/SKILL.md"] compiled',
			'  global.artifacts["old.md"] removed',
		]);
	});

	it("names changed paths as the user types them: no pointer escapes, a registered root beside the planes, bookkeeping as one refreshed line", () => {
		const changed = [
			"/cwd/artifacts/src~1parse.js/fingerprint/size",
			"/cwd/artifacts/src~1parse.js/fingerprint/mtimeMs",
			"/cwd/artifacts/src~1parse.js/sourceHash",
			"/cwd/artifacts/docs~1a.md/note",
			"/cwd/artifacts/docs~1a.md/fingerprint/size",
			"/cwd/roots/todos/t1/done",
			"/session/lazy/notes~1x~0y.md",
			"/cwd/tactics/a b",
		];
		assert.deepEqual(changedLocators(changed), [
			'cwd.artifacts["src/parse.js"] refreshed',
			'cwd.artifacts["docs/a.md"].note',
			"cwd.todos.t1.done",
			'session.lazy["notes/x~y.md"]',
			'cwd.tactics["a b"]',
		]);
		const refreshed = {
			content: text("ok"),
			details: { ...patchDetails, changed: changed.slice(0, 3), cascades: [], missingDeletions: [], danglingRefs: [] },
		};
		for (const expanded of [false, true]) {
			const lines = draw(renderPatchResult(refreshed, { expanded, isPartial: false }, theme));
			assert.equal(lines[0]?.replace(/ · [0-9a-f-]+$/, ""), "✓ · cwd · 1 changed");
			assert.deepEqual(lines.slice(1), ['  cwd.artifacts["src/parse.js"] refreshed']);
			assert.ok(!lines.some((l) => /~1|fingerprint|mtimeMs|sourceHash|size/.test(l)), lines.join("\n"));
		}
	});

	it("shows a progress line while the result is partial", () => {
		assert.deepEqual(draw(renderPatchResult({ content: [] }, { expanded: false, isPartial: true }, theme)), ["Writing state…"]);
	});

	it("wraps to the given width instead of overflowing", () => {
		const lines = renderPatchResult(result, { expanded: true, isPartial: false }, theme).render(20);
		for (const l of lines) assert.ok(plain(l).length <= 20, JSON.stringify(plain(l)));
	});
});

describe("renderReadCall", () => {
	it("shows a single path, a batch in request order and a non-default projection", () => {
		assert.deepEqual(draw(renderReadCall({ path: "tactics" }, theme)), ["read_state tactics"]);
		assert.deepEqual(draw(renderReadCall({ paths: ["lazy.plan", "cwd[1].tactics"], projection: "keys" }, theme)), [
			"read_state lazy.plan, cwd[1].tactics [keys]",
		]);
		assert.deepEqual(readLocators({ paths: ["b", "a", 3] }), ["b", "a"]);
		assert.deepEqual(draw(renderReadCall(null, theme)), ["read_state …"]);
	});
});

describe("renderReadResult", () => {
	const body = JSON.stringify({ a: 1, b: [1, 2], c: { d: "x" } }, null, 2);
	const result = { content: text(body), details: { canonical: ["cwd.tactics"], transitionId: "abcdef0123456789" } };

	it("shows the byte size and the first lines collapsed", () => {
		const lines = draw(renderReadResult(result, { expanded: false, isPartial: false }, theme, { isError: false }));
		assert.equal(lines[0], `✓ · ${Buffer.byteLength(body)} bytes · abcdef01`);
		assert.deepEqual(lines.slice(1, 4), body.split("\n").slice(0, 3));
		assert.equal(lines[4], `… ${body.split("\n").length - 3} more lines`);
	});

	it("expands to the canonical locators and the whole text", () => {
		const lines = draw(renderReadResult(result, { expanded: true, isPartial: false }, theme));
		assert.equal(lines[1], "canonical: cwd.tactics");
		assert.deepEqual(JSON.parse(lines.slice(2).join("\n")), JSON.parse(body));
	});

	it("renders a refused read as an error", () => {
		const err = { content: text("`cwd` is not a wanted owner; read `session.…` instead."), details: {} };
		const c = renderReadResult(err, { expanded: false, isPartial: false }, theme, { isError: true });
		assert.deepEqual(draw(c), ["`cwd` is not a wanted owner; read `session.…` instead."]);
		assert.ok(raw(c).includes(code("error")));
	});
});

describe("every renderer at 80 and 120 columns", () => {
	const longArgs = {
		cwd: { tactics: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`step_${i}_${"x".repeat(20)}`, i])) },
		session: { lazy: { "notes/a very long key name.md": "y" } },
	};
	const readText = JSON.stringify({ tactics: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, "v".repeat(150)])) }, null, 2);
	const cases: Array<[string, (expanded: boolean) => Component]> = [
		["patch_state call", (expanded) => renderPatchCall(longArgs, theme, { expanded })],
		[
			"patch_state result",
			(expanded) => renderPatchResult({ content: text("Committed."), details: patchDetails }, { expanded, isPartial: false }, theme, { isError: false }),
		],
		["read_state call", (expanded) => renderReadCall({ paths: ["tactics", "lazy.plan", "cwd.intents.ship", "strategy", "artifacts"] }, theme, { expanded })],
		[
			"read_state result",
			(expanded) =>
				renderReadResult({ content: text(readText), details: { canonical: ["cwd.tactics"] } }, { expanded, isPartial: false }, theme, { isError: false }),
		],
	];
	for (const [name, make] of cases) {
		it(`${name} fits, collapsed and expanded`, () => {
			for (const width of [80, 120]) {
				for (const expanded of [false, true]) {
					const lines = make(expanded).render(width);
					assert.ok(lines.length > 0);
					for (const l of lines) assert.ok(visibleWidth(l) <= width, `${name} ${width} ${expanded}: ${JSON.stringify(plain(l))}`);
				}
			}
		});
	}
});
