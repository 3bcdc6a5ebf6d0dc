/**
 * Salvage keeps every intact transition (issue 33). A record's patch is an RFC 7386 merge patch,
 * which applies to any state, so a damaged record loses only what it wrote: the intact records
 * after it are replayed over the salvaged state, each through the staging rules and with its
 * inverse (`undo`) computed again. A later record that no longer applies without what was lost
 * — it changes part of a value the salvaged state does not hold, it refers to an entry the lost
 * record touched, or staging refuses it — is left out and named, never guessed at. Every lost or
 * left-out seq keeps its place as an empty transition that says what was lost, so seqs,
 * `patches[N]`, the seqs sessions saw and this machine's seen marks stay true
 * (docs/decisions.md, "Salvage keeps every intact transition"). Pure.
 */
import { messageOf } from "../../core/errors.js";
import { inline } from "../../core/printable.js";
import { commitRecord, historyFrom } from "../../core/history.js";
import { getOwn, isPlainObject } from "../../core/json.js";
import { tryParseLocator } from "../../core/locator.js";
import { refsIn } from "../../core/refs.js";
import { stage } from "../../core/stage.js";
import {
	DEFAULT_LIMITS,
	type Json,
	type JsonObject,
	type Limits,
	type Owner,
	type OwnerState,
	type PlanePatch,
	ROOTS,
	SECTIONS,
	type TransitionRecord,
} from "../../core/types.js";
import { IMPORT_ROOTS } from "../transfer.js";

/** What the bytes of a damaged record still say, when they do. */
export interface LostInfo {
	id?: string;
	at?: string;
	/** Entries its patch wrote (`tactics.a`, `roots.todos`), when its patch still reads as JSON. */
	keys?: string[];
}

/** A transition whose effects the salvaged store does not have. */
export interface LostTransition extends LostInfo {
	seq: number;
	/** Damaged bytes, or why an intact record no longer applies. */
	why: string;
	/** The record was intact (kept in the damaged store, left out here). */
	intact: boolean;
}

/** One step of the log as salvage reads it: an intact record, or the lines of a damaged stretch. */
export type LogEntry = { record: TransitionRecord } | { damaged: string[] };

export interface Replay {
	/** The records of the salvaged store after `base`, seq after seq: the intact ones and a marker for each lost seq. */
	records: TransitionRecord[];
	state: OwnerState;
	lost: LostTransition[];
	/** Damaged lines after the last intact record: what they wrote is lost, with no seq kept. */
	tail: LostInfo[];
	/** Intact records at or before the base (folded into it): not needed. */
	folded: number;
	/** Intact records whose seq repeats one already placed: left out. */
	repeated: TransitionRecord[];
}

/** At most this many of a lost record's entries are named in its marker. */
const NAMED_KEYS = 6;

/** Entries a patch writes, `plane.key` (a registered root by its name). */
function entriesOf(patch: PlanePatch): string[] {
	const out: string[] = [];
	for (const section of SECTIONS) {
		const p = patch[section];
		if (p === undefined) continue;
		for (const key of Object.keys(p)) out.push(`${section}\u0000${key}`);
	}
	return out;
}

