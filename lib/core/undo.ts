/**
 * Undo, redo and restore planned from owner histories (pure; `/state`, the browser and the CLI
 * commit a plan through the normal commit path). The undo chain is read from the records
 * (`undo-chain.ts`): every undo, redo and restore names what it reverted, so a repeated undo
 * walks back one transition at a time and redo walks forward again, like an editor's undo. A plan applies
 * exact inverses (or, for restore, the diff to an earlier state) and is refused where it would
 * overwrite later work still in effect.
 */
import { cloneJson, getOwn, isPlainObject, jsonEqual, setOwn } from "./json.js";
import { mergeDiff, patchLeaves } from "./merge.js";
import { stateAt } from "./history.js";
import { type Histories, reversalOf, undoChain } from "./undo-chain.js";
import { OWNERS, SECTIONS } from "./types.js";
import type { CanonicalPatch, Json, JsonObject, Owner, OwnerHistory, PlanePatch, Result, Reversal, Section, TransitionRecord, Who } from "./types.js";

/** One transition a plan reverts, named by the first owner (display order) it is reverted in. */
export interface Reverted {
	owner: Owner;
	record: TransitionRecord;
}

/** What an undo, redo or restore will commit. */
export interface UndoPlan {
	op: Reversal["op"];
	/** undo and redo: the transition inverted; restore: the transition restored to. */
	id: string;
	owners: Owner[];
	patch: CanonicalPatch;
	/** The transitions whose changes the plan reverts (undo, redo: one; restore: those after `id`). */
	reverts: Reverted[];
	/** Each owner's seq the plan was made against: committed only while none moved. */
	seqs: Partial<Record<Owner, number>>;
	/** restore of one path: its canonical locator. */
	path?: string;
	/** redo: the change it applies again (the undo's target), when still retained. */
	again?: Reverted;
}

/** What a plan's commit records in `by.reverts`. */
export function reversalFor(plan: UndoPlan): Reversal {
	if (plan.op !== "restore") return { op: plan.op, target: plan.id };
	return { op: "restore", target: plan.id, reverted: plan.reverts.map((r) => r.record.id), ...(plan.path !== undefined ? { path: plan.path } : {}) };
}

/** Made by someone else than `me` (another user, or another machine); an unrecorded author is not counted. */
const byOther = (who: Who | undefined, me: Who): boolean => who !== undefined && (who.user !== me.user || who.host !== me.host);

/**
 * The transitions of a plan made by someone else than `me`, which reverting needs their consent
 * for. A redo of `me`'s own change (undone by anyone) reverts nobody's work: it brings `me`'s back.
 */
export function othersIn(plan: UndoPlan, me: Who): Reverted[] {
	if (plan.op === "redo" && plan.again !== undefined && !byOther(plan.again.record.who, me)) return [];
	return plan.reverts.filter(({ record }) => byOther(record.who, me));
}

/** Why a commit of `plan` must not go ahead under these histories (an owner moved since it was planned), or undefined. */
export function movedSince(plan: UndoPlan, histories: Partial<Record<Owner, OwnerHistory>>): string | undefined {
	for (const owner of plan.owners) {
		const now = histories[owner]?.seq;
		if (now !== plan.seqs[owner]) return `${owner} changed while the ${plan.op} was being prepared (now seq ${now ?? "?"}, planned at ${plan.seqs[owner]})`;
	}
	return undefined;
}

type Path = readonly string[];

function leafPaths(patch: PlanePatch): string[][] {
	return patchLeaves(patch).map((l) => [l.plane, ...l.path]);
}

function overlaps(a: Path, b: Path): boolean {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
	return true;
}

function touches(r: TransitionRecord, paths: readonly Path[]): boolean {
	return leafPaths(r.patch).some((p) => paths.some((q) => overlaps(p, q)));
}

const shortId = (id: string) => id.slice(0, 8);
const named = (owner: Owner, r: TransitionRecord) => `${owner} #${r.seq} (${shortId(r.id)})`;

/**
 * Indexes of `records` that cancel out: an undo or redo paired with the record it inverted, both
 * in the list; each record pairs at most once, in order (L, undo L, redo: L and the undo cancel,
 * the redo stays in effect).
 */
function cancelled(records: readonly TransitionRecord[]): Set<number> {
	const index = new Map(records.map((r, i) => [r.id, i]));
	const paired = new Set<number>();
	records.forEach((r, i) => {
		const rev = reversalOf(r);
		if (rev === undefined || rev.op === "restore") return;
		const j = index.get(rev.target);
		if (j !== undefined && j < i && !paired.has(j)) {
			paired.add(j);
			paired.add(i);
		}
	});
	return paired;
}

/** Why some asked owner cannot be read, for a refusal. */
function unreadable(histories: Histories, owners: readonly Owner[], what: string): Result<never> | undefined {
	for (const owner of owners) {
		const h = histories[owner];
		if (h !== undefined && !h.ok) return { ok: false, why: `cannot ${what} ${owner}: ${h.why}` };
	}
	return undefined;
}

