/**
 * The head: one frozen view of the wanted owners' state, rendered once per agent run and
 * sent as `<state_flow_head>…</state_flow_head>`. Deterministic (same input, same bytes) so
 * provider prompt caches keep hitting. A byte budget (UTF-8) covers the whole block; when the
 * state does not fit, planes show as many keys as fit with previews and one marker each that
 * counts the rest and carries its `read_state` locator (`head-elide.ts`).
 */

import { shownLocator } from "../core/elide.js";
import { findDanglingRefs } from "../core/ownership.js";
import { HEAD_TAG, modelLine } from "../core/printable.js";
import { presentRef } from "../core/refs.js";
import { OWNERS, PLANES, ROOTS, SECTIONS } from "../core/types.js";
import type { Owner, OwnerHistory, Plane, Section, StaleArtifact, TransitionRecord } from "../core/types.js";
import { soleOwner } from "./interface.js";
import { staleMention } from "./results.js";
import { formatSize, utf8Bytes } from "../core/size.js";
import { type Box, MARKER_KEY, PREVIEW_BYTES, modelLocator, planeIndex } from "./head-elide.js";
import { type PlaneOrder, type PlaneView, planeView } from "./plane-view.js";
import { branchLines, hiddenDay } from "./head-folds.js";
import type { GitView } from "../core/intent-branch.js";
import { type OwnerRank, rankOwner, recentKeys } from "./head-rank.js";
import { naturalCompare } from "../core/order.js";
import type { StatusClass } from "./status.js";

export { MARKER_KEY, modelLocator } from "./head-elide.js";
export { naturalCompare } from "../core/order.js";

/** Delimiters of the head block; tests and the host find the head by them. */
export const HEAD_OPEN = `<${HEAD_TAG}>`;
export const HEAD_CLOSE = `</${HEAD_TAG}>`;
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
	staleArtifacts?: StaleArtifact[];
	/** Per owner, tracked artifacts the host did not check for source changes (its check is bounded). */
	staleUnchecked?: Partial<Record<Owner, number>>;
	/** Registered roots shown after the planes, in this order; dormant roots are never shown (docs/spec.md §12). */
	roots?: readonly string[];
	/** Wanted owners whose store cannot be reached now, with a one-line reason (`unavailableReason`). */
	unavailable?: Partial<Record<Owner, string>> | undefined;
	/** Wanted owners whose store is damaged, with a one-line reason: not shown until repaired. */
	damaged?: Partial<Record<Owner, string>> | undefined;
	/** The checkout's git branch (read once per prompt by the host); absent: nothing is folded by branch. */
	git?: GitView | undefined;
}

/**
 * Relevance tiers (docs/model-surface.md, "Relevance"): the budget is filled tier by tier, names
 * first and then values, so older detail never crowds out the work in flight.
 */
const TIER = { inflight: 1, small: 2, owned: 3, rules: 4, recent: 5, names: 6, rest: 7 } as const;
/** Transitions whose keys count as "changed recently" (per owner). */
const RECENT_CHANGES = 3;

/**
 * A section (plane or registered root) whose entries take at most this many bytes is shown whole,
 * ids and all: the previews and marker it would otherwise get cost about as much (measured in
 * docs/decisions.md, issue 36), and a small list is read whole to be acted on.
 */
export const SMALL_SECTION_BYTES = 512;

/** The kinds a plane marker of intents or tactics counts, in the order it names them. */
const KINDS: readonly string[] = ["in flight", "open", "closed", "on other branches"];
const KIND_OF: Record<StatusClass, number> = { inflight: 0, open: 1, closed: 2 };
/** The kind of the entries folded into lines of their own (`~ intents.x of branch …`). */
const OTHER_BRANCH = 3;

/** Longest reason the head gives for an unavailable owner. */
const MAX_REASON = 240;

/**
 * The head's short reason for an unavailable owner: the first sentence of the store's message
 * (which never holds a password), without the owner's own name, clipped.
 */
export function unavailableReason(message: string): string {
	const first = (message.split(/\.(?:\s|$)/)[0] ?? message).replace(/^.*?\bunavailable: /, "");
	return first.length <= MAX_REASON ? first : `${first.slice(0, MAX_REASON - 1)}…`;
}

/** True when every wanted owner has no entry in any of its five planes (history and `response` do not count). */
export function isBootstrap(histories: Partial<Record<Owner, OwnerHistory>>, wanted: readonly Owner[]): boolean {
	return wanted.every((o) => {
		const h = histories[o];
		return h === undefined || isEmptyOwner(h);
	});
}

