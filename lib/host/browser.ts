/**
 * The interactive `/state browse` view: a keyboard-only pi-tui component shown with
 * `ctx.ui.custom` in place of the editor. Owners across the top (←/→), two tabs (Tab): the
 * state as collapsible plane trees with sizes, and the history timeline with the selected
 * transition's diff; `v` shows the selected value or transition whole in a scrolling pane; `u`
 * undoes the selected transition and `r` redoes the latest undo, each after a y/n question naming
 * whose it was; `/` finds keys and text in the state
 * (`n` the next one); `m` and `w` change this session's mode and wanted owners as `/state <mode>`
 * and `/state owners` do. Every line is cut to the width pi gives, and colours come from pi's
 * theme. Without an interactive UI `openBrowser` returns false and the command prints text instead.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { type Component, matchesKey, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import type { Owner, Result, TransitionRecord } from "../core/types.js";
import { OWNERS } from "../core/types.js";
import { MODES } from "../storage/config.js";
import { messageOf } from "../core/errors.js";
import { printable, spellId } from "../core/printable.js";
import { formatSize } from "../model/head.js";
import {
	type Detail,
	diffLines,
	type OwnerView,
	pathKey,
	searchPaths,
	searchTransitions,
	timeline,
	transitionDetail,
	treeRows,
	valueDetail,
} from "./browser-model.js";
import { latestRedoPlan, selectedUndoPlan, type UndoPlan } from "../core/undo.js";
import { type BrowserEdits, browserEdits, editQuestion, type PendingEdit, reloading, rowTarget, type Suspend } from "./edit-command.js";
import { changedCount, changedKeys, columns, compactTime, fitList, LISTED_KEYS, loadFor, madeBy, shortIdsOf, storeSummary } from "./command-text.js";
import { DetailPager } from "./detail-pager.js";
import { fitScreen } from "./screen-text.js";
import type { RenderTheme } from "./render.js";
import type { StateFlowHost } from "./runtime.js";
import { describeSelection, type Selection } from "./selection.js";
import { projectLine } from "../storage/project.js";

/** Lines an unreadable owner's reason may take in the browser. */
const FAILURE_ROWS = 8;
/** Rows of a list shown at once; the view scrolls to keep the selection visible. */
export const LIST_ROWS = 12;
/** Diff lines shown under the timeline. */
export const DIFF_ROWS = 8;
/**
 * Rows of the body (between the two rules) at most: the list, the selected transition's line, its
 * diff and the `… more` line. On a shorter screen the body shrinks to fit (`bodyRows`).
 */
export const MAX_BODY = LIST_ROWS + 1 + DIFF_ROWS + 1;
/** Rows pi keeps below a custom component (its footer and the State Flow status), left free. */
export const PI_ROWS = 4;
/** The fewest body rows drawn, however short the screen (a list of three and a one-line diff). */
const MIN_BODY = 6;

/** Rows of the body for a screen of `rows` (unknown: the largest), the header and the bottom taken out. */
export function bodyRows(rows: number | undefined, chrome: number): number {
	if (rows === undefined || !Number.isFinite(rows) || rows <= 0) return MAX_BODY;
	return Math.max(MIN_BODY, Math.min(MAX_BODY, rows - PI_ROWS - chrome));
}

/** The keys each view lists under it. */
const KEYS = {
	detail: ["↑↓ scroll", "pgup/pgdn page", "home/end", "v/esc back"],
	typing: ["type a key or text", "enter find", "esc cancel"],
	state: ["↑↓ move", "enter open/close", "v view", "e edit", "d delete", "/ search", "←→ owner", "w wanted", "m mode", "tab history", "esc close"],
	history: ["↑↓ move", "v view", "u undo", "r redo", "/ search", "f full ids", "←→ owner", "w wanted", "m mode", "tab state", "esc close"],
};

/** Keys joined by ` · ` on as many lines of `width` as they need. */
function keyLines(keys: readonly string[], width: number): string[] {
	const lines: string[] = [];
	for (const key of keys) {
		const last = lines.at(-1);
		if (last !== undefined && columns(last) + 3 + columns(key) <= width) lines[lines.length - 1] = `${last} · ${key}`;
		else lines.push(key);
	}
	return lines;
}

