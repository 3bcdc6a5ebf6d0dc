/**
 * State Flow's own PostgreSQL schema: the tables, their version, and the migration that
 * creates or upgrades them on first use, serialised across processes and machines by a
 * transaction-scoped advisory lock. State is kept as TEXT, never jsonb: jsonb reorders keys
 * and normalises numbers, and the head and the size limits depend on the exact JSON text.
 */
import { fail } from "../../core/errors.js";

/** Version of the tables this State Flow reads and writes. */
export const SCHEMA_VERSION = 1;

/** A schema name State Flow accepts: a plain lower-case identifier (quoted anyway). */
export function checkSchemaName(name: string): string {
	if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
		fail("invalid_input", `database schema \`${name}\` must be a lower-case identifier (letters, digits, _; at most 63), e.g. \`state_flow\``, ["schema"]);
	}
	return `"${name}"`;
}

/** Migration `i` brings the schema from version i to i + 1. */
function migrations(s: string): string[][] {
	return [
		[
			`CREATE TABLE ${s}.owners (
				owner_id bigserial PRIMARY KEY,
				kind text NOT NULL CHECK (kind IN ('global', 'cwd')),
				key text NOT NULL,
				seq bigint NOT NULL DEFAULT 0,
				checkpoint_seq bigint NOT NULL DEFAULT 0,
				checkpoint text NOT NULL,
				checkpoint_sum text NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				UNIQUE (kind, key)
			)`,
			// body and sum are NULL once the transition is folded into the checkpoint; the id stays, so
			// "did transition X commit?" is answered for every transition the owner ever had.
			`CREATE TABLE ${s}.transitions (
				owner_id bigint NOT NULL REFERENCES ${s}.owners (owner_id),
				seq bigint NOT NULL,
				id text NOT NULL,
				body text,
				sum text,
				committed_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (owner_id, seq),
				UNIQUE (owner_id, id)
			)`,
		],
	];
}

/** The statements run by a migration from `from` to SCHEMA_VERSION (tests and docs list them). */
export function migrationStatements(schema: string, from: number): string[] {
	const s = checkSchemaName(schema);
	return migrations(s).slice(from).flat();
}

/** What a minimal query-capable client looks like here (pg's Client fits). */
export interface Queryable {
	query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

const UNDEFINED_TABLE = "42P01";
const INVALID_SCHEMA = "3F000";

function sqlStateOf(e: unknown): string | undefined {
	const code = (e as { code?: unknown } | null)?.code;
	return typeof code === "string" ? code : undefined;
}

async function versionOf(c: Queryable, s: string): Promise<number> {
	try {
		const r = await c.query(`SELECT coalesce(max(version), 0) AS v FROM ${s}.schema_version`);
		return Number(r.rows[0]?.v ?? 0);
	} catch (e) {
		const code = sqlStateOf(e);
		if (code === UNDEFINED_TABLE || code === INVALID_SCHEMA) return 0;
		throw e;
	}
}

/** Text must come back byte for byte: a database in another encoding would transcode or refuse it. */
async function checkEncoding(c: Queryable): Promise<void> {
	const r = await c.query("SELECT current_setting('server_encoding') AS e, current_database() AS d");
	const row = r.rows[0] as { e: string; d: string } | undefined;
	if (row !== undefined && row.e !== "UTF8") {
		fail(
			"unavailable",
			`database \`${row.d}\` uses encoding ${row.e}; State Flow needs UTF8 so that stored text comes back exactly as written. Use a database created with ENCODING 'UTF8'; nothing was written.`,
		);
	}
}

function refuseNewer(version: number, schema: string): void {
	if (version > SCHEMA_VERSION) {
		fail(
			"corrupt",
			`database schema \`${schema}\` is at version ${version}, newer than this State Flow (version ${SCHEMA_VERSION}); it was left unchanged. Update the State Flow package on this machine to use it.`,
		);
	}
}

/**
 * Make sure the schema is at SCHEMA_VERSION. The common case is one query; creating or
 * upgrading takes `pg_advisory_xact_lock` first, so concurrent first users wait for one another
 * and the loser finds the work done.
 */
export async function ensureSchema(c: Queryable, schema: string): Promise<void> {
	const s = checkSchemaName(schema);
	await checkEncoding(c);
	const seen = await versionOf(c, s);
	refuseNewer(seen, schema);
	if (seen === SCHEMA_VERSION) return;
	await c.query("BEGIN");
	try {
		await c.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`state-flow:schema:${schema}`]);
		await c.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
		await c.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
		const now = await versionOf(c, s);
		refuseNewer(now, schema);
		for (const [i, step] of migrations(s).entries()) {
			if (i < now) continue;
			for (const statement of step) await c.query(statement);
			await c.query(`INSERT INTO ${s}.schema_version (version) VALUES ($1)`, [i + 1]);
		}
		await c.query("COMMIT");
	} catch (e) {
		await c.query("ROLLBACK").catch(() => undefined);
		throw e;
	}
}
