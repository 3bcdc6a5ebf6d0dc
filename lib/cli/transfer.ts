/**
 * Export documents and import planning, pure. An import makes an owner's state *equal* to
 * the imported state, so it is planned as the RFC 7386 merge patch from the current state to
 * the target (`mergeDiff`), committed as one transition like any other write. A target that
 * merge patches cannot express (a `null` object member) is refused rather than altered.
 */
import { fail, formatPath } from "../core/errors.js";
import { cloneJson, detach, isPlainObject, setOwn } from "../core/json.js";
import { mergeDiff } from "../core/merge.js";
import type { CanonicalPatch, Json, Owner, OwnerState, PlanePatch, RootGate, SharedOwner } from "../core/types.js";
import { OWNABLE_PLANES, PLANES, ROOTS, SHARED_OWNERS, isPlane, isSharedOwner } from "../core/types.js";
import { checkScopedRefs } from "../core/refs.js";

/** Owners that live in files the CLI can reach (Session lives in pi's session file). */

/** The `format` tag and version of export documents; import refuses other versions. */
export const EXPORT_FORMAT = "state-flow/export";
export const EXPORT_VERSION = 1;

/** What `state-flow export` prints. */
export interface ExportDoc {
	format: typeof EXPORT_FORMAT;
	v: typeof EXPORT_VERSION;
	owners: Partial<Record<SharedOwner, { seq: number; state: OwnerState }>>;
}

/** Build an export document; states are copied so later writes cannot change it. */
export function exportDoc(owners: Partial<Record<SharedOwner, { seq: number; state: OwnerState }>>): ExportDoc {
	const out: ExportDoc = { format: EXPORT_FORMAT, v: EXPORT_VERSION, owners: {} };
	for (const o of SHARED_OWNERS) {
		const h = owners[o];
		if (h) out.owners[o] = { seq: h.seq, state: cloneJson(h.state) as OwnerState };
	}
	return out;
}

/**
 * Read an import file's JSON into target states. Accepts an export document (optionally
 * narrowed to `only`) or one owner's state object, which needs `only`. Throws `invalid_input`
 * naming the offending field.
 */
export function parseImport(raw: unknown, only: SharedOwner | undefined): Partial<Record<SharedOwner, OwnerState>> {
	const doc = detach(raw);
	if (!isPlainObject(doc)) fail("invalid_input", "the import file must hold a JSON object: an export document or one owner's state.");
	if (doc.format !== undefined) {
		if (doc.format !== EXPORT_FORMAT) fail("invalid_input", `\`format\` is ${JSON.stringify(doc.format)}; expected "${EXPORT_FORMAT}".`, ["format"]);
		if (doc.v !== EXPORT_VERSION) fail("invalid_input", `\`v\` is ${JSON.stringify(doc.v)}; this version reads ${EXPORT_VERSION}.`, ["v"]);
		const owners = doc.owners;
		if (!isPlainObject(owners)) fail("invalid_input", '`owners` must be an object such as {"cwd": {"state": {...}}}.', ["owners"]);
		const out: Partial<Record<SharedOwner, OwnerState>> = {};
		for (const key of Object.keys(owners)) {
			if (!isSharedOwner(key)) {
				fail("invalid_input", `\`owners.${key}\` cannot be imported: use \`global\` or \`cwd\` (Session state lives in pi's session file).`, ["owners", key]);
			}
			if (only !== undefined && key !== only) continue;
			const entry = owners[key];
			if (!isPlainObject(entry)) fail("invalid_input", `\`owners.${key}\` must be an object with a \`state\`.`, ["owners", key]);
			out[key] = checkState(entry.state, ["owners", key, "state"]);
		}
		if (Object.keys(out).length === 0) {
			fail("invalid_input", only ? `the export document has no \`owners.${only}\`.` : "the export document has no owners to import.", ["owners"]);
		}
		return out;
	}
	if (only === undefined) {
		fail("invalid_input", "a plain state object needs `--owner global` or `--owner cwd` to say whose state it is.");
	}
	return { [only]: checkState(doc, []) };
}

