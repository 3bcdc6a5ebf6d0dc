/**
 * Translation between what the model sends/sees (flat for one wanted owner, scoped for
 * two or three) and the canonical forms the engine stores (docs/spec.md §3.1, §4.1, §4.3).
 * Pure: the captured wanted owners are an argument and grant nothing by themselves.
 */
import { fail, formatPath, isStateError, StateError } from "../core/errors.js";
import { detach, isPlainObject, setOwn } from "../core/json.js";
import { formatLocator, formatModelLocator, type Locator, parseLocator } from "../core/locator.js";
import { PROJECTIONS, type Projection } from "../core/query.js";
import { anchorRefs, anchorRevealedRefs, checkScopedRefs, checkWrittenRefs, presentRef, presentRefs } from "../core/refs.js";
import { emptyState } from "../core/state.js";
import {
	OWNERS,
	PLANES,
	type CanonicalPatch,
	type Json,
	type JsonObject,
	type Owner,
	type OwnerState,
	type Plane,
	type PlanePatch,
	isOneOf,
	isOwner,
	isPlane,
} from "../core/types.js";

const list = (xs: readonly string[]): string => xs.map((x) => `\`${x}\``).join(", ");

function checkWanted(wanted: readonly Owner[]): void {
	let ok = wanted.length > 0;
	for (let i = 0; ok && i < wanted.length; i++) ok = isOwner(wanted[i]) && wanted.indexOf(wanted[i] as Owner) === i;
	if (!ok) {
		fail("invalid_input", `the wanted owners must be 1-3 distinct owners of ${list(OWNERS)}; got ${JSON.stringify(wanted)}`);
	}
}

function excluded(owner: string, wanted: readonly Owner[], path: (string | number)[]): never {
	fail(
		"excluded_owner",
		`owner \`${owner}\` is not wanted in this session (wanted: ${wanted.join(", ")}); use only those owners, or change the selection with \`/state owners\``,
		path,
	);
}

/** Validate one owner's plane object (flat input, or one owner of scoped input); registered roots go into the `roots` namespace. */
function planesOf(value: JsonObject, path: string[], roots: readonly string[]): PlanePatch {
	const out: PlanePatch = {};
	for (const key of Object.keys(value)) {
		const at = [...path, key];
		if (key === "response") fail("invalid_input", `\`${formatPath(at)}\` is runtime-owned and cannot be written; patch only ${list(PLANES)}`, at);
		const isRoot = roots.includes(key);
		if (!isPlane(key) && !isRoot) fail("invalid_input", `unknown plane \`${formatPath(at)}\`; planes are ${list([...PLANES, ...roots])}`, at);
		const plane = value[key] as Json;
		if (plane === null) {
			fail(
				"invalid_input",
				`\`${formatPath(at)}\` is null: a whole plane cannot be deleted; set each entry to null instead, e.g. { "${key}": { "<key>": null } }`,
				at,
			);
		}
		if (!isPlainObject(plane)) {
			fail(
				"invalid_input",
				`\`${formatPath(at)}\` must be an object of entries (a JSON merge patch), not ${Array.isArray(plane) ? "an array" : `a ${typeof plane}`}`,
				at,
			);
		}
		if (isRoot) setOwn((out.roots ??= {}), key, plane);
		else out[key as Plane] = plane;
	}
	return out;
}

/** Apply `f` to each section of a translated patch; for `roots`, to each root's patch. */
function eachSection(patch: PlanePatch, path: string[], f: (value: JsonObject, at: string[]) => JsonObject): PlanePatch {
	const out: PlanePatch = {};
	for (const plane of PLANES) if (patch[plane] !== undefined) out[plane] = f(patch[plane], [...path, plane]);
	if (patch.roots !== undefined) {
		const roots: JsonObject = {};
		for (const name of Object.keys(patch.roots)) setOwn(roots, name, f(patch.roots[name] as JsonObject, [...path, name]));
		out.roots = roots;
	}
	return out;
}

/** A plane patch is a map of entries, never a value: an entry named `$ref` is just an entry. */
function entryWise(plane: JsonObject, f: (v: Json) => Json): JsonObject {
	const out: JsonObject = {};
	for (const key of Object.keys(plane)) setOwn(out, key, f(plane[key] as Json));
	return out;
}

/** An owner's current state, loaded only when asked for. */
export type StateOf = (owner: Owner) => OwnerState | undefined;

/** Whether any object inside `v` has a `$ref` member. */
function mentionsRef(v: Json): boolean {
	if (typeof v !== "object" || v === null) return false;
	if (Array.isArray(v)) return v.some(mentionsRef);
	return Object.keys(v).some((k) => k === "$ref" || mentionsRef(v[k] as Json));
}

/**
 * Refuse malformed references here, in the model's own spelling; the engine checks again
 * when it stages (canonical spelling). `stateOf` (the owner's current state) lets the refusal
 * of a dotted spelling of an existing key speak the model's form too; it is loaded only for a
 * patch that writes a `$ref`, and without it only keys the patch itself writes are known.
 */
