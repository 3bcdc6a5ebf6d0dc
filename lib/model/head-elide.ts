/**
 * Budgeted rendering of the head's planes. A plane that does not fit shows as many of its keys
 * as fit — names first: every shown value starts as a short preview, keys are dropped only when
 * even previews do not fit — then the leftover bytes lengthen previews back to whole values in
 * priority order. Every partial object or array ends with one `"…"` entry counting what it
 * does not show (keys and bytes); a plane's also names its `read_state` locator and the `keys`
 * projection (and, for intents and tactics, what kinds of entries it counts and how old), a
 * nested one is read at its own path. A shortened object shows its status first.
 *
 * Cost is bounded by the budget, not the state: per plane a size index (`plane-index.ts`: key order and value
 * sizes) is kept next to the stored plane object and brought up to date from the retained
 * transitions, so a render walks only the keys it shows, however large the plane.
 */

import { shownLocator } from "../core/elide.js";
import { naturalCompare } from "../core/order.js";
import { type Locator, formatModelLocator } from "../core/locator.js";
import { isRef } from "../core/refs.js";
import { ownKeys } from "../core/json.js";
import type { Json, JsonObject, Owner, Section } from "../core/types.js";
import { formatSize, utf8Bytes } from "../core/size.js";
import { headRefs, refsArrayText } from "./head-refs.js";
import { headJson, memberNameBytes, storedBytes } from "./plane-index.js";
import { STATUS_FIELDS } from "./status.js";

export { planeIndex, type SectionRef, shownMember } from "./plane-index.js";

/** The most a value's preview takes while names are placed. */
export const PREVIEW_BYTES = 48;

/** The key of every marker: a partial container's last entry, or a whole plane's only one. */
export const MARKER_KEY = "…";

/**
 * Locator text as the model is shown it: relative in flat (owner undefined), qualified in scoped;
 * one made of long keys shows its start and end (`shownLocator`), so no line that names it grows
 * with the keys.
 */
export function modelLocator(owner: Owner | undefined, plane: Section, path: readonly (string | number)[]): string {
	const loc: Locator = { kind: "state", scope: owner ?? null, offset: 0, plane, path: [...path] };
	return shownLocator(formatModelLocator(loc));
}

/** How a value is spelled for the model: same-owner refs relative in flat form. */
export interface Spelling {
	/** Marker locators and relative refs: the sole owner in flat form, undefined in scoped form. */
	sole: Owner | undefined;
	owner: Owner;
	plane: Section;
	/** Path of the section below `plane`: `[name]` for a registered root. */
	base: string[];
}

/** The JSON text of a value as the head shows it: references as `headRefs` spells them. */
export function presentedText(value: Json, sp: Spelling): string {
	return headJson(headRefs(value, sp.sole));
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
 * the stored value's UTF-8 size: the presented one is never larger (an array of references
 * inside it is much shorter: a container that fits whole then comes out of the box complete).
 */
