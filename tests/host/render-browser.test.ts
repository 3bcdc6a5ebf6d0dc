/**
 * The `/state browse` browser, rendered with a real pi theme at 80 and 120 columns, and its
 * model (tree rows, search, diffs). The browser runs through the real command in a real SDK
 * session whose interactive UI mounts the component `ctx.ui.custom` is given and feeds it keys.
 * The `/state` output messages are in render-output.test.ts.
 */
import assert from "node:assert/strict";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import type { Component } from "@mariozechner/pi-tui";
import { createStateFlow } from "../../lib/index.js";
import { diffLines, SEARCH_NODES, searchPaths, treeRows } from "../../lib/host/browser/rows.js";
import { shownOutput } from "../helpers/output.js";
import { ME, ME_FULL } from "../helpers/who.js";
import { tempDir } from "../helpers/temp-dir.js";
import { draw, widest } from "../helpers/render-theme.js";
import { browsing, ESC, WIDTHS } from "./browser-fixture.js";
import { extensionSession, startFlow } from "./fixture.js";
import { waitFor } from "../helpers/soon.js";

const DOWN = "\x1b[B";
const UP = "\x1b[A";
const PGDN = "\x1b[6~";
const RIGHT = "\x1b[C";
const TAB = "\t";
const ENTER = "\r";

/** Until the browser has shown the outcome of a change it started (undo, mode, owners). */
async function settled(component: Component): Promise<void> {
	await waitFor(() => !draw(component, 80).join("\n").includes("working…"), { what: "the browser to show the outcome of its change" });
}