/** Render the head block. Never throws for valid histories; exceeds the budget only when even the skeleton does not fit. */
export function renderHead(input: HeadInput): string {
	const owners = OWNERS.filter((o) => input.wanted.includes(o));
	const sole = soleOwner(owners);
	const views: PlaneView[] = [];
	const ownerLines = new Map<Owner, string>();
	const notices = new Map<Owner, string[]>();
	for (const owner of owners) {
		const down = input.unavailable?.[owner];
		if (down !== undefined) {
			ownerLines.set(owner, `# ${owner} unavailable, not shown (calls on it are refused until it is back): ${down}`);
			continue;
		}
		const damaged = input.damaged?.[owner];
		if (damaged !== undefined) {
			ownerLines.set(owner, `# ${owner} damaged, not shown (calls on it are refused until it is repaired; the user runs \`state-flow doctor\`): ${damaged}`);
			continue;
		}
		const h = input.histories[owner];
		const seq = h?.seq ?? 0;
		const empty = h === undefined || (isEmptyOwner(h) && !(input.roots ?? []).some((name) => planeIndex(h, ROOTS, name).keys.length > 0));
		ownerLines.set(owner, `# ${owner} seq ${seq}${empty ? " (empty)" : ""}`);
		if (h === undefined) continue;
		const rank = rankOwner(h, input.git);
		for (const plane of PLANES) {
			if (isEmptyPlane(h, plane)) continue;
			const loc = modelLocator(sole === undefined ? owner : undefined, plane, []);
			// The lazy plane is a catalog: key -> size of the body. Bodies are read on demand, never shown.
			const prefix = plane === "lazy" ? `${loc} (catalog, bytes): ` : `${loc}: `;
			views.push(planeView(h, plane, prefix, sole, undefined, small(h, plane, undefined, planeOrder(h, plane, rank, input.budget))));
		}
		// Registered roots after the planes, under the same budget; dormant ones are never shown.
		for (const name of input.roots ?? []) {
			if (planeIndex(h, ROOTS, name).keys.length === 0) continue;
			const order: PlaneOrder = {
				groups: [{ tier: TIER.recent, keys: recentKeys(h, ROOTS, RECENT_CHANGES, name), cap: entryCap(input.budget) }],
				restTier: TIER.names,
				restCap: entryCap(input.budget),
			};
			views.push(planeView(h, ROOTS, `${modelLocator(sole === undefined ? owner : undefined, ROOTS, [name])}: `, sole, name, small(h, ROOTS, name, order)));
		}
		notices.set(owner, [
			...branchLines(owner, rank, sole, input.git),
			...noticeLines(owner, h, sole, input.staleArtifacts ?? [], input.staleUnchecked?.[owner] ?? 0),
		]);
	}
	const recent = input.mode === "active" ? recentLines(input, owners, sole) : [];
	return layout(input.budget, owners, ownerLines, views, notices, recent);
}

/** First form of an active intent or of a tactic in flight: whole up to this share of the budget, else a preview (status first). */
function inflightCap(budget: number): number {
	return Math.max(PREVIEW_BYTES, Math.floor(budget / 6));
}

/** First form of a standing rule or a registered root's entry (a todo's text): whole up to this, else a preview. */
function entryCap(budget: number): number {
	return Math.max(PREVIEW_BYTES, Math.floor(budget / 16));
}

/** The order a plane offers its keys in, by relevance (docs/model-surface.md, "Relevance"). */
function planeOrder(h: OwnerHistory, plane: Plane, rank: OwnerRank, budget: number): PlaneOrder {
	const recent = { tier: TIER.recent, keys: recentKeys(h, plane, RECENT_CHANGES) };
	switch (plane) {
		case "intents":
			return {
				groups: [{ tier: TIER.inflight, keys: rank.active, cap: inflightCap(budget) }, recent],
				restTier: TIER.rest,
				exclude: rank.exclude.intents,
				marker: kinds(h, plane, rank.exclude.intents),
			};
		case "strategy":
			return { groups: [], restTier: TIER.rules, restCap: entryCap(budget) };
		case "tactics": {
			// Steps in flight (next, doing, blocked, …: status.ts) whole and first, owned or not; then the
			// active intents' other steps, open ones before finished ones (named with them, lengthened last).
			const status = planeIndex(h, plane).status;
			const inflight = [...(status?.inflight ?? [])].filter((k) => !rank.exclude.tactics.has(k)).sort(naturalCompare);
			const open = rank.owned.tactics.filter((k) => status?.of.get(k) !== "closed");
			const closed = rank.owned.tactics.filter((k) => status?.of.get(k) === "closed");
			return {
				groups: [
					{ tier: TIER.inflight, keys: inflight, cap: inflightCap(budget) },
					{ tier: TIER.owned, keys: open },
					{ tier: TIER.owned, keys: closed, late: true },
					recent,
				],
				restTier: TIER.rest,
				exclude: rank.exclude.tactics,
				marker: kinds(h, plane, rank.exclude.tactics),
			};
		}
		case "lazy":
			return { groups: [{ tier: TIER.owned, keys: rank.owned.lazy }, recent], restTier: TIER.names, exclude: rank.exclude.lazy };
		case "artifacts":
			return { groups: [recent], restTier: TIER.names };
	}
}

