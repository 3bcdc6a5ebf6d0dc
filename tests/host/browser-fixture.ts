/**
 * Set-up shared by the `/state browse` and `/state` output rendering tests: a real SDK session
 * running State Flow with two model turns already written, whose interactive UI mounts the
 * component `ctx.ui.custom` is given so a test can feed it keys and draw it.
 */
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import type { Component } from "@mariozechner/pi-tui";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { createStateFlow } from "../../lib/index.js";
import { shownOutput } from "../helpers/output.js";
import { theme } from "../helpers/render-theme.js";
import { tempDir } from "../helpers/temp-dir.js";
import { extensionSession } from "./fixture.js";
import { waitFor, within } from "../helpers/soon.js";

/** The widths every rendering is checked at. */
export const WIDTHS = [80, 120] as const;
export const ESC = "\x1b";

/** An interactive UI that mounts what `custom` builds; `close` is how the component ends. */
function mountingUi(mounted: { component?: Component; closed?: Promise<unknown> }, notes: string[]): ExtensionUIContext {
	const ui: Partial<ExtensionUIContext> = {
		custom: ((factory: (tui: unknown, th: unknown, kb: unknown, done: (r: unknown) => void) => Component) => {
			const closed = new Promise((resolve) => {
				mounted.component = factory({ requestRender() {} }, theme, {}, resolve);
			});
			mounted.closed = closed;
			return closed;
		}) as ExtensionUIContext["custom"],
		notify: (message) => void notes.push(message),
		theme,
	};
	return new Proxy(ui, { get: (target, prop) => (prop in target ? target[prop as keyof ExtensionUIContext] : () => undefined) }) as ExtensionUIContext;
}

/** A session with two model turns written (CWD tactics and a lazy note, then a Session strategy); `open` runs `/state browse`. */
export async function browsing(t: Parameters<typeof tempDir>[0]) {
	const cwd = tempDir(t, "state-flow-cwd-");
	const agentDir = tempDir(t, "state-flow-agent-");
	let tick = 0;
	let ids = 0;
	const mounted: { component?: Component; closed?: Promise<unknown> } = {};
	const notes: string[] = [];
	const factories = [
		createStateFlow({
			agentDir,
			now: () => new Date(2026, 10, 30, 9, 0, tick++),
			newId: () => `${String(++ids).padStart(2, "0")}aa1111-2222-4333-8444-555566667777`,
		}),
	];
	const { session, faux } = await extensionSession(t, { cwd, agentDir, factories, uiContext: mountingUi(mounted, notes) });
	faux.setResponses([
		fauxAssistantMessage(
			[
				fauxToolCall(
					"patch_state",
					{ cwd: { tactics: { first: "write the parser", second: "test it" }, lazy: { "notes/design.md": "Design notes\nline two" } } },
					{ id: "call_Xq9kZ2aB7cD4eF6gH8iJ0kL" },
				),
			],
			{ stopReason: "toolUse" },
		),
		fauxAssistantMessage(
			[
				fauxToolCall(
					"patch_state",
					{ cwd: { tactics: { first: "parser written" } }, session: { strategy: { now: "testing" } } },
					{ id: "call_Yr0lA3bC8dE5fG7hI9jK1mN" },
				),
			],
			{ stopReason: "toolUse" },
		),
		fauxAssistantMessage([fauxText("ok")]),
	]);
	await session.prompt("plan");
	await session.agent.waitForIdle();
	const open = async () => {
		const running = session.prompt("/state browse");
		const component = await waitFor(() => mounted.component, { what: "/state browse to mount the browser" });
		return {
			component,
			keys: (...ks: string[]) => {
				for (const k of ks) component.handleInput?.(k);
			},
			close: async () => {
				component.handleInput?.(ESC);
				await within(mounted.closed ?? Promise.reject(new Error("no browser is mounted")), "the browser to close on Esc");
				await running;
				mounted.component = undefined;
			},
		};
	};
	const outputs = () => shownOutput(session.messages);
	return { session, faux, open, outputs, notes };
}
