/**
 * Staging: the pure decision of what one canonical patch does to the owners it names.
 * Validates the patch (it may come from the model or a CLI import), adds ownership
 * cascades, plans each owner's effective patch and checks limits. Histories are never
 * mutated here; stores make the records durable and then call `commitStaged`.
 */

import { fail, formatPath } from "./errors.js";
import { checkKeyLength, checkLimits, detach, hasOwn, isPlainObject, setOwn } from "./json.js";
import { commitRecord } from "./history.js";
import { planCascades } from "./ownership.js";
import { anchorRevealedRefs, checkWrittenRefs } from "./refs.js";
import { applyMergePatch, planPatch } from "./merge.js";
import { DEFAULT_LIMITS, OWNERS, PLANES, ROOTS } from "./types.js";
import type {
	CanonicalPatch,
	Cascade,
	DanglingRef,
	JsonObject,
	Limits,
	Owner,
	OwnerHistory,
	PlanePatch,
	Provenance,
	RootGate,
	StageReport,
	TransitionRecord,
	Who,
} from "./types.js";

/** Identity of the transition being staged (ids and time are injected; core reads no clock). */
export interface StageMeta {
	id: string;
	at: string;
	by: Provenance;
	/** Who makes it; every owner's record of the transition carries the same (absent: not recorded). */
	who?: Who;
	/**
	 * The patch is an exact state delta (an undo of a stored transition): apply it as it is,
	 * without ownership cascades, which the original transition's undo already accounts for.
	 */
	exact?: boolean;
	/** Decides which registered roots may be written and checks their values (docs/spec.md §12). */
	roots?: RootGate;
}

/** A staged transition: nothing to do, or one record per owner that changes. */
export type StageResult =
	| { noop: true; report: StageReport }
	| {
			noop: false;
			report: StageReport;
			records: Partial<Record<Owner, TransitionRecord>>;
			bytesAfter: Partial<Record<Owner, number>>;
	  };

const KNOWN_OWNERS: readonly string[] = OWNERS;
const KNOWN_PLANES: readonly string[] = PLANES;

/** Validate and detach a canonical patch; returns a private copy. */
export function validateCanonicalPatch(patch: unknown, limits: Limits = DEFAULT_LIMITS): CanonicalPatch {
	const copy = detach(patch);
	if (!isPlainObject(copy)) fail("invalid_input", 'the patch must be an object keyed by owner, e.g. `{ "cwd": { "tactics": {} } }`');
	const out: CanonicalPatch = {};
	for (const owner of Object.keys(copy)) {
		if (!KNOWN_OWNERS.includes(owner)) {
			fail("invalid_input", `unknown owner \`${formatPath([owner])}\`; use one of ${OWNERS.join(", ")}`, [owner]);
		}
		const part = copy[owner];
		if (!isPlainObject(part)) {
			fail("invalid_input", `\`${owner}\` must be an object of planes (${PLANES.join(", ")})`, [owner]);
		}
		const planes: PlanePatch = {};
		for (const plane of Object.keys(part)) {
			const path = [owner, plane];
			if (plane === "response") {
				fail("invalid_input", `\`${owner}.response\` is runtime-owned and cannot be patched; write to ${PLANES.join(", ")}`, path);
			}
			if (!KNOWN_PLANES.includes(plane) && plane !== ROOTS) {
				fail("invalid_input", `unknown plane \`${formatPath(path)}\`; use one of ${PLANES.join(", ")}`, path);
			}
			const value = part[plane];
			if (!isPlainObject(value)) {
				fail(
					"invalid_input",
					`\`${formatPath(path)}\` must be an object of entries (a merge patch); to delete entries set each key to null, e.g. \`{ "key": null }\``,
					path,
				);
			}
			for (const key of Object.keys(value)) {
				checkKeyLength(key, limits, [owner, plane, key]);
				checkLimits(value[key] ?? null, limits, [owner, plane, key]);
				// A root is an object merged like a plane; `null` (only in undo patches) removes a root's first value.
				const root = value[key] ?? null;
				if (plane === ROOTS && root !== null && !isPlainObject(root)) {
					fail("invalid_input", `\`${formatPath([owner, key])}\` must be an object of entries (a merge patch)`, path);
				}
			}
			planes[plane as keyof PlanePatch] = value;
		}
		out[owner as Owner] = planes;
	}
	return out;
}

/** Ask the gate about every root the patch writes, with the value it would have after the patch. */
function checkRoots(owner: Owner, h: OwnerHistory, patch: JsonObject, gate: RootGate | undefined): void {
	for (const name of Object.keys(patch)) {
		const path = [owner, name];
		if (gate === undefined)
			fail("invalid_input", `\`${formatPath(path)}\` is a registered root; only State Flow inside pi, with its extension loaded, writes it`, path);
		const current = h.state.roots === undefined ? undefined : (h.state.roots[name] as JsonObject | undefined);
		gate(owner, name, applyMergePatch(current, patch[name] ?? null), path);
	}
}