/** The five planes (and the registered roots' section, if any), each a plain object, with no `null` object member anywhere. */
function checkState(value: Json | undefined, path: (string | number)[]): OwnerState {
	if (!isPlainObject(value)) fail("invalid_input", `\`${formatPath(path)}\` must be a state object with the planes ${PLANES.join(", ")}.`, path);
	for (const key of Object.keys(value)) {
		if (!isPlane(key) && key !== ROOTS) {
			fail("invalid_input", `\`${formatPath([...path, key])}\` is not a plane; use ${PLANES.join(", ")}.`, [...path, key]);
		}
	}
	const state = {} as OwnerState;
	for (const plane of PLANES) {
		const p = value[plane] ?? {};
		if (!isPlainObject(p)) fail("invalid_input", `\`${formatPath([...path, plane])}\` must be an object.`, [...path, plane]);
		noNullMembers(p, [...path, plane]);
		// Stored references are owner-qualified (`cwd.tactics.t1`); a bare `tactics.t1` is ambiguous here.
		checkScopedRefs(p, [...path, plane], SHARED_OWNERS);
		state[plane] = p;
	}
	const roots = value[ROOTS];
	if (roots !== undefined) {
		if (!isPlainObject(roots)) fail("invalid_input", `\`${formatPath([...path, ROOTS])}\` must be an object of registered roots.`, [...path, ROOTS]);
		for (const name of Object.keys(roots)) {
			if (!isPlainObject(roots[name]))
				fail("invalid_input", `\`${formatPath([...path, ROOTS, name])}\` must be an object (a root's value).`, [...path, ROOTS, name]);
		}
		noNullMembers(roots, [...path, ROOTS]);
		state.roots = roots;
	}
	return state;
}

/**
 * The import's gate for registered roots (docs/extension-api.md): export/import is backup and
 * restore, so root data is written as exported; the CLI knows no schemas, which are checked
 * when the root's extension registers (a rejected value makes the root dormant, with a message).
 */
export const IMPORT_ROOTS: RootGate = (_owner, name, value, path) => {
	if (value !== null && !isPlainObject(value)) fail("invalid_input", `\`${formatPath(path)}\`: root \`${name}\` must hold an object.`, path);
};

function noNullMembers(v: Json, path: (string | number)[]): void {
	if (Array.isArray(v)) return; // arrays replace whole; nulls inside them are plain data
	if (!isPlainObject(v)) return;
	for (const key of Object.keys(v)) {
		const child = v[key] as Json;
		if (child === null) {
			fail("invalid_input", `\`${formatPath([...path, key])}\` is null: stored state never holds null members (null deletes); remove the key.`, [...path, key]);
		}
		noNullMembers(child, [...path, key]);
	}
}

/** The canonical patch that makes each owner's state equal its target (owners with no change omitted). */
export function importPatch(current: Partial<Record<SharedOwner, OwnerState>>, targets: Partial<Record<SharedOwner, OwnerState>>): CanonicalPatch {
	const patch: CanonicalPatch = {};
	for (const owner of SHARED_OWNERS) {
		const target = targets[owner];
		if (!target) continue;
		const from = current[owner];
		const planes: PlanePatch = {};
		for (const plane of PLANES) {
			const d = mergeDiff(from?.[plane] ?? {}, target[plane]);
			if (Object.keys(d).length > 0) planes[plane] = d;
		}
		// A document without a roots section leaves the roots as they are; one with it restores them exactly.
		if (target.roots !== undefined) {
			const d = mergeDiff(from?.roots ?? {}, target.roots);
			if (Object.keys(d).length > 0) planes.roots = d;
		}
		// Deleting an intent cascades to the tactics/lazy entries it owned unless the same patch
		// writes them: restate every entry the target keeps so the result equals the file.
		const intents = planes.intents;
		if (intents !== undefined && Object.values(intents).some((v) => v === null)) {
			for (const plane of OWNABLE_PLANES) {
				for (const key of Object.keys(target[plane])) {
					const p = (planes[plane] ??= {});
					if (!Object.hasOwn(p, key)) setOwn(p, key, cloneJson(target[plane][key] as Json));
				}
			}
		}
		if (Object.keys(planes).length > 0) patch[owner as Owner] = planes;
	}
	return patch;
}