/** `tactics.a` for an entry key of `entriesOf`. */
export function entryText(entry: string): string {
	const [section, key] = entry.split("\u0000") as [string, string];
	return `${section}${/^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
}

/**
 * What a damaged record line still says: its id and time where their bytes read, and the entries
 * its patch wrote where the patch still parses as JSON (else its inverse's, which names every entry
 * it changed). Nothing is guessed: a part that does not read is left out.
 */
export function lostInfo(line: string): LostInfo & { seq?: number } {
	const out: LostInfo & { seq?: number } = {};
	const text = (re: RegExp): string | undefined => {
		const m = re.exec(line);
		if (m === null) return undefined;
		try {
			const v = JSON.parse(`"${m[1]}"`) as unknown;
			return typeof v === "string" ? v : undefined;
		} catch {
			return undefined;
		}
	};
	const id = text(/"id":"((?:[^"\\]|\\.){1,200})"/);
	if (id !== undefined) out.id = id;
	const at = text(/"at":"(\d{4}-\d\d-\d\dT[\d:.]+Z)"/);
	if (at !== undefined) out.at = at;
	const seq = /"seq":(\d{1,15})[,}]/.exec(line);
	if (seq !== null) out.seq = Number(seq[1]);
	for (const [from, to] of [
		['"patch":', ',"undo":'],
		['"undo":', ',"cascades":'],
	] as const) {
		const keys = objectKeysBetween(line, from, to);
		if (keys !== undefined) {
			out.keys = keys;
			break;
		}
	}
	return out;
}

/** The entries of the first plane-patch object between `from` and an occurrence of `to` that parses. */
function objectKeysBetween(line: string, from: string, to: string): string[] | undefined {
	const start = line.indexOf(from);
	if (start < 0) return undefined;
	for (let end = line.indexOf(to, start); end >= 0; end = line.indexOf(to, end + 1)) {
		try {
			const v = JSON.parse(line.slice(start + from.length, end)) as Json;
			if (!isPlainObject(v)) return undefined;
			return entriesOf(v as PlanePatch).map(entryText);
		} catch {
			// That `to` was inside a value: try the next one.
		}
	}
	return undefined;
}

/**
 * Where `patch` changes part of a value that `state` no longer holds as an object: a member it
 * merged into, by its recorded inverse (`undo` keeps a nested inverse, or nothing, where the
 * record merged into an object; `null` where it created the value; the old value where it
 * replaced one), that is now absent or no object. Merging there would make a fragment.
 */
function partOfMissing(state: OwnerState, patch: PlanePatch, undo: PlanePatch): string | undefined {
	/** `entry`: the plane entry the walk is inside (`tactics\u0000a`), named when a part of it is missing. */
	const walk = (cur: JsonObject, p: JsonObject, u: Json | undefined, section: string, entry: string | undefined): string | undefined => {
		for (const key of Object.keys(p)) {
			const pv = p[key] as Json;
			if (!isPlainObject(pv)) continue;
			const uv = isPlainObject(u) ? getOwn(u, key) : undefined;
			// `null` (created) or an old non-object value (replaced): the merge made it whole, as it will now.
			if (uv !== undefined && !isPlainObject(uv)) continue;
			const top = entry ?? `${section}\u0000${key}`;
			const now = getOwn(cur, key);
			if (!isPlainObject(now)) return entry === undefined ? entryText(top) : `${entryText(top)} (a member inside it)`;
			const deeper = walk(now, pv, uv, section, top);
			if (deeper !== undefined) return deeper;
		}
		return undefined;
	};
	for (const section of SECTIONS) {
		const p = patch[section];
		if (p === undefined) continue;
		const cur = (section === ROOTS ? (state.roots ?? {}) : state[section]) as JsonObject;
		const found = walk(cur, p, undo[section], section, undefined);
		if (found !== undefined) return found;
	}
	return undefined;
}

/** The first same-owner entry a reference in `patch` names that is missing after it, among `suspect` ones. */
function danglingTo(owner: Owner, state: OwnerState, patch: PlanePatch, suspect: (entry: string) => boolean): string | undefined {
	for (const section of SECTIONS) {
		const p = patch[section];
		if (p === undefined || section === ROOTS) continue;
		for (const ref of refsIn(p)) {
			const loc = tryParseLocator(ref, "canonical");
			if (loc === undefined || loc.kind !== "state" || loc.scope !== owner || loc.plane === null || loc.plane === ROOTS) continue;
			const key = loc.path[0];
			if (typeof key !== "string") continue;
			const written = patch[loc.plane]?.[key];
			const there = written === undefined ? Object.hasOwn(state[loc.plane], key) : written !== null;
			const entry = `${loc.plane}\u0000${key}`;
			if (!there && suspect(entry)) return ref;
		}
	}
	return undefined;
}

/** The empty transition that keeps a lost seq's place and says what was lost. */
function marker(owner: Owner, seq: number, lost: LostTransition, at: string, stamp: string): TransitionRecord {
	const keys =
		lost.keys === undefined
			? ""
			: `; it wrote ${lost.keys.slice(0, NAMED_KEYS).join(", ")}${lost.keys.length > NAMED_KEYS ? ` +${lost.keys.length - NAMED_KEYS} more` : ""}`;
	const reason = `salvage: lost #${seq}${lost.id === undefined ? "" : ` ${lost.id.slice(0, 60)}`} (${lost.intact ? "left out" : "damaged"})${keys}`;
	return { id: `salvage-${stamp}-${seq}`, at: lost.at ?? at, seq, by: { kind: "system", reason }, patch: {}, undo: {}, cascades: [], owners: [owner] };
}

/**
 * Replay the log's entries over `base`. `lostBefore`: what the base itself lost (a damaged
 * checkpoint: unknown entries), so references are judged from the first record on.
 */
