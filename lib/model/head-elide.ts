/**
 * Budgeted rendering of the head's planes. A plane that does not fit shows as many of its keys
 * as fit — names first: every shown value starts as a short preview, keys are dropped only when
 * even previews do not fit — then the leftover bytes lengthen previews back to whole values in
 * priority order. Every partial object or array ends with one `"…"` entry counting what it
 * does not show (keys and bytes); a plane's also names its `read_state` locator and the `keys`
 * projection, a nested one is read at its own path.
 *
 * Cost is bounded by the budget, not the state: per plane a size index (key order and value
 * sizes) is kept next to the stored plane object and brought up to date from the retained
 * transitions, so a render walks only the keys it shows, however large the plane.
 */

import { naturalCompare } from "../core/order.js";
import { type Locator, formatModelLocator } from "../core/locator.js";
import { isRef, presentRefs } from "../core/refs.js";
import { jsonUtf8Bytes, ownKeys, setOwn } from "../core/json.js";
import { modelJson } from "../core/printable.js";
import { ARTIFACT_COMPILER_FIELDS, ROOTS } from "../core/types.js";
import type { Json, JsonObject, Owner, OwnerHistory, PlanePatch, Section } from "../core/types.js";

/** The most a value's preview takes while names are placed. */
export const PREVIEW_BYTES = 48;

/** The key of every marker: a partial container's last entry, or a whole plane's only one. */
export const MARKER_KEY = "…";

/** UTF-8 length of a string without allocating (what providers bill). */
export function utf8Bytes(s: string): number {
	let n = 0;
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		if (c < 0x80) n += 1;
		else if (c < 0x800) n += 2;
		else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
			const d = s.charCodeAt(i + 1);
			if (d >= 0xdc00 && d <= 0xdfff) {
				n += 4;
				i++;
			} else n += 3;
		} else n += 3;
	}
	return n;
}