/**
 * What the marker of intents or tactics says of the entries it counts: how many are in flight,
 * open, closed or of other branches (folded into lines of their own), and how old they are.
 */
function kinds(h: OwnerHistory, plane: "intents" | "tactics", exclude: ReadonlySet<string>): PlaneOrder["marker"] {
	const status = planeIndex(h, plane).status;
	if (status === undefined) return undefined;
	const totals = [status.count.inflight, status.count.open, status.count.closed, 0];
	for (const key of exclude) {
		const cls = status.of.get(key);
		if (cls === undefined) continue;
		(totals[KIND_OF[cls]] as number)--;
		(totals[OTHER_BRANCH] as number)++;
	}
	return {
		labels: KINDS,
		totals,
		kindOf: (key) => (exclude.has(key) ? OTHER_BRANCH : KIND_OF[status.of.get(key) ?? "open"]),
		...(h.tail.length > 0 ? { age: (shown: ReadonlySet<string>) => hiddenDay(h, plane, shown) as string } : {}),
	};
}

/**
 * A section whose entries take at most `SMALL_SECTION_BYTES` is offered whole, all its keys right
 * after the work in flight (a three-item todo list is acted on by its ids).
 */
function small(h: OwnerHistory, plane: Section, root: string | undefined, order: PlaneOrder): PlaneOrder {
	const idx = planeIndex(h, plane, root);
	const bytes = plane === "lazy" ? idx.catalogMembers : idx.members;
	if (bytes > SMALL_SECTION_BYTES) return order;
	const [first, ...rest] = order.groups;
	const whole = { tier: TIER.small, keys: idx.keys, cap: Number.POSITIVE_INFINITY };
	return { ...order, groups: first?.tier === TIER.inflight ? [first, whole, ...rest] : [whole, ...order.groups] };
}

/**
 * Whether a plane has no key. Asked through the plane's index: even `for…in` lists every key
 * of a large object first, which would make each head cost as much as the state.
 */
function isEmptyPlane(h: OwnerHistory, plane: Plane): boolean {
	return planeIndex(h, plane).keys.length === 0;
}

/** Whether an owner has no entry in any plane (see `isEmptyState`), through the plane indexes. */
function isEmptyOwner(h: OwnerHistory): boolean {
	return PLANES.every((p) => isEmptyPlane(h, p));
}

/** Dangling references and stale artifacts of one owner, capped. */
function noticeLines(owner: Owner, h: OwnerHistory, sole: Owner | undefined, stale: readonly StaleArtifact[], unchecked: number): string[] {
	const lines: string[] = [];
	const scope = sole === undefined ? owner : undefined;
	const dangling = findDanglingRefs(owner, h.state);
	for (const d of dangling.slice(0, MAX_NOTICES)) {
		lines.push(`! dangling ref: ${modelLocator(scope, "intents", [d.intent])} -> ${shownLocator(presentRef(d.ref, sole))} (missing)`);
	}
	if (dangling.length > MAX_NOTICES) lines.push(`! ${dangling.length - MAX_NOTICES} more dangling refs`);
	const mine = stale.filter((s) => s.owner === owner);
	for (const s of mine.slice(0, MAX_NOTICES)) lines.push(`! stale artifact: ${staleMention(s, sole)}`);
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
		// Counted in full, spelled only as far as shown: one transition may touch thousands of keys.
		const set: Array<[Section, string[]]> = [];
		const del: Array<[Section, string[]]> = [];
		for (const plane of PLANES) {
			const p = rec.patch[plane];
			if (p === undefined) continue;
			for (const key of Object.keys(p)) (p[key] === null ? del : set).push([plane, [key]]);
		}
		for (const name of input.roots ?? []) {
			const p = rec.patch.roots?.[name];
			if (p === null || typeof p !== "object" || Array.isArray(p)) continue;
			for (const key of Object.keys(p)) (p[key] === null ? del : set).push([ROOTS, [name, key]]);
		}
		const list = (label: string, keys: Array<[Section, string[]]>): string =>
			keys.length === 0
				? ""
				: ` ${label} ${keys
						.slice(0, MAX_RECENT_KEYS)
						.map(([plane, path]) => modelLocator(scope, plane, path))
						.join(", ")}${keys.length > MAX_RECENT_KEYS ? ` +${keys.length - MAX_RECENT_KEYS} more` : ""};`;
		const who = sole === undefined ? `${owner}#${rec.seq}` : `#${rec.seq}`;
		const body = `${list("set", set)}${list("del", del)}`.replace(/;$/, "");
		return { text: `- ${who} ${rec.at}${body === "" ? " no change" : body}`, locator: sole === undefined ? `${owner}.patches[${back}]` : `patches[${back}]` };
	});
}

