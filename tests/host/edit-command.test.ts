/**
 * Hand edits and tidying in a real SDK session on the faux provider: `/state set` and `/state
 * delete` as one transition signed by the user (a cascade confirmed in pi's dialog, `--yes`
 * without a UI), the browser's `e` running a real $VISUAL script with the TUI handed over
 * (refused text kept for the next `e`) and `d` asking first, and `/state tidy` as one model turn
 * whose transitions are listed and undone as one.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import type { Component } from "@mariozechner/pi-tui";
import { tidyPrompt } from "../../lib/host/commands/tidy.js";
import { createStateFlow } from "../../lib/index.js";
import { shownOutput } from "../helpers/output.js";
import { draw, theme } from "../helpers/render-theme.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli } from "../cli/run.js";
import { extensionSession } from "./fixture.js";
import { waitFor, within } from "../helpers/soon.js";

const DOWN = "\x1b[B";
const ENTER = "\r";
const ESC = "\x1b";

/** A session whose CWD holds an intent owning a tactic, and a UI (or none) whose dialogs answer `answer`. */
async function editing(t: Parameters<typeof tempDir>[0], ui: { answer: boolean } | undefined) {
	const cwd = tempDir(t, "state-flow-cwd-");
	const agentDir = tempDir(t, "state-flow-agent-");
	let ids = 0;
	const asked: string[] = [];
	const screen: string[] = [];
	const mounted: { component?: Component; closed?: Promise<unknown> } = {};
	const partial: Partial<ExtensionUIContext> = {
		confirm: async (title, message) => {
			asked.push(`${title}\n${message}`);
			return ui?.answer === true;
		},
		custom: ((factory: (tui: unknown, th: unknown, kb: unknown, done: (r: unknown) => void) => Component) => {
			const tui = { requestRender: () => screen.push("render"), stop: () => screen.push("stop"), start: () => screen.push("start") };
			const closed = new Promise((resolve) => {
				mounted.component = factory(tui, theme, {}, resolve);
			});
			mounted.closed = closed;
			return closed;
		}) as ExtensionUIContext["custom"],
		notify: () => undefined,
		theme,
	};
	const uiContext = new Proxy(partial, {
		get: (target, prop) => (prop in target ? target[prop as keyof ExtensionUIContext] : () => undefined),
	}) as ExtensionUIContext;
	const notes: string[] = [];
	const factories = [
		createStateFlow({ agentDir, notify: (m) => notes.push(m), newId: () => `${String(++ids).padStart(2, "0")}bb1111-2222-4333-8444-555566667777` }),
	];
	const { session, faux } = await extensionSession(t, { cwd, agentDir, factories, ...(ui ? { uiContext } : {}) });
	faux.setResponses([
		fauxAssistantMessage(
			[
				fauxToolCall(
					"patch_state",
					{ cwd: { intents: { parser: { goal: "parse", owns: [{ $ref: "cwd.tactics.lex" }] } }, tactics: { lex: "write the lexer", next: "old" } } },
					{ id: "call_1" },
				),
			],
			{ stopReason: "toolUse" },
		),
		fauxAssistantMessage([fauxText("ok")]),
	]);
	await session.prompt("plan");
	await session.agent.waitForIdle();
	const stores = () => openStoresAt({ agentDir, cwd });
	const cwdHistory = async () => stores().load("cwd");
	const outputs = () => shownOutput(session.messages);
	const lastOutput = () => outputs().at(-1)?.text ?? "";
	/** Run a command; what it showed: its output message, or the notice (a one-line refusal) it gave instead. */
	const command = async (text: string) => {
		const shown = outputs().length;
		const noted = notes.length;
		await session.prompt(text);
		return outputs().length > shown ? lastOutput() : notes.slice(noted).join("\n");
	};
	/** `/state tidy`, then the model's run, then the report it shows when the run ends. */
	const tidy = async () => {
		const shown = outputs().length;
		await session.prompt("/state tidy");
		await session.agent.waitForIdle();
		// The report is delivered once pi is idle after the run (a timer after agent_end).
		await waitFor(() => outputs().length > shown, { what: "the tidy report after the run" });
		return lastOutput();
	};
	return { tidy, notes, session, faux, cwd, agentDir, asked, screen, mounted, cwdHistory, command, outputs };
}

/** An executable $VISUAL script (sh, the file as $1). */
function script(t: Parameters<typeof tempDir>[0], body: string): string {
	const path = join(tempDir(t, "state-flow-editor-"), "editor.sh");
	writeFileSync(path, `#!/bin/sh\n${body}\n`);
	chmodSync(path, 0o755);
	return path;
}

async function settled(component: Component): Promise<void> {
	await waitFor(() => !draw(component, 80).join("\n").includes("working…"), { what: "the browser to show the outcome of its change" });
}

