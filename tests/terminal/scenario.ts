/**
 * The whole State Flow flow in a real terminal: the real `pi` program in tmux (80 columns)
 * against the scripted HTTP model, with file-backed sessions. A write, `/state`, the browser
 * opened at 80×24 (state and history tabs, title, tabs and owner row on screen) and closed,
 * owners switched, Off, a prompt while Off, quit, `pi --continue`, Active, and a write again —
 * which must find both tools declared (pi 1.6 re-applies the recorded tool set on resume) — and
 * the footer naming CWD damaged once a byte of its log changed. Every step waits for what the screen must
 * show, with a bounded deadline; a failure names the step and carries the screen.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startScriptedServer } from "./scripted-server.js";
import { makePiHome } from "./setup.js";
import { Pane } from "./tmux.js";
import { ME } from "../helpers/who.js";

export interface ScenarioOptions {
	/** The Node binary that runs pi. */
	node: string;
	/** pi's CLI entry (`dist/cli.js` on 0.73.1, `dist/bundle/cli.js` on 1.6). */
	piCli: string;
	/** Per-step progress lines. */
	log?: (line: string) => void;
	keep?: boolean;
}

const COLS = 80;
const STEP_MS = 30_000;

/** The browser's first rows on the visible screen: the title with the tabs (this one chosen), then the owner row. */
function assertBrowserHead(screen: string, tab: "state" | "history"): void {
	const lines = screen.split("\n");
	const title = lines.findIndex((l) => /^State Flow active cwd\+session\s/.test(l));
	assert.ok(title >= 0, `the title is on the screen:\n${screen}`);
	assert.match(lines[title] ?? "", new RegExp(`\\[${tab}\\]`), screen);
	assert.match(lines.slice(title + 1, title + 3).join("\n"), /\[cwd\]/, `the owner row under the title:\n${screen}`);
	assert.equal(lines.length <= 24 || lines.slice(24).every((l) => l.trim() === ""), true, "a 24-row screen");
}

