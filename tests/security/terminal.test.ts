/**
 * A planted store (or a model's argument) never sends terminal controls to the user's screen:
 * keys, values, ids and provenance carrying OSC 52 (clipboard), CSI (screen), C1 and bidi
 * overrides reach the CLI's output, the browser, `/state` output messages, the tool renderers
 * only as `\uXXXX` escapes — which in JSON text mean the same characters.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import type { Component } from "@mariozechner/pi-tui";
import { printable } from "../../lib/core/printable.js";
import type { Owner } from "../../lib/core/types.js";
import { StateBrowser } from "../../lib/host/browser/state-browser.js";
import { renderOutput } from "../../lib/host/commands/output.js";
import { renderPatchCall, renderPatchResult, renderReadCall, renderReadResult } from "../../lib/host/tools/render.js";
import { theme } from "../helpers/render-theme.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "../cli/run.js";
import { withFlow } from "../host/fixture.js";
import { waitFor } from "../helpers/soon.js";

/** Controls a terminal acts on: the clipboard (OSC 52), the screen (CSI), C1 CSI, a bell, a carriage return, a bidi override. */
const OSC52 = "\u001b]52;c;cm0gLXJmIH4=\u0007";
const CLEAR = "\u001b[2J";
const C1 = "\u009b2J";
const BIDI = "\u202eevil";
const PAYLOAD = `${OSC52}${CLEAR}${C1}\r${BIDI}`;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters no output may carry raw
const UNSAFE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/;
/** The theme's own colours and weights (SGR sequences) are the only escapes a renderer may emit. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR sequences are what the theme writes
const themeCodes = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "");

function assertSafe(text: string, label: string): void {
	const rest = themeCodes(text);
	const at = rest.search(UNSAFE);
	assert.equal(at, -1, `${label}: a raw control at ${at}: ${JSON.stringify(rest.slice(Math.max(0, at - 20), at + 20))}`);
}

const rendered = (c: Component, width = 120) => c.render(width).join("\n");

/** A store written with the payload in a key, a value, a lazy note, the transition id and its provenance. */
async function planted(t: { after(fn: () => void): void }) {
	const { cwd: proj, agentDir: agent } = projectDirs(t, "state-flow-terminal-");
	const stores = openStoresAt({ agentDir: agent, cwd: proj });
	await stores.commit(
		{ cwd: { tactics: { [`k${PAYLOAD}`]: `v${PAYLOAD}`, plain: "ok" }, lazy: { "note.md": `line one\n${PAYLOAD}` } } },
		{ by: { kind: "command", command: `/state ${PAYLOAD}` }, id: `id${CLEAR}`, at: "2026-12-01T00:00:00.000Z" },
	);
	return { agent, proj, cwd: await stores.load("cwd") };
}