function fitValue(stored: Json, size: number, allowance: number, path: (string | number)[], sp: Spelling): Shown {
	// An array of references is shown as one string (`head-refs.ts`), whole or as its preview.
	const refs = Array.isArray(stored) ? refsArrayText(stored, sp.sole) : undefined;
	const value = refs ?? stored;
	if (refs !== undefined) size = utf8Bytes(headJson(refs));
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
export interface Candidate {
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
	/** Index of its kind in the plane marker's `MarkerKinds.labels` (plane level, kinded planes only). */
	kind?: number;
	/** Lengthened only by the last pass (`upgrade` without a tier), after every tier's values. */
	late?: boolean;
}

/** What a plane's marker says of the entries it counts besides how many: their kinds and how old they are. */
export interface MarkerKinds {
	/** Kind labels in the order the marker names them (`in flight`, `open`, `closed`, …). */
	labels: readonly string[];
	/** How many of the plane's entries are of each kind (they sum to its count). */
	totals: readonly number[];
	/** The day (`YYYY-MM-DD`) none of the entries not shown changed after, given the shown keys; absent: not said. */
	age?: (shown: ReadonlySet<string>) => string;
}

/** Stands for the day while sizes are counted: every day is spelled in 10 characters. */
const ANY_DAY = "0000-00-00";

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
	/**
	 * Candidates an object skipped for want of room, in priority order: a later pass retries them
	 * first, since filling other planes shrinks their markers and frees room (at most `MAX_MISSES`).
	 */
	readonly #skipped: Candidate[] = [];
	#remainingCount: number;
	#remainingBytes: number;
	/** Entries not shown, per kind of `kinds` (kinded plane markers only). */
	readonly #remainingKinds: number[];
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
		/** Plane level: what the marker says of the kinds of entries it counts. */
		private readonly kinds?: MarkerKinds,
	) {
		this.#remainingCount = total.count;
		this.#remainingBytes = total.bytes;
		this.#remainingKinds = [...(kinds?.totals ?? [])];
	}

	/**
	 * The marker for `count` entries of `bytes` not shown; `some` when entries are shown before it.
	 * A kinded plane's says what they are (`2 more (closed)`, `261 more (250 closed, 11 open; none
	 * changed after 2025-08-01)`), `minus` leaving one entry of that kind out of the counts.
	 */
	#marker(count: number, bytes: number, some: boolean, minus?: number, day = ANY_DAY): string {
		const noun = this.kind === "object" ? (count === 1 ? "key" : "keys") : count === 1 ? "item" : "items";
		// A plane's marker names its locator. A nested one is read at its own path, as the head's
		// shortened line says once: spelling it would cost more than most previews a budget shows.
		this.#how ??= this.planeLevel
			? `: read_state ${modelLocator(this.sp.sole === undefined ? this.sp.owner : undefined, this.sp.plane, this.sp.base)} with projection keys`
			: "";
		const how = this.#how;
		let what = `${count} ${some ? "more " : ""}${noun}`;
		const kinds = this.kinds;
		if (kinds !== undefined) {
			const parts: Array<[string, number]> = [];
			kinds.labels.forEach((label, i) => {
				const n = (this.#remainingKinds[i] ?? 0) - (i === minus ? 1 : 0);
				if (n > 0) parts.push([label, n]);
			});
			const named = parts.length === 1 ? (parts[0] as [string, number])[0] : parts.map(([label, n]) => `${n} ${label}`).join(", ");
			const age = kinds.age === undefined ? "" : `; none changed after ${day}`;
			if (parts.length > 0) what = `${count} ${some ? "more" : noun} (${named}${age})`;
		}
		const text = headJson(`${what}, ${formatSize(bytes)}${how}`);
		return this.kind === "object" ? `"${MARKER_KEY}":${text}` : `{"${MARKER_KEY}":${text}}`;
	}

	#size(entryBytes: number, shown: number, remainingCount: number, remainingBytes: number, minus?: number): number {
		const parts = shown + (remainingCount > 0 ? 1 : 0);
		const marker = remainingCount > 0 ? utf8Bytes(this.#marker(remainingCount, remainingBytes, shown > 0, minus)) : 0;
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
	 * that does not fit (indices must stay true); objects skip it and try later, smaller ones,
	 * and offer it again, first, in their next pass.
	 */
	fillNames(allowance: number, tier = Number.POSITIVE_INFINITY): void {
		for (let i = 0; i < this.#skipped.length; ) {
			if (allowance - this.bytes() < 4) return;
			const cand = this.#skipped[i] as Candidate;
			if (cand.tier <= tier && this.#place(cand, allowance)) this.#skipped.splice(i, 1);
			else i++;
		}
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
			if (this.#place(cand, allowance)) misses = 0;
			else if (this.kind === "array" || ++misses >= MAX_MISSES) this.#done = true;
			else if (this.#skipped.length < MAX_MISSES) this.#skipped.push(cand);
		}
	}

	/** Show `cand` in its first form if it fits in `allowance` with the rest; whether it was placed. */
	#place(cand: Candidate, allowance: number): boolean {
		const name = this.kind === "object" ? `${headJson(cand.key)}:` : "";
		const nameBytes = utf8Bytes(name);
		const n = this.#entries.length + 1;
		// The value gets what is left once the name and the marker are placed, at most a preview.
		const room = allowance - this.#size(this.#entryBytes + nameBytes, n, this.#remainingCount - 1, this.#remainingBytes - cand.weight, cand.kind);
		const shown = fitValue(cand.value, cand.size, Math.min(cand.cap, room), [...this.path, cand.key], this.sp);
		if (shown.bytes > room) return false;
		this.#entries.push({ cand, name, nameBytes, shown });
		this.#entryBytes += nameBytes + shown.bytes;
		this.#remainingCount--;
		this.#remainingBytes -= cand.weight;
		if (cand.kind !== undefined && this.#remainingKinds[cand.kind] !== undefined) (this.#remainingKinds[cand.kind] as number)--;
		return true;
	}

	/** Lengthen shown values (of `tier` only, when given), in priority order, while the box stays within `allowance` bytes. */
	upgrade(allowance: number, tier?: number): void {
		for (const e of this.#entries) {
			if (e.shown.full || (tier !== undefined && (e.cand.tier !== tier || e.cand.late === true))) continue;
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
		// A plane lists its keys in natural order; a nested object in document order, its status
		// first when it is shortened (a status is never lost in the middle of previews).
		const complete = this.complete();
		const rank = (e: Entry): number => (!complete && STATUS_FIELDS.has(String(e.cand.key)) ? 0 : 1);
		const entries = this.planeLevel
			? [...this.#entries].sort((a, b) => naturalCompare(String(a.cand.key), String(b.cand.key)))
			: [...this.#entries].sort((a, b) => rank(a) - rank(b) || a.cand.order - b.cand.order);
		const parts = entries.map((e) => e.name + e.shown.text);
		if (this.#remainingCount > 0) {
			const day = this.kinds?.age?.(new Set(this.#entries.map((e) => String(e.cand.key))));
			parts.push(this.#marker(this.#remainingCount, this.#remainingBytes, entries.length > 0, undefined, day));
		}
		return this.kind === "object" ? `{${parts.join(",")}}` : `[${parts.join(",")}]`;
	}
}

/** Members up to this size are placed before longer ones, so a flag or a reference beside a long text stays visible. */
const SHORT_MEMBER_BYTES = 32;

/**
 * Nested object, members offered in passes, each in document order: its status (`STATUS_FIELDS`,
 * whole whatever its length), then short members (a flag, a reference), then an intent's goal
 * (whole when it fits), then the rest as previews; listed in document order, the status first
 * when shortened. Sizes measured once each.
 */
function objectBox(value: JsonObject, size: number, path: (string | number)[], sp: Spelling): Box {
	const keys = ownKeys(value);
	const intent = sp.plane === "intents" && path.length === 1;
	let passes: number[][] | undefined;
	let p = 0;
	let i = 0;
	const next = (): Candidate | undefined => {
		if (passes === undefined) {
			passes = [[], [], [], []];
			keys.forEach((key, order) => {
				const pass = STATUS_FIELDS.has(key) ? 0 : intent && key === "goal" ? 2 : storedBytes(value[key] as Json) <= SHORT_MEMBER_BYTES ? 1 : 3;
				(passes as number[][])[pass]?.push(order);
			});
		}
		for (; p < passes.length; p++, i = 0) {
			const list = passes[p] as number[];
			if (i >= list.length) continue;
			const order = list[i++] as number;
			const key = keys[order] as string;
			const v = value[key] as Json;
			const s = storedBytes(v);
			// A status and a goal get all the room there is; the rest start as previews.
			const cap = p === 0 || p === 2 ? Number.POSITIVE_INFINITY : PREVIEW_BYTES;
			return { key, value: v, size: s, weight: memberNameBytes(key) + s, tier: 0, cap, order };
		}
		return undefined;
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