export async function runScenario(o: ScenarioOptions): Promise<void> {
	const log = o.log ?? (() => {});
	const server = await startScriptedServer();
	const h = makePiHome(server.baseUrl);
	const pane = new Pane({ cols: COLS, rows: 40, cwd: h.cwd, env: h.env });
	const pi = (...extra: string[]) => [o.node, o.piCli, ...h.modelArgs, ...extra];
	const status = (line: string) => new RegExp(`^state: ${line.replace(/\+/g, "\\+")}\\s*$`, "m");
	const step = async (what: string, fn: () => Promise<unknown>) => {
		const started = Date.now();
		await fn();
		log(`  ok  ${what} (${Date.now() - started} ms)`);
	};
	const submit = (text: string) => pane.submit(text, STEP_MS);
	const wait = (pattern: string | RegExp, history = true) => pane.waitForText(pattern, { timeoutMs: STEP_MS, history });
	const GRAMMAR = /^\s*State Flow: active cwd \(new tool grammar from the next prompt\)\s*$/m;
	const OFF = /^\s*State Flow: off cwd \(tools withdrawn; data untouched\)\s*$/m;
	const confirmationsKept = async () => {
		const screen = await wait(new RegExp(`${GRAMMAR.source}[\\s\\S]*${OFF.source}`, "m"));
		assert.equal(screen.split("\n").filter((l) => OFF.test(l)).length, 1, screen);
	};
	const lastTools = () => [...(server.requests.at(-1)?.tools ?? [])].filter((t) => t.endsWith("_state")).sort();
	try {
		pane.start(pi());
		await step("pi starts with State Flow listed as state-flow, Active for cwd+session", async () => {
			const screen = await wait(status("active cwd+session"));
			assert.match(screen, /\[Extensions\][\s\S]*state-flow/);
			assert.doesNotMatch(screen, /^\s+lib\s*$/m, "the extension is listed as `lib`");
		});
		await step("a prompt writes through patch_state over HTTP", async () => {
			await submit("remember alpha");
			const screen = await wait("Saved alpha.");
			assert.match(screen, /patch_state cwd\.tactics\.alpha/);
			assert.deepEqual(lastTools(), ["patch_state", "read_state"]);
		});
		await step("Ctrl+O expands the tool view with each changed path once", async () => {
			pane.press("C-o");
			const screen = await wait(/✓ · cwd · 1 changed · [0-9a-f]{8}-[0-9a-f]{4}/, false);
			// Named as the user types it (issue 36), not as the JSON pointer in `details`.
			assert.equal(screen.split("\n").filter((l) => l.trim() === "cwd.tactics.alpha").length, 1, screen);
			pane.press("C-o");
			await wait(/✓ · cwd · 1 changed · [0-9a-f]{8}\s*$/m, false);
		});
		await step("/state shows the status in the chat", async () => {
			await submit("/state");
			// Waits for the whole message: pi 1.6 may be caught mid-redraw right after the title appears.
			await wait(/State Flow · status[\s\S]*cwd\s+wanted\s+\d+ B, 1 transition, 1 retained/);
		});
		await step("/state history fits 80 columns (short id, local time, short call id), drawn as laid out; the status above stays", async () => {
			await submit("/state history");
			const screen = await wait(/State Flow · history[\s\S]*full ids and times/);
			assert.match(
				screen,
				new RegExp(`^ {2}#1 [0-9a-f]{4,} (\\d\\d:\\d\\d:\\d\\d|\\d\\d-\\d\\d \\d\\d:\\d\\d) model call_01scri… ${ME} set tactics\\.alpha\\s*$`, "m"),
			);
			// The earlier output is still there as it was shown, not merged into or replaced by this one.
			assert.match(screen, /State Flow · status\s*\n\s*active cwd\+session — scoped interface[\s\S]*State Flow · history/);
		});
		await step("/state browse at 80×24 opens the browser on the state tab, its title, tabs and owner row on screen", async () => {
			pane.resize(COLS, 24);
			await submit("/state browse");
			const screen = await wait(/\[state\][\s\S]*esc close/, false);
			assert.match(screen, /▸ tactics\s+1 key/);
			assertBrowserHead(screen, "state");
		});
		await step("Tab shows the history timeline with the selected transition's diff", async () => {
			pane.press("Tab");
			const screen = await wait(
				new RegExp(
					`\\[history\\][\\s\\S]*› #1 \\w+ (\\d\\d:\\d\\d:\\d\\d|\\d\\d-\\d\\d \\d\\d:\\d\\d) model call_01scri… ${ME} set tactics\\.alpha[\\s\\S]*\\+ tactics\\.alpha: noted`,
				),
				false,
			);
			for (const line of screen.split("\n")) assert.ok(line.trimEnd().length <= COLS, line);
			assertBrowserHead(screen, "history");
		});
		await step("Escape closes the browser", async () => {
			pane.press("Escape");
			await pane.waitFor("the browser to close", (s) => !s.includes("esc close") && /state: active/.test(s), { timeoutMs: STEP_MS });
			pane.resize(COLS, 40);
		});
		await step("/state owners cwd switches the owners and says the grammar changes (scoped → flat)", async () => {
			await submit("/state owners cwd");
			await wait(status("active cwd"), false);
			await wait(GRAMMAR);
		});
		await step("/state off withdraws both tools; the earlier confirmation still says what it said (pi 1.6 rewrote notices)", async () => {
			await submit("/state off");
			await wait(status("off cwd"), false);
			await wait(OFF);
			await confirmationsKept();
			await submit("remember beta");
			await wait("No state tools: beta.");
			assert.deepEqual(lastTools(), []);
		});
		await step("quit", async () => {
			await submit("/quit");
			await pane.waitForExit(STEP_MS);
		});
		await step("pi --continue resumes the session, still Off for cwd", async () => {
			pane.respawn(pi("--continue"));
			await wait(status("off cwd"), false);
			// Chat messages are in the session file: the resumed screen shows both, as they were.
			await confirmationsKept();
		});
		await step("/state active declares both tools again and a write lands", async () => {
			await submit("/state active");
			await wait(status("active cwd"), false);
			await submit("remember gamma");
			await wait("Saved gamma.");
			assert.deepEqual(lastTools(), ["patch_state", "read_state"]);
			const log = readFileSync(join(h.cwd, ".pi", "state-flow", "log.jsonl"), "utf8");
			assert.match(log, /"gamma":"noted"/);
		});
		await step("the footer says when CWD is damaged (one byte changed in its log), after /state reads it", async () => {
			const file = join(h.cwd, ".pi", "state-flow", "log.jsonl");
			writeFileSync(file, readFileSync(file, "utf8").replace('"alpha":"noted"', '"alpha":"notee"'));
			await submit("/state");
			await wait(status("active cwd · cwd damaged"), false);
		});
		await step("quit again", async () => {
			await submit("/quit");
			await pane.waitForExit(STEP_MS);
		});
	} finally {
		pane.kill();
		await server.close();
		if (!o.keep) rmSync(h.root, { recursive: true, force: true });
	}
}
