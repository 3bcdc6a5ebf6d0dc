/**
 * Budgeted elision for the head. Each shown plane becomes a tree of sizes; elision replaces
 * whole values (never part of a string) with `{"…":"elided …: read_state <locator>"}` markers,
 * deepest and oldest first, until the state fits. Sizes are tracked incrementally so a large
 * state costs one sort plus O(depth) per elided value.
 */

import { type Locator, formatModelLocator } from "../core/locator.js";
import { isRef, presentRefs } from "../core/refs.js";
import { OWNERS } from "../core/types.js";
import type { Json, JsonObject, Owner, Section } from "../core/types.js";

/** The key of every elision marker object. */
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

/** Human byte size: `812 B`, `1.2 KB`. */
export function formatSize(bytes: number): string {
	return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

/** Locator text as the model spells it: relative in flat (owner undefined), qualified in scoped. */
export function modelLocator(owner: Owner | undefined, plane: Section, path: readonly (string | number)[]): string {
	const loc: Locator = { kind: "state", scope: owner ?? null, offset: 0, plane, path: [...path] };
	return formatModelLocator(loc);
}

interface Node {
	parent: Node | undefined;
	/** Key or index under the parent; undefined for the plane root. */
	seg: string | number | undefined;
	depth: number;
	/** Document order within the plane, a stand-in for age (merge patches append new keys). */
	order: number;
	kind: "object" | "array" | "leaf";
	keys: string[];
	children: Node[];
	/** Compact JSON of a leaf. */
	text: string;
	/** Current serialized size, UTF-8 bytes. */
	size: number;
	/** Size before any elision. */
	fullSize: number;
	marker: string | undefined;
	isString: boolean;
}

/** One shown plane line: `prefix` then the (possibly elided) JSON of the plane. */
export interface PlaneTree {
	owner: Owner;
	plane: Section;
	/** Path of the shown value below the section: `[name]` for a registered root, else empty. */
	base: string[];
	prefix: string;
	/** The stored plane value (for the lazy plane: its catalog, key -> body size). */
	value: Json;
	/** The size tree, built only when the head needs elision. */
	root: Node | undefined;
	/** The unelided JSON text, computed once. */
	text: string | undefined;
	/** The sole owner in flat form (locators and refs relative), undefined in scoped form. */
	sole: Owner | undefined;
	/** The lazy catalog: only the whole catalog can be elided. */
	catalog: boolean;
}

/** What elision removed: top-most elided values and their full size. */
export interface ElisionStats {
	count: number;
	bytes: number;
}

/** A subtree this small can never be replaced by a shorter marker, so it is never split into nodes. */
const MIN_MARKER_BYTES = utf8Bytes(JSON.stringify({ [MARKER_KEY]: "elided value, 0 B: read_state x" }));

/** JSON text of a structured reference as the model sees it (relative in flat form). */
function refText(value: Json, sole: Owner | undefined): string {
	return JSON.stringify(sole === undefined ? value : presentRefs(value, sole));
}

function build(value: Json, parent: Node | undefined, seg: string | number | undefined, depth: number, ctx: { order: number; sole: Owner | undefined }): Node {
	const node: Node = { parent, seg, depth, order: ctx.order++, kind: "leaf", keys: [], children: [], text: "", size: 0, fullSize: 0, marker: undefined, isString: typeof value === "string" };
	if (typeof value === "object" && value !== null && !isRef(value)) {
		if (Array.isArray(value)) {
			node.kind = "array";
			value.forEach((item, i) => node.children.push(build(item, node, i, depth + 1, ctx)));
			node.size = 2 + Math.max(0, value.length - 1) + node.children.reduce((n, c) => n + c.size, 0);
		} else {
			node.kind = "object";
			const obj = value as JsonObject;
			node.keys = Object.keys(obj);
			let size = 2 + Math.max(0, node.keys.length - 1);
			for (const key of node.keys) {
				const child = build(obj[key] as Json, node, key, depth + 1, ctx);
				node.children.push(child);
				size += utf8Bytes(JSON.stringify(key)) + 1 + child.size;
			}
			node.size = size;
		}
	} else {
		// Structured references stay atomic: a ref is shown whole or elided with its holder.
		node.text = isRef(value) ? refText(value, ctx.sole) : JSON.stringify(value);
		node.size = utf8Bytes(node.text);
	}
	node.fullSize = node.size;
	if (node.kind !== "leaf" && node.size <= MIN_MARKER_BYTES) {
		// Too small to ever elide: keep it as one leaf so elision does not walk it again.
		node.text = serialize(node);
		node.kind = "leaf";
		node.children = [];
		node.keys = [];
	}
	return node;
}

/** A shown plane; its size tree is built on demand. */
export function planeTree(owner: Owner, plane: Section, prefix: string, value: Json, sole: Owner | undefined, catalog: boolean, base: string[] = []): PlaneTree {
	return { owner, plane, base, prefix, value, root: undefined, text: undefined, sole, catalog };
}

/** The plane's JSON as currently shown (refs relative in flat form). */
export function planeText(tree: PlaneTree): string {
	if (tree.root !== undefined) return serialize(tree.root);
	const sole = tree.sole;
	if (sole === undefined || tree.catalog) tree.text ??= JSON.stringify(tree.value);
	else tree.text ??= JSON.stringify(tree.value, (_key, v: Json) => (isRef(v) ? presentRefs(v, sole) : v));
	return tree.text;
}

/** Compact JSON of a node as currently shown. */
function serialize(node: Node): string {
	if (node.marker !== undefined) return node.marker;
	if (node.kind === "leaf") return node.text;
	if (node.kind === "array") return `[${node.children.map(serialize).join(",")}]`;
	return `{${node.keys.map((k, i) => `${JSON.stringify(k)}:${serialize(node.children[i] as Node)}`).join(",")}}`;
}

function pathOf(node: Node): (string | number)[] {
	const path: (string | number)[] = [];
	for (let n: Node | undefined = node; n?.seg !== undefined; n = n.parent) path.unshift(n.seg);
	return path;
}

function markerFor(tree: PlaneTree, node: Node): string {
	const loc = modelLocator(tree.sole === undefined ? tree.owner : undefined, tree.plane, [...tree.base, ...pathOf(node)]);
	const n = node.children.length;
	let what: string;
	if (tree.catalog) what = `catalog of ${n} key${n === 1 ? "" : "s"} (use projection keys)`;
	else if (node.kind === "object") what = `${n} key${n === 1 ? "" : "s"}, ${formatSize(node.fullSize)}`;
	else if (node.kind === "array") what = `${n} item${n === 1 ? "" : "s"}, ${formatSize(node.fullSize)}`;
	else what = `${node.isString ? "string" : "value"}, ${formatSize(node.fullSize)}`;
	return JSON.stringify({ [MARKER_KEY]: `elided ${what}: read_state ${loc}` });
}

function hiddenByAncestor(node: Node): boolean {
	for (let n = node.parent; n !== undefined; n = n.parent) if (n.marker !== undefined) return true;
	return false;
}

// Registered roots are elided after artifacts and before the model's own tactics.
const PLANE_RANK: Record<Section, number> = { lazy: 0, artifacts: 1, roots: 1.5, tactics: 2, strategy: 3, intents: 4 };

/**
 * Elide until the trees' total shown size is at most `limit`, in this order: strings larger
 * than a quarter of the limit (a value that would crowd out everything else), deepest first;
 * then every value, deepest first, then by plane (intents last), owner and document order.
 * Returns what was elided; the trees are changed in place.
 */
export function elide(trees: readonly PlaneTree[], limit: number): ElisionStats {
	const roots = trees.map((tree) => (tree.root ??= build(tree.value, undefined, undefined, 0, { order: 0, sole: tree.sole })));
	let total = roots.reduce((n, r) => n + r.size, 0);
	const candidates: Array<{ tree: PlaneTree; node: Node }> = [];
	for (const [i, tree] of trees.entries()) {
		const stack: Node[] = [roots[i] as Node];
		while (stack.length > 0) {
			const node = stack.pop() as Node;
			if (node.fullSize > MIN_MARKER_BYTES && (node.depth > 0 || node.kind !== "leaf")) candidates.push({ tree, node });
			// Catalog entries are a key and a number: only the catalog as a whole can go.
			if (!tree.catalog) for (const child of node.children) stack.push(child);
		}
	}
	const byDepth = (a: { tree: PlaneTree; node: Node }, b: { tree: PlaneTree; node: Node }): number =>
		b.node.depth - a.node.depth ||
		PLANE_RANK[a.tree.plane] - PLANE_RANK[b.tree.plane] ||
		OWNERS.indexOf(a.tree.owner) - OWNERS.indexOf(b.tree.owner) ||
		a.node.order - b.node.order;
	candidates.sort(byDepth);
	const tryElide = (tree: PlaneTree, node: Node): void => {
		if (node.marker !== undefined || hiddenByAncestor(node)) return;
		const marker = markerFor(tree, node);
		const delta = utf8Bytes(marker) - node.size;
		if (delta >= 0) return;
		node.marker = marker;
		for (let n: Node | undefined = node; n !== undefined; n = n.parent) n.size += delta;
		total += delta;
	};
	const quarter = Math.max(0, limit) / 4;
	for (const { tree, node } of candidates) {
		if (total <= limit) break;
		if (node.isString && node.size > quarter) tryElide(tree, node);
	}
	for (const { tree, node } of candidates) {
		if (total <= limit) break;
		tryElide(tree, node);
	}
	const stats: ElisionStats = { count: 0, bytes: 0 };
	const count = (node: Node): void => {
		if (node.marker !== undefined) {
			stats.count++;
			stats.bytes += node.fullSize;
		} else for (const c of node.children) count(c);
	};
	for (const root of roots) count(root);
	return stats;
}
