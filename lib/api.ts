/**
 * The public API for other pi extensions (docs/spec.md §12, docs/extension-api.md): register
 * a root whose value State Flow keeps, shows to the model and versions like a plane.
 *
 * Everything crosses pi's shared event bus (`pi.events`), so it works however pi loaded the
 * two extensions (separate module instances, either load order). This module is the typed
 * wrapper; it imports no value from pi or from the rest of State Flow.
 */

/** A JSON value as State Flow stores it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
/** Where a value lives: the user (`global`), the project (`cwd`) or this pi session (`session`). */
export type RootOwner = "global" | "cwd" | "session";

/** What an extension registers. */
export interface RootSpec {
	/** The root's name as the model writes it beside the planes: an identifier (letters, digits, `_`), not a plane, owner or State Flow word. */
	name: string;
	/** The registering extension, named in provenance (`extension todo`) and in messages. */
	extension: string;
	/** One line for the model: what the root holds and how to use it. */
	description: string;
	/** JSON Schema (draft 2020-12/07 keywords ajv knows) of the root's value, which is always an object (`"type": "object"`). */
	schema: JsonObject;
	/** Owners the root may live in, e.g. `["cwd", "session"]`. */
	owners: RootOwner[];
}

/** Who made a change, as recorded in the transition. */
export type RootProvenance =
	| { kind: "tool"; sessionId: string; toolCallId: string }
	| { kind: "command"; command: string }
	| { kind: "import"; source: string }
	| { kind: "system"; reason: string }
	| { kind: "extension"; extension: string };

/** A change of the root's value in one owner, whoever made it (model, `/state`, this or another process). */
export interface RootChange {
	owner: RootOwner;
	/** The value now (`{}` when the root has no data in that owner). */
	value: JsonObject;
	/** Who made the latest retained transition that touched the root there, when known. */
	by?: RootProvenance;
	/** Id of that transition, when known. */
	transitionId?: string;
}

/**
 * Where the registration stands: `waiting` for State Flow to load, `active` (the model sees
 * and writes the root), `dormant` (State Flow keeps the stored data untouched but the root is
 * hidden and not writable: the schema rejects stored data, see `message`) or `refused` (the
 * spec is invalid or the name collides: `message` says why and what to do).
 */
export interface RootStatus {
	state: "waiting" | "active" | "dormant" | "refused";
	message?: string;
}

/** The result of a write: the transition id, or null when the patch changed nothing. */
export interface RootWriteResult {
	transitionId: string | null;
}

/** What State Flow hands back for one registration (over the bus). */
export interface RootHandle {
	status(): RootStatus;
	/** The root's current value in `owner` (`{}` when empty); rejects when the owner is not one of the root's or not available. */
	read(owner: RootOwner): Promise<JsonObject>;
	/** Commit a JSON merge patch of the root's value in `owner` through State Flow's commit path; provenance names the extension. */
	write(owner: RootOwner, patch: JsonObject): Promise<RootWriteResult>;
	/** Stop receiving changes and withdraw the root (its data stays stored, dormant). */
	dispose(): void;
}

/** Callbacks of a registration. */
export interface RootListener {
	change?(change: RootChange): void;
	status?(status: RootStatus): void;
}

/** Version 1 of the bus contract: what State Flow publishes. */
export interface StateFlowBus {
	version: 1;
	/** Register a root; never throws: a refusal comes back as a handle whose status is `refused`. */
	registerRoot(spec: RootSpec, listener: RootListener): RootHandle;
}

/** Channel State Flow emits its bus object on when it loads. */
export const READY_CHANNEL = "state-flow:ready";
/** Channel an extension emits a callback on to find a State Flow that loaded earlier. */
export const DISCOVER_CHANNEL = "state-flow:discover";

/** The part of pi's `ExtensionAPI` this wrapper needs. */
export interface EventsHost {
	events: { emit(channel: string, data: unknown): void; on(channel: string, handler: (data: unknown) => void): () => void };
}

function isBus(value: unknown): value is StateFlowBus {
	return typeof value === "object" && value !== null && (value as StateFlowBus).version === 1 && typeof (value as StateFlowBus).registerRoot === "function";
}

/** A registration as the extension holds it; works before State Flow has loaded (`status().state === "waiting"`). */
export interface RootClient {
	status(): RootStatus;
	read(owner: RootOwner): Promise<JsonObject>;
	write(owner: RootOwner, patch: JsonObject): Promise<RootWriteResult>;
	dispose(): void;
}

/**
 * Register `spec` with State Flow, whenever it loads: call this from your extension factory.
 * `listener.change` hears every change of the root's value; `listener.status` every status change.
 */
export function registerRoot(pi: EventsHost, spec: RootSpec, listener: RootListener = {}): RootClient {
	let handle: RootHandle | undefined;
	let disposed = false;
	const attach = (bus: unknown): void => {
		if (handle !== undefined || disposed || !isBus(bus)) return;
		handle = bus.registerRoot(spec, listener);
	};
	const off = pi.events.on(READY_CHANNEL, attach);
	pi.events.emit(DISCOVER_CHANNEL, attach);
	const waiting = (): never => {
		throw new Error(`State Flow is not loaded (yet): root \`${spec.name}\` of extension ${spec.extension} is waiting for it`);
	};
	return {
		status: () => handle?.status() ?? { state: "waiting", message: "State Flow is not loaded yet" },
		read: async (owner) => (handle ? handle.read(owner) : waiting()),
		write: async (owner, patch) => (handle ? handle.write(owner, patch) : waiting()),
		dispose: () => {
			disposed = true;
			off();
			handle?.dispose();
		},
	};
}
