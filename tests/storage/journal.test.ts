/**
 * The journal as commit point, tested in-process: a journal left by a writer that died
 * after writing it is completed by the next access of any owner it names (also another
 * project's CWD store), the Session part when that session is loaded, and a damaged
 * journal is reported rather than guessed at.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import type { TransitionRecord } from "../../lib/core/types.js";
import { JournalDir } from "../../lib/storage/file/journal.js";
import type { SessionLog } from "../../lib/storage/session/store.js";
import { leaveJournal } from "../helpers/journal.js";
import { tempDir } from "../helpers/temp-dir.js";

const by = { kind: "system", reason: "test" } as const;

function memorySession(id: string, persistent = true): SessionLog & { entries: Array<{ id: string; type: string; customType?: string; data?: unknown }> } {
	const entries: Array<{ id: string; type: string; customType?: string; data?: unknown }> = [];
	return {
		entries,
		sessionId: () => id,
		persistent: () => persistent,
		branch: () => entries,
		append: (customType, data) => void entries.push({ id: `e${entries.length}`, type: "custom", customType, data }),
	};
}

/** A Global + CWD store (CWD at `dir/<project>`) with one commit, and a second transition left as a journal only. */
async function journaledPair(dir: string, project: string): Promise<string> {
	const agentDir = join(dir, "agent");
	const writer = openStoresAt({ agentDir, cwd: join(dir, project) });
	await writer.commit({ global: { tactics: { g0: 0 } }, cwd: { tactics: { c0: 0 } } }, { by, id: "first", at: "x" });
	await leaveJournal(writer, join(agentDir, "state-flow", "journal"), { global: { tactics: { g1: 1 } }, cwd: { tactics: { c1: 1 } } }, "second");
	return agentDir;
}

