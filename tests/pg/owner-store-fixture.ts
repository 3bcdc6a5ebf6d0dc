/**
 * Set-up shared by the PostgreSQL owner store's tests: the file's server
 * (tests/helpers/pg-server.ts), database objects as separate processes would hold them, commits
 * staged through the core, raw SQL for hand edits, and a check of a refusal's code and message.
 */
import assert from "node:assert/strict";
import { after } from "node:test";
import { inspect } from "node:util";
import pg from "pg";
import { isStateError } from "../../lib/core/errors.js";
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory, PlanePatch, TransitionRecord } from "../../lib/core/types.js";
import { PgDatabase } from "../../lib/storage/pg/database.js";
import type { PgOwnerStore } from "../../lib/storage/pg/owner-store.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import type { TestDatabase } from "../helpers/pg-server.js";

let server: TestDatabase;
/** Every database object a test opened: closed after the file's tests, before the server stops. */
export const open: PgDatabase[] = [];

/** The server of the calling test file (call once, at its top). */
export function ownerStoreServer(): TestDatabase {
	// Registered before the server's own hooks, so it runs first (node runs `after` hooks in order).
	after(async () => {
		for (const db of open) await db.close();
	});
	server = serverForFile(testDatabase);
	return server;
}

/** A database object as one process would hold it (its own connection and caches). */
export function connect(schema: string, url = server.url): PgDatabase {
	const db = new PgDatabase({ url, schema, connectTimeoutMs: 3_000 });
	open.push(db);
	return db;
}

export const by = { kind: "system", reason: "pg-test" } as const;

/** Stage `patch` on the store's current state under its lock and commit it (the path Stores will take). */
export async function write(db: PgDatabase, store: PgOwnerStore, patch: PlanePatch, id: string): Promise<TransitionRecord | undefined> {
	return db.commitTogether([store], ([h]) => {
		const r = stage({ [store.owner]: h as OwnerHistory }, { [store.owner]: patch }, { id, at: "2026-12-01T00:00:00.000Z", by });
		const record = r.noop ? undefined : r.records[store.owner];
		return { records: [record], value: record };
	});
}

/** Raw SQL on the test server (hand edits and inspection). */
export async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
	const c = new pg.Client({ connectionString: server.url });
	await c.connect();
	try {
		return (await c.query(text, values)).rows as T[];
	} finally {
		await c.end();
	}
}

export async function rejectsWith(p: Promise<unknown>, code: string, pattern: RegExp): Promise<Error> {
	let caught: unknown;
	try {
		await p;
	} catch (e) {
		caught = e;
	}
	assert.ok(isStateError(caught), `expected a StateError, got ${inspect(caught)}`);
	assert.equal(caught.code, code, caught.message);
	assert.match(caught.message, pattern);
	return caught;
}
