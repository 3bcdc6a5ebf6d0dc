/**
 * The head: one frozen view of the wanted owners' state, rendered once per agent run and
 * sent as `<state_flow_head>…</state_flow_head>`. Deterministic (same input, same bytes) so
 * provider prompt caches keep hitting. A byte budget (UTF-8) covers the whole block; when the
 * state does not fit, whole values are replaced by markers that carry a `read_state` locator.
 */

import { findDanglingRefs } from "../core/ownership.js";
import { isEmptyState } from "../core/state.js";
import { isPlainObject } from "../core/json.js";
import { OWNERS, PLANES, ROOTS } from "../core/types.js";
import type { Json, Owner, OwnerHistory, TransitionRecord } from "../core/types.js";
import { type ElisionStats, type PlaneTree, elide, formatSize, modelLocator, planeText, planeTree, utf8Bytes } from "./head-elide.js";

export { MARKER_KEY, formatSize, modelLocator, utf8Bytes } from "./head-elide.js";

/** Delimiters of the head block; tests and the host find the head by them. */
export const HEAD_OPEN = "<state_flow_head>";
export const HEAD_CLOSE = "</state_flow_head>";
/** Default byte budget of the whole head block (docs/spec.md §6.2: 8 KiB). */
export const DEFAULT_HEAD_BUDGET = 8192;
/** Recent transitions shown in Active mode by default. */
export const DEFAULT_RECENT = 3;
/** Notice lines of one kind beyond this are summarised, so a broken state cannot flood the head. */
const MAX_NOTICES = 8;
/** Changed keys listed per recent transition. */
const MAX_RECENT_KEYS = 6;

/** Everything the head is rendered from; the host captures it in `before_agent_start`. */
export interface HeadInput {
	mode: "active" | "passive";
	wanted: readonly Owner[];
	histories: Partial<Record<Owner, OwnerHistory>>;
	/** Byte budget of the whole block (UTF-8). */
	budget: number;
	/** How many recent transitions Active mode shows (default 3). */
	recent?: number;
	staleArtifacts?: Array<{ owner: Owner; key: string; note: string }>;
	/** Per owner, tracked artifacts the host did not check for source changes (its check is bounded). */
	staleUnchecked?: Partial<Record<Owner, number>>;
	/** Registered roots shown after the planes, in this order; dormant roots are never shown. */
	roots?: readonly string[];
}

/** True when every wanted owner has no entry in any of its five planes (history and `response` do not count). */
export function isBootstrap(histories: Partial<Record<Owner, OwnerHistory>>, wanted: readonly Owner[]): boolean {
	return wanted.every((o) => {
		const h = histories[o];
		return h === undefined || isEmptyState(h.state);
	});
}

/** Turn a canonical locator into the model's spelling (flat drops the sole owner's prefix). */
function presentLoc(canonical: string, soleOwner: Owner | undefined): string {
	return soleOwner !== undefined && canonical.startsWith(`${soleOwner}.`) ? canonical.slice(soleOwner.length + 1) : canonical;
}

/** Render the head block. Never throws for valid histories; exceeds the budget only when even the skeleton does not fit. */
export function renderHead(input: HeadInput): string {
	const owners = OWNERS.filter((o) => input.wanted.includes(o));
	const sole = owners.length === 1 ? owners[0] : undefined;
	const trees: PlaneTree[] = [];
	const ownerLines = new Map<Owner, string>();
	const notices = new Map<Owner, string[]>();
	for (const owner of owners) {
		const h = input.histories[owner];
		const seq = h?.seq ?? 0;
		const empty = h === undefined || isEmptyState(h.state);
		ownerLines.set(owner, `# ${owner} seq ${seq}${empty ? " (empty)" : ""}`);
		if (h === undefined) continue;
		for (const plane of PLANES) {
			const planeValue = h.state[plane];
			if (Object.keys(planeValue).length === 0) continue;
			const prefix = modelLocator(sole === undefined ? owner : undefined, plane, []);
			if (plane === "lazy") {
				// The catalog: key -> size of the body. Bodies are read on demand, never shown.
				const catalog: Record<string, Json> = Object.create(null) as Record<string, Json>;
				for (const key of Object.keys(planeValue)) catalog[key] = utf8Bytes(JSON.stringify(planeValue[key]));
				trees.push(planeTree(owner, plane, `${prefix} (catalog, bytes): `, catalog as Json, sole, true));
			} else {
				trees.push(planeTree(owner, plane, `${prefix}: `, planeValue, sole, false));
			}
		}
		for (const name of input.roots ?? []) {
			const value = h.state.roots?.[name];
			if (value === undefined || (isPlainObject(value) && Object.keys(value).length === 0)) continue;
			trees.push(planeTree(owner, ROOTS, `${modelLocator(sole === undefined ? owner : undefined, ROOTS, [name])}: `, value, sole, false, [name]));
		}
		notices.set(owner, noticeLines(owner, h, sole, input.staleArtifacts ?? [], input.staleUnchecked?.[owner] ?? 0));
	}
	const recent = input.mode === "active" ? recentLines(input, owners, sole) : [];
	return layout(input.budget, owners, ownerLines, trees, notices, recent);
}

