/**
 * Shared domain types of the pure engine. Everything here is plain JSON-shaped data so
 * that it can be stored, replayed and sent over any boundary unchanged.
 */

/** A finite JSON value (no undefined, NaN, functions, class instances or cycles). */
export type Json = null | boolean | number | string | Json[] | JsonObject;
/** A plain JSON object. Keys are arbitrary strings, `__proto__` included (stored as own data). */
export interface JsonObject {
	[key: string]: Json;
}

/** Where a piece of state lives, in the fixed order used for display, overlay and lock order. */
export const OWNERS = ["global", "cwd", "session"] as const;
export type Owner = (typeof OWNERS)[number];
/** Owners kept outside any one pi session (files, or another shared backend), in lock order. */
export const SHARED_OWNERS = ["global", "cwd"] as const satisfies readonly Owner[];
export type SharedOwner = (typeof SHARED_OWNERS)[number];

/** The five semantic planes every owner has, in their stable display order. */
export const PLANES = ["intents", "strategy", "tactics", "artifacts", "lazy"] as const;

/** Artifact fields only the compiler writes; values the model sends for them are replaced (docs/artifacts.md). */
export const ARTIFACT_COMPILER_FIELDS = ["fingerprint", "sourceHash", "checkout", "provenance", "compiledTo", "compiledHash", "compiledFiles"] as const;
export type Plane = (typeof PLANES)[number];

/** True when `value` is one of `list`; the one guard behind every closed word list (owners, planes, modes, …). */
export function isOneOf<T extends string>(list: readonly T[], value: unknown): value is T {
	return typeof value === "string" && (list as readonly string[]).includes(value);
}

export const isOwner = (value: unknown): value is Owner => isOneOf(OWNERS, value);
export const isSharedOwner = (value: unknown): value is SharedOwner => isOneOf(SHARED_OWNERS, value);
export const isPlane = (value: unknown): value is Plane => isOneOf(PLANES, value);

/** Planes whose top-level entries an intent can own through a structured reference. */
export const OWNABLE_PLANES = ["tactics", "lazy"] as const satisfies readonly Plane[];

/**
 * The namespace of registered external roots inside an owner's state (docs/spec.md §12):
 * `roots.<name>` holds one extension's value. Kept apart from the planes so a root name
 * never shadows a plane and stored data of an unregistered (dormant) root stays valid.
 */
export const ROOTS = "roots";
/** A plane or the roots namespace: every top-level section of an owner's state. */
export type Section = Plane | typeof ROOTS;
/** The sections in their stable order: planes first, then the roots namespace. */
export const SECTIONS: readonly Section[] = [...PLANES, ROOTS];

/** One owner's state: the five planes, each a plain JSON object, and the registered roots once one was written. */
export type OwnerState = Record<Plane, JsonObject> & { roots?: JsonObject };

/**
 * Which person and machine made a transition (provenance says which tool, command or import):
 * `user` is the config's `user` name or the OS user, `host` the machine's host name. Stored with
 * every owner's record of a transition once its writer knows it; older records have none.
 */
export interface Who {
	user: string;
	host: string;
}

/** A per-owner patch: each present section is an RFC 7386 merge patch for it (`roots`: keyed by root name). */
export type PlanePatch = Partial<Record<Section, JsonObject>>;

/**
 * What staging asks about registered roots: refuses (throws a StateError naming the field)
 * a root that is not writable in `owner`, or a value its schema rejects. Absent: no root is writable.
 */
export type RootGate = (owner: Owner, name: string, value: Json, path: (string | number)[]) => void;

/** The only patch form the engine stores: `{ [owner]: { [plane]: mergePatch } }`. */
export type CanonicalPatch = Partial<Record<Owner, PlanePatch>>;

/**
 * What an undo, redo or restore reverted (docs/storage-format.md): the undo chain is read from
 * these, so a repeated undo walks back instead of undoing the undo. Absent on every other transition.
 */
export interface Reversal {
	/** `undo` inverts a transition, `redo` inverts an undo, `restore` brings state back to how it was after `target`. */
	op: "undo" | "redo" | "restore";
	/** undo and redo: the transition whose change this one inverted; restore: the transition restored to. */
	target: string;
	/** restore: the transitions after `target` whose changes it reverted (of the restored path, when one was named). */
	reverted?: string[];
	/** restore of one path: its canonical locator, e.g. `cwd.tactics.next`. */
	path?: string;
}

export const REVERSAL_OPS = ["undo", "redo", "restore"] as const;

/** Who made a transition. */
export type Provenance =
	| { kind: "tool"; sessionId: string; toolCallId: string }
	| { kind: "command"; command: string; reverts?: Reversal }
	| { kind: "import"; source: string }
	| { kind: "system"; reason: string }
	| { kind: "extension"; extension: string };