describe("/state set and /state delete", () => {
	it("set: one transition signed as the command, before and after shown, undone by /state undo", async (t) => {
		const s = await editing(t, undefined);
		const text = await s.command('/state set cwd.tactics.next "write the parser"');
		assert.match(text, /^set cwd\.tactics\.next\n {2}- "old"\n {2}\+ "write the parser"\nDone as transition 02bb1111 \(\/state undo reverts it\)\.$/);
		const h = await s.cwdHistory();
		assert.equal(h.state.tactics.next, "write the parser");
		assert.deepEqual(h.tail.at(-1)?.by, { kind: "command", command: "/state set cwd.tactics.next" });
		assert.ok(h.tail.at(-1)?.who);
		// JSON with spaces is read as typed; a bad value is refused naming why, nothing written.
		await s.command('/state set cwd.intents.parser.goal "parse it all"');
		assert.equal(((await s.cwdHistory()).state.intents.parser as { goal: string }).goal, "parse it all");
		assert.match(await s.command("/state set cwd.tactics.next write"), /the value is not JSON .*Nothing was written/);
		assert.match(await s.command('/state set cwd.tactics.next {"a": null}'), /`cwd\.tactics\.next\.a` is null/);
		assert.equal((await s.cwdHistory()).seq, 3);
	});

	it("delete of an intent that owns a tactic: without a UI refused until --yes; with one, pi's dialog asks", async (t) => {
		const s = await editing(t, undefined);
		const refused = await s.command("/state delete cwd.intents.parser");
		assert.match(refused, /also deletes 1 entry owned by what it removes:\n {4}cwd\.tactics\.lex\nNothing was written: add --yes/);
		assert.equal((await s.cwdHistory()).seq, 1);
		const done = await s.command("/state delete cwd.intents.parser --yes");
		assert.match(done, /Done as transition/);
		const h = await s.cwdHistory();
		assert.equal(h.state.tactics.lex, undefined);
		assert.deepEqual(h.tail.at(-1)?.cascades, [{ owner: "cwd", intent: "parser", targets: ["cwd.tactics.lex"] }]);

		const declined = await editing(t, { answer: false });
		const kept = await declined.command("/state delete cwd.intents.parser");
		assert.match(declined.asked[0] ?? "", /^State Flow: delete cwd\.intents\.parser\?\n[\s\S]*cwd\.tactics\.lex[\s\S]*deletes more than the value named/);
		assert.match(kept, /Kept: nothing was written/);
		assert.equal((await declined.cwdHistory()).seq, 1);
		const agreed = await editing(t, { answer: true });
		assert.match(await agreed.command("/state delete cwd.intents.parser"), /Done as transition/);
		assert.equal((await agreed.cwdHistory()).state.intents.parser, undefined);
		// A plain delete (nothing else goes with it) asks nothing.
		assert.match(await agreed.command("/state delete cwd.tactics.next"), /Done as transition/);
		assert.equal(agreed.asked.length, 1);
	});
});

