/**
 * What the browser draws (`/state browse`): its state — tab, owner, selection, search, pane,
 * question — and every line of it at the width pi gives and the height the screen allows
 * (`browser-layout.ts`). The keys that change that state are `StateBrowser` (`browser.ts`).
 */
import { type Component, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import type { Owner, Result, TransitionRecord } from "../../core/types.js";
import { printable, spellId } from "../../core/printable.js";
import type { UndoPlan } from "../../core/undo.js";
import { formatSize } from "../../core/size.js";
import { diffLines, type OwnerView, timeline, treeRows } from "./rows.js";
import { bodyRows, FAILURE_ROWS, helpRows, KEYS, keyLines, listRowsOf, MAX_BODY } from "./layout.js";
import { type BrowserEdits, editQuestion, type PendingEdit } from "./edits.js";
import { formatWho } from "../../storage/placement/who.js";
import { changeList, columns, compactTime, madeBy, shortIdsOf, storeSummary, UNDONE } from "../commands/status.js";
import { undoneIn } from "../../core/undo-chain.js";
import type { DetailPager } from "./detail-pager.js";
import { fitScreen } from "../screen-text.js";
import type { RenderTheme } from "../tools/render.js";
import { describeSelection, type Selection } from "../session/selection.js";

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

export abstract class BrowserView implements Component {
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
	protected views: OwnerView[];
	/** Rows of the body at the last drawing: a page of the list or the pane, for PgUp/PgDn. */
	protected body = MAX_BODY;

	constructor(
		protected readonly source: BrowserSource,
		protected readonly theme: RenderTheme,
		/** The terminal's height (pi's `tui.terminal.rows`); unknown draws the largest layout. */
		private readonly screenRows: () => number | undefined = () => undefined,
	) {
		this.views = source.owners();
		this.owner = this.views.find((v) => v.wanted)?.owner ?? "cwd";
	}

	protected view(): OwnerView {
		return this.views.find((v) => v.owner === this.owner) as OwnerView;
	}

	protected expandedOf(owner: Owner): Set<string> {
		let set = this.expanded.get(owner);
		if (!set) this.expanded.set(owner, (set = new Set()));
		return set;
	}

	protected rows() {
		const h = this.view().history;
		return h.ok ? treeRows(h.value.state, this.expandedOf(this.owner)) : [];
	}

	protected records(): TransitionRecord[] {
		const h = this.view().history;
		return h.ok ? timeline(h.value) : [];
	}

	protected count(): number {
		return this.tab === "state" ? this.rows().length : this.records().length;
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
				this.views
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
		this.body = bodyRows(this.screenRows(), out.length + bottom.length);
		const body = this.#drawBody(width);
		out.push(...body.slice(0, this.body));
		for (let i = body.length; i < this.body; i++) out.push("");
		out.push(...bottom);
		return out;
	}

	#drawBody(width: number): string[] {
		const t = this.theme;
		const fit = (line: string) => truncateToWidth(line, width);
		const out: string[] = [];
		const h = this.view().history;
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
			const by = r.who === undefined ? "" : ` by ${formatWho(r.who)}`;
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
	protected listRows(): number {
		return this.tab === "state" ? this.body : listRowsOf(this.body);
	}

	/** Rows of the pane's page: the body less its title and where-line. */
	protected detailRows(): number {
		return Math.max(1, this.body - 2);
	}

	/** The keys of the present view, on as many lines as the width needs (every key stays listed). */
	#help(width: number): string[] {
		const keys = this.detail ? KEYS.detail : this.search?.typing ? KEYS.typing : this.tab === "state" ? KEYS.state : KEYS.history;
		return keyLines(keys, width);
	}

	#window<T>(items: T[]): { shown: T[]; start: number } {
		const rows = this.listRows();
		const start = Math.max(0, Math.min(this.cursor - Math.floor(rows / 2), items.length - rows));
		return { shown: items.slice(start, start + rows), start };
	}

	/** The detail pane: its title, a page of its lines wrapped to the width (only that page is wrapped), and where the page is. */
	#renderDetail(width: number): string[] {
		const t = this.theme;
		const d = this.detail as NonNullable<BrowserView["detail"]>;
		// A diff's wrapped rows carry their line's sign, aligned under its text, so none reads as context.
		const page = d.pager.page(Math.max(8, width - (d.signs ? 4 : 2)), this.detailRows());
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
		const rows = this.rows();
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
		const records = this.records();
		if (records.length === 0) return [t.fg("muted", "  no retained transitions")];
		const short = shortIdsOf([this.view().history]);
		const now = this.source.now();
		const h = this.view().history;
		const undone = h.ok ? undoneIn(h.value.tail) : new Map<string, string>();
		const { shown, start } = this.#window(records);
		const out = shown.map((r, i) => {
			const selected = start + i === this.cursor;
			const id = spellId(this.full ? r.id : (short.get(r.id) ?? r.id));
			const mark = undone.has(r.id) ? `${UNDONE} ` : "";
			const head = printable(`${selected ? "›" : " "} #${r.seq} ${id} ${this.full ? r.at : compactTime(r.at, now)} ${mark}${madeBy(r, this.full)}`);
			const room = Math.max(8, width - columns(head) - 1);
			const line = `${head} ${t.fg("muted", changeList(r, room, printable))}`;
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
			const room = Math.max(1, this.body - this.listRows() - 2);
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
