/**
 * On-disk shapes of the file stores and the journal, with their format version, integrity
 * check and ajv validation. Every record, checkpoint and journal of format 2 carries `sum`:
 * the first 64 bits of the SHA-256 of its own JSON text without `sum`, so any changed byte
 * of a stored value is detected (or did not change the value). Format 1 (State Flow 0.1.0)
 * is read as it is and rewritten as format 2 by the first writer. Schemas are compiled once;
 * record validation checks the envelope and the plane names of `patch`/`undo`, so catching
 * up on appended records stays O(record).
 */
import { createHash } from "node:crypto";
import AjvModule from "ajv";
import type { ValidateFunction } from "ajv";
import type { Owner, OwnerHistory, OwnerState, TransitionRecord } from "../core/types.js";
import { OWNERS, PLANES, REVERSAL_OPS, SECTIONS } from "../core/types.js";
import { fail } from "../core/errors.js";
import { WHO_TEXT } from "./placement/who.js";

/** Version written into every record line, checkpoint and journal. */
export const FORMAT_VERSION = 2;
/** Format of State Flow 0.1.0: no `sum`; still read, rewritten as FORMAT_VERSION by the next writer. */
export const LEGACY_VERSION = 1;
const VERSIONS = [LEGACY_VERSION, FORMAT_VERSION];
const SUM = { type: "string", pattern: "^[0-9a-f]{16}$" } as const;

const Ajv = AjvModule.default;
const ajv = new Ajv({ allErrors: false, strict: true });

const obj = { type: "object" } as const;
/** What an undo, redo or restore reverted (optional; other fields of provenance are not checked). */
const reversal = {
	type: "object",
	required: ["op", "target"],
	properties: {
		op: { enum: [...REVERSAL_OPS] },
		target: { type: "string", minLength: 1 },
		reverted: { type: "array", items: { type: "string", minLength: 1 } },
		path: { type: "string" },
	},
	additionalProperties: false,
} as const;
const provenance = {
	type: "object",
	required: ["kind"],
	properties: { kind: { enum: ["tool", "command", "import", "system", "extension"] }, reverts: reversal },
} as const;
/** Who made a transition (optional: records written before it was recorded have none). */
const who = {
	type: "object",
	required: ["user", "host"],
	properties: { user: WHO_TEXT, host: WHO_TEXT },
	additionalProperties: false,
} as const;
/**
 * A merge patch per section, each an object of entries. Known sections only: the five planes and
 * `roots`, the namespace of registered roots (docs/spec.md §12), whose entries are kept as they
 * are whether their extension is loaded now or not (dormant).
 */
const planePatch = { type: "object", propertyNames: { enum: [...SECTIONS] }, additionalProperties: obj } as const;
const recordProps = {
	v: { enum: VERSIONS },
	sum: SUM,
	id: { type: "string", minLength: 1 },
	at: { type: "string" },
	seq: { type: "integer", minimum: 1 },
	by: provenance,
	who,
	patch: planePatch,
	undo: planePatch,
	cascades: { type: "array", items: obj },
	owners: { type: "array", minItems: 1, items: { enum: [...OWNERS] } },
} as const;
const recordSchema = {
	type: "object",
	required: ["v", "id", "at", "seq", "by", "patch", "undo", "cascades", "owners"],
	properties: recordProps,
	additionalProperties: false,
} as const;
const stateSchema = {
	type: "object",
	required: [...PLANES],
	// `roots`: the namespace of registered roots (docs/spec.md §12), present once one was written.
	properties: Object.fromEntries(SECTIONS.map((p) => [p, obj])),
	additionalProperties: false,
} as const;
const checkpointSchema = {
	type: "object",
	required: ["format", "v", "owner", "seq", "state"],
	properties: {
		format: { const: "state-flow/checkpoint" },
		v: { enum: VERSIONS },
		sum: SUM,
		owner: { enum: [...OWNERS] },
		seq: { type: "integer", minimum: 0 },
		state: stateSchema,
	},
	additionalProperties: false,
} as const;
const journalSchema = {
	type: "object",
	required: ["format", "v", "id", "parts"],
	properties: {
		format: { const: "state-flow/journal" },
		v: { enum: VERSIONS },
		sum: SUM,
		id: { type: "string", minLength: 1 },
		parts: {
			type: "array",
			minItems: 2,
			items: {
				type: "object",
				required: ["owner", "record"],
				properties: {
					owner: { enum: [...OWNERS] },
					root: { type: "string" },
					sessionId: { type: "string" },
					persistent: { type: "boolean" },
					database: { type: "string", minLength: 1 },
					record: recordSchema,
				},
				additionalProperties: false,
			},
		},
	},
	additionalProperties: false,
} as const;

/** Compile a schema at its first use: a process that never reads a journal never pays for its validator. */
function lazy<T>(schema: object): () => ValidateFunction<T> {
	let fn: ValidateFunction<T> | undefined;
	return () => (fn ??= ajv.compile<T>(schema));
}
const validateRecord = lazy<unknown>(recordSchema);
const validateCheckpoint = lazy<unknown>(checkpointSchema);
const validateJournal = lazy<unknown>(journalSchema);

