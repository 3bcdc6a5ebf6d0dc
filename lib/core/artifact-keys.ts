/**
 * Artifact keys as the model sees them (issue 25). A CWD or Session file artifact is stored
 * under a key relative to the checkout's root, the same for every session, worktree and
 * teammate. pi's own tools resolve a relative path from the folder pi runs in, so a session
 * started in `src/` is shown `a.ts` for the stored `src/a.ts` and `../README.md` for
 * `README.md`, and what it writes comes back the same way: the model always has a path it can
 * hand to `read` as it is. At the root the lens is the identity and costs nothing.
 *
 * The mapping is exact both ways: `fromModel(toModel(k)) === k` for every stored key, also for
 * keys that are not normalised (`src/./a.ts` is shown `../src/./a.ts`, never merged with
 * `src/a.ts`), so a view never hides or merges an entry; and `toModel(fromModel(m)) === m` for
 * every key the model may write: it writes the spelling it is shown (`../a.ts` from `src/deep/`
 * for `src/a.ts`), another spelling of a file (`./a.ts`) is refused naming the one to use.
 */
import { posix } from "node:path";
import { fail } from "./errors.js";
import { parsePointer, toPointer } from "./json.js";
import { type Locator, formatLocator, tryParseLocator } from "./locator.js";
import { mapRefs } from "./refs.js";
import type {
	Cascade,
	DanglingRef,
	Json,
	JsonObject,
	Owner,
	OwnerHistory,
	OwnerState,
	PlanePatch,
	Pointer,
	StageReport,
	StaleArtifact,
	TransitionRecord,
} from "./types.js";

/** The owners whose artifact keys are relative to the checkout's root and shown from the folder pi runs in (Global's are the agent directory's). */
const LENSED = ["cwd", "session"] as const;

function lensed(owner: Owner | null | "effective"): boolean {
	return LENSED.includes(owner as (typeof LENSED)[number]);
}

export interface KeyLens {
	/** The folder pi runs in, relative to the checkout's root (posix, no trailing slash); "" at the root. */
	readonly base: string;
	/** A stored key as the model is shown it. */
	toModel(key: string): string;
	/** A key the model wrote, as stored; refuses one that leaves the checkout. */
	fromModel(key: string, field: string): string;
}

/** The lens at the checkout's root: every key as stored. */
export const SAME_KEYS: KeyLens = { base: "", toModel: (k) => k, fromModel: (k) => k };

/**
 * How a plain stored key (normalised, relative, one optional trailing slash) is spelled from
 * the folder `base` (its segments), as `path.relative` spells it, worked out on the text alone
 * (never against the process's folder); undefined for any other non-empty relative key (the
 * only keys `toModel` asks about), and for the folder itself.
 */
function shortFrom(base: readonly string[], key: string): string | undefined {
	const slash = key.endsWith("/") ? "/" : "";
	const body = slash === "" ? key : key.slice(0, -1);
	// `normalize` keeps a trailing slash: a body ending in one (a key ending `//`) is not normalised either.
	if (body.endsWith("/") || posix.normalize(body) !== body) return undefined;
	const segs = body === "." ? [] : body.split("/");
	let same = 0;
	while (same < base.length && same < segs.length && base[same] === segs[same]) same++;
	const rel = [...base.slice(same).map(() => ".."), ...segs.slice(same)].join("/");
	return rel === "" ? undefined : rel + slash;
}

/** Refuse a stored key that leaves the checkout, in the words of the session in `base`. */
function insideOrFail(base: string, stored: string, field: string): void {
	const at = posix.normalize(stored);
	if (at === ".." || at.startsWith("../"))
		fail(
			"artifact",
			`${field} leaves the repository: artifact paths are relative to the folder pi runs in (${base}/ in the checkout) and must stay inside the checkout; use a path inside it.`,
		);
}

/** Refuse `field`, a key spelled otherwise than the model is shown it from `base`, naming `shown` and what to do with it. */
function spelledOtherwise(field: string, shown: string, base: string, todo: string): never {
	return fail("artifact", `${field} is spelled ${JSON.stringify(shown)} from the folder pi runs in (${base}/ in the checkout): ${todo}`);
}

/** The climb from the folder `clean` (not the root) to the checkout's root: `../` per segment. */
function upFrom(clean: string): string {
	return "../".repeat(clean.split("/").length);
}

/**
 * The stored keys a key the model wrote may name from the folder `clean` (not the root): the key
 * written from the checkout's root (climbing out of `clean` first), then the key joined to `clean`.
 */
function storedCandidates(clean: string, key: string): string[] {
	const up = upFrom(clean);
	const same = posix.normalize(posix.join(clean, key));
	return key.startsWith(up) ? [key.slice(up.length), same] : [same];
}