describe("terminal safety", () => {
	it("property: printable leaves no control, is idempotent, and keeps the meaning of JSON text", () => {
		assertProperty(
			fc.property(fc.string({ unit: "binary" }), (s) => {
				const p = printable(s);
				assert.equal(p.search(UNSAFE), -1);
				assert.equal(printable(p), p);
				assert.equal(JSON.parse(printable(JSON.stringify(s))), s);
			}),
			{ numRuns: 500 },
		);
		assert.equal(printable("tab\tand\nline ✓ 日本\r\n"), "tab\tand\nline ✓ 日本\r\n", "tabs, line ends and ordinary text stay");
		assert.equal(printable("over\rwrite"), "over\\u000dwrite", "a lone carriage return is spelled out");
		assert.equal(printable(CLEAR), "\\u001b[2J");
	});

	it("the CLI prints a planted store's history and state with escapes only", async (t) => {
		const s = await planted(t);
		const env = { PI_CODING_AGENT_DIR: s.agent };
		for (const args of [["history", "cwd"], ["show", "cwd"], ["show", "cwd", "--full"], ["export"]]) {
			const r = runCli(args, { cwd: s.proj, env });
			assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
			assertSafe(r.stdout + r.stderr, `state-flow ${args.join(" ")}`);
			assert.match(unwrapped(r.stdout), /\\u001b/, `${args.join(" ")} shows the escape`);
		}
		const exported = runCli(["export"], { cwd: s.proj, env });
		const doc = JSON.parse(exported.stdout);
		// Parsed back, the export holds the very characters stored.
		assert.equal(JSON.stringify(doc).includes(JSON.stringify(`v${PAYLOAD}`)), true, "the exported JSON still means the characters stored");
	});

	it("the browser shows keys, values, notes, ids, provenance and whole values with escapes only", async (t) => {
		const s = await planted(t);
		const views = (["global", "cwd", "session"] as Owner[]).map((owner) => ({
			owner,
			wanted: owner === "cwd",
			history: owner === "cwd" ? ({ ok: true, value: s.cwd } as const) : ({ ok: false, why: `unreadable: ${PAYLOAD}` } as const),
		}));
		const b = new StateBrowser(
			{
				selection: () => ({ mode: "active", owners: ["cwd"] }),
				owners: () => views,
				now: () => new Date("2026-12-01T00:00:01Z"),
				plan: () => ({ ok: false, why: PAYLOAD }),
				undo: async () => PAYLOAD,
				choose: async () => PAYLOAD,
			},
			theme,
			() => {},
		);
		const seen: string[] = [];
		const look = (label: string) => {
			for (const width of [80, 120]) {
				const text = rendered(b, width);
				assertSafe(text, `${label} at ${width}`);
				seen.push(text);
			}
		};
		look("planes");
		// Open tactics and lazy, then look at each row whole.
		for (const keys of [["\x1b[B", "\x1b[B", "\r"], ["\x1b[B"], ["v"], ["v", "\x1b[B"], ["v"], ["v"]]) {
			for (const k of keys) b.handleInput(k);
			look(`after ${JSON.stringify(keys)}`);
		}
		b.handleInput("\t");
		look("history");
		b.handleInput("f");
		look("history with full ids");
		b.handleInput("v");
		look("the transition whole");
		b.handleInput("v");
		b.handleInput("u");
		look("a refused undo");
		b.handleInput("m");
		await waitFor(() => !rendered(b, 80).includes("working…"), { what: "the browser to show the selection change's words" });
		look("a selection change's words");
		b.handleInput("\x1b[C");
		look("an unreadable owner");
		assert.match(seen.join("\n"), /\\u001b\]52/, "the payload is shown, as escapes");
	});

	it("notifications show what the user typed with escapes only", async () => {
		await withFlow({}, async (flow) => {
			const [said] = await flow.command(`/state undo ${OSC52}x`);
			assert.ok(said !== undefined);
			assertSafe(said, "notification");
			assert.match(said, /starts with `\\u001b\]52;c;cm0gLXJmIH4=\\u0007x`, and it is not an owner/);
		});
	});

	it("output messages and the tool renderers show escapes only", () => {
		assertSafe(rendered(renderOutput(`state: ${PAYLOAD}`, { title: "t", level: "info" }, theme)), "output message");
		const args = { cwd: { tactics: { [`k${PAYLOAD}`]: PAYLOAD } } };
		for (const expanded of [false, true]) {
			assertSafe(rendered(renderPatchCall(args, theme, { expanded })), "patch call");
			assertSafe(rendered(renderReadCall({ path: `tactics.${PAYLOAD}`, projection: PAYLOAD }, theme, { expanded })), "read call");
			const result = {
				content: [{ type: "text", text: `"${PAYLOAD}"\n${PAYLOAD}` }],
				details: { changed: [PAYLOAD], scopes: [PAYLOAD], transitionId: PAYLOAD, notices: [PAYLOAD], canonical: [PAYLOAD] },
			};
			for (const isError of [false, true]) {
				assertSafe(rendered(renderReadResult(result, { expanded, isPartial: false }, theme, { isError, expanded })), "read result");
				assertSafe(rendered(renderPatchResult(result, { expanded, isPartial: false }, theme, { isError, expanded })), "patch result");
			}
		}
	});
});