/** Lines the keys take at `width` in the view that needs most, so switching views keeps the height. */
function helpRows(width: number): number {
	return Math.max(...Object.values(KEYS).map((k) => keyLines(k, width).length));
}

/** Rows of the history list for a body of `body` rows; the rest is the selected transition's line, its diff and `… more`. */
export function listRowsOf(body: number): number {
	return Math.max(3, Math.round((body * LIST_ROWS) / MAX_BODY));
}

export type Tab = "state" | "history";

/** What the browser needs from its surroundings (tests pass their own). */
export interface BrowserSource {
	/** This session's selection now: the title, and which owners are wanted. */
	selection: () => Selection;
	owners: () => OwnerView[];
	now: () => Date;
	/** Plan the undo of one transition, or say why not. */
	plan: (id: string) => Result<UndoPlan>;
	/** Plan the redo of the latest undo among the wanted owners, or say why not (absent: no redo key). */
	redo?: () => Result<UndoPlan>;
	/** Commit a plan; returns what happened in words. */
	undo: (plan: UndoPlan) => Promise<string>;
	/** Make `next` this session's selection, as `/state <mode>` and `/state owners` do; returns what happened in words. */
	choose: (next: Selection) => Promise<string>;
	/** Hand edits of the selected value (`e`, `d`); absent: the keys say they are not available here. */
	edits?: BrowserEdits;
	/** Which project this is and why (`projectLine`), shown under the title; absent: not shown. */
	project?: string;
}

export class StateBrowser implements Component {
	tab: Tab = "state";
	owner: Owner;
	cursor = 0;
	full = false;
	readonly expanded = new Map<Owner, Set<string>>();
	/** A pending confirmation, or the last message (undo done, refused). */
	confirm: { plan: UndoPlan; record: TransitionRecord } | undefined;
	message: { text: string; level: "info" | "warning" | "error" } | undefined;
	busy = false;
	/** A hand edit shown and waiting for `y` (`d`, or an `e` that deletes more than the value). */
	pendingEdit: PendingEdit | undefined;
	/**
	 * A search (`/`): the text being typed, then what it found in the tab it was made in — paths of
	 * the state tree, or rows of the history — and the match shown.
	 */
	search: { text: string; typing: boolean; paths: string[][]; rows: number[]; at: number; more: boolean } | undefined;
	/** The detail pane (`v`): its title, the source lines' signs (history) and the pager over its lines (a page wrapped at a time). */
	detail: { title: string; signs: boolean; lines: readonly string[]; pager: DetailPager } | undefined;
	#views: OwnerView[];
	/** Rows of the body at the last drawing: a page of the list or the pane, for PgUp/PgDn. */
	#body = MAX_BODY;

	constructor(
		private readonly source: BrowserSource,
		private readonly theme: RenderTheme,
		private readonly done: () => void,
		private readonly requestRender: () => void = () => {},
		/** The terminal's height (pi's `tui.terminal.rows`); unknown draws the largest layout. */
		private readonly screenRows: () => number | undefined = () => undefined,
	) {
		this.#views = source.owners();
		this.owner = this.#views.find((v) => v.wanted)?.owner ?? "cwd";
	}

