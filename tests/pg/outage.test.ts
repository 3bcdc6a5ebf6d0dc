/**
 * Outages with a real server: stopped the way `pg_ctl stop -m immediate` stops it and started
 * again, the same store object reports the owner unavailable (nothing written), then recovers
 * by itself. A connection cut while COMMIT is in flight (through a loopback proxy that drops the
 * client's side) is resolved by the transition id: committed, or not, and the caller is told which.
 * Always an embedded server: a system PostgreSQL cannot be stopped by a test.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect as tcpConnect, createServer } from "node:net";
import type { Server, Socket } from "node:net";
import { isStateError } from "../../lib/core/errors.js";
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory, PlanePatch } from "../../lib/core/types.js";
import { PgDatabase } from "../../lib/storage/pg/database.js";
import type { SharedOwner } from "../../lib/core/types.js";
import type { PgDatabaseOptions } from "../../lib/storage/pg/database.js";
import type { PgOwnerStore } from "../../lib/storage/pg/owner-store.js";
import { serverForFile, startEmbeddedPostgres } from "../helpers/pg-server.js";

const server = serverForFile(startEmbeddedPostgres);

const by = { kind: "system", reason: "outage-test" } as const;

function write(db: PgDatabase, store: PgOwnerStore, patch: PlanePatch, id: string): Promise<unknown> {
	return db.commitTogether([store], ([h]) => {
		const r = stage({ [store.owner]: h as OwnerHistory }, { [store.owner]: patch }, { id, at: "2026-12-01T00:00:00.000Z", by });
		return { records: [r.noop ? undefined : r.records[store.owner]], value: undefined };
	});
}

/** One owner's store on a fresh connection pool, closed after `fn` whether it returns or throws. */
async function withStore(
	options: PgDatabaseOptions,
	kind: SharedOwner,
	key: string,
	fn: (db: PgDatabase, store: PgOwnerStore) => Promise<void>,
): Promise<void> {
	const db = new PgDatabase(options);
	try {
		await fn(db, db.store(kind, key));
	} finally {
		await db.close();
	}
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
	try {
		await p;
	} catch (e) {
		assert.ok(isStateError(e), String(e));
		return { code: e.code, message: e.message };
	}
	assert.fail("expected a refusal");
}

