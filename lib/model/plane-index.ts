/**
 * The size index of a shown section (a plane, or one registered root): its keys in natural
 * order and each value's size as the head shows it, kept next to the stored object and brought
 * forward from the retained transitions, so a render's cost follows the budget, not the state.
 */
import { naturalCompare } from "../core/order.js";
import { utf8Bytes } from "../core/size.js";
import { jsonUtf8Bytes, setOwn } from "../core/json.js";
import { modelJson } from "../core/printable.js";
import { ARTIFACT_COMPILER_FIELDS, ROOTS } from "../core/types.js";
import type { Json, JsonObject, Owner, OwnerHistory, PlanePatch, Section } from "../core/types.js";
import { headRefs } from "./head-refs.js";
import { type StatusClass, statusClass } from "./status.js";

/** A section the head shows: a plane, or one registered root (`roots` + its name). */
export interface SectionRef {
	plane: Section;
	/** The root's name when `plane` is `roots`. */
	root?: string;
}

const EMPTY: JsonObject = {};

/** The stored object of a shown section (a root's value, `{}` while it has none). */
export function sectionValue(h: OwnerHistory, s: SectionRef): JsonObject {
	if (s.plane !== ROOTS) return h.state[s.plane];
	const v = s.root === undefined ? undefined : h.state.roots?.[s.root];
	return v !== null && typeof v === "object" && !Array.isArray(v) ? v : EMPTY;
}

/** A record's patch of a shown section. */
export function sectionPatch(patch: PlanePatch, s: SectionRef): JsonObject | undefined {
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

/**
 * A member of a section as the head measures it: an artifact without the compiler's bookkeeping;
 * anything else as stored (references are spelled when shown: `head-refs.ts`).
 */
export function shownMember(plane: Section, value: Json): Json {
	if (plane !== "artifacts" || value === null || typeof value !== "object" || Array.isArray(value)) return value;
	let bookkeeping = false;
	for (const key of Object.keys(value)) if (ARTIFACT_BOOKKEEPING.has(key)) bookkeeping = true;
	if (!bookkeeping) return value;
	const out: JsonObject = {};
	for (const key of Object.keys(value)) if (!ARTIFACT_BOOKKEEPING.has(key)) setOwn(out, key, value[key] as Json);
	return out;
}

/** A member as the head shows it: `shownMember`, references spelled for the sole owner `sole` (flat form) or qualified. */
export function headMember(plane: Section, value: Json, sole: Owner | undefined): Json {
	return headRefs(shownMember(plane, value), sole);
}

/** Planes whose entries have a status the head ranks and counts by (`status.ts`). */
const STATUS_PLANES: ReadonlySet<Section> = new Set(["intents", "tactics"]);

/** Bytes of the JSON text of a key plus its colon (`"k":`). */
export function memberNameBytes(key: string): number {
	return utf8Bytes(headJson(key)) + 1;
}

/** JSON text of a value as the head spells it: `<`, C1 and separators escaped (`modelJson`), so stored text never closes the block. */
export function headJson(value: Json): string {
	return modelJson(JSON.stringify(value));
}

/** UTF-8 bytes of a stored value's compact JSON (nested values measured once: `jsonUtf8Bytes`). */
export const storedBytes = jsonUtf8Bytes;

/** A plane's keys in natural order and each value's size as shown (`shownMember`), valid for one `seq`. */
export interface PlaneIndex {
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
	/** Intents and tactics: each key's status class, how many keys are in each, and the keys in flight. */
	status?: { of: Map<string, StatusClass>; count: Record<StatusClass, number>; inflight: Set<string> };
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

/** Record `key`'s status class (or its removal: `undefined`) in a status plane's index. */
function indexStatus(idx: PlaneIndex, key: string, value: Json | undefined): void {
	const st = idx.status;
	if (st === undefined) return;
	const before = st.of.get(key);
	if (before !== undefined) st.count[before]--;
	st.inflight.delete(key);
	if (value === undefined) {
		st.of.delete(key);
		return;
	}
	const cls = statusClass(value);
	st.of.set(key, cls);
	st.count[cls]++;
	if (cls === "inflight") st.inflight.add(key);
}

function indexSet(idx: PlaneIndex, key: string, value: Json, stored: Json): void {
	indexStatus(idx, key, stored);
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
	indexStatus(idx, key, undefined);
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
			if (Object.hasOwn(value, key)) indexSet(idx, key, shownMember(plane, value[key] as Json), value[key] as Json);
			else indexDelete(idx, key);
		}
	} else {
		idx = { seq: 0, bytes: 0, keys: Object.keys(value).sort(naturalCompare), sizes: new Map(), members: 0, catalogMembers: 0, valueBytes: 0 };
		if (root === undefined && STATUS_PLANES.has(plane)) idx.status = { of: new Map(), count: { inflight: 0, open: 0, closed: 0 }, inflight: new Set() };
		for (const key of idx.keys) {
			indexStatus(idx, key, value[key] as Json);
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