	#view(): OwnerView {
		return this.#views.find((v) => v.owner === this.owner) as OwnerView;
	}

	#expandedOf(owner: Owner): Set<string> {
		let set = this.expanded.get(owner);
		if (!set) this.expanded.set(owner, (set = new Set()));
		return set;
	}

	#rows() {
		const h = this.#view().history;
		return h.ok ? treeRows(h.value.state, this.#expandedOf(this.owner)) : [];
	}

	#records(): TransitionRecord[] {
		const h = this.#view().history;
		return h.ok ? timeline(h.value) : [];
	}

	#count(): number {
		return this.tab === "state" ? this.#rows().length : this.#records().length;
	}

	handleInput(data: string): void {
		if (this.busy) return;
		if (this.confirm) return this.#answer(data);
		if (this.pendingEdit) return this.#answerEdit(data);
		if (this.detail) return this.#scroll(data);
		if (this.search?.typing) return this.#type(data);
		this.message = undefined;
		const count = this.#count();
		if (matchesKey(data, "escape") || data === "q") return this.done();
		if (matchesKey(data, "up") || data === "k") this.cursor = Math.max(0, this.cursor - 1);
		else if (matchesKey(data, "down") || data === "j") this.cursor = Math.min(Math.max(0, count - 1), this.cursor + 1);
		else if (matchesKey(data, "pageUp")) this.cursor = Math.max(0, this.cursor - this.#listRows());
		else if (matchesKey(data, "pageDown")) this.cursor = Math.min(Math.max(0, count - 1), this.cursor + this.#listRows());
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
		const h = this.#view().history;
		if (text === "" || !h.ok) {
			this.search = undefined;
			return;
		}
		if (this.tab === "state") {
			const { paths, more } = searchPaths(h.value.state, text);
			this.search = { text, typing: false, paths, rows: [], at: 0, more };
		} else this.search = { text, typing: false, paths: [], rows: searchTransitions(this.#records(), text), at: 0, more: false };
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
			const open = this.#expandedOf(this.owner);
			for (let i = 1; i < path.length; i++) open.add(pathKey(path.slice(0, i)));
			this.cursor = Math.max(
				0,
				this.#rows().findIndex((r) => pathKey(r.path) === pathKey(path)),
			);
		}
		const found = `${hits}${search.more ? "+" : ""}`;
		this.message = { text: `"${search.text}": ${search.at + 1} of ${found}${hits > 1 ? " · n next" : ""}`, level: "info" };
	}

	#openDetail(): void {
		const h = this.#view().history;
		if (!h.ok) return;
		if (this.tab === "state") {
			const row = this.#rows()[this.cursor];
			const d = row && valueDetail(this.owner, h.value.state, row.path);
			if (d) this.detail = paged(d, false);
		} else {
			const record = this.#records()[this.cursor];
			if (record) this.detail = paged(transitionDetail(this.owner, record), true);
		}
	}

	/** Keys of the detail pane: scroll it, or leave it (`v`, Esc, `q`). The last page is filled when drawn. */
	#scroll(data: string): void {
		const pager = (this.detail as NonNullable<StateBrowser["detail"]>).pager;
		if (matchesKey(data, "escape") || data === "q" || data === "v") this.detail = undefined;
		else if (matchesKey(data, "up") || data === "k") pager.scroll(-1);
		else if (matchesKey(data, "down") || data === "j") pager.scroll(1);
		else if (matchesKey(data, "pageUp")) pager.scroll(-this.#detailRows());
		else if (matchesKey(data, "pageDown") || matchesKey(data, "space")) pager.scroll(this.#detailRows());
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
		const row = this.#rows()[this.cursor];
		if (!row?.branch) return;
		const set = this.#expandedOf(this.owner);
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
				this.#views = this.source.owners();
				if (listChanged) this.cursor = 0;
				this.requestRender();
			});
	}

	#askUndo(): void {
		const record = this.#records()[this.cursor];
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
			this.message = { text: `${pending?.plan.op ?? "undo"} cancelled; nothing changed.`, level: "info" };
			this.requestRender();
			return;
		}
		this.#run(this.source.undo(pending.plan), "undo failed", true);
		this.requestRender();
	}

	/** `e` (the selected value in the user's editor) or `d` (delete it, after `y`), through the source's edits. */
	#handEdit(key: "e" | "d"): void {
		const edits = this.source.edits;
		const h = this.#view().history;
		const row = this.#rows()[this.cursor];
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
				this.#views = this.source.owners();
				this.cursor = Math.min(this.cursor, Math.max(0, this.#count() - 1));
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

	invalidate(): void {}

	render(width: number): string[] {
		const t = this.theme;
		const fit = (line: string) => truncateToWidth(line, width);
		const out: string[] = [];
		const tabs = (["state", "history"] as const).map((x) => (x === this.tab ? t.fg("accent", t.bold(`[${x}]`)) : t.fg("muted", ` ${x} `))).join(" ");
		out.push(fit(`${t.fg("accent", t.bold("State Flow"))} ${t.fg("muted", describeSelection(this.source.selection()))}  ${tabs}`));
		if (this.source.project !== undefined) out.push(fit(t.fg("muted", this.source.project)));
		out.push(
			fit(
				this.#views
					.map((v) => {
						const name = v.owner === this.owner ? t.bold(`[${v.owner}]`) : ` ${v.owner} `;
						const bytes = v.history.ok ? storeSummary(v.history).split(",")[0] : printable(v.history.why.split(":")[0] ?? "");
						return t.fg(v.owner === this.owner ? "accent" : v.wanted ? "text" : "dim", `${name} ${bytes}${v.wanted ? "" : " (not wanted)"}`);
					})
					.join("  "),
			),
		);
		out.push(fit(t.fg("dim", "─".repeat(Math.max(1, width)))));
		const bottom = this.#bottom(width);
		// A stable height that fits the screen: the header and bottom always drawn, the body padded to its rows.
		this.#body = bodyRows(this.screenRows(), out.length + bottom.length);
		const body = this.#drawBody(width);
		out.push(...body.slice(0, this.#body));
		for (let i = body.length; i < this.#body; i++) out.push("");
		out.push(...bottom);
		return out;
	}

	#drawBody(width: number): string[] {
		const t = this.theme;
		const fit = (line: string) => truncateToWidth(line, width);
		const out: string[] = [];
		const h = this.#view().history;
		if (this.detail) out.push(...this.#renderDetail(width));
		// The whole reason, wrapped (a few lines at most): it says what happened and what to do.
		else if (!h.ok)
			out.push(
				...wrapTextWithAnsi(fitScreen(`${this.owner}: ${printable(h.why)}`, width, FAILURE_ROWS).text, width)
					.slice(0, FAILURE_ROWS)
					.map((l) => fit(t.fg("error", l))),
			);
		else if (this.tab === "state") out.push(...this.#renderTree(width));
		else out.push(...this.#renderHistory(width));
		return out;
	}

	/** The rule, one status line (empty when there is nothing to say, so the height stays) and the keys. */
	#bottom(width: number): string[] {
		const t = this.theme;
		const fit = (line: string) => truncateToWidth(line, width);
		const out = [fit(t.fg("dim", "─".repeat(Math.max(1, width))))];
		if (this.busy) out.push(fit(t.fg("warning", "working…")));
		else if (this.search?.typing)
			out.push(fit(t.fg("accent", `search ${this.owner}${this.tab === "history" ? " history" : ""}: ${printable(this.search.text)}▏`)));
		else if (this.confirm) {
			const r = this.confirm.record;
			const { op, owners } = this.confirm.plan;
			const verb = op === "redo" ? "Redo" : "Undo";
			// Whose it was, so reverting a teammate's change is never a surprise.
			const by = r.who === undefined ? "" : ` by ${spellId(r.who.user)}@${spellId(r.who.host)}`;
			out.push(fit(t.fg("warning", `${verb} #${r.seq} ${spellId(r.id.slice(0, 8))}${by} in ${owners.join("+")}? y = ${op}, any other key = keep`)));
		} else if (this.pendingEdit) out.push(fit(t.fg("warning", printable(editQuestion(this.pendingEdit)))));
		else if (this.message) out.push(fit(t.fg(this.message.level === "info" ? "success" : this.message.level, printable(this.message.text))));
		else out.push("");
		const help = this.#help(width);
		for (const line of help) out.push(fit(t.fg("dim", line)));
		for (let i = help.length; i < helpRows(width); i++) out.push("");
		return out;
	}

	/** Rows of the list: the whole body on the state tab, part of it on the history tab (the diff takes the rest). */
	#listRows(): number {
		return this.tab === "state" ? this.#body : listRowsOf(this.#body);
	}

	/** Rows of the pane's page: the body less its title and where-line. */
	#detailRows(): number {
		return Math.max(1, this.#body - 2);
	}

	/** The keys of the present view, on as many lines as the width needs (every key stays listed). */
	#help(width: number): string[] {
		const keys = this.detail ? KEYS.detail : this.search?.typing ? KEYS.typing : this.tab === "state" ? KEYS.state : KEYS.history;
		return keyLines(keys, width);
	}

	#window<T>(items: T[]): { shown: T[]; start: number } {
		const rows = this.#listRows();
		const start = Math.max(0, Math.min(this.cursor - Math.floor(rows / 2), items.length - rows));
		return { shown: items.slice(start, start + rows), start };
	}

	/** The detail pane: its title, a page of its lines wrapped to the width (only that page is wrapped), and where the page is. */
	#renderDetail(width: number): string[] {
		const t = this.theme;
		const d = this.detail as NonNullable<StateBrowser["detail"]>;
		// A diff's wrapped rows carry their line's sign, aligned under its text, so none reads as context.
		const page = d.pager.page(Math.max(8, width - (d.signs ? 4 : 2)), this.#detailRows());
		const rows = page.rows.map((r) => {
			const sign = d.signs ? d.lines[r.line]?.[0] : undefined;
			const color = sign === "+" ? "toolDiffAdded" : sign === "-" ? "toolDiffRemoved" : sign === "!" ? "warning" : "text";
			const text = r.lead || sign === undefined ? r.text : `${sign} ${r.text}`;
			return truncateToWidth(`  ${t.fg(color, text)}`, width);
		});
		const span = page.first === page.last ? `line ${page.first}` : `lines ${page.first}–${page.last}`;
		const where = page.whole ? `${page.lines} line${page.lines === 1 ? "" : "s"}` : `${span} of ${page.lines} · ${page.percent}%`;
		return [truncateToWidth(t.fg("accent", t.bold(d.title)), width), ...rows, truncateToWidth(t.fg("dim", `  ${where}`), width)];
	}

	#renderTree(width: number): string[] {
		const t = this.theme;
		const rows = this.#rows();
		const { shown, start } = this.#window(rows);
		return shown.map((row, i) => {
			const selected = start + i === this.cursor;
			const marker = row.branch ? (row.expanded ? "▾" : "▸") : " ";
			const left = `${selected ? "›" : " "} ${"  ".repeat(row.depth)}${marker} `;
			const sizeText = formatSize(row.bytes).padStart(8);
			const room = Math.max(4, width - left.length - sizeText.length - 2);
			const body = truncateToWidth(`${row.label}  ${t.fg("muted", row.note)}`, room, "…", true);
			const line = `${left}${selected ? t.bold(body) : body}  ${t.fg("dim", sizeText)}`;
			return truncateToWidth(selected ? t.fg("accent", line) : line, width);
		});
	}

	#renderHistory(width: number): string[] {
		const t = this.theme;
		const records = this.#records();
		if (records.length === 0) return [t.fg("muted", "  no retained transitions")];
		const short = shortIdsOf([this.#view().history]);
		const now = this.source.now();
		const { shown, start } = this.#window(records);
		const out = shown.map((r, i) => {
			const selected = start + i === this.cursor;
			const id = spellId(this.full ? r.id : (short.get(r.id) ?? r.id));
			const head = printable(`${selected ? "›" : " "} #${r.seq} ${id} ${this.full ? r.at : compactTime(r.at, now)} ${madeBy(r, this.full)}`);
			const room = Math.max(8, width - columns(head) - 1);
			const line = `${head} ${t.fg("muted", fitList(changedKeys(r, LISTED_KEYS).map(printable), room, changedCount(r)))}`;
			return truncateToWidth(selected ? t.fg("accent", line) : line, width);
		});
		const selected = records[this.cursor];
		if (selected) {
			out.push(
				truncateToWidth(
					t.fg("dim", printable(`  #${selected.seq} ${spellId(this.full ? selected.id : selected.id.slice(0, 8))} by ${madeBy(selected, true)}`)),
					width,
				),
			);
			const room = Math.max(1, this.#body - this.#listRows() - 2);
			const diff = diffLines(selected, width - 4, room);
			for (const d of diff.slice(0, room)) {
				const color = d.sign === "+" ? "toolDiffAdded" : d.sign === "-" ? "toolDiffRemoved" : "warning";
				out.push(truncateToWidth(t.fg(color, `  ${d.sign} ${d.text}`), width));
			}
			if (diff.total > room) out.push(t.fg("dim", `  … ${diff.total - room} more`));
		}
		return out;
	}
}

/** A detail for the pane: its lines paged. */
function paged(d: Detail, signs: boolean): NonNullable<StateBrowser["detail"]> {
	return { title: d.title, signs, lines: d.lines, pager: new DetailPager(d.lines) };
}

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
