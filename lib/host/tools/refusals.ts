/**
 * Refusals of both tools in State Flow's words, in the model's current grammar (issue 26). pi validates tool
 * arguments against the registered declaration before `execute`, so a flat patch in a scoped
 * session, or a write to a root the declaration does not name, came back as pi's validator
 * output (`intents: schema is false`, `root: must not have additional properties`) and State
 * Flow's advice never reached the model. `prepareArguments` runs before that validation: it
 * returns the arguments unchanged when they fit the declaration (so it never rewrites one form
 * into the other, docs/spec.md §5), and otherwise throws the refusal `execute` would give, which
 * pi turns into the call's error result.
 */
import { formatPath, isStateError, StateError } from "../../core/errors.js";
import { isPlainObject } from "../../core/json.js";
import { type CanonicalPatch, type Json, OWNERS, type Owner, PLANES } from "../../core/types.js";
import { PROJECTIONS } from "../../core/query.js";
import { soleOwner, toCanonicalPatch, toReadRequest, type StateOf } from "../../model/interface.js";
import type { StateFlowHost } from "../runtime.js";
import type { Shape } from "../session/selection.js";

/** Whether `args` fits the `patch_state` declaration of `shape` (what pi's validator accepts). */
function fitsDeclaration(args: unknown, shape: Shape, roots: readonly string[]): boolean {
	if (!isPlainObject(args as Json)) return false;
	const value = args as Record<string, unknown>;
	const keys = Object.keys(value);
	const allowed: readonly string[] = shape === "flat" ? [...PLANES, ...roots] : OWNERS;
	return keys.length > 0 && keys.every((k) => allowed.includes(k) && isPlainObject(value[k] as Json));
}

/**
 * The model's patch → the canonical patch, refused in State Flow's words. A key that names a
 * registered root the declaration leaves out (dormant, registered during this run, or for
 * other owners) is refused with why, by the roots' own gate, instead of as an unknown plane.
 */
export function canonicalPatchOf(host: StateFlowHost, params: unknown, wanted: readonly Owner[], stateOf?: StateOf): CanonicalPatch {
	try {
		return toCanonicalPatch(params, wanted, stateOf, host.declaredRootNames());
	} catch (e) {
		const name = isStateError(e) ? e.path.at(-1) : undefined;
		const entry = typeof name === "string" ? host.roots.entries().find((r) => r.name === name) : undefined;
		if (!isStateError(e) || entry === undefined) throw e;
		const owner = (e.path.length > 1 ? e.path[0] : wanted[0]) as Owner;
		const path = [owner, name as string];
		// The gate names why (not loaded, dormant, other owners); a root that is fine now joins at the next prompt.
		host.roots.gateFor(soleOwner(wanted))(owner, name as string, null, path);
		throw new StateError(
			"invalid_input",
			`\`${formatPath(e.path)}\`: root \`${name as string}\` was registered during this run; it can be written from the next prompt`,
			e.path,
			{ cause: e },
		);
	}
}

/** `prepareArguments` of `patch_state`: the arguments unchanged, or State Flow's refusal thrown. */
export function preparePatchArguments(host: StateFlowHost, shape: Shape, args: unknown): unknown {
	if (fitsDeclaration(args, shape, host.declaredRootNames())) return args;
	// Refused in the grammar of the selection now (it is what the next prompt declares too).
	canonicalPatchOf(host, args, host.selection().owners);
	// State Flow accepts what the declaration does not describe (a selection changed mid-run): pi's validator decides.
	return args;
}

/** Whether `args` fits the `read_state` declaration (what pi's validator accepts). */
function fitsRead(args: unknown): boolean {
	if (!isPlainObject(args as Json)) return false;
	const { path, paths, projection, search, ...rest } = args as Record<string, unknown>;
	const text = (v: unknown) => v === undefined || typeof v === "string";
	return (
		Object.keys(rest).length === 0 &&
		text(path) &&
		text(search) &&
		(paths === undefined || (Array.isArray(paths) && paths.every((p) => typeof p === "string"))) &&
		(projection === undefined || (PROJECTIONS as readonly unknown[]).includes(projection))
	);
}

/** `prepareArguments` of `read_state`: the arguments unchanged, or State Flow's refusal thrown. */
export function prepareReadArguments(host: StateFlowHost, args: unknown): unknown {
	if (!fitsRead(args)) toReadRequest(args, host.selection().owners, host.declaredRootNames());
	return args;
}
