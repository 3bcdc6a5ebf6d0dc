/**
 * One shown plane of one owner (`planeView`): its full text when it fits, else a box offering
 * its keys in the ranking's order, then recently changed, then natural order. The size index
 * (`plane-index.ts`) makes both cheap; the box (`head-elide.ts`) fills within the budget.
 */
import type { Json, Owner, OwnerHistory, Section } from "../core/types.js";
import { Box, type Candidate, type MarkerKinds, PREVIEW_BYTES, presentedText, type Spelling } from "./head-elide.js";
import { headJson, memberNameBytes, planeIndex, sectionPatch, type SectionRef, sectionValue, shownMember } from "./plane-index.js";

/**
 * The order a plane offers its keys in (`head-rank.ts`): groups of keys in priority order, each
 * with its tier and the cap of its first form, then every other key (recently changed first,
 * then natural order) at `restTier`. Excluded keys are never offered: only the marker counts them.
 */
export interface PlaneOrder {
	/** `late`: named in its tier, lengthened only after every tier (finished steps of active intents). */
	groups: ReadonlyArray<{ tier: number; keys: readonly string[]; cap?: number; late?: boolean }>;
	restTier: number;
	/** Cap of the other keys' first form (default: a preview). */
	restCap?: number;
	exclude?: ReadonlySet<string>;
	/** What the plane's marker says of the keys it counts: their kinds (`kindOf` indexes `labels`) and age. */
	marker?: MarkerKinds & { kindOf(key: string): number };
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
	const candidate = (key: string, tier: number, cap: number, late = false): Candidate => {
		const size = idx.sizes.get(key) as number;
		const kind = order.marker?.kindOf(key);
		const extra = { ...(kind !== undefined ? { kind } : {}), ...(late ? { late } : {}) };
		return catalog
			? { key, value: size, size: String(size).length, weight: size, tier, cap, order: 0, ...extra }
			: { key, value: shownMember(plane, value[key] as Json), size, weight: memberNameBytes(key) + size, tier, cap, order: 0, ...extra };
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
						return candidate(key, group.tier, group.cap ?? PREVIEW_BYTES, group.late);
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
			return new Box("object", [], { count: n, bytes: catalog ? idx.valueBytes : idx.members }, next, sp, true, order.marker);
		},
	};
}
