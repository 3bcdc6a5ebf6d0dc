/**
 * Global and CWD file stores through the Stores facade: where files go and with which
 * modes, that reads create nothing, the fstat-validated cache, restaging on another
 * writer's commits, compaction, limits and refusals that write nothing.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { replay } from "../../lib/core/history.js";
import type { CanonicalPatch, JsonObject } from "../../lib/core/types.js";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { compactionSlack } from "../../lib/storage/owner-log.js";
import { parseRecordLine } from "../../lib/storage/format.js";
import type { Stores } from "../../lib/storage/stores.js";
import type { StoresOptions } from "../../lib/storage/stores.js";
import { tempDir } from "../helpers/temp-dir.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("t", "2026-11-30T00:00:00.000Z", by);

function open(dir: string, extra: Partial<StoresOptions> = {}): Stores {
	return openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), ...extra });
}

function logRecords(path: string) {
	return readFileSync(path, "utf8")
		.split("\n")
		.slice(0, -1)
		.map((l) => parseRecordLine(l, path, "line"));
}

describe("file stores", () => {
	it("reading never creates a file or folder", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		assert.equal((await s.load("global")).seq, 0);
		assert.equal((await s.load("cwd")).seq, 0);
		const status = await new FileOwnerStore({ owner: "cwd", root: join(dir, "proj", ".pi", "state-flow"), retention: 20, gitignore: true }).status();
		assert.deepEqual([status.exists, status.seq, status.error], [false, 0, undefined]);
		assert.deepEqual(readdirSync(dir), []);
	});

	it("creates the CWD folder with a `.gitignore` of `*` on the first write", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const root = join(dir, "proj", ".pi", "state-flow");
		assert.match(readFileSync(join(root, ".gitignore"), "utf8"), /^\*$/m);
		assert.equal(existsSync(join(dir, "agent")), false, "a CWD write must not create the Global store");
	});

	it("creates Global files 0600 and folders 0700", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ global: { intents: { g: "x" } } }, meta());
		const root = join(dir, "agent", "state-flow", "global");
		assert.equal(statSync(join(dir, "agent", "state-flow")).mode & 0o777, 0o700);
		assert.equal(statSync(root).mode & 0o777, 0o700);
		assert.equal(statSync(join(root, "log.jsonl")).mode & 0o777, 0o600);
	});

	it("creates the store afresh (with its `.gitignore`) when its folder was removed while cached, e.g. by `git clean -X`", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const root = s.identity().cwdRoot;
		rmSync(root, { recursive: true });
		await s.commit({ cwd: { tactics: { b: 2 } } }, meta());
		assert.ok(existsSync(join(root, ".gitignore")));
		const h = await open(dir).load("cwd");
		assert.deepEqual(h.state.tactics, { b: 2 });
		assert.equal(h.seq, 1);
	});

	it("writes one newline-terminated record line per commit", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		await s.commit({ cwd: { tactics: { b: 2 } } }, meta());
		const text = readFileSync(join(s.identity().cwdRoot, "log.jsonl"), "utf8");
		assert.equal(text.split("\n").length, 3);
		assert.ok(text.endsWith("\n"));
		assert.deepEqual(
			logRecords(join(s.identity().cwdRoot, "log.jsonl")).map((r) => r.seq),
			[1, 2],
		);
	});

	it("returns the cached history while the store is unchanged (no reparse)", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const h1 = await s.load("cwd");
		assert.equal(await s.load("cwd"), h1);
	});

	it("sees commits of another instance (another process's appends) by reading only the new bytes", async (t) => {
		const dir = tempDir(t);
		const a = open(dir);
		const b = open(dir);
		await a.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const hb = await b.load("cwd");
		assert.deepEqual(hb.state.tactics, { a: 1 });
		await a.commit({ cwd: { tactics: { b: 2 } } }, meta());
		const hb2 = await b.load("cwd");
		assert.equal(hb2, hb, "catch-up applies appended records to the cached history in place");
		assert.deepEqual(hb2.state.tactics, { a: 1, b: 2 });
		assert.equal(hb2.seq, 2);
	});

	it("restages on the fresh state: two writers alternating never overwrite each other", async (t) => {
		const dir = tempDir(t);
		const a = open(dir);
		const b = open(dir);
		await a.load("cwd");
		await b.load("cwd");
		for (let i = 0; i < 10; i++) {
			await a.commit({ cwd: { tactics: { [`a${i}`]: i } } }, meta());
			await b.commit({ cwd: { tactics: { [`b${i}`]: i } } }, meta());
		}
		const h = await open(dir).load("cwd");
		assert.equal(h.seq, 20);
		assert.equal(Object.keys(h.state.tactics).length, 20);
		assert.deepEqual((await b.load("cwd")).state, h.state);
	});

	it("commits Global and CWD together and both see the same transition id", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		const r = await s.commit({ global: { intents: { g: 1 } }, cwd: { tactics: { c: 1 } } }, meta());
		assert.equal(r.noop, false);
		const fresh = open(dir);
		const g = (await fresh.load("global")).tail.at(-1);
		const c = (await fresh.load("cwd")).tail.at(-1);
		assert.equal(g?.id, c?.id);
		assert.deepEqual(g?.owners, ["global", "cwd"]);
		assert.deepEqual(readdirSync(join(dir, "agent", "state-flow", "journal")), [], "the journal is removed after the commit");
	});

	it("compacts the log: checkpoint written, log holds at most R + slack records, history survives reload", async (t) => {
		const dir = tempDir(t);
		const R = 2;
		const s = open(dir, { retention: R });
		const total = R + compactionSlack(R) + 5;
		for (let i = 0; i < total; i++) await s.commit({ cwd: { tactics: { [`k${i % 7}`]: i } } }, meta());
		const root = s.identity().cwdRoot;
		assert.ok(existsSync(join(root, "checkpoint.json")));
		const records = logRecords(join(root, "log.jsonl"));
		assert.ok(records.length <= R + compactionSlack(R), `log holds ${records.length} records`);
		const h = await open(dir, { retention: R }).load("cwd");
		assert.equal(h.seq, total);
		assert.equal(h.tail.length, R);
		assert.deepEqual(h.state, (await s.load("cwd")).state);
		assert.deepEqual(replay(h.checkpoint, h.tail), h.state);
	});

	it("is a noop without writing when the patch changes nothing", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const before = readFileSync(join(s.identity().cwdRoot, "log.jsonl"));
		const r = await s.commit({ cwd: { tactics: { a: 1, missing: null } } }, meta());
		assert.equal(r.noop, true);
		assert.deepEqual(r.report.missingDeletions, ["/cwd/tactics/missing"]);
		assert.deepEqual(readFileSync(join(s.identity().cwdRoot, "log.jsonl")), before);
	});

	it("refuses a write over the size limit with nothing written and no folder created", async (t) => {
		const dir = tempDir(t);
		const s = open(dir, { limits: { maxOwnerBytes: 200, maxDepth: 64, maxKeyLength: 1024 } });
		await assert.rejects(s.commit({ cwd: { lazy: { big: "x".repeat(500) } } }, meta()), (e: unknown) => isStateError(e) && e.code === "limit");
		assert.deepEqual(readdirSync(dir), []);
		await s.commit({ cwd: { lazy: { small: "x" } } }, meta());
		const before = readFileSync(join(s.identity().cwdRoot, "log.jsonl"));
		await assert.rejects(s.commit({ cwd: { lazy: { big: "x".repeat(500) } } }, meta()), (e: unknown) => isStateError(e) && e.code === "limit");
		assert.deepEqual(readFileSync(join(s.identity().cwdRoot, "log.jsonl")), before);
		assert.equal((await s.load("cwd")).seq, 1);
	});

	it("writes nothing when the signal is aborted or the admission check refuses", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ cwd: { tactics: { a: 1 } } }, meta());
		const log = join(s.identity().cwdRoot, "log.jsonl");
		const before = readFileSync(log);
		const ac = new AbortController();
		ac.abort();
		await assert.rejects(s.commit({ cwd: { tactics: { b: 1 } } }, { ...meta(), signal: ac.signal }), (e: unknown) => isStateError(e) && e.code === "aborted");
		const check = () => {
			throw new Error("stale call");
		};
		await assert.rejects(s.commit({ cwd: { tactics: { b: 1 } } }, { ...meta(), check }), /stale call/);
		assert.deepEqual(readFileSync(log), before);
		assert.deepEqual((await s.load("cwd")).state.tactics, { a: 1 });
		assert.equal(existsSync(join(s.identity().cwdRoot, "lock")), false, "locks are released after a refusal");
	});

	it("runs prepare under the lock (once, on an existing store), stages its rewritten patch and applies its effects before the write", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		await s.commit({ cwd: { tactics: { seed: 1 } } }, meta());
		const calls: string[] = [];
		const r = await s.commit(
			{ cwd: { artifacts: { "a.md": { kind: "file" } } } },
			{
				...meta(),
				prepare: (patch) => {
					calls.push(existsSync(join(s.identity().cwdRoot, "lock")) ? "prepare-locked" : "prepare-unlocked");
					const cwd = patch.cwd as { artifacts: JsonObject };
					return {
						patch: { cwd: { artifacts: { "a.md": { ...(cwd.artifacts["a.md"] as JsonObject), size: 3 } } } },
						apply: () => calls.push("apply"),
						revert: () => calls.push("revert"),
					};
				},
			},
		);
		assert.equal(r.noop, false);
		assert.deepEqual(calls, ["prepare-locked", "apply"]);
		assert.deepEqual((await open(dir).load("cwd")).state.artifacts, { "a.md": { kind: "file", size: 3 } });
	});

	it("refuses the Session owner when no session is attached", async (t) => {
		const s = open(tempDir(t));
		await assert.rejects(s.load("session"), (e: unknown) => isStateError(e) && e.code === "excluded_owner");
		await assert.rejects(
			s.commit({ session: { tactics: { a: 1 } } } as CanonicalPatch, meta()),
			(e: unknown) => isStateError(e) && e.code === "excluded_owner",
		);
	});
	// The replay law (live = reload = replay(checkpoint, tail) = sequential application, any
	// retention) runs on files and on PostgreSQL in tests/pg/behaviour.test.ts.
});

describe("first write", () => {
	it("creates nothing when prepare refuses or the patch changes nothing", async (t) => {
		const dir = tempDir(t);
		const s = open(dir);
		const refuse = () => {
			throw new Error("invalid Skill");
		};
		await assert.rejects(s.commit({ cwd: { artifacts: { "a/SKILL.md": { kind: "skill" } } } }, { ...meta(), prepare: refuse }), /invalid Skill/);
		const r = await s.commit({ cwd: { tactics: { gone: null } } }, meta());
		assert.equal(r.noop, true);
		assert.deepEqual(readdirSync(dir), []);
	});
});