/** The lens for a session whose folder is `base` below the checkout's root ("" or "." for the root). */
export function keyLens(base: string): KeyLens {
	const clean = base === "." ? "" : base.replace(/\/+$/, "");
	if (clean === "") return SAME_KEYS;
	const segs = clean.split("/");
	const up = upFrom(clean);
	const toModel = (key: string): string => (key === "" || posix.isAbsolute(key) ? key : (shortFrom(segs, key) ?? up + key));
	return {
		base: clean,
		toModel,
		fromModel(key, field) {
			if (key === "" || posix.isAbsolute(key)) return key;
			// Only a spelling the model is shown is taken, so what it writes is what reads, results and
			// refusals name, and two spellings of one file in a patch never merge into one entry.
			const candidates = storedCandidates(clean, key);
			for (const stored of candidates) {
				if (toModel(stored) !== key) continue;
				insideOrFail(clean, stored, field);
				return stored;
			}
			const same = candidates.at(-1) as string;
			insideOrFail(clean, same, field);
			return spelledOtherwise(field, toModel(same), clean, "write that key, the one reads and results use.");
		},
	};
}

/**
 * A key of a store kept in the folder `base` below the checkout's root (relative to that folder),
 * rebased onto the checkout's root (`state-flow adopt`): the key a session there is shown for
 * it when there is one, else the folder and the key joined as they are, so no two keys merge.
 */
export function rebaseKey(base: string, key: string, field: string): string {
	const lens = keyLens(base);
	if (lens.base === "" || key === "" || posix.isAbsolute(key)) return key;
	const same = posix.normalize(posix.join(lens.base, key));
	insideOrFail(lens.base, same, field);
	return lens.toModel(same) === key ? same : `${lens.base}/${key}`;
}

/**
 * Refuse a read of a CWD or Session artifact under another spelling than the one the model is
 * shown (it would find nothing): the refusal names the spelling to use, as a write's does.
 */
export function checkReadSpelling(lens: KeyLens, loc: Locator, text: string): void {
	if (lens.base === "" || loc.kind !== "state" || !lensed(loc.scope) || loc.plane !== "artifacts" || typeof loc.path[0] !== "string") return;
	lens.fromModel(loc.path[0], `\`${text}\``);
}

/**
 * Refuse a read of `effective.artifacts[key]` that would find nothing because a CWD or Session
 * entry of that file is shown under another spelling: the refusal names the one to read. Unlike
 * `checkReadSpelling` it needs the histories, since a Global key is not lensed and may be spelled
 * any way: a key the view holds (Global's, or the spelling shown) is left to evaluation.
 */
export function checkEffectiveSpelling(lens: KeyLens, loc: Locator, text: string, histories: Partial<Record<Owner, OwnerHistory>>): void {
	if (lens.base === "" || loc.kind !== "state" || loc.scope !== "effective" || loc.plane !== "artifacts") return;
	const key = loc.path[0];
	if (typeof key !== "string" || key === "" || posix.isAbsolute(key) || Object.hasOwn(histories.global?.state.artifacts ?? {}, key)) return;
	let other: string | undefined;
	for (const stored of storedCandidates(lens.base, key)) {
		if (!LENSED.some((owner) => Object.hasOwn(histories[owner]?.state.artifacts ?? {}, stored))) continue;
		if (lens.toModel(stored) === key) return;
		other ??= stored;
	}
	if (other !== undefined) spelledOtherwise(`\`${text}\``, lens.toModel(other), lens.base, "read that key, the one the head and results use.");
}

/** A canonical locator text with its artifact key (if it names one of a lensed owner) passed through `map`. */
function mapLocatorKey(text: string, map: (key: string) => string): string {
	const loc = tryParseLocator(text, "canonical");
	if (loc === undefined || loc.kind !== "state" || !lensed(loc.scope) || loc.plane !== "artifacts" || typeof loc.path[0] !== "string") return text;
	return formatLocator({ ...loc, path: [map(loc.path[0]), ...loc.path.slice(1)] });
}

/** Every `$ref` in `value` with its artifact key passed through `map`; `value` itself when none is an artifact's. */
function mapArtifactRefs(value: Json, map: (key: string) => string): Json {
	if (!JSON.stringify(value).includes("artifacts")) return value;
	return mapRefs(value, (ref) => mapLocatorKey(ref, map));
}

/** A plane (or plane patch) with every value's artifact references mapped, and the artifacts plane's own keys too. */
function mapPlanes<P extends OwnerState | PlanePatch>(planes: P, owner: Owner, map: (key: string) => string): P {
	if (!lensed(owner)) return planes;
	const out = { ...planes } as Record<string, JsonObject | undefined>;
	for (const [plane, entries] of Object.entries(planes) as [string, JsonObject | undefined][]) {
		if (entries === undefined) continue;
		const next: JsonObject = {};
		for (const [key, value] of Object.entries(entries)) next[plane === "artifacts" ? map(key) : key] = mapArtifactRefs(value, map);
		out[plane] = next;
	}
	return out as P;
}

function mapRecord(rec: TransitionRecord, owner: Owner, map: (key: string) => string): TransitionRecord {
	return {
		...rec,
		patch: mapPlanes(rec.patch, owner, map),
		undo: mapPlanes(rec.undo, owner, map),
		cascades: rec.cascades.map((c) => mapCascade(c, map)),
	};
}

