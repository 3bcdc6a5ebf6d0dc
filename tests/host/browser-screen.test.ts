/**
 * The browser on a small screen (issue 27): at 80×24 the title, the project line, the tabs and the
 * owner row stay on screen however long the history or tree; the height does not change as the
 * selection moves or the view switches; a diff line wrapped in `v` keeps its `+`/`-` on every row.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { emptyState } from "../../lib/core/state.js";
import type { OwnerHistory } from "../../lib/core/types.js";
import { MAX_BODY, PI_ROWS, StateBrowser } from "../../lib/host/browser/state-browser.js";
import { draw, theme, widest } from "../helpers/render-theme.js";

const DOWN = "\x1b[B";
const PGDN = "\x1b[6~";
const TAB = "\t";

/** A CWD store of `n` transitions, each writing a tactic whose text wraps at 80 columns, and a tree of `n` tactics. */
function longHistory(n: number): OwnerHistory {
	const text = (i: number) => `step ${i}: ${"write the parser and test it against every example in the corpus ".repeat(2)}`;
	const tail = Array.from({ length: n }, (_, i) => ({
		id: `${String(i).padStart(4, "0")}aaaa-2222-4333-8444-555566667777`,
		at: new Date(2026, 10, 30, 9, 0, i).toISOString(),
		seq: i + 1,
		by: { kind: "tool", sessionId: "s", toolCallId: `call_${i}` },
		who: { user: "alice", host: "laptop" },
		patch: { tactics: { [`t${i}`]: text(i) } },
		undo: { tactics: { [`t${i}`]: null } },
		cascades: [],
		owners: ["cwd"],
	}));
	const state = { ...emptyState(), tactics: Object.fromEntries(tail.map((_, i) => [`t${i}`, text(i)])) };
	return { owner: "cwd", seq: n, state, tail, bytes: 40_000, checkpoint: emptyState(), checkpointSeq: 0 } as unknown as OwnerHistory;
}

function browser(rows: number | undefined, project?: string): StateBrowser {
	const history = longHistory(60);
	return new StateBrowser(
		{
			selection: () => ({ mode: "active", owners: ["cwd"] }),
			owners: () => [
				{ owner: "global", wanted: false, history: { ok: true, value: { ...history, owner: "global", seq: 0, tail: [] } as OwnerHistory } },
				{ owner: "cwd", wanted: true, history: { ok: true, value: history } },
			],
			now: () => new Date(2026, 10, 30, 12, 0, 0),
			plan: () => ({ ok: false, why: "no" }),
			undo: async () => "",
			choose: async () => "",
			...(project !== undefined ? { project } : {}),
		},
		theme,
		() => undefined,
		() => undefined,
		() => rows,
	);
}

/** The title, project and owner rows lead every drawing. */
function assertHeader(lines: string[], what: string): void {
	assert.match(lines[0] ?? "", /^State Flow active cwd {2}.*(\[state\]|\[history\])/, `${what}: the title and tabs first`);
	assert.match(lines[1] ?? "", /^project \/work\/proj/, `${what}: the project line`);
	assert.match(lines[2] ?? "", /\[cwd\]/, `${what}: the owner row`);
}

describe("the browser on a 24-row screen", () => {
	it("keeps its title, tabs and owner row on screen and one height, through the tree, the history and v", () => {
		const b = browser(24, "project /work/proj (git root)");
		const height = 24 - PI_ROWS;
		const seen = new Set<number>();
		const look = (what: string) => {
			const lines = draw(b, 80);
			seen.add(lines.length);
			assert.ok(widest(b, 80) <= 80, what);
			assertHeader(lines, what);
			return lines;
		};
		// The tree, opened on a plane of 60 keys, walked to its end.
		for (let i = 0; i < 3; i++) b.handleInput(DOWN);
		b.handleInput("\r");
		for (let i = 0; i < 70; i++) {
			look(`tree row ${i}`);
			b.handleInput(DOWN);
		}
		b.handleInput(TAB);
		for (let i = 0; i < 65; i++) {
			look(`history row ${i}`);
			b.handleInput(DOWN);
		}
		b.handleInput("f");
		look("full ids");
		b.handleInput("v");
		const pane = look("the pane");
		b.handleInput(PGDN);
		look("the pane, a page on");
		assert.deepEqual([...seen], [height], "one height, the screen's less pi's own rows");
		assert.match(pane.join("\n"), /^ {2}\+ tactics\.t\d+:/m);
	});

	it("marks each wrapped row of a diff line in v with the line's sign", () => {
		const b = browser(24);
		b.handleInput(TAB);
		b.handleInput("v");
		const rows = draw(b, 80).slice(3);
		const first = rows.findIndex((l) => /^ {2}\+ {3}step \d+:/.test(l));
		assert.ok(first >= 0, rows.join("\n"));
		// The value wraps over several rows: each carries `+`, its text aligned under the first row's.
		const next = rows[first + 1] ?? "";
		assert.match(next, /^ {2}\+ \S/, rows.join("\n"));
		assert.ok(!/^ {2}[a-z]/.test(next), "no wrapped row reads as context");
	});

	it("draws the largest layout when the screen's height is unknown, and never less than a few rows", () => {
		const unknown = draw(browser(undefined), 80);
		assert.equal(unknown.length, 2 + 1 + MAX_BODY + 1 + 1 + 2, "title, owner row, rule, body, rule, status, two lines of keys");
		const tiny = draw(browser(10), 80);
		assert.ok(tiny.length > 10 - PI_ROWS, "a tiny screen still gets a usable list");
		assert.match(tiny[0] ?? "", /^State Flow/);
	});
});
