/**
 * Rendering is bounded by the screen, not the value (issue 24): pi-tui's word wrap is worse than
 * quadratic in a run without a space, so every view of stored text hands it at most what the
 * screen can show, with a marker saying what was left out. Asserted structurally (rows and
 * characters reaching pi-tui, with real pi-tui components at 80 and 120 columns); the wall clock
 * of the same views is recorded by `scripts/render-bound.ts` (speed is measured, not asserted).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import type { Component } from "@mariozechner/pi-tui";
import { emptyState } from "../../lib/core/state.js";
import { DEFAULT_LIMITS, type OwnerHistory } from "../../lib/core/types.js";
import { StateBrowser } from "../../lib/host/browser/state-browser.js";
import { fitList } from "../../lib/host/commands/status.js";
import { OUTPUT_ROWS, renderOutput } from "../../lib/host/commands/output.js";
import { COLLAPSED_ROWS, EXPANDED_ROWS, renderPatchCall, renderPatchResult, renderReadCall, renderReadResult } from "../../lib/host/tools/render.js";
import { boundNotice, fitScreen, NOTICE_ROWS, NOTICE_WIDTH } from "../../lib/host/screen-text.js";
import { plain, theme, widest } from "../helpers/render-theme.js";

const WIDTHS = [80, 120];
/** 60 KB, 1 MB and a value at the owner's size limit; unbroken ASCII, wide and accented characters. */
const SIZES = [60_000, 1_000_000, DEFAULT_LIMITS.maxOwnerBytes - 1_000];
const VALUES = SIZES.flatMap((n) =>
	[
		["x", 1],
		["日", 3],
		["é", 2],
	].map(([c, b]) => (c as string).repeat(Math.floor(n / (b as number)))),
);

/** Lines drawn and characters in them: what the screen got. */
function drawn(c: Component, width: number): { lines: string[]; chars: number } {
	const lines = c.render(width).map(plain);
	return { lines, chars: lines.reduce((n, l) => n + l.length, 0) };
}

/** A view of at most `rows` rows: at most twice that many drawn (word wrap), plus the marker, each within the width. */
function assertBounded(c: Component, width: number, rows: number, label: string): string {
	const { lines, chars } = drawn(c, width);
	assert.ok(lines.length <= 2 * rows + 2, `${label} at ${width}: ${lines.length} lines for ${rows} rows`);
	assert.ok(chars <= (2 * rows + 2) * width, `${label} at ${width}: ${chars} characters drawn`);
	assert.ok(widest(c, width) <= width, `${label} fits ${width} columns`);
	return lines.join("\n");
}

