/**
 * What PostgreSQL's rows and errors mean to State Flow: the SQLSTATEs it tells apart, the
 * checksum every row carries, and the text of a checkpoint row. Pure; the stores use it.
 */
import { createHash } from "node:crypto";
import { isStateError, messageOf } from "../../core/errors.js";
import type { OwnerState, SharedOwner } from "../../core/types.js";

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