/** Merge cascade deletions into the caller's patch; entries the caller writes explicitly win. */
function withDeletions(patch: PlanePatch, extra: PlanePatch): PlanePatch {
	const out: PlanePatch = { ...patch };
	for (const plane of PLANES) {
		const del = extra[plane];
		if (del === undefined) continue;
		const merged: JsonObject = {};
		const own = patch[plane];
		if (own !== undefined) for (const k of Object.keys(own)) setOwn(merged, k, own[k] ?? null);
		for (const k of Object.keys(del)) if (!hasOwn(merged, k)) setOwn(merged, k, null);
		out[plane] = merged;
	}
	return out;
}

/** Stage `patch` against `histories` without mutating them. */
export function stage(histories: Partial<Record<Owner, OwnerHistory>>, patch: CanonicalPatch, meta: StageMeta, limits: Limits = DEFAULT_LIMITS): StageResult {
	const canonical = validateCanonicalPatch(patch, limits);
	const report: StageReport = { scopes: [], changed: [], missingDeletions: [], cascades: [], danglingRefs: [] };
	const staged: Array<{ owner: Owner; patch: PlanePatch; undo: PlanePatch; cascades: Cascade[]; bytesAfter: number; h: OwnerHistory }> = [];
	for (const owner of OWNERS) {
		const part = canonical[owner];
		if (part === undefined) continue;
		const h = histories[owner];
		if (h === undefined) {
			fail("excluded_owner", `owner \`${owner}\` is not wanted in this session; patch only the wanted owners`, [owner]);
		}
		if (part.roots !== undefined) checkRoots(owner, h, part.roots, meta.roots);
		// An exact delta (undo) is applied as it is; otherwise revealed references are anchored and cascades added.
		const anchored = meta.exact ? part : anchorRevealedRefs(owner, h.state, part);
		if (!meta.exact) checkWrittenRefs({ owner, state: h.state, patch: anchored, base: [owner], spell: (ref) => ref });
		const plan0 = meta.exact ? { cascades: [], extraDeletions: {}, danglingRefs: [] } : planCascades(owner, h.state, anchored);
		const cascades: Cascade[] = plan0.cascades;
		const dangling: DanglingRef[] = plan0.danglingRefs;
		const effective = withDeletions(anchored, plan0.extraDeletions);
		const plan = planPatch(owner, h.state, effective);
		report.missingDeletions.push(...plan.missingDeletions);
		report.danglingRefs.push(...dangling);
		if (plan.noop) continue;
		const bytesAfter = h.bytes + plan.bytesDelta;
		// Only growth is refused: a store already over a lowered limit can still be shrunk.
		if (plan.bytesDelta > 0 && bytesAfter > limits.maxOwnerBytes) {
			fail(
				"limit",
				`\`${owner}\` would grow to ${bytesAfter} bytes, over the size limit of ${limits.maxOwnerBytes}; delete or shorten entries (e.g. move bodies out) before adding more`,
				[owner],
			);
		}
		report.changed.push(...plan.changed);
		report.cascades.push(...cascades);
		staged.push({ owner, patch: effective, undo: plan.undo, cascades, bytesAfter, h });
	}
	if (staged.length === 0) return { noop: true, report };
	const owners = staged.map((s) => s.owner);
	report.scopes = owners.slice();
	const records: Partial<Record<Owner, TransitionRecord>> = {};
	const bytesAfter: Partial<Record<Owner, number>> = {};
	for (const s of staged) {
		records[s.owner] = {
			id: meta.id,
			at: meta.at,
			seq: s.h.seq + 1,
			by: meta.by,
			...(meta.who === undefined ? {} : { who: meta.who }),
			patch: s.patch,
			undo: s.undo,
			cascades: s.cascades,
			owners: owners.slice(),
		};
		bytesAfter[s.owner] = s.bytesAfter;
	}
	return { noop: false, report, records, bytesAfter };
}

/** Apply a staged result to the histories in place (after the durable write succeeded). */
export function commitStaged(histories: Partial<Record<Owner, OwnerHistory>>, result: StageResult): void {
	if (result.noop) return;
	for (const owner of OWNERS) {
		const record = result.records[owner];
		if (record === undefined) continue;
		const h = histories[owner];
		if (h === undefined) fail("excluded_owner", `owner \`${owner}\` has no loaded history to commit into`, [owner]);
		commitRecord(h, record, result.bytesAfter[owner]);
	}
}