function checkRefs(owner: Owner, patch: PlanePatch, base: readonly string[], stateOf: StateOf | undefined, spell: (ref: string) => string): void {
	if (!mentionsRef(patch as JsonObject)) return;
	const state = stateOf?.(owner) ?? emptyState();
	checkWrittenRefs({ owner, state, patch: anchorRevealedRefs(owner, state, patch), base, spell });
}

/** The model's `patch_state` arguments → the canonical patch, or a precise refusal. */
export function toCanonicalPatch(input: unknown, wanted: readonly Owner[], stateOf?: StateOf, roots: readonly string[] = []): CanonicalPatch {
	checkWanted(wanted);
	// Detach first: later mutation or getters of the caller's object cannot change what is checked.
	const value = detach(input, []);
	if (!isPlainObject(value))
		fail(
			"invalid_input",
			`the patch must be an object, e.g. { "tactics": { "next": "..." } }; got ${Array.isArray(value) ? "an array" : String(value === null ? "null" : typeof value)}`,
		);
	const keys = Object.keys(value);
	if (keys.length === 0) fail("invalid_input", "the patch is empty; send at least one plane (flat) or owner (scoped) to change");
	const isSection = (k: string): boolean => isPlane(k) || roots.includes(k);
	const planeKeys = keys.filter(isSection);
	const ownerKeys = keys.filter(isOwner);
	for (const key of keys) {
		if (key === "response") fail("invalid_input", "`response` is runtime-owned and cannot be written; patch only the five planes", [key]);
		if (!isSection(key) && !isOwner(key)) {
			const expected = wanted.length === 1 ? `planes ${list([...PLANES, ...roots])}` : `owners ${list(wanted)}`;
			fail("invalid_input", `unknown key \`${formatPath([key])}\`; expected ${expected}`, [key]);
		}
	}
	if (planeKeys.length > 0 && ownerKeys.length > 0) {
		fail("invalid_input", `the patch mixes plane keys (${list(planeKeys)}) and owner keys (${list(ownerKeys)}); use one form only`, [ownerKeys[0] as string]);
	}
	if (wanted.length === 1) {
		const owner = wanted[0] as Owner;
		if (ownerKeys.length > 0) {
			fail(
				"invalid_input",
				`this session has one owner (${owner}): send planes at the top level, e.g. { "tactics": { ... } } instead of { "${ownerKeys[0]}": { "tactics": { ... } } }`,
				[ownerKeys[0] as string],
			);
		}
		const planes = planesOf(value, [], roots);
		const anchored = eachSection(planes, [], (v) => entryWise(v, (x) => anchorRefs(x, owner)));
		checkRefs(owner, anchored, [], stateOf, (ref) => presentRef(ref, owner));
		return { [owner]: anchored };
	}
	if (planeKeys.length > 0) {
		fail(
			"invalid_input",
			`this session has several owners (${wanted.join(", ")}): wrap planes in an owner, e.g. { "${wanted[0]}": { "${planeKeys[0]}": { ... } } }`,
			[planeKeys[0] as string],
		);
	}
	const out: CanonicalPatch = {};
	for (const owner of ownerKeys) {
		if (!wanted.includes(owner)) excluded(owner, wanted, [owner]);
		const planes = value[owner] as Json;
		if (!isPlainObject(planes)) fail("invalid_input", `\`${owner}\` must be an object of planes, e.g. { "${owner}": { "tactics": { ... } } }`, [owner]);
		const checked = planesOf(planes, [owner], roots);
		eachSection(checked, [owner], (v, at) => {
			for (const key of Object.keys(v)) checkScopedRefs(v[key] as Json, [...at, key], wanted);
			return v;
		});
		checkRefs(owner, checked, [owner], stateOf, (ref) => ref);
		out[owner] = checked;
	}
	return out;
}

/** Resolve a model locator to its canonical meaning; excluded owners are refused here. */
export function toCanonicalLocator(text: string, wanted: readonly Owner[], roots: readonly string[] = []): Locator {
	checkWanted(wanted);
	const loc = parseLocator(text, wanted.length === 1 ? "flat" : "scoped", roots);
	const sole = soleOwner(wanted);
	const check = (owner: Owner): Owner => (wanted.includes(owner) ? owner : excluded(owner, wanted, []));
	if (loc.kind === "state") {
		if (loc.scope === "effective") return sole === undefined ? loc : { ...loc, scope: sole };
		return { ...loc, scope: check(loc.scope ?? (sole as Owner)) };
	}
	if (loc.kind === "patches") return { ...loc, owner: check(loc.owner ?? (sole as Owner)) };
	check("session");
	return { ...loc, owner: "session" };
}

/** The owner a flat interface is relative to: the only wanted owner; none in scoped. */
export function soleOwner(wanted: readonly Owner[]): Owner | undefined {
	return wanted.length === 1 ? wanted[0] : undefined;
}

/** Canonical locator text (`cwd.tactics.t1`, a stored reference) → the model's spelling. */
export function presentCanonical(canonical: string, wanted: readonly Owner[]): string {
	return presentRef(canonical, soleOwner(wanted));
}

