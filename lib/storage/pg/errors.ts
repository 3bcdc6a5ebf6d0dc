/**
 * How a PostgreSQL driver failure reads to the user: busy, a missing privilege, a refused
 * statement, or an outage, each saying what was (not) written and what to do. Never the
 * password: every detail goes through the database's scrubber.
 */
import { StateError, messageOf } from "../../core/errors.js";
import { INSUFFICIENT_PRIVILEGE, LOCK_NOT_AVAILABLE, QUERY_CANCELED, connectionLost, sqlStateOf } from "./rows.js";

/** What the words name of the database a failure came from. */
export interface ErrorPlace {
	readonly schema: string;
	readonly shownUrl: string;
	readonly lockTimeoutMs: number;
	readonly scrub: (text: string) => string;
}

/** A driver failure (not a StateError) of `owner` as a StateError. */
export function driverError(owner: string, e: unknown, db: ErrorPlace): StateError {
	const code = sqlStateOf(e);
	const detail = db.scrub(`${messageOf(e)}${code && !/^E[A-Z]+$/.test(code) ? ` [SQLSTATE ${code}]` : ""}`);
	if (code === LOCK_NOT_AVAILABLE) {
		return new StateError("busy", `${owner} is being written by another process (waited ${db.lockTimeoutMs} ms for its row lock); nothing was written; retry.`);
	}
	if (code === INSUFFICIENT_PRIVILEGE) {
		return new StateError(
			"unavailable",
			`${owner} unavailable: the database role lacks a privilege on schema \`${db.schema}\` at ${db.shownUrl} (${detail}); nothing was written. Grant what docs/shared-memory.md lists, or ask the database owner to.`,
		);
	}
	if (!connectionLost(e) && code !== QUERY_CANCELED) {
		// The server answered but refused a statement: not an outage, and retrying will not help.
		return new StateError(
			"io",
			`${owner}: PostgreSQL at ${db.shownUrl} refused a State Flow statement (${detail}); nothing was written. The tables in schema \`${db.schema}\` may have been changed by hand: run \`state-flow doctor\`, and report it if they were not.`,
		);
	}
	const what =
		code === QUERY_CANCELED
			? "did not answer in time"
			: code === "28P01" || code === "28000"
				? "refused the credentials"
				: code === "3D000"
					? "has no such database"
					: "cannot be reached";
	return new StateError(
		"unavailable",
		`${owner} unavailable: PostgreSQL at ${db.shownUrl} ${what} (${detail}). Nothing was written and nothing is queued; the other owners keep working. Check that the server runs and that the URL and credentials are right; the next call reconnects by itself.`,
	);
}