describe("/state browse", () => {
	it("shows owners, plane trees with sizes and the lazy catalog, fitting 80 and 120 columns", async (t) => {
		const s = await browsing(t);
		const b = await s.open();
		for (const width of WIDTHS) {
			const lines = draw(b.component, width);
			assert.ok(widest(b.component, width) <= width, `fits ${width}`);
			assert.match(lines[0] ?? "", /^State Flow active cwd\+session\s+\[state\]\s+history/);
			assert.match(lines[1] ?? "", /^project .* \(this folder, not in git\)/, "which project this is, and why");
			assert.match(lines[2] ?? "", /global\s+empty \(not wanted\)\s+\[cwd\] \d+ B\s+session\s+\d+ B/);
			assert.match(lines.join("\n"), /^› {3}intents\s+0 keys\s+2 B$/m);
			assert.match(lines.join("\n"), /▸ tactics\s+2 keys\s+\d+ B/);
			assert.match(lines.join("\n"), /▸ lazy \(catalog\)\s+1 key\s/);
		}
		// Open tactics (third row) and the lazy catalog: keys with sizes, lazy entries as first lines.
		b.keys(DOWN, DOWN, ENTER);
		let text = draw(b.component, 80).join("\n");
		assert.match(text, /› ▾ tactics\s+2 keys/);
		assert.match(text, /first\s+parser written\s+\d+ B/);
		b.keys(DOWN, DOWN, DOWN, DOWN, ENTER);
		text = draw(b.component, 80).join("\n");
		assert.match(text, /▾ lazy \(catalog\)[\s\S]*\["notes\/design\.md"\]\s+Design notes…\s+\d+ B/);
		await b.close();
	});

	it("walks the history timeline with the selected transition's diff and full ids on demand", async (t) => {
		const s = await browsing(t);
		const b = await s.open();
		b.keys(TAB);
		for (const width of WIDTHS) {
			const lines = draw(b.component, width);
			assert.ok(widest(b.component, width) <= width, `fits ${width}`);
			const text = lines.join("\n");
			assert.match(text, new RegExp(`› #2 02aa 09:00:01 model call_Yr0lA3… ${ME} set tactics\\.first`));
			// At 80 columns the keys that fit beside who (its length is this machine's) and a count of the rest.
			const keys = width === 80 ? "set tactics\\.first(, tactics\\.second)? \\+[12]" : 'set tactics\\.first, tactics\\.second, lazy\\["notes\\/design\\.md"\\]';
			assert.match(text, new RegExp(` {2}#1 01aa 09:00:00 model call_Xq9kZ2… ${ME} ${keys}$`, "m"));
			assert.match(text, /- tactics\.first: write the parser\n\s*\+ tactics\.first: parser written/);
		}
		b.keys("f");
		assert.match(
			draw(b.component, 120).join("\n"),
			new RegExp(`#2 02aa1111-2222-4333-8444-555566667777 2026-11-\\d\\dT\\d\\d:\\d\\d:01\\.000Z model call_Yr0lA3bC8dE5fG7hI9jK1mN ${ME_FULL}`),
		);
		b.keys("f", RIGHT);
		assert.match(draw(b.component, 80).join("\n"), /\[session\][\s\S]*#1 02aa .*strategy\.now[\s\S]*\+ strategy\.now: testing/);
		await b.close();
	});

	it("shows the selected value or transition whole with v, scrolls it, and goes back", async (t) => {
		const s = await browsing(t);
		const b = await s.open();
		// The lazy catalog's note, opened whole: its lines as written, titled with its locator and size.
		b.keys(DOWN, DOWN, DOWN, DOWN, ENTER, DOWN, "v");
		for (const width of WIDTHS) {
			assert.ok(widest(b.component, width) <= width, `fits ${width}`);
			const text = draw(b.component, width).join("\n");
			assert.match(text, /cwd\.lazy\["notes\/design\.md"\] · 24 B\n {2}Design notes\n {2}line two\n {2}2 lines/);
			assert.match(text, /↑↓ scroll/);
		}
		b.keys("v", UP, UP, UP, ENTER, DOWN, DOWN, "v");
		assert.match(draw(b.component, 80).join("\n"), /cwd\.tactics\.second · 9 B\n {2}test it\n/);
		b.keys(ESC);
		assert.match(draw(b.component, 80).join("\n"), /› {5}second\s+test it/, "Esc leaves the pane, not the browser");
		// A transition whole: every written path with its value before and after.
		b.keys(TAB, "v");
		let text = draw(b.component, 80).join("\n");
		assert.match(
			text,
			/cwd #2 02aa1111-2222-4333-8444-555566667777\n {2}- tactics\.first:\n {2}- {3}write the parser\n {2}\+ tactics\.first:\n {2}\+ {3}parser written/,
		);
		// A value longer than the pane scrolls: a page at a time, to the end and back.
		b.keys("v");
		await b.close();
		const long = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n");
		s.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("patch_state", { cwd: { tactics: { long } } }, { id: "call_Long" })], { stopReason: "toolUse" }),
			fauxAssistantMessage([fauxText("ok")]),
		]);
		await s.session.prompt("more");
		await s.session.agent.waitForIdle();
		const c = await s.open();
		c.keys(DOWN, DOWN, ENTER, DOWN, DOWN, DOWN, "v");
		text = draw(c.component, 80).join("\n");
		assert.match(text, /cwd\.tactics\.long · \d+ B\n {2}line 1\n/);
		assert.match(text, /lines 1–20 of 50/);
		c.keys(PGDN);
		assert.match(draw(c.component, 80).join("\n"), /\n {2}line 21\n[\s\S]*lines 21–40 of 50/);
		c.keys("G");
		assert.match(draw(c.component, 80).join("\n"), /\n {2}line 31\n[\s\S]*line 50\n {2}lines 31–50 of 50/);
		c.keys("g", UP);
		assert.match(draw(c.component, 80).join("\n"), /lines 1–20 of 50/);
		c.keys("v");
		await c.close();
	});

	it("shows a damaged owner's whole reason, wrapped to the width, and the other owners still browse", async (t) => {
		const s = await browsing(t);
		appendFileSync(join(s.session.sessionManager.getCwd(), ".pi", "state-flow", "log.jsonl"), "{not a record\n");
		const b = await s.open();
		for (const width of WIDTHS) {
			assert.ok(widest(b.component, width) <= width, `fits ${width}`);
			const lines = draw(b.component, width);
			assert.match(lines[2] ?? "", /\[cwd\] unreadable/);
			const reason = lines.slice(
				4,
				lines.findIndex((l, i) => i > 4 && l.startsWith("─")),
			);
			assert.ok(reason.length >= 2, `the reason takes several lines at ${width}: ${JSON.stringify(reason)}`);
			const text = reason.join(" ");
			assert.match(text, /^cwd: unreadable: /);
			assert.match(text, /log\.jsonl/);
			assert.match(text, /state-flow doctor/, "what to do is not cut off");
		}
		b.keys(RIGHT);
		assert.match(draw(b.component, 80).join("\n"), /\[session\][\s\S]*strategy\s+1 key/);
		await b.close();
	});

	it("undoes the selected transition only after y, and refuses one whose keys changed later", async (t) => {
		const s = await browsing(t);
		const b = await s.open();
		b.keys(TAB, DOWN, "u");
		assert.match(draw(b.component, 80).join("\n"), /#2 \(02aa1111\) changed the same keys later; undo that one first/);
		b.keys("k", "u");
		assert.match(draw(b.component, 80).join("\n"), new RegExp(`Undo #2 02aa1111 by ${ME_FULL} in cwd\\+session\\? y = undo, any other key = keep`));
		b.keys("n");
		assert.match(draw(b.component, 80).join("\n"), /undo cancelled; nothing was written/);
		b.keys("u", "y");
		await settled(b.component);
		const text = draw(b.component, 80).join("\n");
		assert.match(text, /Reverted 02aa1111 \(cwd\+session\) as transition 03aa1111\./);
		assert.match(text, new RegExp(`› #3 03aa .* undo of 02aa1111 ${ME} set tactics\\.first`));
		assert.match(text, /- tactics\.first: parser written\n\s*\+ tactics\.first: write the parser/);
		// r redoes the latest undo, after the same kind of question, naming whose the undo was.
		b.keys("r");
		assert.match(draw(b.component, 80).join("\n"), new RegExp(`Redo #3 03aa1111 by ${ME_FULL} in cwd\\+session\\? y = redo, any other key = keep`));
		b.keys("y");
		await settled(b.component);
		assert.match(draw(b.component, 80).join("\n"), /Redid what 03aa1111 undid \(cwd\+session\) as transition 04aa1111\./);
		await b.close();
	});

	it("finds keys and text with /, opens the way to each match, and n goes to the next", async (t) => {
		const s = await browsing(t);
		const b = await s.open();
		assert.match(draw(b.component, 80).join("\n"), /\/ search/, "the key is listed");
		b.keys("/", "P", "a", "r", "X", "\x7f");
		let text = draw(b.component, 80).join("\n");
		assert.match(text, /search cwd: Par▏/, "typed text, Backspace removed the last letter");
		assert.match(text, /enter find · esc cancel/);
		b.keys(ENTER);
		text = draw(b.component, 80).join("\n");
		// "parser" is in tactics.first's text: tactics opens, the row is selected.
		assert.match(text, /▾ tactics/);
		assert.match(text, /› {5}first\s+parser written/);
		assert.match(text, /"Par": 1 of 1/);
		b.keys("/", "l", "i", "n", "e", ENTER);
		text = draw(b.component, 80).join("\n");
		assert.match(text, /› {5}\["notes\/design\.md"\]\s+Design notes/, "a lazy entry found by its text");
		b.keys("/", "z", "z", "z", ENTER);
		assert.match(draw(b.component, 80).join("\n"), /nothing in cwd has "zzz" in a key or text/);
		b.keys("/", "q", ESC);
		assert.doesNotMatch(draw(b.component, 80).join("\n"), /search cwd/, "Esc gives the search up, not the browser");
		// Several matches: n goes to the next one.
		b.keys("/", "t", ENTER);
		assert.match(draw(b.component, 80).join("\n"), /"t": 1 of \d+ · n next/);
		b.keys("n");
		assert.match(draw(b.component, 80).join("\n"), /"t": 2 of \d+/);
		await b.close();
	});

	it("finds transitions in the history tab with / (ids, paths, values before and after), n to the next", async (t) => {
		const s = await browsing(t);
		const b = await s.open();
		b.keys(TAB);
		assert.match(draw(b.component, 80).join("\n"), /\/ search/, "the key is listed on the history tab too");
		b.keys("/", "d", "e", "s", "i", "g", "n");
		assert.match(draw(b.component, 80).join("\n"), /search cwd history: design▏/);
		b.keys(ENTER);
		let text = draw(b.component, 80).join("\n");
		// Only transition #1 wrote the design note: the older row is selected.
		assert.match(text, /› #1 01aa/);
		assert.match(text, /"design": 1 of 1/);
		// "parser" is #2's value after and before, and #1's value after: two rows, newest first.
		b.keys("/", "P", "A", "R", "S", "E", "R", ENTER);
		text = draw(b.component, 80).join("\n");
		assert.match(text, /› #2 02aa/);
		assert.match(text, /"PARSER": 1 of 2 · n next/);
		b.keys("n");
		assert.match(draw(b.component, 80).join("\n"), /› #1 01aa[\s\S]*"PARSER": 2 of 2/);
		b.keys("n");
		assert.match(draw(b.component, 80).join("\n"), /› #2 02aa[\s\S]*"PARSER": 1 of 2/, "n wraps round");
		// "write the parser" is #1's value after and, in #2, only the value before (from the stored inverse).
		b.keys("/", "w", "r", "i", "t", "e", " ", "t", "h", "e", ENTER);
		assert.match(draw(b.component, 80).join("\n"), /› #2 02aa[\s\S]*"write the": 1 of 2/);
		b.keys("/", "t", "e", "s", "t", " ", "i", "t", ENTER);
		assert.match(draw(b.component, 80).join("\n"), /› #1 01aa[\s\S]*"test it": 1 of 1/);
		b.keys("/", "0", "2", "a", "a", ENTER);
		assert.match(draw(b.component, 80).join("\n"), /› #2 02aa[\s\S]*"02aa": 1 of 1/, "found by its id");
		b.keys("/", "z", "z", "z", ENTER);
		assert.match(draw(b.component, 80).join("\n"), /nothing in cwd's retained history has "zzz"/);
		b.keys(TAB);
		assert.doesNotMatch(draw(b.component, 80).join("\n"), /zzz/, "switching tabs ends the search");
		await b.close();
	});

	it("changes this session's mode with m and its wanted owners with w, as /state does", async (t) => {
		const s = await browsing(t);
		const ours = () => s.session.getActiveToolNames().filter((n) => n.endsWith("_state"));
		const b = await s.open();
		assert.match(draw(b.component, 80).join("\n"), /m mode/, "the keys are listed");
		b.keys("m");
		await settled(b.component);
		let lines = draw(b.component, 80);
		assert.match(lines[0] ?? "", /^State Flow passive cwd\+session/);
		assert.match(lines.join("\n"), /State Flow: passive cwd\+session$/m);
		assert.deepEqual(ours().sort(), ["patch_state", "read_state"], "passive keeps both tools");
		b.keys("m");
		await settled(b.component);
		assert.match(draw(b.component, 80).join("\n"), /State Flow: off cwd\+session \(tools withdrawn; data untouched\)/);
		assert.deepEqual(ours(), [], "off withdraws the tools at once");
		b.keys("m");
		await settled(b.component);
		assert.match(draw(b.component, 80)[0] ?? "", /^State Flow active cwd\+session/);
		assert.deepEqual(ours().sort(), ["patch_state", "read_state"]);
		// Global is not wanted: w on it adds it (in owner order); on CWD takes CWD out.
		b.keys("h", "w");
		await settled(b.component);
		lines = draw(b.component, 80);
		// cwd+session → global+cwd+session: scoped before and after, so no new grammar to announce.
		assert.match(lines.join("\n"), /State Flow: active global\+cwd\+session$/m);
		assert.doesNotMatch(lines[2] ?? "", /not wanted/, "every owner is wanted now");
		b.keys("l", "w");
		await settled(b.component);
		lines = draw(b.component, 80);
		assert.match(lines[2] ?? "", /\[cwd\] \d+ B \(not wanted\)/);
		assert.match(lines[0] ?? "", /^State Flow active global\+session/);
		// The last wanted owner stays: w on it is refused with what to do instead.
		b.keys("h", "w");
		await settled(b.component);
		b.keys("l", "l", "w");
		await settled(b.component);
		assert.match(draw(b.component, 80).join("\n"), /session is the only wanted owner and stays; `m` turns State Flow off instead\./);
		assert.match(draw(b.component, 80)[0] ?? "", /^State Flow active session/);
		await b.close();
		// Recorded in the session like the typed commands: `/state` reports the browser's choice as this session's.
		await s.session.prompt("/state");
		assert.match(s.outputs().at(-1)?.text ?? "", /^active session — flat interface, from this session/);
	});

	it("falls back to text when the UI has no custom components (RPC mode)", async (t) => {
		const cwd = tempDir(t, "state-flow-cwd-");
		const agentDir = tempDir(t, "state-flow-agent-");
		// pi's RPC mode: hasUI is true, but `custom` resolves at once without building anything.
		const rpcUi = new Proxy({ custom: async () => undefined } as Partial<ExtensionUIContext>, {
			get: (target, prop) => (prop in target ? target[prop as keyof ExtensionUIContext] : () => undefined),
		}) as ExtensionUIContext;
		const { session } = await extensionSession(t, { cwd, agentDir, factories: [createStateFlow({ agentDir })], uiContext: rpcUi });
		await session.prompt("/state browse");
		const shown = shownOutput(session.messages);
		assert.deepEqual(
			shown.map((m) => m.details.title),
			["browse"],
		);
		assert.match(shown[0]?.text ?? "", /^active cwd\+session — scoped interface[\s\S]*cwd: 0 retained of 0 transitions/);
	});

	it("falls back to text without an interactive UI", async () => {
		const flow = await startFlow();
		try {
			await flow.prompt("plan", [{ calls: [{ id: "c1", name: "patch_state", args: { cwd: { tactics: { t: "step" } } } }] }, { text: "ok" }]);
			const [text] = await flow.command("/state browse");
			assert.match(text ?? "", /^active cwd\+session — scoped interface/);
			assert.match(text ?? "", /"t": "step"/);
			assert.match(text ?? "", new RegExp(`^ {2}#1 t-00 \\d\\d:\\d\\d:\\d\\d model c1 ${ME} set tactics\\.t$`, "m"));
		} finally {
			flow.dispose();
		}
	});
});

describe("browser model", () => {
	it("lists planes collapsed and walks into expanded nodes with sizes", () => {
		const state = { intents: {}, strategy: {}, tactics: { a: { b: [1, 2] } }, artifacts: {}, lazy: {} };
		const rows = treeRows(state, new Set([JSON.stringify(["tactics"]), JSON.stringify(["tactics", "a"])]));
		assert.deepEqual(
			rows.map((r) => `${"  ".repeat(r.depth)}${r.label} ${r.note} ${r.bytes}`),
			["intents 0 keys 2", "strategy 0 keys 2", "tactics 1 key 17", "  a 1 key 11", "    b 2 items 5", "artifacts 0 keys 2", "lazy (catalog) 0 keys 2"],
		);
	});

	it("searches keys and text in tree order, ignoring case, and stops at its node budget", () => {
		const state = {
			intents: { login: { goal: "Fix the LOGIN page" } },
			strategy: {},
			tactics: { a: "write the parser", b: ["check login", "ship"] },
			artifacts: {},
			lazy: { "notes/login.md": "text" },
		};
		assert.deepEqual(searchPaths(state, "login"), {
			paths: [
				["intents", "login"],
				["intents", "login", "goal"],
				["tactics", "b", "0"],
				["lazy", "notes/login.md"],
			],
			more: false,
		});
		assert.deepEqual(searchPaths(state, "nowhere"), { paths: [], more: false });
		const wide = {
			intents: {},
			strategy: {},
			tactics: Object.fromEntries(Array.from({ length: SEARCH_NODES + 10 }, (_, i) => [`k${i}`, 1])),
			artifacts: {},
			lazy: {},
		};
		const found = searchPaths(wide, "k1");
		assert.equal(found.more, true, "a search past the budget says it stopped");
		assert.ok(found.paths.length > 0);
	});

	it("diffs a transition from its stored inverse, deletions and cascades included", () => {
		const lines = diffLines({
			id: "x",
			at: "2026-11-30T09:00:00.000Z",
			seq: 2,
			by: { kind: "command", command: "/state undo cwd" },
			patch: { tactics: { a: 2, gone: null } },
			undo: { tactics: { a: 1, gone: "old" } },
			cascades: [{ owner: "cwd", intent: "i", targets: ["cwd.tactics.t"] }],
			owners: ["cwd"],
		});
		assert.deepEqual(
			lines.map((l) => `${l.sign} ${l.text}`),
			["- tactics.a: 1", "+ tactics.a: 2", "- tactics.gone: old (deleted)", "! cascade: intents.i took 1 target(s)"],
		);
	});
});