function mapCascade(c: Cascade, map: (key: string) => string): Cascade {
	return { ...c, targets: c.targets.map((t) => mapLocatorKey(t, map)) };
}

/** Views by history object; the holder mutates a history in place, so a view is reused only while its seq, fold point and tail are the same. */
const views = new WeakMap<OwnerHistory, { base: string; at: string; view: OwnerHistory }>();

/** A history as the model is shown it: state, checkpoint and retained transitions with keys through the lens (cached per history object). */
export function viewHistory(lens: KeyLens, h: OwnerHistory): OwnerHistory {
	if (lens.base === "" || !lensed(h.owner)) return h;
	const at = `${h.seq}:${h.checkpointSeq}:${h.tail.length}:${h.tail.at(-1)?.id ?? ""}`;
	const known = views.get(h);
	if (known?.base === lens.base && known.at === at) return known.view;
	const view = mapHistoryKeys(h, (k) => lens.toModel(k));
	views.set(h, { base: lens.base, at, view });
	return view;
}

/**
 * A history with every artifact key of a CWD or Session owner passed through `map`: checkpoint,
 * state and each retained transition's patch, undo and cascades, references inside values
 * included. A copy; `h` is not touched.
 */
export function mapHistoryKeys(h: OwnerHistory, map: (key: string) => string): OwnerHistory {
	return {
		...h,
		checkpoint: mapPlanes(h.checkpoint, h.owner, map),
		state: mapPlanes(h.state, h.owner, map),
		tail: h.tail.map((r) => mapRecord(r, h.owner, map)),
	};
}

/** One owner's state as the model is shown it. */
export function viewState(lens: KeyLens, owner: Owner, state: OwnerState): OwnerState {
	return lens.base === "" ? state : mapPlanes(state, owner, (k) => lens.toModel(k));
}

/** A stale-artifact note as the model is shown it. */
export function staleToModel(lens: KeyLens, s: StaleArtifact): StaleArtifact {
	return lens.base === "" || !lensed(s.owner) ? s : { ...s, key: lens.toModel(s.key) };
}

/** The wanted owners' histories as the model is shown them. */
export function viewHistories(lens: KeyLens, histories: Partial<Record<Owner, OwnerHistory>>): Partial<Record<Owner, OwnerHistory>> {
	if (lens.base === "") return histories;
	const out: Partial<Record<Owner, OwnerHistory>> = {};
	for (const [owner, h] of Object.entries(histories) as [Owner, OwnerHistory | undefined][]) if (h !== undefined) out[owner] = viewHistory(lens, h);
	return out;
}

/** A canonical patch the model wrote (its keys in the model's view), as stored. */
export function patchFromModel(lens: KeyLens, patch: Partial<Record<Owner, PlanePatch>>): Partial<Record<Owner, PlanePatch>> {
	if (lens.base === "") return patch;
	const out: Partial<Record<Owner, PlanePatch>> = {};
	for (const [owner, p] of Object.entries(patch) as [Owner, PlanePatch][]) {
		out[owner] = mapPlanes(p, owner, (k) => lens.fromModel(k, `\`${owner}.artifacts[${JSON.stringify(k)}]\``));
	}
	return out;
}

/** A canonical pointer (`/cwd/artifacts/src~1a.ts/kind`) as the model is shown it. */
export function pointerToModel(lens: KeyLens, ptr: Pointer): Pointer {
	if (lens.base === "") return ptr;
	const [owner, plane, key, ...rest] = parsePointer(ptr);
	if (plane !== "artifacts" || key === undefined || !lensed(owner as Owner)) return ptr;
	return toPointer([owner as string, plane, lens.toModel(key), ...rest]);
}

/** A commit's report as the model is shown it (its `details` keep the canonical form). */
export function reportToModel(lens: KeyLens, report: StageReport): StageReport {
	if (lens.base === "") return report;
	const map = (k: string) => lens.toModel(k);
	return {
		...report,
		changed: report.changed.map((p) => pointerToModel(lens, p)),
		missingDeletions: report.missingDeletions.map((p) => pointerToModel(lens, p)),
		cascades: report.cascades.map((c) => mapCascade(c, map)),
		danglingRefs: report.danglingRefs.map(
			(d): DanglingRef => ({ ...d, ref: mapLocatorKey(d.ref, map), ...(d.drop !== undefined ? { drop: mapArtifactRefs(d.drop, map) as JsonObject } : {}) }),
		),
	};
}

/** Committed records as the model is shown them (what tells deletions from writes). */
export function recordsToModel(lens: KeyLens, records: Partial<Record<Owner, TransitionRecord>>): Partial<Record<Owner, TransitionRecord>> {
	if (lens.base === "") return records;
	const out: Partial<Record<Owner, TransitionRecord>> = {};
	for (const [owner, r] of Object.entries(records) as [Owner, TransitionRecord][]) out[owner] = mapRecord(r, owner, (k) => lens.toModel(k));
	return out;
}
