/**
 * Timings of every renderer that hands stored text to pi-tui, with values of 60 KB, 1 MB and the
 * size limit, at 80 and 120 columns (issue 24: < 50 ms each). Tests assert the structural bound
 * (what reaches the wrapper is bounded by the screen: tests/security/render-bound.test.ts); this
 * records the wall clock: `npx tsc -p tsconfig.json && node dist/scripts/render-bound.js`.
 */
import type { Component } from "@mariozechner/pi-tui";
import { emptyState } from "../lib/core/state.js";
import { DEFAULT_LIMITS, type OwnerHistory } from "../lib/core/types.js";
import { StateBrowser } from "../lib/host/browser/state-browser.js";
import { renderOutput } from "../lib/host/commands/output.js";
import { type RenderTheme, renderPatchCall, renderPatchResult, renderReadCall, renderReadResult } from "../lib/host/tools/render.js";
import { boundNotice } from "../lib/host/screen-text.js";

/** Colours as pi's theme writes them (an SGR sequence each). */
const theme = { fg: (_c: string, s: string) => `\x1b[38;5;2m${s}\x1b[39m`, bold: (s: string) => `\x1b[1m${s}\x1b[22m` } as RenderTheme;
const SIZES = { "60KB": 60_000, "1MB": 1_000_000, limit: DEFAULT_LIMITS.maxOwnerBytes - 1_000 };
const KINDS = { ascii: "x", wide: "日", accented: "é" };

/** The fastest of three runs (the machine is shared: the others measure its load, not the view). */
function time(f: () => unknown): number {
	let best = Number.POSITIVE_INFINITY;
	for (let i = 0; i < 3; i++) {
		const t0 = performance.now();
		f();
		best = Math.min(best, performance.now() - t0);
	}
	return best;
}

/** The views of one value, each built and drawn once at `width`. */
export function views(value: string, width: number): Record<string, () => unknown> {
	const draw = (c: Component) => c.render(width);
	const json = JSON.stringify({ "cwd.lazy.big": value });
	const result = { content: [{ type: "text", text: json }], details: { canonical: ["cwd.lazy.big"] } };
	const patch = { cwd: { lazy: { [value.slice(0, 1024)]: value } } };
	const patched = { content: [{ type: "text", text: "ok" }], details: { changed: [`cwd.lazy.${value.slice(0, 1024)}`], transitionId: "t" } };
	const state = { ...emptyState(), lazy: { big: value } };
	const shownState = JSON.stringify(state, null, 2);
	const history = { owner: "cwd", seq: 1, state, tail: [], bytes: value.length, checkpoint: state, checkpointSeq: 1 } as unknown as OwnerHistory;
	const browser = () =>
		new StateBrowser(
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
	return {
		readResultCollapsed: () => draw(renderReadResult(result, { expanded: false, isPartial: false }, theme)),
		readResultExpanded: () => draw(renderReadResult(result, { expanded: true, isPartial: false }, theme)),
		readCall: () => draw(renderReadCall({ path: value }, theme, { expanded: true })),
		patchCallCollapsed: () => draw(renderPatchCall(patch, theme, { expanded: false })),
		patchCallExpanded: () => draw(renderPatchCall(patch, theme, { expanded: true })),
		patchResult: () => draw(renderPatchResult(patched, { expanded: true, isPartial: false }, theme)),
		stateShow: () => draw(renderOutput(shownState, { title: "show", level: "info" }, theme)),
		notice: () => boundNotice(value),
		browserTree: () => {
			const b = browser();
			b.handleInput("\x1b[B");
			b.handleInput("\x1b[B");
			b.handleInput("\x1b[B");
			b.handleInput("\x1b[B");
			b.handleInput("\r");
			return draw(b);
		},
		browserDetailEnd: () => {
			const b = browser();
			for (const k of ["\x1b[B", "\x1b[B", "\x1b[B", "\x1b[B", "\r", "\x1b[B", "v"]) b.handleInput(k);
			draw(b);
			b.handleInput("G");
			return draw(b);
		},
	};
}

function main(): void {
	const rows: string[] = [];
	let worst = 0;
	for (const [size, n] of Object.entries(SIZES)) {
		for (const [kind, ch] of Object.entries(KINDS)) {
			const value = ch.repeat(Math.floor(n / Buffer.byteLength(ch)));
			for (const width of [80, 120]) {
				for (const [name, f] of Object.entries(views(value, width))) {
					const ms = time(f);
					worst = Math.max(worst, ms);
					rows.push(`${size.padEnd(5)} ${kind.padEnd(8)} ${String(width).padEnd(4)} ${name.padEnd(20)} ${ms.toFixed(1)} ms`);
				}
			}
		}
	}
	console.log(rows.join("\n"));
	console.log(`worst: ${worst.toFixed(1)} ms`);
}

main();