/** One owner's part of a multi-owner transition, as written into the journal. */
export interface JournalPart {
	owner: Owner;
	/** Store folder of a file owner (absolute). */
	root?: string;
	/** Session id of the Session part. */
	sessionId?: string;
	/** False for an in-memory session: nothing to roll forward after a crash. */
	persistent?: boolean;
	/**
	 * A database owner's part (its `locationKey`, never a password). The database's COMMIT is
	 * the transition's commit point: roll-forward asks it whether the id committed, then
	 * completes the local parts or drops the journal; the database part itself is never replayed.
	 */
	database?: string;
	record: TransitionRecord;
}
export interface Journal {
	id: string;
	parts: JournalPart[];
}

/** What to tell the user about a damaged file: where, what, and what to do. */
export function damaged(file: string, what: string): never {
	fail(
		"corrupt",
		`State store file \`${file}\` is damaged: ${what}. It was left unchanged and nothing was written. Run \`state-flow doctor\` to inspect it, restore it from a backup, or move it aside to start this owner afresh.`,
	);
}

function versionOf(v: unknown): unknown {
	return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as { v?: unknown }).v : undefined;
}

function checkVersion(file: string, value: unknown, where: string): void {
	const v = versionOf(value);
	if (typeof v === "number" && v > FORMAT_VERSION) {
		fail(
			"corrupt",
			`State store file \`${file}\` uses format version ${v} (${where}), newer than this State Flow (version ${FORMAT_VERSION}). It was left unchanged. Update the State Flow package to read it; if no newer State Flow wrote it, it is damaged: run \`state-flow doctor\`.`,
		);
	}
}

function firstError(errors: ValidateFunction["errors"]): string {
	const e = errors?.[0];
	if (e === undefined) return "invalid shape";
	// The pattern of a user or host name, spelled out, would be a screenful of escapes.
	const what = e.keyword === "pattern" && e.params.pattern === WHO_TEXT.pattern ? "holds a control or invisible character" : (e.message ?? "is invalid");
	return `\`${e.instancePath || "/"}\` ${what}`;
}

/** The integrity check of a stored value: SHA-256 of its JSON text without `sum`, first 64 bits. */
export function sumOf(value: object): string {
	return sumOfText(JSON.stringify(value));
}

function sumOfText(text: string): string {
	return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** `value` with its integrity check as the last key. */
function sealed<T extends object>(value: T): T & { sum: string } {
	return { ...value, sum: sumOf(value) };
}

/**
 * `JSON.stringify(sealed(value))`, stringified once: the sum is taken over the value's text and
 * appended as its last member (a commit and a compaction pay one serialisation, not two). `value`
 * is a non-empty plain object without `sum` (a stored envelope always starts with its format or `v`).
 */
function sealedText(value: object): string {
	const text = JSON.stringify(value);
	return `${text.slice(0, -1)},"sum":"${sumOfText(text)}"}`;
}

/**
 * Check the integrity of a parsed value of format 2 (format 1 has none). A value whose
 * JSON text was changed anywhere either parses to the same value (harmless) or fails here.
 */
function checkSum(value: { v?: unknown; sum?: unknown }, file: string, where: string, report: (file: string, what: string) => never): void {
	if (value.v !== FORMAT_VERSION) {
		// Format 1 never carried a sum: one there means a changed version byte switched the check off.
		if (value.v === LEGACY_VERSION && Object.hasOwn(value, "sum"))
			report(file, `${where} is marked format 1 but carries an integrity check (its version was changed after it was written)`);
		return;
	}
	const { sum, ...rest } = value;
	if (typeof sum !== "string" || sumOf(rest) !== sum) report(file, `${where} fails its integrity check (its bytes were changed after it was written)`);
}

/** A record as stored data: the record plus the format version and its integrity check. */
export function recordValue(record: TransitionRecord): TransitionRecord & { v: number; sum: string } {
	return sealed({ v: FORMAT_VERSION, ...withoutVersion(record as TransitionRecord & { v?: number }) });
}

/** Serialise a record as one log line (without the newline). O(size of the record). */
export function recordLine(record: TransitionRecord): string {
	return sealedText({ v: FORMAT_VERSION, ...withoutVersion(record as TransitionRecord & { v?: number }) });
}

/** A parsed log line: the record, and whether it was written in the 0.1.0 format. */
export interface ParsedRecord {
	record: TransitionRecord;
	legacy: boolean;
}

/** Parse and validate one complete log line; `where` names the line for messages. */
export function parseLogLine(text: string, file: string, where: string): ParsedRecord {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		damaged(file, `${where} is not valid JSON`);
	}
	const record = checkRecord(value, file, where);
	return { record, legacy: versionOf(value) === LEGACY_VERSION };
}

/** Parse and validate one complete log line; `where` names the line for messages. */
export function parseRecordLine(text: string, file: string, where: string): TransitionRecord {
	return parseLogLine(text, file, where).record;
}

