/**
 * Opening `/state browse` over the live host: the owners as loaded when it opened (loaded again
 * after each change), the `/state` command's own undo, mode and edit code, and the terminal's
 * height from pi. Without an interactive UI `openBrowser` returns false and the command prints text.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { OWNERS } from "../../core/types.js";
import { latestRedoPlan, selectedUndoPlan, type UndoPlan } from "../../core/undo.js";
import { projectLine } from "../../storage/project/project.js";
import { StateBrowser, type BrowserSource } from "./state-browser.js";
import type { OwnerView } from "./rows.js";
import { type BrowserEdits, browserEdits, reloading, type Suspend } from "./edits.js";
import { loadFor } from "../commands/status.js";
import type { StateFlowHost } from "../runtime.js";
import type { Selection } from "../session/selection.js";

/** What the browser changes through the `/state` command's own code (undo, mode and owners, hand edits). */
export interface BrowserActions {
	undo: (plan: UndoPlan) => Promise<string>;
	choose: (next: Selection) => string;
	edits?: BrowserEdits;
}

/** The browser's data source over the live host: the owners as loaded when it opened, loaded again after each change. */
export async function hostSource(host: StateFlowHost, actions: BrowserActions): Promise<BrowserSource> {
	const load = async (): Promise<OwnerView[]> => {
		const wanted = host.selection().owners;
		const views: OwnerView[] = [];
		for (const owner of OWNERS) views.push({ owner, wanted: wanted.includes(owner), history: await loadFor(host, owner) });
		return views;
	};
	let views = await load();
	const thenReload = async (change: () => Promise<string> | string): Promise<string> => {
		try {
			return await change();
		} finally {
			views = await load();
		}
	};
	return {
		selection: () => host.selection(),
		owners: () => views,
		now: () => host.options.now(),
		plan: (id) => selectedUndoPlan(Object.fromEntries(views.map((v) => [v.owner, v.history])), id),
		redo: () => latestRedoPlan(Object.fromEntries(views.map((v) => [v.owner, v.history])), host.selection().owners, false),
		undo: (plan) => thenReload(() => actions.undo(plan)),
		choose: (next) => thenReload(() => actions.choose(next)),
		...(actions.edits ? { edits: reloading(actions.edits, thenReload) } : {}),
		project: projectLine(host.project(), host.placement.project),
	};
}

/**
 * Show the browser until the user closes it. False when there is no interactive UI (print and
 * JSON mode have no UI; RPC mode has dialogs but no custom components, so the factory never runs).
 */
export async function openBrowser(host: StateFlowHost, ctx: ExtensionCommandContext, actions: BrowserActions): Promise<boolean> {
	if (!ctx.hasUI) return false;
	let shown = false;
	// `e` hands the terminal to the user's editor as pi's own external editor does: the TUI stopped, then started and redrawn.
	let screen: { stop?: () => void; start?: () => void; requestRender: (force?: boolean) => void } | undefined;
	const suspend: Suspend = (run) => {
		screen?.stop?.();
		try {
			return run();
		} finally {
			screen?.start?.();
			screen?.requestRender(true);
		}
	};
	const source = await hostSource(host, { ...actions, edits: actions.edits ?? browserEdits(host, ctx, suspend) });
	await ctx.ui.custom<void>((tui, theme, _keys, done) => {
		shown = true;
		screen = tui;
		return new StateBrowser(
			source,
			theme,
			() => done(undefined),
			() => tui.requestRender(),
			() => tui.terminal?.rows,
		);
	});
	return shown;
}