/** Human byte size, for the model and the user alike: `812 B`, `1.2 KB`, `3.4 MB`. */
export function formatSize(bytes: number): string {
	return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Locator text as the model spells it: relative in flat (owner undefined), qualified in scoped. */
export function modelLocator(owner: Owner | undefined, plane: Section, path: readonly (string | number)[]): string {
	const loc: Locator = { kind: "state", scope: owner ?? null, offset: 0, plane, path: [...path] };
	return formatModelLocator(loc);
}

/** A section the head shows: a plane, or one registered root (`roots` + its name). */
export interface SectionRef {
	plane: Section;
	/** The root's name when `plane` is `roots`. */
	root?: string;
}

const EMPTY: JsonObject = {};

/** The stored object of a shown section (a root's value, `{}` while it has none). */
function sectionValue(h: OwnerHistory, s: SectionRef): JsonObject {
	if (s.plane !== ROOTS) return h.state[s.plane];
	const v = s.root === undefined ? undefined : h.state.roots?.[s.root];
	return v !== null && typeof v === "object" && !Array.isArray(v) ? v : EMPTY;
}

/** A record's patch of a shown section. */
function sectionPatch(patch: PlanePatch, s: SectionRef): JsonObject | undefined {
	if (s.plane !== ROOTS) return patch[s.plane];
	const v = s.root === undefined ? undefined : patch.roots?.[s.root];
	return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}

/**
 * Fields the artifact compiler keeps for its own checks (docs/artifacts.md): file fingerprints,
 * content hashes and where a Skill was acquired from. The model never writes them and is told
 * of changes by stale-artifact lines, so the head leaves them out (`read_state` shows them).
 * `compiledTo` stays: it says where the Skill lives.
 */
const ARTIFACT_BOOKKEEPING: ReadonlySet<string> = new Set(ARTIFACT_COMPILER_FIELDS.filter((f) => f !== "compiledTo"));

/** A member of a section as the head shows it: an artifact without the compiler's bookkeeping; anything else as stored. */
export function shownMember(plane: Section, value: Json): Json {
	if (plane !== "artifacts" || value === null || typeof value !== "object" || Array.isArray(value)) return value;
	let bookkeeping = false;
	for (const key of Object.keys(value)) if (ARTIFACT_BOOKKEEPING.has(key)) bookkeeping = true;
	if (!bookkeeping) return value;
	const out: JsonObject = {};
	for (const key of Object.keys(value)) if (!ARTIFACT_BOOKKEEPING.has(key)) setOwn(out, key, value[key] as Json);
	return out;
}

/** Bytes of the JSON text of a key plus its colon (`"k":`). */
function memberNameBytes(key: string): number {
	return utf8Bytes(headJson(key)) + 1;
}

/** JSON text of a value as the head spells it: `<`, C1 and separators escaped (`modelJson`), so stored text never closes the block. */
function headJson(value: Json): string {
	return modelJson(JSON.stringify(value));
}

/** UTF-8 bytes of a stored value's compact JSON (nested values measured once: `jsonUtf8Bytes`). */
const storedBytes = jsonUtf8Bytes;

/** A plane's keys in natural order and each value's size as shown (`shownMember`), valid for one `seq`. */
interface PlaneIndex {
	seq: number;
	bytes: number;
	keys: string[];
	sizes: Map<string, number>;
	/** Sum over keys of `"k":` + value bytes (the plane's JSON minus braces and commas). */
	members: number;
	/** Sum over keys of `"k":` + the digits of the value's size (the lazy catalog's members). */
	catalogMembers: number;
	/** Sum of the values' sizes (the lazy bodies' bytes). */
	valueBytes: number;
}

/** Indexes by the stored plane object: merges mutate it in place, a reload replaces it. */
const indexes = new WeakMap<JsonObject, PlaneIndex>();

function searchKey(keys: readonly string[], key: string): number {
	let lo = 0;
	let hi = keys.length;
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		if (naturalCompare(keys[mid] as string, key) < 0) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

function indexSet(idx: PlaneIndex, key: string, value: Json): void {
	const before = idx.sizes.get(key);
	const size = storedBytes(value);
	const name = memberNameBytes(key);
	if (before === undefined) {
		idx.keys.splice(searchKey(idx.keys, key), 0, key);
		idx.members += name;
		idx.catalogMembers += name;
	} else {
		idx.members -= before;
		idx.catalogMembers -= String(before).length;
		idx.valueBytes -= before;
	}
	idx.sizes.set(key, size);
	idx.valueBytes += size;
	idx.members += size;
	idx.catalogMembers += String(size).length;
}

function indexDelete(idx: PlaneIndex, key: string): void {
	const before = idx.sizes.get(key);
	if (before === undefined) return;
	const at = searchKey(idx.keys, key);
	if (idx.keys[at] === key) idx.keys.splice(at, 1);
	const name = memberNameBytes(key);
	idx.members -= name + before;
	idx.catalogMembers -= name + String(before).length;
	idx.valueBytes -= before;
	idx.sizes.delete(key);
}

/**
 * The plane's index at the history's current `seq`: reused when unchanged, brought forward by
 * the keys the retained transitions since then touched (work proportional to those patches),
 * rebuilt when the index is missing or older than the retained tail.
 */
export function planeIndex(h: OwnerHistory, plane: Section, root?: string): PlaneIndex {
	const s: SectionRef = root === undefined ? { plane } : { plane, root };
	const value = sectionValue(h, s);
	let idx = indexes.get(value);
	if (idx !== undefined && idx.seq === h.seq && idx.bytes === h.bytes) return idx;
	if (idx !== undefined && idx.seq < h.seq && idx.seq >= h.checkpointSeq) {
		const touched = new Set<string>();
		for (const rec of h.tail) if (rec.seq > idx.seq) for (const key of Object.keys(sectionPatch(rec.patch, s) ?? {})) touched.add(key);
		for (const key of touched) {
			if (Object.hasOwn(value, key)) indexSet(idx, key, shownMember(plane, value[key] as Json));
			else indexDelete(idx, key);
		}
	} else {
		idx = { seq: 0, bytes: 0, keys: Object.keys(value).sort(naturalCompare), sizes: new Map(), members: 0, catalogMembers: 0, valueBytes: 0 };
		for (const key of idx.keys) {
			const size = storedBytes(shownMember(plane, value[key] as Json));
			const name = memberNameBytes(key);
			idx.sizes.set(key, size);
			idx.valueBytes += size;
			idx.members += name + size;
			idx.catalogMembers += name + String(size).length;
		}
		indexes.set(value, idx);
	}
	idx.seq = h.seq;
	idx.bytes = h.bytes;
	return idx;
}

/** How a value is spelled for the model: same-owner refs relative in flat form. */
interface Spelling {
	/** Marker locators and relative refs: the sole owner in flat form, undefined in scoped form. */
	sole: Owner | undefined;
	owner: Owner;
	plane: Section;
	/** Path of the section below `plane`: `[name]` for a registered root. */
	base: string[];
}

function presentedText(value: Json, sp: Spelling): string {
	return headJson(sp.sole === undefined ? value : presentRefs(value, sp.sole));
}

/** A rendered value: its text, UTF-8 bytes, and whether it is the whole value. */
interface Shown {
	text: string;
	bytes: number;
	full: boolean;
}

/** Candidates that do not fit may be skipped for later, smaller ones; this many misses end the search. */
const MAX_MISSES = 32;
const ELLIPSIS_BYTES = 3;
/** Values up to this size are always measured whole, so that no marker replaces a shorter value. */
const SMALL_BYTES = 256;

/** The longest `"prefix…"` of a string within `allowance` bytes (at least `"…"`), never splitting a character. */
function previewString(s: string, allowance: number): Shown {
	let room = allowance - 2 - ELLIPSIS_BYTES;
	let end = 0;
	let text = "";
	while (end < s.length && room > 0) {
		const c = s.charCodeAt(end);
		const pair = c >= 0xd800 && c <= 0xdbff && end + 1 < s.length;
		const ch = s.slice(end, end + (pair ? 2 : 1));
		const piece = c >= 0x20 && c < 0x7f && c !== 34 && c !== 92 && c !== 60 ? ch : headJson(ch).slice(1, -1);
		const b = utf8Bytes(piece);
		if (b > room) break;
		text += piece;
		room -= b;
		end += ch.length;
	}
	text = text.replace(/ +$/, "");
	const out = `"${text}…"`;
	return { text: out, bytes: utf8Bytes(out), full: false };
}

/**
 * A value within `allowance` bytes: whole when it fits, else a string preview or a partial
 * container; atomic values (numbers, booleans, null, references) are always whole. `size` is
 * the stored value's UTF-8 size (the presented one is never larger, and never less than half).
 */
function fitValue(value: Json, size: number, allowance: number, path: (string | number)[], sp: Spelling): Shown {
	const atomic = typeof value !== "string" && (typeof value !== "object" || value === null || isRef(value));
	let whole: Shown | undefined;
	// Small values are spelled out even past the allowance: a shortened form must be shorter.
	if (atomic || size <= 2 * allowance + SMALL_BYTES) {
		const text = presentedText(value, sp);
		whole = { text, bytes: utf8Bytes(text), full: true };
		if (atomic || whole.bytes <= allowance) return whole;
	}
	let short: Shown;
	if (typeof value === "string") short = previewString(value, allowance);
	else {
		const box = Array.isArray(value) ? arrayBox(value, size, path, sp) : objectBox(value as JsonObject, size, path, sp);
		box.fillNames(allowance);
		box.upgrade(allowance);
		short = { text: box.text(), bytes: box.bytes(), full: false };
	}
	return whole !== undefined && whole.bytes <= short.bytes ? whole : short;
}

/** One key or item that may be shown. */
interface Candidate {
	key: string | number;
	value: Json;
	/** Stored UTF-8 bytes of the value. */
	size: number;
	/** What the candidate counts for in its container's marker while not shown. */
	weight: number;
	/** Relevance tier (`head-rank.ts`): a fill or upgrade pass for tier t takes candidates up to t. Nested values: 0. */
	tier: number;
	/** Most bytes its first form may take while names are placed (a preview, or whole when it fits). */
	cap: number;
	/** Position in its container's document order (nested objects are listed in it). */
	order: number;
}

interface Entry {
	cand: Candidate;
	/** `"k":` (objects) or nothing (arrays). */
	name: string;
	nameBytes: number;
	shown: Shown;
}

/**
 * One object or array being fitted: candidates arrive in priority order; shown ones are listed
 * in `display` order, then one marker counting the rest.
 */
export class Box {
	readonly #entries: Entry[] = [];
	/** The marker's constant tail (a plane's locator), spelled once. */
	#how: string | undefined;
	/** The next candidate, taken from `next` but not yet placed (its tier was above the pass's). */
	#peeked: Candidate | undefined;
	#remainingCount: number;
	#remainingBytes: number;
	#entryBytes = 0;
	#done = false;

	constructor(
		private readonly kind: "object" | "array",
		private readonly path: (string | number)[],
		total: { count: number; bytes: number },
		private readonly next: () => Candidate | undefined,
		private readonly sp: Spelling,
		/** Plane level: the marker also names the `keys` projection, entries sort naturally. */
		private readonly planeLevel: boolean,
	) {
		this.#remainingCount = total.count;
		this.#remainingBytes = total.bytes;
	}

	/** The marker for `count` entries of `bytes` not shown; `some` when entries are shown before it. */
	#marker(count: number, bytes: number, some: boolean): string {
		const noun = this.kind === "object" ? (count === 1 ? "key" : "keys") : count === 1 ? "item" : "items";
		// A plane's marker names its locator. A nested one is read at its own path, as the head's
		// shortened line says once: spelling it would cost more than most previews a budget shows.
		this.#how ??= this.planeLevel
			? `: read_state ${modelLocator(this.sp.sole === undefined ? this.sp.owner : undefined, this.sp.plane, this.sp.base)} with projection keys`
			: "";
		const how = this.#how;
		const text = headJson(`${count} ${some ? "more " : ""}${noun}, ${formatSize(bytes)}${how}`);
		return this.kind === "object" ? `"${MARKER_KEY}":${text}` : `{"${MARKER_KEY}":${text}}`;
	}

	#size(entryBytes: number, shown: number, remainingCount: number, remainingBytes: number): number {
		const parts = shown + (remainingCount > 0 ? 1 : 0);
		const marker = remainingCount > 0 ? utf8Bytes(this.#marker(remainingCount, remainingBytes, shown > 0)) : 0;
		return 2 + entryBytes + marker + Math.max(0, parts - 1);
	}

	/** Current rendered size in bytes. */
	bytes(): number {
		return this.#size(this.#entryBytes, this.#entries.length, this.#remainingCount, this.#remainingBytes);
	}

	/** Keys (or indices) of the shown entries. */
	shownKeys(): Array<string | number> {
		return this.#entries.map((e) => e.cand.key);
	}

	/**
	 * Place as many candidates of tier up to `tier` as fit in `allowance` bytes, each in its first
	 * form: at most its `cap` (a preview, or whole when smaller). Arrays stop at the first item
	 * that does not fit (indices must stay true); objects skip it and try later, smaller ones.
	 */
	fillNames(allowance: number, tier = Number.POSITIVE_INFINITY): void {
		let misses = 0;
		while (!this.#done) {
			if (allowance - this.bytes() < 4) return;
			const cand = this.#peeked ?? this.next();
			this.#peeked = undefined;
			if (cand === undefined) {
				this.#done = true;
				return;
			}
			if (cand.tier > tier) {
				this.#peeked = cand;
				return;
			}
			// A stored key named like the marker would read as one: it is only ever counted.
			if (this.kind === "object" && cand.key === MARKER_KEY) continue;
			const name = this.kind === "object" ? `${headJson(cand.key)}:` : "";
			const nameBytes = utf8Bytes(name);
			const n = this.#entries.length + 1;
			// The value gets what is left once the name and the marker are placed, at most a preview.
			const room = allowance - this.#size(this.#entryBytes + nameBytes, n, this.#remainingCount - 1, this.#remainingBytes - cand.weight);
			const shown = fitValue(cand.value, cand.size, Math.min(cand.cap, room), [...this.path, cand.key], this.sp);
			const entryBytes = this.#entryBytes + nameBytes + shown.bytes;
			if (shown.bytes <= room) {
				this.#entries.push({ cand, name, nameBytes, shown });
				this.#entryBytes = entryBytes;
				this.#remainingCount--;
				this.#remainingBytes -= cand.weight;
				misses = 0;
			} else if (this.kind === "array" || ++misses >= MAX_MISSES) {
				this.#done = true;
			}
		}
	}

	/** Lengthen shown values (of `tier` only, when given), in priority order, while the box stays within `allowance` bytes. */
	upgrade(allowance: number, tier?: number): void {
		for (const e of this.#entries) {
			if (e.shown.full || (tier !== undefined && e.cand.tier !== tier)) continue;
			const extra = allowance - this.bytes();
			if (extra <= 0) return;
			const longer = fitValue(e.cand.value, e.cand.size, e.shown.bytes + extra, [...this.path, e.cand.key], this.sp);
			if (longer.bytes > e.shown.bytes && longer.bytes <= e.shown.bytes + extra) {
				this.#entryBytes += longer.bytes - e.shown.bytes;
				e.shown = longer;
			}
		}
	}

	/** Whether every candidate is shown whole (then the box is the whole value). */
	complete(): boolean {
		return this.#remainingCount === 0 && this.#entries.every((e) => e.shown.full);
	}

	text(): string {
		// A plane lists its keys in natural order, a nested object in document order (its members are placed short ones first).
		const entries = this.planeLevel
			? [...this.#entries].sort((a, b) => naturalCompare(String(a.cand.key), String(b.cand.key)))
			: [...this.#entries].sort((a, b) => a.cand.order - b.cand.order);
		const parts = entries.map((e) => e.name + e.shown.text);
		if (this.#remainingCount > 0) parts.push(this.#marker(this.#remainingCount, this.#remainingBytes, entries.length > 0));
		return this.kind === "object" ? `{${parts.join(",")}}` : `[${parts.join(",")}]`;
	}
}

/** Members up to this size are placed before longer ones, so a status or flag beside a long text stays visible. */
const SHORT_MEMBER_BYTES = 32;

/**
 * Nested object: short members (a status, a flag, a reference) first, then the rest, each in
 * document order; listed in document order. Sizes measured as they are considered (a key list
 * is walked twice at most).
 */
function objectBox(value: JsonObject, size: number, path: (string | number)[], sp: Spelling): Box {
	const keys = ownKeys(value);
	let i = 0;
	let pass: "short" | "long" = "short";
	const next = (): Candidate | undefined => {
		for (;;) {
			if (i >= keys.length) {
				if (pass === "long") return undefined;
				pass = "long";
				i = 0;
			}
			const order = i++;
			const key = keys[order] as string;
			const v = value[key] as Json;
			const s = storedBytes(v);
			if (pass === "short" ? s > SHORT_MEMBER_BYTES : s <= SHORT_MEMBER_BYTES) continue;
			return { key, value: v, size: s, weight: memberNameBytes(key) + s, tier: 0, cap: PREVIEW_BYTES, order };
		}
	};
	// The members' bytes follow from the whole value's size: braces and commas are all the rest.
	return new Box("object", path, { count: keys.length, bytes: size - 2 - Math.max(0, keys.length - 1) }, next, sp, false);
}

/** Nested array: items in order (a shown prefix, so indices stay true). */
function arrayBox(value: Json[], size: number, path: (string | number)[], sp: Spelling): Box {
	let i = 0;
	const next = (): Candidate | undefined => {
		if (i >= value.length) return undefined;
		const v = value[i] as Json;
		const s = storedBytes(v);
		return { key: i, value: v, size: s, weight: s, tier: 0, cap: PREVIEW_BYTES, order: i++ };
	};
	return new Box("array", path, { count: value.length, bytes: size - 2 - Math.max(0, value.length - 1) }, next, sp, false);
}

/**
 * The order a plane offers its keys in (`head-rank.ts`): groups of keys in priority order, each
 * with its tier and the cap of its first form, then every other key (recently changed first,
 * then natural order) at `restTier`. Excluded keys are never offered: only the marker counts them.
 */
export interface PlaneOrder {
	groups: ReadonlyArray<{ tier: number; keys: readonly string[]; cap?: number }>;
	restTier: number;
	/** Cap of the other keys' first form (default: a preview). */
	restCap?: number;
	exclude?: ReadonlySet<string>;
}

/** Every key at one tier, recently changed first: what a plane offers without a ranking. */
const UNRANKED: PlaneOrder = { groups: [], restTier: 0 };

/** One shown plane: its full text when it fits, else a box filled within the budget. */
export interface PlaneView {
	owner: Owner;
	plane: Section;
	/** The root's name when `plane` is `roots`. */
	root?: string;
	prefix: string;
	/** Stored UTF-8 size of the plane's (catalog's) JSON. */
	fullBytes: number;
	/** Whether some keys are never offered (folded elsewhere): then the plane is never shown whole. */
	folds: boolean;
	/** The whole plane, keys in natural order (computed only when it can fit). */
	fullText(): string;
	/** A fresh box showing nothing yet (its marker counts every key). */
	box(): Box;
}

/**
 * A plane of one owner. Keys are offered in the ranking's order (`order`), the rest recently
 * changed first (newest transition first), then in natural key order; the lazy plane is shown as
 * its catalog (key → body bytes).
 */
export function planeView(h: OwnerHistory, plane: Section, prefix: string, sole: Owner | undefined, root?: string, order: PlaneOrder = UNRANKED): PlaneView {
	const s: SectionRef = root === undefined ? { plane } : { plane, root };
	const idx = planeIndex(h, plane, root);
	const value = sectionValue(h, s);
	const catalog = plane === "lazy";
	const sp: Spelling = { sole, owner: h.owner, plane, base: root === undefined ? [] : [root] };
	const n = idx.keys.length;
	const fullBytes = 2 + Math.max(0, n - 1) + (catalog ? idx.catalogMembers : idx.members);
	const exclude = order.exclude ?? new Set<string>();
	const candidate = (key: string, tier: number, cap: number): Candidate => {
		const size = idx.sizes.get(key) as number;
		return catalog
			? { key, value: size, size: String(size).length, weight: size, tier, cap, order: 0 }
			: { key, value: shownMember(plane, value[key] as Json), size, weight: memberNameBytes(key) + size, tier, cap, order: 0 };
	};
	return {
		owner: h.owner,
		plane,
		...(root !== undefined ? { root } : {}),
		prefix,
		fullBytes,
		folds: [...exclude].some((k) => Object.hasOwn(value, k)),
		fullText() {
			const parts = idx.keys.map(
				(key) => `${headJson(key)}:${catalog ? String(idx.sizes.get(key)) : presentedText(shownMember(plane, value[key] as Json), sp)}`,
			);
			return `{${parts.join(",")}}`;
		},
		box() {
			const seen = new Set<string>(exclude);
			let g = 0;
			let gi = 0;
			let t = h.tail.length - 1;
			let pending: string[] = [];
			let k = 0;
			const next = (): Candidate | undefined => {
				// The ranking's groups first, in their order.
				while (g < order.groups.length) {
					const group = order.groups[g] as PlaneOrder["groups"][number];
					const key = group.keys[gi++];
					if (key === undefined) {
						g++;
						gi = 0;
						continue;
					}
					if (!seen.has(key) && Object.hasOwn(value, key)) {
						seen.add(key);
						return candidate(key, group.tier, group.cap ?? PREVIEW_BYTES);
					}
				}
				// Then recently changed keys: the keys each retained transition set, newest first.
				for (;;) {
					const key = pending.pop();
					if (key !== undefined) {
						if (!seen.has(key) && Object.hasOwn(value, key)) {
							seen.add(key);
							return candidate(key, order.restTier, order.restCap ?? PREVIEW_BYTES);
						}
						continue;
					}
					if (t < 0) break;
					const patch = sectionPatch((h.tail[t--] as OwnerHistory["tail"][number]).patch, s);
					if (patch !== undefined)
						pending = Object.keys(patch)
							.filter((key) => patch[key] !== null)
							.reverse();
				}
				while (k < n) {
					const key = idx.keys[k++] as string;
					if (!seen.has(key)) return candidate(key, order.restTier, order.restCap ?? PREVIEW_BYTES);
				}
				return undefined;
			};
			return new Box("object", [], { count: n, bytes: catalog ? idx.valueBytes : idx.members }, next, sp, true);
		},
	};
}
