/**
 * What a database must offer (docs/shared-memory.md), on a real server: an app role with exactly
 * the locked-down grants reads and commits; a role that may only read is refused with a message
 * naming the missing privilege; a database not in UTF8 is refused before anything is created.
 * Needs a superuser to create roles and databases, so it always runs on an embedded server.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { isStateError } from "../../lib/core/errors.js";
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory } from "../../lib/core/types.js";
import { PgDatabase } from "../../lib/storage/pg/database.js";
import { serverForFile, startEmbeddedPostgres } from "../helpers/pg-server.js";

const server = serverForFile(startEmbeddedPostgres);

async function admin(statements: string[]): Promise<void> {
	const c = new pg.Client({ connectionString: server.url });
	await c.connect();
	try {
		for (const s of statements) await c.query(s);
	} finally {
		await c.end();
	}
}

function as(role: string): string {
	const u = new URL(server.url);
	u.username = role;
	u.password = `${role}-pw`;
	return u.toString();
}

const by = { kind: "system", reason: "grants-test" } as const;

async function commitOne(db: PgDatabase, id: string): Promise<void> {
	const store = db.store("cwd", "acme/api");
	await db.commitTogether([store], ([h]) => {
		const r = stage({ cwd: h as OwnerHistory }, { cwd: { tactics: { [id]: true } } }, { id, at: "2026", by });
		return { records: [r.noop ? undefined : r.records.cwd], value: undefined };
	});
}

describe("PostgreSQL database requirements", () => {
	it("the documented locked-down grants are enough; a read-only role is refused by name, nothing written", async () => {
		// The tables are created once by the administrator's role (first use of State Flow as that role).
		const owner = new PgDatabase({ url: server.url, schema: "state_flow" });
		await commitOne(owner, "by-admin");
		await owner.close();
		await admin([
			"CREATE ROLE state_flow_app LOGIN PASSWORD 'state_flow_app-pw'",
			"CREATE ROLE state_flow_reader LOGIN PASSWORD 'state_flow_reader-pw'",
			"GRANT USAGE ON SCHEMA state_flow TO state_flow_app, state_flow_reader",
			"GRANT SELECT, INSERT, UPDATE ON state_flow.owners, state_flow.transitions TO state_flow_app",
			"GRANT SELECT ON state_flow.schema_version TO state_flow_app, state_flow_reader",
			"GRANT USAGE ON SEQUENCE state_flow.owners_owner_id_seq TO state_flow_app",
			"GRANT SELECT ON state_flow.owners, state_flow.transitions TO state_flow_reader",
		]);
		const app = new PgDatabase({ url: as("state_flow_app") });
		const reader = new PgDatabase({ url: as("state_flow_reader") });
		try {
			await commitOne(app, "by-app");
			// A new owner row needs the sequence too.
			await app.commitTogether([app.store("global", "alice")], ([h]) => {
				const r = stage({ global: h as OwnerHistory }, { global: { lazy: { x: 1 } } }, { id: "g-app", at: "2026", by });
				return { records: [r.noop ? undefined : r.records.global], value: undefined };
			});
			const h = await reader.store("cwd", "acme/api").load();
			assert.deepEqual(Object.keys(h.state.tactics), ["by-admin", "by-app"]);
			let caught: unknown;
			try {
				await commitOne(reader, "by-reader");
			} catch (e) {
				caught = e;
			}
			assert.ok(isStateError(caught), String(caught));
			assert.equal(caught.code, "unavailable");
			assert.match(
				caught.message,
				/unavailable: the database role lacks a privilege on schema `state_flow` .*permission denied.*nothing was written\. Grant what docs\/shared-memory\.md lists/,
			);
			assert.ok(!caught.message.includes("state_flow_reader-pw"));
			assert.equal(await app.store("cwd", "acme/api").committedSeq("by-reader"), undefined);
		} finally {
			await app.close();
			await reader.close();
		}
	});

	it("a database in another encoding than UTF8 is refused and left untouched", async () => {
		await admin(["CREATE DATABASE latin TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C'"]);
		const u = new URL(server.url);
		u.pathname = "/latin";
		const db = new PgDatabase({ url: u.toString() });
		try {
			let caught: unknown;
			try {
				await db.store("cwd", "acme/api").load();
			} catch (e) {
				caught = e;
			}
			assert.ok(isStateError(caught), String(caught));
			assert.match(caught.message, /database `latin` uses encoding LATIN1; State Flow needs UTF8/);
		} finally {
			await db.close();
		}
		const c = new pg.Client({ connectionString: u.toString() });
		await c.connect();
		try {
			const schemas = await c.query("SELECT 1 FROM pg_namespace WHERE nspname = 'state_flow'");
			assert.equal(schemas.rows.length, 0, "no schema was created");
		} finally {
			await c.end();
		}
	});
});
