/**
 * The interactive `/state browse` view: a keyboard-only pi-tui component shown with
 * `ctx.ui.custom` in place of the editor. Owners across the top (←/→), two tabs (Tab): the
 * state as collapsible plane trees with sizes, and the history timeline with the selected
 * transition's diff; `v` shows the selected value or transition whole in a scrolling pane; `u`
 * undoes the selected transition and `r` redoes the latest undo, each after a y/n question naming
 * whose it was; `/` finds keys and text in the state
 * (`n` the next one); `m` and `w` change this session's mode and wanted owners as `/state <mode>`
 * and `/state owners` do; `e` and `d` edit by hand. This file is the keys; what they change is
 * drawn by `BrowserView` (`browser-view.ts`) within the screen (`browser-layout.ts`), and
 * `browser-open.ts` opens it over the live host.
 */
import { matchesKey } from "@mariozechner/pi-tui";
import type { Owner, Result, TransitionRecord } from "../../core/types.js";
import { printable } from "../../core/printable.js";
import { OWNERS } from "../../core/types.js";
import { MODES } from "../../storage/placement/config.js";
import { messageOf } from "../../core/errors.js";
import { type Detail, pathKey, searchPaths, searchTransitions, transitionDetail, valueDetail } from "./rows.js";
import type { UndoPlan } from "../../core/undo.js";
import { type PendingEdit, rowTarget } from "./edits.js";
import { DetailPager } from "./detail-pager.js";
import type { RenderTheme } from "../tools/render.js";
import type { Selection } from "../session/selection.js";
import { type BrowserSource, BrowserView } from "./view.js";

export { DIFF_ROWS, LIST_ROWS, MAX_BODY, PI_ROWS } from "./layout.js";
export type { BrowserSource, Tab } from "./view.js";

export class StateBrowser extends BrowserView {
	constructor(
		source: BrowserSource,
		theme: RenderTheme,
		private readonly done: () => void,
		private readonly requestRender: () => void = () => {},
		/** The terminal's height (pi's `tui.terminal.rows`); unknown draws the largest layout. */
		screenRows: () => number | undefined = () => undefined,
	) {
		super(source, theme, screenRows);
	}

	handleInput(data: string): void {
		if (this.busy) return;
		if (this.confirm) return this.#answer(data);
		if (this.pendingEdit) return this.#answerEdit(data);
		if (this.detail) return this.#scroll(data);
		if (this.search?.typing) return this.#type(data);
		this.message = undefined;
		const count = this.count();
		if (matchesKey(data, "escape") || data === "q") return this.done();
		if (matchesKey(data, "up") || data === "k") this.cursor = Math.max(0, this.cursor - 1);
		else if (matchesKey(data, "down") || data === "j") this.cursor = Math.min(Math.max(0, count - 1), this.cursor + 1);
		else if (matchesKey(data, "pageUp")) this.cursor = Math.max(0, this.cursor - this.listRows());
		else if (matchesKey(data, "pageDown")) this.cursor = Math.min(Math.max(0, count - 1), this.cursor + this.listRows());
		else if (matchesKey(data, "left") || matchesKey(data, "right") || data === "h" || data === "l")
			this.#switchOwner(matchesKey(data, "left") || data === "h" ? -1 : 1);
		else if (matchesKey(data, "tab")) {
			this.tab = this.tab === "state" ? "history" : "state";
			this.search = undefined;
			this.cursor = 0;
		} else if (matchesKey(data, "enter") || matchesKey(data, "space")) this.#toggle();
		else if (data === "f") this.full = !this.full;
		else if (data === "v") this.#openDetail();
		else if (data === "u" && this.tab === "history") this.#askUndo();
		else if (data === "r" && this.tab === "history" && this.source.redo) this.#ask(this.source.redo());
		else if ((data === "e" || data === "d") && this.tab === "state") this.#handEdit(data);
		else if (data === "/") this.search = { text: "", typing: true, paths: [], rows: [], at: 0, more: false };
		else if (data === "n" && this.search !== undefined && this.#hits(this.search) > 0) this.#showMatch(this.search.at + 1);
		else if (data === "m") this.#choose(this.#nextMode());
		else if (data === "w") this.#choose(this.#toggleWanted());
		else return;
		this.requestRender();
	}

	/** A key while a search is typed: text, Backspace, Enter to find, Esc to give up. */
	#type(data: string): void {
		const search = this.search as NonNullable<StateBrowser["search"]>;
		if (matchesKey(data, "escape")) this.search = undefined;
		else if (matchesKey(data, "enter")) this.#find(search.text);
		else if (matchesKey(data, "backspace")) search.text = search.text.slice(0, -1);
		// Typed text only: a key that sends a control sequence (anything `printable` would spell out) is not part of a search.
		else if (printable(data) === data && !/[\t\n]/.test(data)) search.text += data;
		this.requestRender();
	}

