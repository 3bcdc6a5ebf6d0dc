/**
 * The PostgreSQL owner store's faults against a real server: damage in hand-edited rows is
 * refused and left unchanged, a held row lock or a slow statement ends in busy or unavailable
 * with nothing written, and messages about a wrong password or an unreachable server never
 * hold the password (nor does anything redactUrl or the scrubber pass on).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import pg from "pg";
import { PgDatabase } from "../../lib/storage/pg/database.js";
import { redactUrl, scrubber } from "../../lib/storage/pg/url.js";
import { connect, open, ownerStoreServer, rejectsWith, sql, write } from "./owner-store-fixture.js";

const server = ownerStoreServer();

describe("PostgreSQL owner store: damage in hand-edited rows", () => {
	/** An owner with three transitions, then `edit` applied by hand; returns the rows before and after a refused read and commit. */
	async function damagedBy(edit: (schema: string) => Promise<unknown>, pattern: RegExp): Promise<void> {
		const schema = server.schema();
		const db = connect(schema);
		const s = db.store("cwd", "d");
		for (let i = 1; i <= 3; i++) await write(db, s, { tactics: { [`k${i}`]: i } }, `d${i}`);
		await edit(schema);
		const snapshot = async (): Promise<unknown> => [
			await sql(`SELECT seq, id, body, sum FROM "${schema}".transitions ORDER BY seq`),
			await sql(`SELECT seq, checkpoint_seq, checkpoint, checkpoint_sum FROM "${schema}".owners`),
		];
		const beforeRows = await snapshot();
		const reader = connect(schema);
		await rejectsWith(reader.store("cwd", "d").load(), "corrupt", pattern);
		await rejectsWith(write(reader, reader.store("cwd", "d"), { tactics: { k9: 9 } }, "d9"), "corrupt", pattern);
		assert.deepEqual(await snapshot(), beforeRows, "the damaged rows were left unchanged and nothing was written");
	}

	it("a body edited by hand fails its checksum", async () => {
		await damagedBy(
			(s) => sql(`UPDATE "${s}".transitions SET body = replace(body, '"k2":2', '"k2":3') WHERE seq = 2`),
			/seq 2 does not match its checksum.*left unchanged/,
		);
	});

	it("bad JSON is reported even when its checksum was recomputed", async () => {
		const { createHash } = await import("node:crypto");
		const sum = createHash("sha256").update("cwd\nd\n2\n{not json").digest("hex");
		await damagedBy((s) => sql(`UPDATE "${s}".transitions SET body = '{not json', sum = $1 WHERE seq = 2`, [sum]), /seq 2 is not valid JSON/);
	});

	it("a seq gap (a row deleted) is damage", async () => {
		await damagedBy((s) => sql(`DELETE FROM "${s}".transitions WHERE seq = 2`), /transition seq 2 is missing/);
	});

	it("a head moved by hand is damage", async () => {
		await damagedBy((s) => sql(`UPDATE "${s}".owners SET seq = 5`), /head says seq 5 but the stored transitions end at seq 3/);
	});

	it("a checkpoint edited by hand fails its checksum", async () => {
		await damagedBy(
			(s) => sql(`UPDATE "${s}".owners SET checkpoint = replace(checkpoint, '"lazy":{}', '"lazy":{"x":1}')`),
			/checkpoint .* does not match its checksum/,
		);
	});
});

describe("PostgreSQL owner store: waits that end", () => {
	/** Hold the owner's head row locked from another connection while `fn` runs. */
	async function whileLocked(schema: string, fn: () => Promise<void>): Promise<void> {
		const c = new pg.Client({ connectionString: server.url });
		await c.connect();
		try {
			await c.query("BEGIN");
			await c.query(`SELECT seq FROM "${schema}".owners FOR UPDATE`);
			await fn();
		} finally {
			await c.query("ROLLBACK").catch(() => undefined);
			await c.end();
		}
	}

	it("another writer holding the row lock past the lock timeout: busy, nothing written, then the commit goes through", async () => {
		const schema = server.schema();
		const db = new PgDatabase({ url: server.url, schema, lockTimeoutMs: 200 });
		open.push(db);
		const s = db.store("cwd", "w");
		await write(db, s, { lazy: { a: 1 } }, "w1");
		await whileLocked(schema, async () => {
			await rejectsWith(
				write(db, s, { lazy: { b: 1 } }, "w2"),
				"busy",
				/being written by another process \(waited 200 ms for its row lock\); nothing was written; retry/,
			);
		});
		assert.equal(await s.committedSeq("w2"), undefined);
		await write(db, s, { lazy: { b: 1 } }, "w2");
		assert.equal((await s.load()).seq, 2);
	});

	it("a statement past the statement timeout: unavailable ('did not answer in time'), nothing written", async () => {
		const schema = server.schema();
		const db = new PgDatabase({ url: server.url, schema, statementTimeoutMs: 200, lockTimeoutMs: 10_000 });
		open.push(db);
		const s = db.store("cwd", "w");
		await write(db, s, { lazy: { a: 1 } }, "t1");
		await whileLocked(schema, async () => {
			await rejectsWith(
				write(db, s, { lazy: { b: 1 } }, "t2"),
				"unavailable",
				/unavailable: PostgreSQL at .* did not answer in time \(.*statement timeout.*\)\. Nothing was written/,
			);
		});
		assert.equal(await s.committedSeq("t2"), undefined);
		assert.equal((await s.load()).seq, 1);
	});
});

describe("PostgreSQL owner store: the password never shows", () => {
	it("a wrong password is reported unavailable, with the URL but never the password", async () => {
		const secret = "Sup3r-secret_pw";
		const bad = new URL(server.url);
		bad.password = secret;
		const db = connect(server.schema(), bad.toString());
		const e = await rejectsWith(
			db.store("cwd", "x").load(),
			"unavailable",
			/unavailable: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres refused the credentials .*the next call reconnects by itself/,
		);
		for (const text of [e.message, String(e), inspect(e, { depth: 5 }), JSON.stringify(e), e.stack ?? ""]) assert.ok(!text.includes(secret), text);
		const status = await db.store("cwd", "x").status();
		assert.ok(status.error !== undefined && !status.error.includes(secret));
		assert.ok(!JSON.stringify(status).includes(secret));
	});

	it("an unreachable server is reported unavailable without the password (also one given as a query parameter)", async () => {
		const secret = "another-Secret-77";
		const url = `postgres://app:${secret}@127.0.0.1:1/memory?password=${secret}&sslmode=disable`;
		const e = await rejectsWith(
			connect(server.schema(), url).store("cwd", "x").load(),
			"unavailable",
			/unavailable: PostgreSQL at postgres:\/\/app@127\.0\.0\.1:1\/memory\?password=\*\*\*&sslmode=disable cannot be reached/,
		);
		assert.ok(!inspect(e, { depth: 5 }).includes(secret));
	});

	it("redaction law: no password survives redactUrl or the scrubber", () => {
		assertProperty(
			fc.property(fc.stringMatching(/^[A-Za-z0-9_.~!$%@:/-]{1,24}$/), fc.string({ maxLength: 40 }), (password, around) => {
				const url = `postgres://user:${encodeURIComponent(password)}@db.example.com:5432/memory`;
				const shown = redactUrl(url);
				assert.ok(!shown.includes(`:${encodeURIComponent(password)}@`));
				assert.ok(shown.startsWith("postgres://user@db.example.com:5432/memory"));
				const scrubbed = scrubber(url)(`${around}${password}${around}${url}`);
				assert.ok(!scrubbed.includes(password), scrubbed);
			}),
		);
	});
});