/** The line that says the head was shortened, and how to read what it does not show. */
function shortenedLine(budget: number): string {
	return `shortened to the ${formatSize(budget)} head budget: a string ending in … is a preview, and a "${MARKER_KEY}" entry counts what its object or array does not show; read_state the value's own locator (e.g. tactics.a.b[2]) for all of it`;
}

/**
 * Assemble the block within the budget. When the whole state does not fit: the skeleton (owner
 * lines, notices, every non-empty plane as one marker) first, then as many recent transitions as
 * fit, then state detail tier by tier — every plane's names before any plane's values (intents,
 * strategy, tactics, artifacts, lazy, roots; global, cwd, session) — then the rest.
 */
function layout(
	budget: number,
	owners: readonly Owner[],
	ownerLines: Map<Owner, string>,
	views: PlaneView[],
	notices: Map<Owner, string[]>,
	recent: RecentLine[],
): string {
	const compose = (shownRecent: number, summary: string | undefined, planeText: (v: PlaneView) => string): string[] => {
		// Each line stays one line whatever it quotes (`modelLine`); plane text is head JSON already (`head-elide.ts`).
		const lines = [HEAD_OPEN];
		for (const owner of owners) {
			lines.push(modelLine(ownerLines.get(owner) as string));
			for (const v of views) if (v.owner === owner) lines.push(modelLine(v.prefix) + planeText(v));
			lines.push(...(notices.get(owner) ?? []).map(modelLine));
		}
		if (recent.length > 0) {
			lines.push("recent transitions (newest first):");
			for (const r of recent.slice(0, shownRecent)) lines.push(modelLine(r.text));
			const dropped = recent.slice(shownRecent);
			if (dropped.length > 0) lines.push(modelLine(`- elided ${dropped.length} older: read_state ${dropped.map((r) => r.locator).join(", ")}`));
		}
		if (summary !== undefined) lines.push(summary);
		lines.push(HEAD_CLOSE);
		return lines;
	};
	const bytes = (lines: string[]): number => lines.reduce((n, l) => n + utf8Bytes(l) + 1, -1);

	// The whole state, when it can fit: presented values are never larger than stored ones, so
	// only a state within twice the budget is spelled out and measured.
	// A plane that folds entries of other branches is never shown whole: it is filled like a shortened one, without the line.
	const storedTotal = views.reduce((n, v) => n + v.fullBytes, 0);
	if (storedTotal <= 2 * budget) {
		const full = new Map(
			views.map((v) => {
				if (!v.folds) return [v, v.fullText()];
				const box = v.box();
				box.fillNames(Number.POSITIVE_INFINITY);
				box.upgrade(Number.POSITIVE_INFINITY);
				return [v, box.text()];
			}),
		);
		const lines = compose(recent.length, undefined, (v) => full.get(v) as string);
		if (bytes(lines) <= budget) return lines.join("\n");
	}

	const summary = shortenedLine(budget);
	const boxes = new Map(views.map((v) => [v, v.box()]));
	const planeBytes = (): number => [...boxes.values()].reduce((n, b) => n + b.bytes(), 0);
	// Recent transitions go only when even the skeleton leaves no room for them (newest kept longest).
	let shown = recent.length;
	while (shown > 0 && bytes(compose(shown, summary, () => "")) + planeBytes() > budget) shown--;
	const fixed = bytes(compose(shown, summary, () => ""));
	const byRank = [...views].sort((a, b) => SECTIONS.indexOf(a.plane) - SECTIONS.indexOf(b.plane) || OWNERS.indexOf(a.owner) - OWNERS.indexOf(b.owner));
	const room = (box: Box): number => budget - fixed - planeBytes() + box.bytes();
	// Names of the relevant tiers first, then their values in tier order, then the rest (closed intents, loose tactics).
	const relevant = [TIER.inflight, TIER.small, TIER.owned, TIER.rules, TIER.recent, TIER.names];
	for (const tier of relevant) for (const v of byRank) (boxes.get(v) as Box).fillNames(room(boxes.get(v) as Box), tier);
	for (const tier of relevant) for (const v of byRank) (boxes.get(v) as Box).upgrade(room(boxes.get(v) as Box), tier);
	for (const v of byRank) (boxes.get(v) as Box).fillNames(room(boxes.get(v) as Box));
	for (const v of byRank) (boxes.get(v) as Box).upgrade(room(boxes.get(v) as Box));
	return compose(shown, summary, (v) => (boxes.get(v) as Box).text()).join("\n");
}