/**
 * Invert `record` in `owners` (those that retain it and can be read): refused when an owner's
 * later transitions still in effect changed a key its inverse writes (or one inside it), or when
 * a later undo already reverted it. An undo record inverted is a redo.
 */
function inversePlan(histories: Histories, record: TransitionRecord, owners: readonly Owner[]): Result<UndoPlan> {
	const plan: UndoPlan = { op: reversalOf(record)?.op === "undo" ? "redo" : "undo", id: record.id, owners: [], patch: {}, reverts: [], seqs: {} };
	for (const owner of OWNERS) {
		const loaded = histories[owner];
		if (!owners.includes(owner) || !loaded?.ok) continue;
		const h = loaded.value;
		const at = h.tail.findIndex((r) => r.id === record.id);
		if (at < 0) continue;
		const rest = h.tail.slice(at);
		// What the inverse writes, from this owner's own record (a shared transition may write other keys in each owner).
		const mine = leafPaths((h.tail[at] as TransitionRecord).undo);
		const gone = cancelled(rest);
		if (gone.has(0)) {
			const by = rest.find((r, i) => i > 0 && gone.has(i) && reversalOf(r)?.target === record.id) as TransitionRecord;
			return { ok: false, why: `${named(owner, record)} was already reverted by ${named(owner, by)}; undo that one to apply it again.` };
		}
		const later = rest.find((r, i) => i > 0 && !gone.has(i) && touches(r, mine));
		if (later !== undefined) return { ok: false, why: `${named(owner, later)} changed the same keys later; undo that one first.` };
		plan.patch[owner] = h.tail[at]?.undo as PlanePatch;
		plan.owners.push(owner);
		plan.seqs[owner] = h.seq;
		if (plan.reverts.length === 0) plan.reverts.push({ owner, record: h.tail[at] as TransitionRecord });
		const target = plan.op === "redo" ? reversalOf(record)?.target : undefined;
		const again = target === undefined ? undefined : h.tail.find((r) => r.id === target);
		if (plan.again === undefined && again !== undefined) plan.again = { owner, record: again };
	}
	if (plan.owners.length === 0) return { ok: false, why: `transition ${record.id} is no longer retained.` };
	return { ok: true, value: plan };
}

/**
 * `undo` without an id: the latest transition of `owners` still in effect (an undo is never
 * itself undone; a redo is), reverted in every owner it touched, or only in the one named.
 */
export function latestUndoPlan(histories: Histories, owners: readonly Owner[], explicit: boolean): Result<UndoPlan> {
	const bad = unreadable(histories, owners, "undo");
	if (bad) return bad;
	const { done, redo } = undoChain(histories, owners);
	const top = done[done.length - 1];
	if (top === undefined) {
		const hint = redo.length > 0 ? " (every retained one is undone; redo applies the latest undone again)" : "";
		return { ok: false, why: `no retained transition to undo for ${owners.join("+")}${hint}.` };
	}
	return inversePlan(histories, top, explicit ? owners : top.owners);
}

/** `redo`: the latest undo of `owners` not yet redone, inverted (the undone change applied again). */
export function latestRedoPlan(histories: Histories, owners: readonly Owner[], explicit: boolean): Result<UndoPlan> {
	const bad = unreadable(histories, owners, "redo");
	if (bad) return bad;
	const { redo, clearedBy } = undoChain(histories, owners);
	const top = redo[redo.length - 1];
	if (top === undefined) {
		const after = clearedBy === undefined ? "" : ` (transition ${shortId(clearedBy.id)} came after the last undo; undo it, or undo the undo by its id)`;
		return { ok: false, why: `nothing to redo for ${owners.join("+")}${after}.` };
	}
	return inversePlan(histories, top, explicit ? owners : top.owners);
}

/** The one retained id that starts with `prefix`, or why not; `nothing` says what the prefix is not. */
export function resolveId(histories: Histories, prefix: string, nothing: string): Result<TransitionRecord> {
	const found = new Map<string, TransitionRecord>();
	for (const owner of OWNERS) {
		const h = histories[owner];
		if (h?.ok) for (const r of h.value.tail) if (r.id.startsWith(prefix) && !found.has(r.id)) found.set(r.id, r);
	}
	const [first, ...more] = found.values();
	if (first === undefined) return { ok: false, why: nothing };
	if (more.length > 0) {
		const shown = [...found.keys()].slice(0, 4).join(", ");
		return { ok: false, why: `\`${prefix}\` starts ${found.size} transition ids (${shown}${found.size > 4 ? ", …" : ""}); type more of the id.` };
	}
	return { ok: true, value: first };
}