/** One intent deletion's cascade: which intent went, which owned targets went with it. */
export interface Cascade {
	owner: Owner;
	intent: string;
	/** Canonical locators of the removed targets, e.g. `cwd.tactics.step1`. */
	targets: string[];
}

/** A structured reference left pointing at nothing by a transition. */
export interface DanglingRef {
	owner: Owner;
	/** The intent that still holds the reference. */
	intent: string;
	/** The canonical locator it points to. */
	ref: string;
	/**
	 * The intent's merge patch that drops every reference this transition reported dangling
	 * in it (the same for each of them); absent when the intent is itself a reference.
	 */
	drop?: JsonObject;
}

/**
 * One committed transition as stored for one owner. `patch` is the *effective* merge patch
 * (the caller's patch plus cascade deletions): replaying it with `applyPatch` reproduces
 * the next state exactly. `undo` is the exact inverse merge patch against the prior state,
 * used for temporal reads (`cwd[N]`) and `/state undo` without replaying from a checkpoint.
 */
export interface TransitionRecord {
	/** Transition id (UUID), shared by every owner the transition touched. */
	id: string;
	/** ISO-8601 time of the commit (injected; the engine reads no clock). */
	at: string;
	/** This owner's sequence number: 1 for its first transition, +1 for each after. */
	seq: number;
	by: Provenance;
	/** Who made it (absent in records written before State Flow recorded it). */
	who?: Who;
	patch: PlanePatch;
	undo: PlanePatch;
	/** Cascades applied to this owner in this transition. */
	cascades: Cascade[];
	/** Every owner the transition touched (for multi-owner atomicity checks). */
	owners: Owner[];
}

/**
 * An owner's retained history: a checkpoint (the state before the first retained
 * transition), the retained tail, and the current state. Invariant, for every retention R:
 * replay(checkpoint, tail) deep-equals state, and tail.length <= R.
 */
export interface OwnerHistory {
	owner: Owner;
	/** State after transition `checkpointSeq` (the fold point). */
	checkpoint: OwnerState;
	checkpointSeq: number;
	/**
	 * Id of transition `checkpointSeq` when it was folded while this history was held (not
	 * kept in checkpoint files), so a refusal with nothing retained can name it.
	 */
	foldedId?: string;
	/** Retained transitions, oldest first; seqs are checkpointSeq+1 .. seq. */
	tail: TransitionRecord[];
	/** Current state. Owned by the holder; the engine's `applyPatch` mutates it in place. */
	state: OwnerState;
	/** Current sequence number (0 for a never-written owner). */
	seq: number;
	/** Size of `state` in bytes as defined by `stateBytes`, maintained incrementally. */
	bytes: number;
	/** Retention R the tail is folded to (kept here so refusals can name it). */
	retention: number;
}

/** Limits applied to every write. */
export interface Limits {
	/** Maximum `stateBytes` of one owner after a write. Default 4 MiB. */
	maxOwnerBytes: number;
	/** Maximum nesting depth of a value inside a plane entry. Default 64. */
	maxDepth: number;
	/** Maximum key length in UTF-16 code units. Default 1024. */
	maxKeyLength: number;
}

export const DEFAULT_LIMITS: Limits = { maxOwnerBytes: 4 * 1024 * 1024, maxDepth: 64, maxKeyLength: 1024 };

/**
 * Default and bounds for retention R. 200: a working day of the model's transitions and the
 * user's undo and redo clicks stays retained; measured cost in docs/decisions.md, "Retention 200".
 */
export const DEFAULT_RETENTION = 200;
export const MAX_RETENTION = 1000;

/** A missing deletion: a `null` aimed at a key that did not exist (RFC 6901 pointer, canonical). */
export type Pointer = string;

/** What a staged transition did, in canonical form (the tool layer presents it). */
export interface StageReport {
	/** Owners whose state changes. */
	scopes: Owner[];
	/** Canonical JSON pointers of every changed leaf/entry, e.g. `/cwd/tactics/step1`. */
	changed: Pointer[];
	missingDeletions: Pointer[];
	cascades: Cascade[];
	danglingRefs: DanglingRef[];
}

/** A tracked artifact whose file no longer matches what was recorded (docs/spec.md §9). */
export interface StaleArtifact {
	owner: Owner;
	key: string;
	/** Why, in words, e.g. `file changed since it was recorded (size 10 → 12)`. */
	note: string;
}

/** A value, or why there is none (in words for the user): failure as data, not as a thrown error. */
export type Result<T> = { ok: true; value: T } | { ok: false; why: string };