describe("the browser's e and d", () => {
	async function openBrowser(s: Awaited<ReturnType<typeof editing>>) {
		const running = s.session.prompt("/state browse");
		const c = await waitFor(() => s.mounted.component, { what: "/state browse to mount the browser" });
		return {
			c,
			keys: (...ks: string[]) => {
				for (const k of ks) c.handleInput?.(k);
			},
			close: async () => {
				c.handleInput?.(ESC);
				await within(s.mounted.closed ?? Promise.reject(new Error("no browser is mounted")), "the browser to close on Esc");
				await running;
				s.mounted.component = undefined;
			},
		};
	}

	it("e opens the selected value in $VISUAL with the TUI handed over and sets what is saved; refused text comes back on the next e", async (t) => {
		const s = await editing(t, { answer: false });
		const before = process.env.VISUAL;
		t.after(() => {
			if (before === undefined) delete process.env.VISUAL;
			else process.env.VISUAL = before;
		});
		const b = await openBrowser(s);
		// Rows: intents, strategy, tactics (open it), then lex, next.
		b.keys(DOWN, DOWN, ENTER, DOWN, DOWN);
		assert.match(draw(b.c, 80).join("\n"), /› {5}next\s+old/);
		assert.match(draw(b.c, 80).join("\n"), /e edit · d delete/);
		process.env.VISUAL = script(t, `printf '"half' > "$1"`);
		b.keys("e");
		await settled(b.c);
		assert.match(draw(b.c, 80).join("\n"), /refused: .*not valid JSON|refused: .*JSON/);
		assert.deepEqual(s.screen.filter((x) => x !== "render").slice(0, 2), ["stop", "start"]);
		assert.equal((await s.cwdHistory()).seq, 1);
		// The next e opens the kept text: this editor finishes it.
		process.env.VISUAL = script(t, `grep -q '^"half$' "$1" && printf '"half done"' > "$1"`);
		b.keys("e");
		await settled(b.c);
		assert.match(draw(b.c, 80).join("\n"), /set cwd\.tactics\.next as transition 02bb1111/);
		assert.match(draw(b.c, 80).join("\n"), /next\s+half done/);
		const h = await s.cwdHistory();
		assert.equal(h.state.tactics.next, "half done");
		assert.deepEqual(h.tail.at(-1)?.by, { kind: "command", command: "/state edit cwd.tactics.next" });
		await b.close();
	});

	it("d deletes the selected value after y, naming what goes with it; any other key keeps it", async (t) => {
		const s = await editing(t, { answer: false });
		const b = await openBrowser(s);
		b.keys(ENTER, DOWN, "d");
		await settled(b.c);
		assert.match(draw(b.c, 120).join("\n"), /Delete cwd\.intents\.parser \(and 1 entry it owns\)\? y = delete, any other key = keep/);
		b.keys("n");
		assert.match(draw(b.c, 80).join("\n"), /kept; nothing changed/);
		assert.equal((await s.cwdHistory()).seq, 1);
		b.keys("d");
		await settled(b.c);
		b.keys("y");
		await settled(b.c);
		assert.match(draw(b.c, 80).join("\n"), /deleted cwd\.intents\.parser as transition/);
		const h = await s.cwdHistory();
		assert.equal(h.state.intents.parser, undefined);
		assert.equal(h.state.tactics.lex, undefined);
		await b.close();
	});

	it("d names the reference a delete leaves dangling, in the words state-flow delete prints", async (t) => {
		const s = await editing(t, { answer: false });
		const b = await openBrowser(s);
		// Rows: intents, strategy, tactics (open it), then lex: owned by cwd.intents.parser.
		b.keys(DOWN, DOWN, ENTER, DOWN, "d");
		await settled(b.c);
		const warning = "leaves cwd.intents.parser -> cwd.tactics.lex dangling";
		assert.ok(draw(b.c, 140).join("\n").includes(`Delete cwd.tactics.lex (${warning})? y = delete, any other key = keep`), draw(b.c, 140).join("\n"));
		b.keys("n");
		assert.equal((await s.cwdHistory()).seq, 1);
		await b.close();
		// The command line says the same of the same delete (and, asking nothing for it, does it).
		const cli = runCli(["delete", "cwd.tactics.lex"], { cwd: s.cwd, env: { PI_CODING_AGENT_DIR: s.agentDir } });
		assert.equal(cli.code, 0, cli.stderr);
		assert.ok(cli.stdout.includes(`  ${warning}\n`), cli.stdout);
	});
});

describe("/state tidy", () => {
	it("asks the model in one turn to tidy in one patch_state, then lists its transition, undone as one", async (t) => {
		const s = await editing(t, undefined);
		let prompt = "";
		s.faux.setResponses([
			(context) => {
				// The user's message of this turn (State Flow's head message follows it).
				const texts = context.messages.flatMap((m) =>
					m.role === "user" ? [typeof m.content === "string" ? m.content : m.content.map((c) => (c.type === "text" ? c.text : "")).join("")] : [],
				);
				prompt = texts.find((x) => x.startsWith("Tidy")) ?? "";
				return fauxAssistantMessage([fauxToolCall("patch_state", { cwd: { intents: { parser: null }, tactics: { next: null } } }, { id: "call_tidy" })], {
					stopReason: "toolUse",
				});
			},
			fauxAssistantMessage([fauxText("tidied")]),
		]);
		const text = await s.tidy();
		assert.equal(prompt, tidyPrompt(["cwd", "session"]));
		assert.match(prompt, /in ONE patch_state call/);
		assert.match(
			text,
			/^The model made 1 transition:\n {2}cwd #2 02bb1111: intents\.parser \(deleted\), tactics\.next \(deleted\), tactics\.lex \(deleted\)\n {4}cascade: intents\.parser took 1 target\(s\)\n\/state undo 02bb1111 reverts it as one change\.$/,
		);
		const h = await s.cwdHistory();
		assert.deepEqual(h.state.tactics, {});
		await s.command("/state undo 02bb1111");
		const back = await s.cwdHistory();
		assert.deepEqual(back.state.tactics, { lex: "write the lexer", next: "old" });
		assert.ok(back.state.intents.parser);
	});

	it("says so when the model changes nothing, and is refused when State Flow is off", async (t) => {
		const s = await editing(t, undefined);
		s.faux.setResponses([fauxAssistantMessage([fauxText("nothing to tidy")])]);
		assert.match(await s.tidy(), /The model changed nothing/);
		await s.session.prompt("/state off");
		assert.match(await s.command("/state tidy"), /State Flow is off/);
		assert.equal((await s.cwdHistory()).seq, 1);
	});
});