/** Dangling references and stale artifacts of one owner, capped. */
function noticeLines(
	owner: Owner,
	h: OwnerHistory,
	sole: Owner | undefined,
	stale: ReadonlyArray<{ owner: Owner; key: string; note: string }>,
	unchecked: number,
): string[] {
	const lines: string[] = [];
	const scope = sole === undefined ? owner : undefined;
	const dangling = findDanglingRefs(owner, h.state);
	for (const d of dangling.slice(0, MAX_NOTICES)) {
		lines.push(`! dangling ref: ${modelLocator(scope, "intents", [d.intent])} -> ${presentLoc(d.ref, sole)} (missing)`);
	}
	if (dangling.length > MAX_NOTICES) lines.push(`! ${dangling.length - MAX_NOTICES} more dangling refs`);
	const mine = stale.filter((s) => s.owner === owner);
	for (const s of mine.slice(0, MAX_NOTICES)) lines.push(`! stale artifact: ${modelLocator(scope, "artifacts", [s.key])}: ${s.note}`);
	if (mine.length > MAX_NOTICES) lines.push(`! ${mine.length - MAX_NOTICES} more stale artifacts`);
	if (unchecked > 0) lines.push(`! ${unchecked} tracked artifacts not checked for source changes here (tool results check them)`);
	return lines;
}

interface RecentLine {
	text: string;
	/** Where the model reads this transition in full. */
	locator: string;
}

/** The last few transitions over the wanted owners, newest first; changed keys only, never values. */
function recentLines(input: HeadInput, owners: readonly Owner[], sole: Owner | undefined): RecentLine[] {
	const all: Array<{ owner: Owner; rec: TransitionRecord; back: number }> = [];
	for (const owner of owners) {
		const tail = input.histories[owner]?.tail ?? [];
		tail.forEach((rec, i) => all.push({ owner, rec, back: tail.length - 1 - i }));
	}
	all.sort((a, b) => (a.rec.at === b.rec.at ? OWNERS.indexOf(a.owner) - OWNERS.indexOf(b.owner) || b.rec.seq - a.rec.seq : a.rec.at < b.rec.at ? 1 : -1));
	return all.slice(0, input.recent ?? DEFAULT_RECENT).map(({ owner, rec, back }) => {
		const scope = sole === undefined ? owner : undefined;
		const set: string[] = [];
		const del: string[] = [];
		for (const plane of PLANES) {
			const p = rec.patch[plane];
			if (p === undefined) continue;
			for (const key of Object.keys(p)) (p[key] === null ? del : set).push(modelLocator(scope, plane, [key]));
		}
		for (const name of input.roots ?? []) {
			const p = rec.patch.roots?.[name];
			if (!isPlainObject(p)) continue;
			for (const key of Object.keys(p)) (p[key] === null ? del : set).push(modelLocator(scope, ROOTS, [name, key]));
		}
		const list = (label: string, locs: string[]): string =>
			locs.length === 0 ? "" : ` ${label} ${locs.slice(0, MAX_RECENT_KEYS).join(", ")}${locs.length > MAX_RECENT_KEYS ? ` +${locs.length - MAX_RECENT_KEYS} more` : ""};`;
		const who = sole === undefined ? `${owner}#${rec.seq}` : `#${rec.seq}`;
		const body = `${list("set", set)}${list("del", del)}`.replace(/;$/, "");
		return { text: `- ${who} ${rec.at}${body === "" ? " no change" : body}`, locator: sole === undefined ? `${owner}.patches[${back}]` : `patches[${back}]` };
	});
}

/** Assemble the block and apply the budget: recent transitions go first (oldest first), then state detail. */
function layout(
	budget: number,
	owners: readonly Owner[],
	ownerLines: Map<Owner, string>,
	trees: PlaneTree[],
	notices: Map<Owner, string[]>,
	recent: RecentLine[],
): string {
	const compose = (shownRecent: number, summary: string | undefined, planeLine: (t: PlaneTree) => string): string[] => {
		const lines = [HEAD_OPEN];
		for (const owner of owners) {
			lines.push(ownerLines.get(owner) as string);
			for (const t of trees) if (t.owner === owner) lines.push(planeLine(t));
			lines.push(...(notices.get(owner) ?? []));
		}
		if (recent.length > 0) {
			lines.push("recent transitions (newest first):");
			for (const r of recent.slice(0, shownRecent)) lines.push(r.text);
			const dropped = recent.slice(shownRecent);
			if (dropped.length > 0) lines.push(`- elided ${dropped.length} older: read_state ${dropped.map((r) => r.locator).join(", ")}`);
		}
		if (summary !== undefined) lines.push(summary);
		lines.push(HEAD_CLOSE);
		return lines;
	};
	const shownLine = (t: PlaneTree): string => t.prefix + planeText(t);
	const bytes = (lines: string[]): number => lines.reduce((n, l) => n + utf8Bytes(l) + 1, -1);
	// Plane lines can be megabytes: measure them once, and everything else per candidate layout.
	const planeBytes = trees.reduce((n, t) => n + utf8Bytes(shownLine(t)), 0);
	const measure = (shownRecent: number): number => bytes(compose(shownRecent, undefined, () => "")) + planeBytes;

	// Drop recent transitions oldest first; each stays readable through `patches[N]`.
	for (let shown = recent.length; shown >= 0; shown--) {
		if (measure(shown) <= budget) return compose(shown, undefined, shownLine).join("\n");
	}
	// Then elide state: reserve room for the summary line at its largest plausible length.
	const summaryLine = (s: ElisionStats): string =>
		`elided ${s.count} value${s.count === 1 ? "" : "s"} (${formatSize(s.bytes)}) to fit the ${formatSize(budget)} head budget; each {"…"} marker names its read_state locator`;
	const reserve = utf8Bytes(summaryLine({ count: 9_999_999, bytes: 9_999_999_999 })) + 1;
	const fixed = bytes(compose(0, undefined, (t) => t.prefix));
	const stats = elide(trees, budget - reserve - fixed);
	return compose(0, stats.count > 0 ? summaryLine(stats) : undefined, shownLine).join("\n");
}
