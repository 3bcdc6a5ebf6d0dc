/**
 * What PostgreSQL's rows and errors mean to State Flow: the SQLSTATEs it tells apart, the
 * checksum every row carries, and the text of a checkpoint row. Pure; the stores use it.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { isStateError, messageOf } from "../../core/errors.js";
import type { OwnerState, SharedOwner, TransitionRecord } from "../../core/types.js";
import type { OwnerBackend } from "../port.js";
import { spellId } from "../../core/printable.js";
import { checkRecord } from "../format.js";
import { checkpointState } from "../owner-log.js";

/** SQLSTATEs that mean "this connection or server cannot serve us now". */
export const UNAVAILABLE_STATES = /^(08|57P0[1-4]|53300|28P01|28000|3D000)/;
export const LOCK_NOT_AVAILABLE = "55P03";
export const QUERY_CANCELED = "57014";
export const INSUFFICIENT_PRIVILEGE = "42501";
export const UNIQUE_VIOLATION = "23505";

export function sqlStateOf(e: unknown): string | undefined {
	const code = (e as { code?: unknown } | null)?.code;
	return typeof code === "string" ? code : undefined;
}

/** The error leaves this connection unusable (lost, refused, timed out, server shutting down). */
export function connectionLost(e: unknown): boolean {
	if (isStateError(e)) return false;
	const code = sqlStateOf(e);
	if (code !== undefined && (UNAVAILABLE_STATES.test(code) || /^E[A-Z]+$/.test(code))) return true;
	const msg = messageOf(e);
	return /Connection terminated|connection timeout|not queryable|timeout exceeded|Query read timeout|socket|ECONN|EPIPE/i.test(msg);
}

export function checksum(kind: SharedOwner, key: string, seq: number, body: string): string {
	return createHash("sha256").update(`${kind}\n${key}\n${seq}\n${body}`).digest("hex");
}

/** Checkpoint rows use seq -1 in their checksum input, so a row's text cannot pass for a checkpoint. */
export const CHECKPOINT_SEQ_TAG = -1;

/** A checkpoint row's text: the state alone (the row holds owner, seq and checksum beside it). */
export function stateText(state: OwnerState): string {
	return JSON.stringify(state);
}

/** An owner's head row as the head probes read it. */
export interface HeadRow {
	kind?: string;
	key?: string;
	owner_id: string;
	seq: string;
}

export interface Row {
	seq: string | number;
	id: string;
	body: string | null;
	sum: string | null;
}

/** Which owner's rows are checked, and how messages name it. */
export interface RowOwner {
	readonly kind: SharedOwner;
	readonly key: string;
	readonly owner: SharedOwner;
	readonly label: string;
}

/** One stored transition row, checked: checksum, JSON, record shape, seq and id as the row says. */
export function verifyRow(row: Row, who: RowOwner, damaged: (what: string) => never): TransitionRecord {
	const seq = Number(row.seq);
	const where = `transition row seq ${seq}`;
	if (row.body === null || row.sum === null) damaged(`${where} has no text although it is after the checkpoint`);
	if (checksum(who.kind, who.key, seq, row.body) !== row.sum) damaged(`${where} does not match its checksum (edited outside State Flow)`);
	let value: unknown;
	try {
		value = JSON.parse(row.body);
	} catch {
		damaged(`${where} is not valid JSON`);
	}
	const report = (_where: string, what: string): never => damaged(what);
	const record = checkRecord(value, who.label, where, report);
	if (record.seq !== seq || record.id !== row.id) damaged(`${where} holds transition \`${spellId(record.id)}\` with seq ${record.seq}`);
	if (!record.owners.includes(who.owner)) damaged(`${where} belongs to owners ${record.owners.join(", ")}`);
	return record;
}

/** A checkpoint row, checked: checksum, JSON, and the files' checkpoint schema. */
export function verifyCheckpoint(text: string, sum: string, seq: number, who: RowOwner, damaged: (what: string) => never): OwnerState {
	if (checksum(who.kind, who.key, CHECKPOINT_SEQ_TAG, text) !== sum)
		damaged(`its checkpoint (state at seq ${seq}) does not match its checksum (edited outside State Flow)`);
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		damaged("its checkpoint is not valid JSON");
	}
	// The planes, and the registered roots' namespace once one was written (docs/spec.md §12): the files' schema.
	return checkpointState(value, damaged);
}

/**
 * What an owner store asks of its database: one connection's queries, the tables, the one
 * transaction several owners commit in, and how owners and damage are named. `PgDatabase`
 * implements it; the owner store depends on this port, not on the class (no import cycle).
 */
export interface PgSession extends OwnerBackend {
	readonly schema: string;
	/** The URL without its password, for messages. */
	readonly shownUrl: string;
	readonly tables: { owners: string; transitions: string };
	run<T>(owner: string, fn: (c: pg.Client) => Promise<T>, mayRetry?: () => boolean): Promise<T>;
	commitAndNotify(c: pg.Client): Promise<void>;
	describeOwner(kind: SharedOwner, key: string): string;
	damaged(kind: SharedOwner, key: string, what: string): never;
	close(): Promise<void>;
}