export function replayLog(input: {
	owner: Owner;
	base: { seq: number; state: OwnerState };
	entries: readonly LogEntry[];
	lostBefore?: "unknown";
	limits?: Limits;
	/** The salvage's own name and time: markers are `salvage-<stamp>-<seq>`, dated `at` when nothing older says when. */
	stamp: string;
	at: string;
}): Replay {
	const { owner, stamp } = input;
	const h = historyFrom(owner, input.base.state, input.base.seq, [], Number.MAX_SAFE_INTEGER);
	const out: Replay = { records: [], state: h.state, lost: [], tail: [], folded: 0, repeated: [] };
	// What was lost so far, by entry; `unknown` once a loss's entries cannot be read.
	const lostEntries = new Set<string>();
	let lostUnknown = input.lostBefore === "unknown";
	let lossSeen = lostUnknown;
	let pending: string[] = [];
	const place = (r: TransitionRecord) => {
		commitRecord(h, r);
		out.records.push(r);
	};
	const lose = (lost: LostTransition) => {
		out.lost.push(lost);
		lossSeen = true;
		if (lost.keys === undefined) lostUnknown = true;
		else for (const k of lost.keys) lostEntries.add(k);
		place(marker(owner, lost.seq, lost, out.records.at(-1)?.at ?? input.at, stamp));
	};
	for (const entry of input.entries) {
		if ("damaged" in entry) {
			pending.push(...entry.damaged);
			continue;
		}
		const r = entry.record;
		if (r.seq <= h.seq) {
			if (r.seq <= input.base.seq) out.folded++;
			else out.repeated.push(r);
			continue;
		}
		// The seqs between the last placed record and this one were in the damaged lines before it.
		const infos = pending.map(lostInfo);
		const gap = r.seq - h.seq - 1;
		for (let seq = h.seq + 1; seq < r.seq; seq++) {
			const info = infos.length === gap ? infos[seq - h.seq - 1] : infos.find((i) => i.seq === seq);
			lose({ seq, ...withoutSeq(info), why: "its record is damaged", intact: false });
		}
		pending = [];
		if (!lossSeen) {
			place(r);
			continue;
		}
		const why = replayProblem(h.state, r, input.limits ?? DEFAULT_LIMITS, (e) => lostUnknown || lostEntries.has(entryText(e)));
		if (typeof why === "string") {
			lose({ seq: r.seq, id: r.id, at: r.at, keys: entriesOf(r.patch).map(entryText), why, intact: true });
			continue;
		}
		place(why);
	}
	out.tail = pending.map((line) => withoutSeq(lostInfo(line)));
	out.state = h.state;
	return out;

	/** `r` as it applies over `state` now (its inverse computed again), or why it no longer does. */
	function replayProblem(state: OwnerState, r: TransitionRecord, limits: Limits, suspect: (entry: string) => boolean): TransitionRecord | string {
		const part = partOfMissing(state, r.patch, r.undo);
		if (part !== undefined) return `it changes part of ${part}, which is no longer there`;
		let staged: ReturnType<typeof stage>;
		try {
			staged = stage(
				{ [owner]: h },
				{ [owner]: r.patch },
				{ id: r.id, at: r.at, by: r.by, ...(r.who ? { who: r.who } : {}), exact: true, roots: IMPORT_ROOTS },
				limits,
			);
		} catch (e) {
			return `staging refuses it now (${messageOf(e)})`;
		}
		const ref = danglingTo(owner, state, r.patch, suspect);
		if (ref !== undefined) return `it refers to ${ref}, which the lost transition wrote`;
		// The patch is kept as written (the record's own words); its inverse is the one that undoes it here.
		return { ...r, undo: staged.noop ? {} : ((staged.records[owner] as TransitionRecord).undo ?? {}) };
	}
}

/** A lost transition in the report: its seq, id and time where known, and what it wrote where its bytes say. */
export function lostLine(o: string, l: LostTransition): string {
	const who = `#${l.seq} ${l.id === undefined ? "(its id does not read)" : inline(l.id)}${l.at === undefined ? "" : ` (${l.at})`}`;
	if (l.intact) return `${o}: left out ${who}: intact, but ${l.why}; it stays in the damaged store.`;
	const wrote = l.keys === undefined ? "what it wrote does not read" : l.keys.length === 0 ? "it wrote nothing" : `it wrote ${l.keys.map(inline).join(", ")}`;
	return `${o}: lost ${who}: ${l.why}; ${wrote}.`;
}

function withoutSeq(info: (LostInfo & { seq?: number }) | undefined): LostInfo {
	if (info === undefined) return {};
	const { seq: _seq, ...rest } = info;
	return rest;
}
