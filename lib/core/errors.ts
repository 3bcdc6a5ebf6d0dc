/**
 * The one error type of State Flow. Every refusal carries a code, the path of the
 * offending field and a message that names it and says what to do next. The host layer
 * throws these from `execute` so pi marks the tool result `isError`.
 */

export type StateErrorCode =
	| "invalid_input" // shape of the model's arguments
	| "invalid_value" // not finite JSON, cycle, sparse array, class instance...
	| "limit" // size, depth or key length
	| "excluded_owner" // owner not wanted in this session
	| "parse_error" // locator syntax
	| "not_found" // locator does not resolve
	| "folded" // temporal offset beyond retained history
	| "stale_call" // admission: issued under another selection/identity
	| "aborted"
	| "busy" // lock wait timed out
	| "corrupt" // store damaged
	| "io" // unexpected file-system failure
	| "unavailable" // an owner's store cannot be reached now (database down, not configured); the others keep working
	| "artifact" // artifact / Skill compilation refused
	| "credential" // a patch writes what looks like a secret (storage/credentials/check.ts)
	| "conflict"; // the writer saw an older state than the keys it writes (core/precondition.ts)

export class StateError extends Error {
	override readonly name = "StateError";
	constructor(
		readonly code: StateErrorCode,
		message: string,
		/** Path of the offending field (object keys and array indexes), when there is one. */
		readonly path: readonly (string | number)[] = [],
		options?: { cause?: unknown },
	) {
		super(message, options);
	}
}

/** Construct every State Flow error through one function. */
export function fail(code: StateErrorCode, message: string, path: readonly (string | number)[] = [], cause?: unknown): never {
	throw new StateError(code, message, path, cause === undefined ? undefined : { cause });
}

export function isStateError(e: unknown): e is StateError {
	return e instanceof StateError;
}

/** The message of anything thrown: an `Error`'s message, else the value as text. */
export function messageOf(e: unknown): string {
	return e instanceof Error ? e.message : String(e);
}

/** Render a field path for messages: `cwd.tactics["a.b"][0]`. */
export function formatPath(path: readonly (string | number)[]): string {
	if (path.length === 0) return "(input)";
	let out = "";
	for (const seg of path) {
		if (typeof seg === "number") out += `[${seg}]`;
		else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out === "" ? seg : `.${seg}`;
		else out += `[${JSON.stringify(seg)}]`;
	}
	return out;
}
