/**
 * Editing by hand (`/state set|delete`, the browser's `e`/`d`, `state-flow set|delete|edit`):
 * a locator and a value become one canonical merge patch that replaces (or removes) exactly
 * the value named, nothing around it. Pure; staging adds cascades and checks limits as for
 * any other patch.
 */
import { fail } from "./errors.js";
import { cloneJson, getOwn, isPlainObject, jsonEqual, setOwn } from "./json.js";
import { formatKeySegment, formatLocator, parseLocator, type Segment } from "./locator.js";
import { mergeDiff } from "./merge.js";
import { ROOTS, type CanonicalPatch, type Json, type JsonObject, type Owner, type OwnerState, type Section, type StageReport } from "./types.js";

/** The value a hand edit names: an owner's current state, a plane (or a registered root) and a path below it. */
export interface EditTarget {
	owner: Owner;
	plane: Section;
	path: Segment[];
}

/** Set a value, or delete it. */
export type EditOp = { kind: "set"; value: Json } | { kind: "delete" };

/** The canonical spelling of a target (`cwd.tactics.next`), as the user wrote it in canonical form. */
export function targetText(t: EditTarget): string {
	return formatLocator({ kind: "state", scope: t.owner, offset: 0, plane: t.plane, path: t.path });
}

/** Parse the locator of a hand edit: an owner's current state, at a plane or below it. */
export function parseEditTarget(text: string): EditTarget {
	const loc = parseLocator(text, "canonical");
	const refuse = (why: string) => fail("invalid_input", `\`${text}\` ${why}`, []);
	if (loc.kind !== "state") return refuse("is not stored state; name an owner's value, e.g. `cwd.tactics.next`.");
	if (loc.scope === "effective" || loc.scope === null) return refuse("is the read-only view of several owners; name one owner, e.g. `cwd.tactics.next`.");
	if (loc.offset > 0) return refuse(`is a past state; edit the current one (\`${formatLocator({ ...loc, offset: 0 })}\`).`);
	if (loc.plane === null) return refuse(`names a whole owner; name a plane or a key, e.g. \`${loc.scope}.tactics\`.`);
	if (loc.plane === ROOTS && typeof loc.path[0] !== "string") return refuse("names every registered root; name one root, e.g. `cwd.roots.todos`.");
	return { owner: loc.scope, plane: loc.plane, path: loc.path };
}

/** The value at a target in a state, or undefined when there is none. */
export function valueAtTarget(state: OwnerState, t: EditTarget): Json | undefined {
	let v: Json | undefined = t.plane === ROOTS ? (state.roots ?? {}) : (state[t.plane] as Json);
	for (const seg of t.path) v = step(v, seg);
	return v;
}

function step(v: Json | undefined, seg: Segment): Json | undefined {
	if (typeof seg === "number") return Array.isArray(v) ? v[seg] : undefined;
	return isPlainObject(v) ? getOwn(v, seg) : undefined;
}

/** A stored value never holds `null` object members (a merge patch reads them as deletions). */
function checkNoNullMembers(v: Json, where: string): void {
	if (Array.isArray(v)) {
		v.forEach((item, i) => {
			checkNoNullMembers(item, `${where}[${i}]`);
		});
		return;
	}
	if (!isPlainObject(v)) return;
	for (const key of Object.keys(v)) {
		const child = v[key] as Json;
		const at = where + formatKeySegment(key);
		if (child === null) fail("invalid_input", `\`${at}\` is null: stored objects never hold null members (null deletes); remove the key.`, []);
		checkNoNullMembers(child, at);
	}
}

/**
 * The value `container` would hold with `op` applied at `path` below it: copied along the path
 * only. Refuses a path through a missing value or a scalar, an array index past the end, and a
 * deletion of nothing.
 */
function edited(container: Json | undefined, path: readonly Segment[], op: EditOp, where: (n: number) => string, depth = 0): Json | undefined {
	if (path.length === depth) return op.kind === "set" ? op.value : undefined;
	const seg = path[depth] as Segment;
	const child = step(container, seg);
	if (child === undefined && (op.kind === "delete" || depth + 1 < path.length)) {
		fail("not_found", `nothing at \`${where(depth + 1)}\`${op.kind === "delete" ? " to delete" : ""}.`);
	}
	const next = edited(child, path, op, where, depth + 1);
	if (typeof seg === "number") {
		if (!Array.isArray(container)) return fail("not_found", `\`${where(depth)}\` is not an array; \`[${seg}]\` indexes only arrays.`);
		// One past the end appends; a delete there was refused above (nothing at it).
		if (seg > container.length) fail("not_found", `\`${where(depth)}\` has ${container.length} items; \`[${seg}]\` is past its end.`);
		const copy = container.slice();
		if (next === undefined) copy.splice(seg, 1);
		else copy[seg] = next;
		return copy;
	}
	if (!isPlainObject(container)) return fail("not_found", `\`${where(depth)}\` is not an object; it has no key \`${seg}\`.`);
	const copy: JsonObject = { ...container };
	if (next === undefined) delete copy[seg];
	else setOwn(copy, seg, next);
	return copy;
}

/**
 * The canonical patch that makes the value at `t` equal `op` (set: the value, replacing what
 * is there whole; delete: gone) and changes nothing else. Throws a `StateError` naming the
 * locator for a value a store cannot hold or a path that does not lead anywhere.
 */
export function editPatch(state: OwnerState, t: EditTarget, op: EditOp): CanonicalPatch {
	const where = (n: number) => targetText({ ...t, path: t.path.slice(0, n) });
	const text = where(t.path.length);
	if (op.kind === "set") {
		if (op.value === null) fail("invalid_input", `\`${text}\` cannot be set to null (null deletes); use delete to remove it.`);
		checkNoNullMembers(op.value, text);
		if (t.path.length === 0 && !isPlainObject(op.value)) fail("invalid_input", `\`${text}\` is a plane: its value must be an object of entries.`);
		if (t.plane === ROOTS && t.path.length === 1 && !isPlainObject(op.value))
			fail("invalid_input", `\`${text}\` is a registered root: its value must be an object.`);
	}
	const plane: JsonObject = t.plane === ROOTS ? (state.roots ?? {}) : state[t.plane];
	if (t.path.length === 0) {
		// The whole plane: a diff of every entry (deleting a plane empties it).
		const after = op.kind === "set" ? (op.value as JsonObject) : {};
		return { [t.owner]: { [t.plane]: mergeDiff(plane, after) } };
	}
	// Only the entry the path starts in is diffed: every other entry stays out of the patch.
	const key = t.path[0] as string;
	const before = getOwn(plane, key);
	const after = edited(plane, t.path, op, where) as JsonObject;
	const entry = getOwn(after, key);
	const part: JsonObject = {};
	setOwn(part, key, entry === undefined ? null : before === undefined ? cloneJson(entry) : mergeDiff(before, entry));
	return { [t.owner]: { [t.plane]: part } };
}

/** Whether the value at `t` is still `before` (an edit planned on a snapshot is committed only then). */
export function stillAt(state: OwnerState, t: EditTarget, before: Json | undefined): boolean {
	const now = valueAtTarget(state, t);
	return now === undefined || before === undefined ? now === before : jsonEqual(now, before);
}

/** What an edit deletes besides the value it names (ownership cascades), in canonical locators. */
export function cascadeTargets(report: StageReport): string[] {
	return report.cascades.flatMap((c) => c.targets);
}
