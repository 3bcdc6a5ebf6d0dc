/**
 * The evaluator behind `read_state` (docs/spec.md §4): current and temporal owner state,
 * `patches[N]`, `response` and the `effective` overlay, with the `value`, `keys` and
 * `history` projections. A batch is ordered and all-or-error; results are fresh copies.
 */
import { fail } from "./errors.js";
import { historyOf, newHistory, patchAt, valueAt } from "./history.js";
import { cloneJson, getOwn, hasOwn, isPlainObject, setOwn } from "./json.js";
import { emptyState } from "./state.js";
import { formatLocator, type Locator, type Segment } from "./locator.js";
import { naturalCompare } from "./order.js";
import { DEFAULT_RETENTION, OWNERS, PLANES, ROOTS, type Json, type JsonObject, type Owner, type OwnerHistory, type OwnerState, type Section } from "./types.js";

export interface QueryView {
	wanted: readonly Owner[];
	/** A wanted owner without an entry reads as never written. */
	histories: Partial<Record<Owner, OwnerHistory>>;
	/** Session's runtime-owned `response` plane. */
	response?: JsonObject;
	/** How locators are spelled in messages (the model's form); canonical when absent. */
	present?: (loc: Locator) => string;
	/**
	 * Registered root names shown beside the planes when a whole owner state is read; the
	 * `roots` namespace (with dormant roots) is left out. Absent: the state as stored.
	 */
	roots?: readonly string[];
}

/** A section of a state: a plane, or the roots namespace (empty until a root is written). */
function sectionOf(state: OwnerState, plane: Section): JsonObject {
	return plane === ROOTS ? (state.roots ?? {}) : state[plane];
}

/**
 * A whole owner state (or a stored patch, `partial`) as `view` shows it: the planes, then each
 * registered root by name beside them; the `roots` namespace and dormant roots are left out.
 */
function shownState(view: QueryView, state: Json, partial = false): Json {
	if (view.roots === undefined || !isPlainObject(state)) return state;
	const out: JsonObject = {};
	for (const p of PLANES) if (!partial || hasOwn(state, p)) setOwn(out, p, state[p] ?? {});
	const roots = state[ROOTS];
	for (const name of view.roots) {
		const v = isPlainObject(roots) ? getOwn(roots, name) : undefined;
		if (v !== undefined) setOwn(out, name, v);
	}
	return out;
}

/** Projections `read_state` accepts, in documentation order. */
export const PROJECTIONS = ["value", "keys", "history"] as const;
export type Projection = (typeof PROJECTIONS)[number];

export interface QueryResult {
	/** Canonical locator text. */
	locator: string;
	value: Json;
	/** Set for `patches[N]`: the exact transition read. */
	transitionId?: string;
}

export function evaluate(view: QueryView, locators: readonly Locator[], projection: Projection = "value"): QueryResult[] {
	// All-or-error: every locator is evaluated before anything is returned.
	return locators.map((loc) => evaluateOne(view, loc, projection));
}

function evaluateOne(view: QueryView, loc: Locator, projection: Projection): QueryResult {
	const show = view.present ?? formatLocator;
	const locator = formatLocator(loc);
	if (projection === "history") {
		if (loc.kind !== "state" || loc.scope === null || loc.scope === "effective" || loc.offset !== 0) {
			fail("invalid_input", `projection \`history\` needs a current owner locator such as \`cwd.tactics.step1\`, not \`${show(loc)}\``, ["projection"]);
		}
		const h = historyFor(view, loc.scope);
		const path = loc.plane === null ? [] : [loc.plane, ...loc.path];
		return { locator, value: historyOf(h, path) };
	}
	const { value, transitionId } = resolve(view, loc, show);
	const out: QueryResult = { locator, value: projection === "keys" ? keysOf(value, loc, show) : value };
	if (transitionId !== undefined) out.transitionId = transitionId;
	return out;
}

function historyFor(view: QueryView, owner: Owner): OwnerHistory {
	if (!view.wanted.includes(owner)) {
		fail(
			"excluded_owner",
			`owner \`${owner}\` is not wanted in this session (wanted: ${view.wanted.join(", ")}); it cannot be read. Change the selection with \`/state owners\` first`,
			[owner],
		);
	}
	return view.histories[owner] ?? newHistory(owner, DEFAULT_RETENTION);
}