	#find(text: string): void {
		const h = this.view().history;
		if (text === "" || !h.ok) {
			this.search = undefined;
			return;
		}
		if (this.tab === "state") {
			const { paths, more } = searchPaths(h.value.state, text);
			this.search = { text, typing: false, paths, rows: [], at: 0, more };
		} else this.search = { text, typing: false, paths: [], rows: searchTransitions(this.records(), text), at: 0, more: false };
		if (this.#hits(this.search) === 0) {
			const where = this.tab === "state" ? `${this.owner} has "${text}" in a key or text` : `${this.owner}'s retained history has "${text}"`;
			this.message = { text: `nothing in ${where}${this.search.more ? " (searched the first part only)" : ""}`, level: "warning" };
			return;
		}
		this.#showMatch(0);
	}

	/** How many matches a search found (in the tab it was made in: switching tabs ends it). */
	#hits(search: NonNullable<StateBrowser["search"]>): number {
		return this.tab === "state" ? search.paths.length : search.rows.length;
	}

	/** Open the way to the `at`-th match (counting round) and select it. */
	#showMatch(at: number): void {
		const search = this.search as NonNullable<StateBrowser["search"]>;
		const hits = this.#hits(search);
		search.at = at % hits;
		if (this.tab === "history") this.cursor = search.rows[search.at] as number;
		else {
			const path = search.paths[search.at] as string[];
			const open = this.expandedOf(this.owner);
			for (let i = 1; i < path.length; i++) open.add(pathKey(path.slice(0, i)));
			this.cursor = Math.max(
				0,
				this.rows().findIndex((r) => pathKey(r.path) === pathKey(path)),
			);
		}
		const found = `${hits}${search.more ? "+" : ""}`;
		this.message = { text: `"${search.text}": ${search.at + 1} of ${found}${hits > 1 ? " · n next" : ""}`, level: "info" };
	}

	#openDetail(): void {
		const h = this.view().history;
		if (!h.ok) return;
		if (this.tab === "state") {
			const row = this.rows()[this.cursor];
			const d = row && valueDetail(this.owner, h.value.state, row.path);
			if (d) this.detail = paged(d, false);
		} else {
			const record = this.records()[this.cursor];
			if (record) this.detail = paged(transitionDetail(this.owner, record), true);
		}
	}

	/** Keys of the detail pane: scroll it, or leave it (`v`, Esc, `q`). The last page is filled when drawn. */
	#scroll(data: string): void {
		const pager = (this.detail as NonNullable<StateBrowser["detail"]>).pager;
		if (matchesKey(data, "escape") || data === "q" || data === "v") this.detail = undefined;
		else if (matchesKey(data, "up") || data === "k") pager.scroll(-1);
		else if (matchesKey(data, "down") || data === "j") pager.scroll(1);
		else if (matchesKey(data, "pageUp")) pager.scroll(-this.detailRows());
		else if (matchesKey(data, "pageDown") || matchesKey(data, "space")) pager.scroll(this.detailRows());
		else if (matchesKey(data, "home") || data === "g") pager.home();
		else if (matchesKey(data, "end") || data === "G") pager.end();
		else return;
		this.requestRender();
	}

	#switchOwner(step: number): void {
		const i = OWNERS.indexOf(this.owner);
		this.owner = OWNERS[(i + step + OWNERS.length) % OWNERS.length] as Owner;
		this.cursor = 0;
		// A search's matches are one owner's paths.
		this.search = undefined;
	}

	#toggle(): void {
		if (this.tab !== "state") return;
		const row = this.rows()[this.cursor];
		if (!row?.branch) return;
		const set = this.expandedOf(this.owner);
		const key = pathKey(row.path);
		if (set.has(key)) set.delete(key);
		else set.add(key);
	}

	/** The mode after the present one, in `/state`'s order (active, passive, off, then active again). */
	#nextMode(): Selection {
		const sel = this.source.selection();
		return { ...sel, mode: MODES[(MODES.indexOf(sel.mode) + 1) % MODES.length] as Selection["mode"] };
	}

	/** The wanted owners with the shown owner added or taken out; at least one stays. */
	#toggleWanted(): Selection | string {
		const sel = this.source.selection();
		const owner = this.owner;
		if (!sel.owners.includes(owner)) return { ...sel, owners: OWNERS.filter((o) => o === owner || sel.owners.includes(o)) };
		if (sel.owners.length === 1) return `${owner} is the only wanted owner and stays; \`m\` turns State Flow off instead.`;
		return { ...sel, owners: sel.owners.filter((o) => o !== owner) };
	}

	/** Apply a selection change (it touches no data, so nothing to confirm); a refusal is shown instead. */
	#choose(next: Selection | string): void {
		if (typeof next === "string") this.message = { text: next, level: "warning" };
		else this.#run(this.source.choose(next), "no change", false);
	}

	/** Run a change of the source, show its words (or its failure's first line), then the owners as they are now. */
	#run(change: Promise<string>, failed: string, listChanged: boolean): void {
		this.busy = true;
		change
			.then((text) => (this.message = { text, level: "info" }))
			.catch((e: unknown) => (this.message = { text: messageOf(e).split("\n")[0] ?? failed, level: "error" }))
			.finally(() => {
				this.busy = false;
				this.views = this.source.owners();
				if (listChanged) this.cursor = 0;
				this.requestRender();
			});
	}

	#askUndo(): void {
		const record = this.records()[this.cursor];
		if (!record) return;
		this.#ask(this.source.plan(record.id), record);
	}

	/** Ask about a plan (y commits it), or show why there is none. */
	#ask(plan: Result<UndoPlan>, record?: TransitionRecord): void {
		const shown = record ?? (plan.ok ? plan.value.reverts[0]?.record : undefined);
		if (plan.ok && shown) this.confirm = { plan: plan.value, record: shown };
		else if (!plan.ok) this.message = { text: plan.why, level: "warning" };
	}

	#answer(data: string): void {
		const pending = this.confirm;
		this.confirm = undefined;
		if (!pending || data !== "y") {
			this.message = { text: `${pending?.plan.op ?? "undo"} cancelled; nothing was written.`, level: "info" };
			this.requestRender();
			return;
		}
		this.#run(this.source.undo(pending.plan), "undo failed", true);
		this.requestRender();
	}

	/** `e` (the selected value in the user's editor) or `d` (delete it, after `y`), through the source's edits. */
	#handEdit(key: "e" | "d"): void {
		const edits = this.source.edits;
		const h = this.view().history;
		const row = this.rows()[this.cursor];
		const target = h.ok && row ? rowTarget(this.owner, h.value.state, row.path) : undefined;
		if (edits === undefined || target === undefined) {
			this.message = {
				text: edits === undefined ? "editing is not available here; use /state set or /state delete." : "nothing selected to edit.",
				level: "warning",
			};
			return;
		}
		this.busy = true;
		const asked =
			key === "e"
				? edits.edit(target).then((r) => {
						this.message = { text: r.text, level: r.level };
						this.pendingEdit = r.confirm;
					})
				: edits.previewDelete(target).then((p) => {
						this.pendingEdit = p;
					});
		asked
			.catch((e: unknown) => (this.message = { text: messageOf(e).split("\n")[0] ?? "refused", level: "error" }))
			.finally(() => {
				this.busy = false;
				this.views = this.source.owners();
				this.cursor = Math.min(this.cursor, Math.max(0, this.count() - 1));
				this.requestRender();
			});
	}

	#answerEdit(data: string): void {
		const pending = this.pendingEdit as PendingEdit;
		this.pendingEdit = undefined;
		if (data !== "y" || this.source.edits === undefined) {
			this.message = { text: "kept; nothing changed.", level: "info" };
			this.requestRender();
			return;
		}
		this.#run(this.source.edits.commit(pending), "the edit failed", false);
		this.requestRender();
	}
}

/** A detail for the pane: its lines paged. */
function paged(d: Detail, signs: boolean): NonNullable<StateBrowser["detail"]> {
	return { title: d.title, signs, lines: d.lines, pager: new DetailPager(d.lines) };
}