/** Validate a record value that was stored as data (a Session entry); `report` says what damage means where it lives. */
export function checkRecord(value: unknown, file: string, where: string, report: (file: string, what: string) => never = damaged): TransitionRecord {
	checkVersion(file, value, where);
	const recordOk = validateRecord();
	if (!recordOk(value)) report(file, `${where} is not a transition record (${firstError(recordOk.errors)})`);
	checkSum(value as { v: number }, file, where, report);
	return withoutVersion(value as TransitionRecord & { v: number });
}

const validateState = lazy<OwnerState>(stateSchema);

/** Why `value` is not an owner state as checkpoints store it (the planes, and `roots` once written), or undefined. */
export function stateShapeProblem(value: unknown): string | undefined {
	const ok = validateState();
	return ok(value) ? undefined : firstError(ok.errors);
}

/** Serialise a checkpoint file body. */
export function checkpointText(owner: Owner, seq: number, state: OwnerState): string {
	return sealedText({ format: "state-flow/checkpoint", v: FORMAT_VERSION, owner, seq, state });
}

/** Parse a whole-file JSON document, check its version, shape and integrity; `report` says what damage means for it. */
function parseDocument(
	text: string,
	file: string,
	what: string,
	validate: () => ValidateFunction<unknown>,
	report: (file: string, what: string) => never,
): unknown {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		report(file, `${what} is not valid JSON (truncated or overwritten)`);
	}
	checkVersion(file, value, what);
	const ok = validate();
	if (!ok(value)) report(file, `${what} has an invalid shape (${firstError(ok.errors)})`);
	checkSum(value as { v: number }, file, what, report);
	return value;
}

/** Parse and validate a checkpoint file body; `legacy` when it was written by State Flow 0.1.0. */
export function parseCheckpoint(text: string, file: string, owner: Owner): { seq: number; state: OwnerState; legacy?: boolean } {
	const cp = parseDocument(text, file, "the checkpoint", validateCheckpoint, damaged) as { owner: Owner; seq: number; state: OwnerState; v: number };
	if (cp.owner !== owner) damaged(file, `the checkpoint belongs to owner \`${cp.owner}\`, not \`${owner}\``);
	return cp.v === LEGACY_VERSION ? { seq: cp.seq, state: cp.state, legacy: true } : { seq: cp.seq, state: cp.state };
}

/** Serialise a journal. */
export function journalText(journal: Journal): string {
	return sealedText({
		format: "state-flow/journal",
		v: FORMAT_VERSION,
		id: journal.id,
		parts: journal.parts.map((p) => ({ ...p, record: recordValue(p.record) })),
	});
}

/** What to tell the user about a damaged journal: it blocks the stores of its agent directory. */
function damagedJournal(file: string, what: string): never {
	fail(
		"corrupt",
		`Journal \`${file}\` is damaged: ${what}. It records a transition committed across several owners that may still be missing from some of them, so the State Flow stores of this agent directory refuse access until it is resolved; it was left unchanged. Run \`state-flow doctor\` to inspect it, restore it from a backup, or move it out of its folder to give up completing that transition (owners that already have it keep it).`,
	);
}

/** Parse and validate a journal file body. */
export function parseJournal(text: string, file: string): Journal {
	// The schema validates every part's record (its envelope and `v`) too.
	const j = parseDocument(text, file, "the journal", validateJournal, damagedJournal) as {
		id: string;
		parts: (JournalPart & { record: TransitionRecord & { v?: number } })[];
	};
	return { id: j.id, parts: j.parts.map((p, i) => ({ ...p, record: checkRecord(p.record, file, `part ${i} of the journal`, damagedJournal) })) };
}

function withoutVersion(value: TransitionRecord & { v?: number; sum?: string }): TransitionRecord {
	const { v: _v, sum: _sum, ...record } = value;
	return record;
}

/** Where two histories differ in their stored text (seq, checkpoint, each retained record, state), or undefined when they do not. */
export function sameHistoryText(a: OwnerHistory, b: OwnerHistory): string | undefined {
	if (a.seq !== b.seq) return `head seq ${a.seq} vs ${b.seq}`;
	if (a.checkpointSeq !== b.checkpointSeq) return `checkpoint seq ${a.checkpointSeq} vs ${b.checkpointSeq}`;
	if (JSON.stringify(a.checkpoint) !== JSON.stringify(b.checkpoint)) return `the checkpoint at seq ${a.checkpointSeq}`;
	if (a.tail.length !== b.tail.length) return `${a.tail.length} vs ${b.tail.length} retained transitions`;
	for (let i = 0; i < a.tail.length; i++) {
		if (recordLine(a.tail[i] as TransitionRecord) !== recordLine(b.tail[i] as TransitionRecord)) return `transition seq ${(a.tail[i] as TransitionRecord).seq}`;
	}
	if (JSON.stringify(a.state) !== JSON.stringify(b.state)) return "the current state";
	return undefined;
}