describe("journal roll-forward", () => {
	it("completes a journaled Global + CWD transition at the next load of either owner and removes the journal", async (t) => {
		const dir = tempDir(t);
		const agentDir = await journaledPair(dir, "proj");
		const reader = openStoresAt({ agentDir, cwd: join(dir, "proj") });
		assert.equal((await reader.load("global")).state.tactics.g1, 1);
		assert.equal((await openStoresAt({ agentDir, cwd: join(dir, "proj") }).load("cwd")).state.tactics.c1, 1, "the CWD part was completed with the Global load");
		assert.deepEqual(readdirSync(join(agentDir, "state-flow", "journal")), []);
		assert.equal((await reader.load("cwd")).seq, 2);
		await reader.commit({ cwd: { tactics: { c2: 2 } } }, { by, id: "third", at: "x" });
		assert.equal((await reader.load("cwd")).seq, 3, "the next commit continues after the rolled-forward seq");
	});

	it("a read of several owners at once completes the pending journal before answering any of them, and answers from one look once none is left", async (t) => {
		const dir = tempDir(t);
		const agentDir = await journaledPair(dir, "proj");
		const reader = openStoresAt({ agentDir, cwd: join(dir, "proj") });
		const first = await reader.loadEach(["cwd", "global"]);
		const states = first.map((r) => ("history" in r ? [r.history.seq, r.history.state.tactics] : r.error));
		assert.deepEqual(states, [
			[2, { c0: 0, c1: 1 }],
			[2, { g0: 0, g1: 1 }],
		]);
		assert.deepEqual(readdirSync(join(agentDir, "state-flow", "journal")), []);
		// Another process's journal left after that: the next combined read completes it as well.
		const writer = openStoresAt({ agentDir, cwd: join(dir, "proj") });
		await leaveJournal(writer, join(agentDir, "state-flow", "journal"), { global: { tactics: { g2: 2 } }, cwd: { tactics: { c2: 2 } } }, "third");
		const again = await reader.loadEach(["global", "cwd"]);
		assert.deepEqual(
			again.map((r) => ("history" in r ? r.history.seq : r.error)),
			[3, 3],
		);
	});

	it("two Stores of one process reading at once both see the journaled transition", async (t) => {
		const dir = tempDir(t);
		const agentDir = await journaledPair(dir, "proj");
		const open = () => openStoresAt({ agentDir, cwd: join(dir, "proj") });
		const [a, b] = [open(), open()];
		const [ha, hb] = await Promise.all([a.load("cwd"), b.load("cwd")]);
		assert.deepEqual([ha.seq, ha.state.tactics.c1, hb.seq, hb.state.tactics.c1], [2, 1, 2, 1]);
	});

	it("completes the CWD part of another project when a Global-only process loads Global", async (t) => {
		const dir = tempDir(t);
		const agentDir = await journaledPair(dir, "other-project");
		const here = openStoresAt({ agentDir, cwd: join(dir, "this-project") });
		assert.equal((await here.load("global")).state.tactics.g1, 1);
		assert.equal(existsSync(join(dir, "this-project", ".pi")), false, "nothing is created for this project");
		const otherAgain = openStoresAt({ agentDir, cwd: join(dir, "other-project") });
		assert.deepEqual((await otherAgain.load("cwd")).state.tactics, { c0: 0, c1: 1 });
	});

	it("keeps the journal until its session is loaded again, then completes the Session part", async (t) => {
		const dir = tempDir(t);
		const agentDir = join(dir, "agent");
		const session = memorySession("sess-1");
		const writer = openStoresAt({ agentDir, cwd: join(dir, "proj"), session });
		await writer.commit({ cwd: { tactics: { c0: 0 } } }, { by, id: "first", at: "x" });
		await leaveJournal(writer, join(agentDir, "state-flow", "journal"), { cwd: { tactics: { c: 1 } }, session: { tactics: { s: 1 } } }, "tx", "sess-1");
		const stranger = openStoresAt({ agentDir, cwd: join(dir, "proj"), session: memorySession("sess-2") });
		assert.equal((await stranger.load("cwd")).state.tactics.c, 1);
		assert.equal((await stranger.load("session")).state.tactics.s, undefined, "another session never receives the part");
		assert.equal(readdirSync(join(agentDir, "state-flow", "journal")).length, 1, "the journal waits for its session");
		const resumed = openStoresAt({ agentDir, cwd: join(dir, "proj"), session });
		assert.equal((await resumed.load("session")).state.tactics.s, 1);
		assert.equal(session.entries.length, 1);
		assert.deepEqual(readdirSync(join(agentDir, "state-flow", "journal")), []);
	});

	it("lists journals through a cache validated by the folder's stat, ignoring temp files", (t) => {
		const dir = join(tempDir(t), "journal");
		const j = new JournalDir(dir);
		assert.deepEqual(j.pending(), [], "a missing folder means nothing pending and is not created");
		assert.equal(existsSync(dir), false);
		mkdirSync(dir);
		writeFileSync(join(dir, "x.json.tmp-1-ab"), "half");
		assert.deepEqual(j.pending(), []);
		const record: TransitionRecord = { id: "x", at: "t", seq: 1, by, patch: {}, undo: {}, cascades: [], owners: ["global", "cwd"] };
		j.write({
			id: "x",
			parts: [
				{ owner: "global", root: "/g", record },
				{ owner: "cwd", root: "/c", record },
			],
		});
		assert.deepEqual(
			j.pending().map((p) => p.id),
			["x"],
		);
		j.remove("x");
		assert.deepEqual(j.pending(), []);
	});

	it("never trusts a listing taken in the same timestamp tick as the folder's last change (coarse folder mtimes)", (t) => {
		const dir = join(tempDir(t), "journal");
		mkdirSync(dir);
		// A coarse clock: the folder's mtime is the same before and after a journal appears.
		const tick = new Date(Math.floor(Date.now()));
		utimesSync(dir, tick, tick);
		const j = new JournalDir(dir);
		assert.deepEqual(j.pending(), []);
		const record: TransitionRecord = { id: "y", at: "t", seq: 1, by, patch: {}, undo: {}, cascades: [], owners: ["global", "cwd"] };
		new JournalDir(dir).write({
			id: "y",
			parts: [
				{ owner: "global", root: "/g", record },
				{ owner: "cwd", root: "/c", record },
			],
		});
		utimesSync(dir, tick, tick);
		assert.deepEqual(
			j.pending().map((p) => p.id),
			["y"],
			"a journal written in the same tick is seen",
		);
	});

	it("reports a damaged journal as corrupt naming the file and what to do, for every owner, writing nothing", async (t) => {
		const dir = tempDir(t);
		const agentDir = join(dir, "agent");
		const jdir = join(agentDir, "state-flow", "journal");
		mkdirSync(jdir, { recursive: true });
		writeFileSync(join(jdir, "bad.json"), "{not json");
		const s = openStoresAt({ agentDir, cwd: join(dir, "proj"), session: memorySession("sess-1") });
		const isJournalDamage = (e: unknown) =>
			isStateError(e) &&
			e.code === "corrupt" &&
			e.message.includes(`\`${join(jdir, "bad.json")}\``) &&
			/state-flow doctor/.test(e.message) &&
			/move it out of its folder/.test(e.message) &&
			!/start this owner afresh/.test(e.message);
		await assert.rejects(s.load("cwd"), isJournalDamage);
		await assert.rejects(s.load("session"), isJournalDamage, "the Session owner reports the journal too, not a missing session");
		const both = await s.loadEach(["cwd", "session"]);
		assert.equal(both.length, 2);
		for (const r of both) assert.ok("error" in r && isJournalDamage(r.error), "a read of several owners reports it for each");
		await assert.rejects(s.commit({ global: { tactics: { g: 1 } } }, { by, id: "g", at: "x" }), isJournalDamage);
		assert.equal(existsSync(join(agentDir, "state-flow", "global")), false, "nothing was written");
	});

	it("completes a pending Session part at the next read or write of that Session, also in the process that holds it", async (t) => {
		const dir = tempDir(t);
		const agentDir = join(dir, "agent");
		const session = memorySession("sess-1");
		const s = openStoresAt({ agentDir, cwd: join(dir, "proj"), session });
		await s.commit({ cwd: { tactics: { c0: 0 } } }, { by, id: "first", at: "x" });
		// This process's own commit failed after its commit point (e.g. pi could not append the entry).
		await leaveJournal(s, join(agentDir, "state-flow", "journal"), { cwd: { tactics: { c: 1 } }, session: { tactics: { s: 1 } } }, "tx", "sess-1");
		assert.equal((await s.load("session")).state.tactics.s, 1, "a read of the Session rolls its part forward");
		assert.deepEqual(readdirSync(join(agentDir, "state-flow", "journal")), []);
		await leaveJournal(s, join(agentDir, "state-flow", "journal"), { cwd: { tactics: { c: 2 } }, session: { tactics: { s: 2 } } }, "tx2", "sess-1");
		await s.commit({ session: { tactics: { after: 1 } } }, { by, id: "after", at: "x" });
		const h = await s.load("session");
		assert.deepEqual(
			h.tail.map((r) => r.id),
			["tx", "tx2", "after"],
			"the commit continues after the journaled transition instead of taking its seq",
		);
		assert.deepEqual(readdirSync(join(agentDir, "state-flow", "journal")), []);
	});

	it("completes the remaining owners when a store named in the journal was deleted since, without recreating it", async (t) => {
		const dir = tempDir(t);
		const agentDir = await journaledPair(dir, "deleted-project");
		const gone = join(dir, "deleted-project");
		rmSync(gone, { recursive: true });
		const here = openStoresAt({ agentDir, cwd: join(dir, "this-project") });
		assert.equal((await here.load("global")).state.tactics.g1, 1);
		assert.equal(existsSync(gone), false, "the deleted store is not recreated");
		assert.deepEqual(readdirSync(join(agentDir, "state-flow", "journal")), []);
	});
});