/**
 * `undo <id>`: the one retained transition whose id starts with `prefix`, planned as
 * `selectedUndoPlan`. `where` names the owners the user could have meant, for the refusal.
 */
export function idUndoPlan(histories: Histories, prefix: string, where: string, listed: string): Result<UndoPlan> {
	const found = resolveId(
		histories,
		prefix,
		`no retained transition's id starts with \`${prefix}\`, and it is not an owner (${where}); ${listed} lists the ids.`,
	);
	return found.ok ? selectedUndoPlan(histories, found.value.id) : found;
}

/**
 * Undo of one chosen transition (the browser, an id) in every owner that retains it: its stored
 * inverse, unless later work still in effect changed one of its keys (the plan names that one)
 * or it was already undone. Choosing an undo is a redo.
 */
export function selectedUndoPlan(histories: Histories, id: string): Result<UndoPlan> {
	const found = resolveId(histories, id, `transition ${id} is no longer retained.`);
	if (!found.ok || found.value.id !== id) return { ok: false, why: `transition ${id} is no longer retained.` };
	return inversePlan(histories, found.value, OWNERS);
}

/** What a restore may be narrowed to: one owner, or one plane or key path in it. */
export interface RestoreScope {
	owner: Owner;
	/** Absent: the whole owner. */
	section?: Section;
	path?: readonly (string | number)[];
	/** The canonical locator, recorded with the restore. */
	locator?: string;
}

function getPath(v: Json | undefined, path: Path): Json | undefined {
	let cur = v;
	for (const seg of path) {
		cur = isPlainObject(cur) ? getOwn(cur, seg) : undefined;
		if (cur === undefined) return undefined;
	}
	return cur;
}

/** The merge patch that sets `path` of a section from `now` to `then` (undefined: nothing to change). */
function pathPatch(now: Json | undefined, then: Json | undefined, path: Path): JsonObject | undefined {
	if (then === undefined ? now === undefined : now !== undefined && jsonEqual(now, then)) return undefined;
	let value: Json = then === undefined ? null : now === undefined ? cloneJson(then) : mergeDiff(now, then);
	for (let i = path.length - 1; i >= 0; i--) {
		const o: JsonObject = {};
		setOwn(o, path[i] as string, value);
		value = o;
	}
	return value as JsonObject;
}

/**
 * `restore <id> [owner|path]`: one transition that brings each owner retaining `id` (or the one
 * named, or one path in it) back to how it was right after `id`. It reverts the later
 * transitions that changed what is restored; nothing to change is a refusal that names it.
 */
export function restorePlan(histories: Histories, id: string, scope?: RestoreScope): Result<UndoPlan> {
	const path = (scope?.path ?? []).map((s) => s);
	if (path.some((s) => typeof s !== "string")) {
		return { ok: false, why: `\`${scope?.locator}\` names an array element; restore the key that holds the array instead.` };
	}
	const keys = path as string[];
	const owners = scope === undefined ? OWNERS : [scope.owner];
	const bad = scope === undefined ? undefined : unreadable(histories, owners, "restore");
	if (bad) return bad;
	const plan: UndoPlan = { op: "restore", id, owners: [], patch: {}, reverts: [], seqs: {}, ...(scope?.locator !== undefined ? { path: scope.locator } : {}) };
	const seen = new Set<string>();
	let retained: TransitionRecord | undefined;
	for (const owner of owners) {
		const loaded = histories[owner];
		if (!loaded?.ok) continue;
		const h = loaded.value;
		const at = h.tail.findIndex((r) => r.id === id);
		if (at < 0) continue;
		retained = h.tail[at];
		const later = h.tail.slice(at + 1);
		const then = stateAt(h, later.length);
		const patch: PlanePatch = {};
		for (const section of scope?.section !== undefined ? [scope.section] : SECTIONS) {
			const now = (h.state[section] ?? {}) as JsonObject;
			const was = (then[section] ?? {}) as JsonObject;
			const part = keys.length === 0 ? mergeDiff(now, was) : pathPatch(getPath(now, keys), getPath(was, keys), keys);
			if (part !== undefined && Object.keys(part).length > 0) patch[section] = part;
		}
		if (Object.keys(patch).length === 0) continue;
		const changed = leafPaths(patch);
		plan.patch[owner] = patch;
		plan.owners.push(owner);
		plan.seqs[owner] = h.seq;
		for (const r of later) {
			if (!seen.has(r.id) && touches(r, changed)) {
				seen.add(r.id);
				plan.reverts.push({ owner, record: r });
			}
		}
	}
	const what = scope?.locator ?? (scope?.owner ? scope.owner : "every owner that retains it");
	if (retained === undefined) return { ok: false, why: `transition ${id} is not retained in ${scope?.owner ?? "any owner"}.` };
	if (plan.owners.length === 0) return { ok: false, why: `nothing to restore: ${what} is already as it was after ${shortId(id)}.` };
	return { ok: true, value: plan };
}