/** Canonical locator → the text the model uses (flat: relative to the sole owner). */
export function presentLocator(loc: Locator, wanted: readonly Owner[]): string {
	if (wanted.length !== 1) return formatModelLocator(loc);
	const sole = wanted[0] as Owner;
	if (loc.kind === "state" && loc.scope === sole) {
		const current = loc.offset === 0 && loc.plane !== null;
		return formatModelLocator({ ...loc, scope: current ? null : "effective" });
	}
	if (loc.kind === "patches" && loc.owner === sole) return formatLocator({ ...loc, owner: null });
	if (loc.kind === "response" && sole === "session") return formatLocator({ ...loc, owner: null });
	return formatLocator(loc);
}

/** Stored value → what the model sees: relative same-owner refs for a sole owner. */
export function presentValue(v: Json, wanted: readonly Owner[]): Json {
	const sole = soleOwner(wanted);
	return sole === undefined ? v : presentRefs(v, sole);
}

/** Canonical RFC 6901 pointer → model-facing: `/cwd/tactics/old` → `/tactics/old` for flat. */
export function presentPointer(canonical: string, wanted: readonly Owner[]): string {
	// A registered root stands beside the planes: `/cwd/roots/todos/a` → `/cwd/todos/a`.
	const ptr = canonical.replace(/^(\/[a-z]+)\/roots\//, "$1/");
	if (wanted.length !== 1) return ptr;
	const prefix = `/${wanted[0]}`;
	if (ptr === prefix) return "";
	return ptr.startsWith(`${prefix}/`) ? ptr.slice(prefix.length) : ptr;
}

export interface ReadRequest {
	/** The locator texts as the model sent them, read once from the detached arguments. */
	texts: string[];
	locators: Locator[];
	projection: Projection;
	/** `paths` was used: the result is an ordered list. */
	batch: boolean;
	/** The text to find (`search`), under `path` when one was given, else in every wanted owner. */
	search?: string;
}

/** Longest `search` text accepted: a search finds words, not documents. */
export const MAX_SEARCH_CHARS = 200;

/** Validate `search` and its companions: a non-empty short text, alone or under one `path`. */
function checkSearch(search: Json, value: JsonObject): string {
	if (typeof search !== "string" || search.trim() === "" || search.length > MAX_SEARCH_CHARS)
		fail("invalid_input", `\`search\` must be a non-empty text of at most ${MAX_SEARCH_CHARS} characters, e.g. { "search": "graphql" }`, ["search"]);
	for (const other of ["paths", "projection"] as const)
		if (value[other] !== undefined)
			fail(
				"invalid_input",
				`\`${other}\` does not go with \`search\`; to search under one locator give it as \`path\`, e.g. { "search": "graphql", "path": "tactics" }`,
				[other],
			);
	return search;
}

/** Validate `read_state` arguments `{ path?, paths?, projection?, search? }` and resolve every locator. */
export function toReadRequest(args: unknown, wanted: readonly Owner[], roots: readonly string[] = []): ReadRequest {
	checkWanted(wanted);
	const value = detach(args, []);
	if (!isPlainObject(value)) fail("invalid_input", 'read_state needs an object, e.g. { "path": "tactics" }');
	for (const key of Object.keys(value)) {
		if (key !== "path" && key !== "paths" && key !== "projection" && key !== "search")
			fail("invalid_input", `unknown parameter \`${formatPath([key])}\`; use \`path\`, \`paths\`, \`projection\` and \`search\``, [key]);
	}
	const { path, paths, projection = "value", search } = value as { path?: Json; paths?: Json; projection?: Json; search?: Json };
	const text = search === undefined ? undefined : checkSearch(search, value);
	if (text !== undefined && path === undefined) return { texts: [], locators: [], projection: "value", batch: false, search: text };
	if ((path === undefined) === (paths === undefined))
		fail("invalid_input", "give exactly one of `path` (one locator) or `paths` (a list of locators), or `search` (a text to find)");
	if (!isOneOf(PROJECTIONS, projection)) {
		fail("invalid_input", `\`projection\` must be one of ${list(PROJECTIONS)}`, ["projection"]);
	}
	let items: Array<{ text: Json; at: (string | number)[] }>;
	if (paths !== undefined) {
		if (!Array.isArray(paths) || paths.length === 0) fail("invalid_input", "`paths` must be a non-empty list of locator strings", ["paths"]);
		items = paths.map((text, i) => ({ text, at: ["paths", i] }));
	} else {
		items = [{ text: path as Json, at: ["path"] }];
	}
	const texts: string[] = [];
	const locators = items.map(({ text, at }) => {
		if (typeof text !== "string") fail("invalid_input", `\`${formatPath(at)}\` must be a locator string, e.g. "tactics"`, at);
		texts.push(text);
		try {
			return toCanonicalLocator(text, wanted, roots);
		} catch (e) {
			if (isStateError(e)) throw new StateError(e.code, `\`${formatPath(at)}\`: ${e.message}`, at, { cause: e });
			throw e;
		}
	});
	return { texts, locators, projection: projection as Projection, batch: paths !== undefined, ...(text !== undefined ? { search: text } : {}) };
}