function resolve(view: QueryView, loc: Locator, show: (loc: Locator) => string): { value: Json; transitionId?: string } {
	if (loc.kind === "response") {
		historyFor(view, "session");
		return { value: walk(view.response ?? {}, loc.path, loc, show) };
	}
	if (loc.kind === "patches") {
		const owner = loc.owner ?? soleOwner(view, loc, show);
		const record = patchAt(historyFor(view, owner), loc.index);
		const entry: JsonObject = { id: record.id, at: record.at, patch: cloneJson(shownState(view, record.patch as JsonObject, true)) };
		return { value: walk(entry, loc.path, loc, show), transitionId: record.id };
	}
	const scope = loc.scope ?? soleOwner(view, loc, show);
	if (scope === "effective") {
		if (loc.offset > 0 && view.wanted.length > 1) {
			fail("invalid_input", `\`${show(loc)}\`: history is per owner; read e.g. \`cwd[${loc.offset}]\` instead of \`effective[${loc.offset}]\``, []);
		}
		if (view.wanted.length === 1) return resolve(view, { ...loc, scope: view.wanted[0] as Owner }, show);
		return { value: overlay(view, loc, show) };
	}
	const h = historyFor(view, scope);
	const head = loc.plane === null ? [] : [loc.plane];
	if (loc.offset > 0) {
		const at = (n: number) => valueAt(h, loc.offset, [...head, ...loc.path.slice(0, n)]);
		const value = loc.plane === null && loc.path.length === 0 ? shownState(view, at(0) as Json) : at(loc.path.length);
		if (value === undefined) {
			// Suggest the deepest parent that existed then, as for current reads.
			let n = loc.path.length - 1;
			while (n > 0 && at(n) === undefined) n--;
			notFound(loc, show, Math.max(0, n));
		}
		return { value };
	}
	const root = loc.plane === null ? shownState(view, h.state as unknown as Json) : sectionOf(h.state, loc.plane);
	return { value: walk(root, loc.path, loc, show) };
}

function soleOwner(view: QueryView, loc: Locator, show: (loc: Locator) => string): Owner {
	if (view.wanted.length !== 1) {
		fail(
			"invalid_input",
			`\`${show(loc)}\` names no owner; with several wanted owners write e.g. ${view.wanted.map((o) => `\`${o}.${show(loc)}\``).join(" or ")}`,
			[],
		);
	}
	return view.wanted[0] as Owner;
}

/** Follow `path` (the whole of `loc.path`) from `root`; a copy of what it reaches. */
function walk(root: Json, path: readonly Segment[], loc: Locator, show: (loc: Locator) => string): Json {
	let cur: Json = root;
	for (let i = 0; i < path.length; i++) {
		const next = step(cur, path[i] as Segment);
		if (next === undefined) notFound(loc, show, i);
		cur = next;
	}
	return cloneJson(cur);
}

function step(v: Json, seg: Segment): Json | undefined {
	if (typeof seg === "number") return Array.isArray(v) ? v[seg] : undefined;
	return isPlainObject(v) ? getOwn(v, seg) : undefined;
}

/** `not_found` naming the locator and the deepest parent that exists. */
function notFound(loc: Locator, show: (loc: Locator) => string, failedAt: number): never {
	const parent = { ...loc, path: loc.path.slice(0, failedAt) } as Locator;
	fail("not_found", `\`${show(loc)}\` does not exist; read \`${show(parent)}\` with projection \`keys\` to see what is there`, []);
}

/**
 * The `effective` overlay along one path: session over cwd over global, objects merged
 * key by key, arrays and scalars taken whole from the highest owner that has the key.
 */
function overlay(view: QueryView, loc: Locator & { kind: "state" }, show: (loc: Locator) => string): Json {
	let layers: Json[] = [];
	for (const owner of OWNERS) {
		if (!view.wanted.includes(owner)) continue;
		const h = view.histories[owner];
		if (h === undefined) continue;
		layers.push(loc.plane === null ? shownState(view, h.state as unknown as Json) : sectionOf(h.state, loc.plane));
	}
	if (layers.length === 0) layers = [loc.plane === null ? emptyState() : {}];
	for (let i = 0; i < loc.path.length; i++) {
		const visible = visibleLayers(layers);
		const seg = loc.path[i] as Segment;
		const next: Json[] = [];
		for (const layer of visible) {
			const v = step(layer, seg);
			if (v !== undefined) next.push(v);
		}
		if (next.length === 0) notFound(loc, show, i);
		layers = next;
	}
	return mergeLayers(visibleLayers(layers));
}

/** Layers (low to high) that show through: the top one, plus the run of objects beneath it. */
function visibleLayers(layers: Json[]): Json[] {
	const top = layers[layers.length - 1] as Json;
	if (!isPlainObject(top)) return [top];
	let i = layers.length - 1;
	while (i > 0 && isPlainObject(layers[i - 1])) i--;
	return layers.slice(i);
}

function mergeLayers(layers: Json[]): Json {
	const top = layers[layers.length - 1] as Json;
	if (!isPlainObject(top)) return cloneJson(top);
	const out: JsonObject = {};
	const keys = new Set<string>();
	for (const layer of layers) for (const k of Object.keys(layer as JsonObject)) keys.add(k);
	for (const key of keys) {
		const values = layers.map((l) => getOwn(l as JsonObject, key)).filter((v): v is Json => v !== undefined);
		setOwn(out, key, mergeLayers(visibleLayers(values)));
	}
	return out;
}

/** `keys`: sorted keys of an object, or `{ length }` of an array. */
function keysOf(value: Json, loc: Locator, show: (loc: Locator) => string): Json {
	if (Array.isArray(value)) return { length: value.length };
	// The head's order: a model numbering its steps reads them in the same order both ways.
	if (isPlainObject(value)) return Object.keys(value).sort(naturalCompare);
	return fail(
		"invalid_input",
		`projection \`keys\` needs an object or an array; \`${show(loc)}\` is ${value === null ? "null" : `a ${typeof value}`}; read it with projection \`value\``,
		["projection"],
	);
}