describe("rendering bounded by the screen", () => {
	it("property: fitScreen keeps at most rows × width columns, breaks every run at the width, and drops nothing it keeps", () => {
		assertProperty(
			fc.property(
				fc.string({ unit: fc.constantFrom("a", " ", "\n", "日", "é", "\u0301", "😀", "b") }),
				fc.integer({ min: 1, max: 40 }),
				fc.integer({ min: 1, max: 12 }),
				(text, width, rows) => {
					const fitted = fitScreen(text, width, rows);
					const lines = fitted.text.split("\n");
					assert.ok(lines.length <= rows, "rows");
					// A character wider than the width still takes a row of its own.
					const room = Math.max(width, 2);
					for (const line of lines) for (const run of line.split(" ")) assert.ok(run.length <= room, `run ${JSON.stringify(run)} within ${width}`);
					assert.ok(fitted.text.replace(/\n/g, "").length <= rows * room, "characters");
					// Only line breaks were put in: without them, what is kept is the text's beginning.
					assert.ok(text.replace(/\n/g, "").startsWith(fitted.text.replace(/\n/g, "")), "a prefix");
					const kept = fitted.text.replace(/\n/g, "").length;
					const all = text.replace(/\n/g, "").length;
					// What is left out is counted: the characters kept and left add up to the text's.
					assert.equal(kept + (fitted.left?.chars ?? 0), all);
				},
			),
			{ numRuns: 400 },
		);
		const cut = fitScreen(`${"a".repeat(100)}\nsecond\nthird`, 10, 3);
		assert.deepEqual(cut.left, { lines: 3, chars: 70 + 11 });
	});

	it("the tools' views of a value of 60 KB, 1 MB and the size limit stay within their rows, with a marker", () => {
		for (const value of VALUES) {
			const json = JSON.stringify({ "cwd.lazy.big": value });
			const result = { content: [{ type: "text", text: json }], details: { canonical: ["cwd.lazy.big"] } };
			const key = value.slice(0, DEFAULT_LIMITS.maxKeyLength);
			const patch = { cwd: { lazy: { [key]: value } } };
			const patched = { content: [{ type: "text", text: "ok" }], details: { changed: [`cwd.lazy.${key}`], transitionId: "t1" } };
			for (const width of WIDTHS) {
				for (const expanded of [false, true]) {
					const rows = expanded ? EXPANDED_ROWS : COLLAPSED_ROWS;
					const label = `${value.length}×${value[0]} ${expanded ? "expanded" : "collapsed"}`;
					const read = assertBounded(renderReadResult(result, { expanded, isPartial: false }, theme), width, rows, `read_state result ${label}`);
					assert.match(read, /✓ · \d+ bytes/);
					assert.match(read, /not shown/, "says what was left out");
					assertBounded(renderReadCall({ path: value }, theme, { expanded }), width, rows, `read_state call ${label}`);
					const call = assertBounded(renderPatchCall(patch, theme, { expanded }), width, rows, `patch_state call ${label}`);
					if (expanded) assert.match(call, /not shown/);
					assertBounded(renderPatchResult(patched, { expanded, isPartial: false }, theme), width, rows, `patch_state result ${label}`);
				}
				const show = assertBounded(
					renderOutput(JSON.stringify({ lazy: { big: value } }, null, 2), { title: "show", level: "info" }, theme),
					width,
					OUTPUT_ROWS,
					"/state show",
				);
				assert.match(show, /… [\d,]+ more characters in 3 lines not shown: \/state browse/, "the cut counts the text cut before the view too");
			}
			const notice = boundNotice(value);
			assert.ok(notice.length <= NOTICE_ROWS * (NOTICE_WIDTH + 1) + 100, `notice of ${value.length}: ${notice.length}`);
			assert.match(notice, /more characters in 1 line not shown$/);
		}
	});

	it("the browser pages through a value at the size limit: a page is wrapped, the end is reached, every row is the value's", () => {
		const value = `${"abcdefghij".repeat((DEFAULT_LIMITS.maxOwnerBytes - 2_000) / 10)}END`;
		const state = { ...emptyState(), lazy: { big: value } };
		const history = { owner: "cwd", seq: 1, state, tail: [], bytes: value.length, checkpoint: state, checkpointSeq: 1 } as unknown as OwnerHistory;
		const b = new StateBrowser(
			{
				selection: () => ({ mode: "active", owners: ["cwd"] }),
				owners: () => [{ owner: "cwd", wanted: true, history: { ok: true, value: history } }],
				now: () => new Date(0),
				plan: () => ({ ok: false, why: "no" }),
				undo: async () => "",
				choose: async () => "",
			},
			theme,
			() => undefined,
		);
		for (const key of ["\x1b[B", "\x1b[B", "\x1b[B", "\x1b[B", "\r", "\x1b[B"]) b.handleInput(key);
		for (const width of WIDTHS) {
			const tree = assertBounded(b, width, 40, "tree");
			assert.match(tree, /big\s+abcdefghij.*…/, "a leaf's preview is cut to its room");
		}
		b.handleInput("v");
		for (const width of WIDTHS) {
			const first = assertBounded(b, width, 40, "detail");
			assert.match(first, /cwd\.lazy\.big · 4\.0 MB\n {2}abcdefghij/);
			assert.match(first, /line 1 of 1 · 0%/);
		}
		b.handleInput("G");
		const end = assertBounded(b, 120, 40, "detail at the end");
		assert.match(end, /END\n {2}line 1 of 1 · 100%/);
		b.handleInput("\x1b[5~");
		const back = assertBounded(b, 120, 40, "a page back");
		assert.doesNotMatch(back, /END/);
		for (const row of back.split("\n").filter((l) => l.startsWith("  abc") || l.startsWith("  fgh")))
			assert.ok(value.includes(row.trim()), "every row is part of the value");
	});

	it("the history tab draws planted ids of a megabyte that share their start, and a transition of 20,000 keys, within the screen", () => {
		const long = "0".repeat(1_000_000);
		const at = "2026-12-01T00:00:00.000Z";
		const by = { kind: "tool", toolCallId: "c".repeat(100_000) } as const;
		const record = (id: string, seq: number, patch: Record<string, unknown>) => ({
			id,
			at,
			seq,
			by,
			patch: { tactics: patch },
			undo: { tactics: {} },
			cascades: [],
			owners: ["cwd"],
		});
		const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
		const state = { ...emptyState(), tactics: { ...many, big: long } };
		const tail = [record(`${long}a`, 1, many), record(`${long}b`, 2, { big: long })];
		const history = { owner: "cwd", seq: 2, state, tail, bytes: 2_000_000, checkpoint: emptyState(), checkpointSeq: 0 } as unknown as OwnerHistory;
		const b = new StateBrowser(
			{
				selection: () => ({ mode: "active", owners: ["cwd"] }),
				owners: () => [{ owner: "cwd", wanted: true, history: { ok: true, value: history } }],
				now: () => new Date(0),
				plan: () => ({ ok: false, why: "no" }),
				undo: async () => "",
				choose: async () => "",
			},
			theme,
			() => undefined,
		);
		b.handleInput("\t");
		for (const width of WIDTHS) {
			const text = assertBounded(b, width, 40, "history");
			assert.match(text, /#2 0{4,40} /, "a short id of at most 40 characters");
			assert.match(text, /\+ tactics\.big: 0+…/);
		}
		b.handleInput("\x1b[B");
		assert.match(assertBounded(b, 120, 40, "the transition of many keys"), /tactics\.k0, tactics\.k1.* \+\d+/);
	});

	it("fitList costs what fits, whatever the number of keys", () => {
		const keys = Array.from({ length: 200_000 }, (_, i) => `tactics.k${i}`);
		assert.equal(fitList(keys, 40), "tactics.k0, tactics.k1 +199998");
		assert.equal(fitList(["a", "b"], 40), "a, b");
		assert.equal(fitList(["a".repeat(50)], 10), "aaaaaaaaa…");
	});
});