describe("PostgreSQL outages", () => {
	it("server stopped (immediate) and restarted: a clear error, nothing written, then recovery with the same store object", async () => {
		await withStore({ url: server.url, schema: "outage", connectTimeoutMs: 2_000 }, "cwd", "acme/api", async (db, store) => {
			await write(db, store, { tactics: { before: 1 } }, "o1");
			await server.stopImmediate();
			const password = new URL(server.url).password;
			for (const attempt of [store.load(), write(db, store, { tactics: { during: 1 } }, "o2")]) {
				const r = await refusal(attempt);
				assert.equal(r.code, "unavailable");
				assert.match(
					r.message,
					/`cwd` owner \(project `acme\/api`\) unavailable: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres cannot be reached .*Nothing was written/,
				);
				assert.ok(!r.message.includes(password));
			}
			await server.restart();
			const h = await store.load();
			assert.equal(h.seq, 1);
			assert.deepEqual(h.state.tactics, { before: 1 });
			await write(db, store, { tactics: { after: 1 } }, "o3");
			assert.deepEqual((await store.load()).state.tactics, { before: 1, after: 1 });
			assert.equal(await store.committedSeq("o2"), undefined, "nothing of the refused commit was queued or written");
		});
	});

	it("server restarted while the store was idle: the next call replaces the dead connection by itself", async () => {
		await withStore({ url: server.url, schema: "idle_restart", connectTimeoutMs: 2_000 }, "cwd", "acme/api", async (db, store) => {
			await write(db, store, { tactics: { before: 1 } }, "i1");
			await server.stopImmediate();
			await server.restart();
			await write(db, store, { tactics: { after: 1 } }, "i2");
			const h = await store.load();
			assert.equal(h.seq, 2);
			assert.deepEqual(h.state.tactics, { before: 1, after: 1 });
		});
	});

	describe("connection lost while COMMIT is in flight", () => {
		/**
		 * A loopback proxy to the server that can cut a client right at its COMMIT, before or after
		 * passing it on, or at whatever it sends next (a kept connection that died unnoticed).
		 */
		let proxy: Server;
		let cut: "before" | "after" | "next" | undefined;
		let proxyUrl = "";
		const sockets = new Set<Socket>();
		const COMMIT = Buffer.from("COMMIT\0");

		before(async () => {
			const target = new URL(server.url);
			proxy = createServer((client) => {
				const upstream = tcpConnect(Number(target.port), target.hostname);
				for (const s of [client, upstream]) {
					sockets.add(s);
					s.on("close", () => sockets.delete(s));
					s.on("error", () => s.destroy());
				}
				upstream.on("data", (d) => client.write(d));
				client.on("data", (d: Buffer) => {
					if (cut === "next" || (cut !== undefined && d.includes(COMMIT))) {
						const mode = cut;
						cut = undefined;
						// After: the server gets COMMIT and commits; only the client loses its answer.
						if (mode === "after") upstream.write(d);
						else upstream.destroy();
						client.destroy();
						return;
					}
					upstream.write(d);
				});
				client.on("close", () => upstream.end());
				upstream.on("close", () => client.destroy());
			});
			await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
			const u = new URL(server.url);
			const addr = proxy.address();
			u.port = String(typeof addr === "object" && addr !== null ? addr.port : 0);
			proxyUrl = u.toString();
		});
		after(async () => {
			for (const s of sockets) s.destroy();
			await new Promise<void>((r) => proxy.close(() => r()));
		});

		it("a kept connection found dead at the next call is replaced, and the call succeeds (read and commit)", async () => {
			await withStore({ url: proxyUrl, schema: "kept_dead" }, "cwd", "p", async (db, store) => {
				await write(db, store, { tactics: { a: 1 } }, "k1");
				cut = "next";
				assert.equal((await store.load()).seq, 1);
				assert.equal(cut, undefined, "the proxy cut the kept connection at the read");
				cut = "next";
				await write(db, store, { tactics: { b: 2 } }, "k2");
				assert.equal(cut, undefined, "the proxy cut the kept connection at BEGIN");
				assert.deepEqual((await store.load()).state.tactics, { a: 1, b: 2 });
			});
		});

		it("cut after the server got COMMIT: the id shows it committed, and the caller gets success", async () => {
			await withStore({ url: proxyUrl, schema: "lost_after" }, "cwd", "p", async (db, store) => {
				await write(db, store, { tactics: { a: 1 } }, "l1");
				cut = "after";
				await write(db, store, { tactics: { b: 2 } }, "l2");
				assert.equal(cut, undefined, "the proxy cut the connection at COMMIT");
				assert.equal(await store.committedSeq("l2"), 2);
				assert.deepEqual((await store.load()).state.tactics, { a: 1, b: 2 });
			});
		});

		it("cut after COMMIT of a new owner's first transition (its owner row is new too): committed", async () => {
			await withStore({ url: proxyUrl, schema: "lost_first" }, "global", "alice", async (db, store) => {
				// Connect first (that creates the schema, with a COMMIT of its own); the owner does not exist yet.
				assert.equal((await store.load()).seq, 0);
				cut = "after";
				await write(db, store, { lazy: { first: true } }, "f1");
				assert.equal(cut, undefined, "the proxy cut the connection at COMMIT");
				assert.equal((await store.load()).seq, 1);
			});
		});

		it("cut before the server got COMMIT: the id shows it did not commit, and the caller is told exactly that", async () => {
			await withStore({ url: proxyUrl, schema: "lost_before" }, "cwd", "p", async (db, store) => {
				await write(db, store, { tactics: { a: 1 } }, "m1");
				cut = "before";
				const r = await refusal(write(db, store, { tactics: { b: 2 } }, "m2"));
				assert.equal(cut, undefined, "the proxy cut the connection at COMMIT");
				assert.equal(r.code, "unavailable");
				assert.match(r.message, /lost while committing transition `m2`; it was NOT committed \(checked after reconnecting\)/);
				assert.equal(await store.committedSeq("m2"), undefined);
				const h = await store.load();
				assert.equal(h.seq, 1);
				assert.deepEqual(h.state.tactics, { a: 1 });
			});
		});
	});
});
