/**
 * The owner-store port (lib/storage/port.ts) on the two local implementations: the file store
 * (Global, CWD) and the Session store over pi's real SessionManager. Each commits at an
 * expected seq, refuses a stale one as a conflict without writing, is idempotent by
 * transition id, and reports status; a second reader sees what the first wrote. The local
 * multi-owner commit undoes the stage's side effects when nothing was committed.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { newHistory } from "../../lib/core/history.js";
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory, PlanePatch, TransitionRecord } from "../../lib/core/types.js";
import { FileOwnerStore } from "../../lib/storage/file-store.js";
import { LocalOwners } from "../../lib/storage/local-owners.js";
import type { OwnerStore } from "../../lib/storage/port.js";
import { SessionStore } from "../../lib/storage/session-store.js";
import { hostSessionLog } from "../helpers/session-log.js";
import { tempDir } from "../helpers/temp-dir.js";

const by = { kind: "system", reason: "port-test" } as const;

function recordFor(store: OwnerStore, h: OwnerHistory, patch: PlanePatch, id: string): TransitionRecord {
	const r = stage({ [store.owner]: h }, { [store.owner]: patch }, { id, at: "2026-12-01T00:00:00.000Z", by });
	assert.equal(r.noop, false);
	return r.records[store.owner] as TransitionRecord;
}

interface Impl {
	name: string;
	/** A fresh store, and a second reader of the same storage. */
	open(dir: string): { store: OwnerStore; reader: () => OwnerStore; bytes: () => string };
}

const impls: Impl[] = [
	{
		name: "file store (cwd)",
		open(dir) {
			const root = join(dir, "proj", ".pi", "state-flow");
			const make = () => new FileOwnerStore({ owner: "cwd", root, retention: 20, gitignore: true });
			return { store: make(), reader: make, bytes: () => readFileSync(join(root, "log.jsonl"), "utf8") };
		},
	},
	{
		name: "Session store (pi SessionManager)",
		open(dir) {
			const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
			const make = () => new SessionStore(hostSessionLog(sm), 20);
			return { store: make(), reader: make, bytes: () => JSON.stringify(sm.getBranch().filter((e) => e.type === "custom")) };
		},
	},
];

for (const impl of impls) {
	describe(`owner-store port: ${impl.name}`, () => {
		it("commits at the expected seq; a stale seq is a conflict and writes nothing; a repeated id is `already`", async (t) => {
			const { store, reader, bytes } = impl.open(tempDir(t));
			const empty = await store.load();
			assert.equal(empty.seq, 0);
			const first = recordFor(store, empty, { tactics: { a: 1 } }, "t1");
			assert.deepEqual(await store.commit(first, 0), { kind: "committed", seq: 1 });
			assert.equal((await store.load()).seq, 1, "the commit is applied to the store's own history");
			assert.equal((await reader().load()).state.tactics.a, 1, "another reader sees it");
			const before = bytes();
			// Staged on the state before t1 (the loaded history is the store's own, already past it).
			const stale = recordFor(store, newHistory(store.owner, 20), { tactics: { b: 2 } }, "t2");
			assert.deepEqual(await store.commit(stale, 0), { kind: "conflict", seq: 1 });
			assert.deepEqual(await store.commit(first, 0), { kind: "already", seq: 1 });
			assert.equal(bytes(), before, "neither a conflict nor a retry writes anything");
			assert.equal(await store.committedSeq("t1"), 1);
			assert.equal(await store.committedSeq("t2"), undefined);
			const status = await store.status();
			assert.deepEqual([status.exists, status.seq, status.retained, status.error], [true, 1, 1, undefined]);
			assert.equal(status.bytes, (await store.load()).bytes);
			await store.close();
			assert.equal((await store.load()).seq, 1, "a closed store reopens");
		});
	});
}

describe("local multi-owner commit", () => {
	it("undoes the stage's side effects (abandon) when the write fails before the commit point, and commits nothing", async (t) => {
		const dir = tempDir(t);
		const root = join(dir, "agent", "state-flow", "global");
		const global = new FileOwnerStore({ owner: "global", root, retention: 20, gitignore: false });
		const cwd = new FileOwnerStore({ owner: "cwd", root: join(dir, "proj", ".pi", "state-flow"), retention: 20, gitignore: true });
		const local = new LocalOwners({
			files: { global, cwd },
			journalDir: join(dir, "agent", "state-flow", "journal"),
			retention: 20,
			lockTimeoutMs: 2_000,
			session: () => undefined,
		});
		let abandoned = 0;
		// Two durable owners go through a journal first; a journal file that cannot be written (its
		// name leads into a folder that does not exist) fails before the commit point.
		await assert.rejects(
			local.commitLocked([cwd, global], ([c, g]) => ({
				records: [recordFor(cwd, c as OwnerHistory, { tactics: { x: 1 } }, "no/such"), recordFor(global, g as OwnerHistory, { tactics: { x: 1 } }, "no/such")],
				value: undefined,
				abandon: () => abandoned++,
			})),
		);
		assert.equal(abandoned, 1);
		assert.deepEqual([(await global.load()).seq, (await cwd.load()).seq], [0, 0]);
		const value = await local.commitLocked([cwd, global], ([c, g]) => ({
			records: [recordFor(cwd, c as OwnerHistory, { tactics: { both: 1 } }, "both"), recordFor(global, g as OwnerHistory, { tactics: { both: 1 } }, "both")],
			value: "done",
			abandon: () => abandoned++,
		}));
		assert.equal(value, "done");
		assert.equal(abandoned, 1, "a committed stage is never abandoned");
		assert.deepEqual([(await global.load()).seq, (await cwd.load()).seq], [1, 1]);
	});
});
