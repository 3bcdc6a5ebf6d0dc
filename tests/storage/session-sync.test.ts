/**
 * The Session part of a multi-owner transition is fsynced (SessionLog.sync) after it is
 * appended and before the journal is deleted; single-owner commits do not sync.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { createSessionLog } from "../../lib/host/session/session-log.js";
import { JournalDir } from "../../lib/storage/file/journal.js";
import { TRANSITION_ENTRY } from "../../lib/storage/session/store.js";
import type { SessionLog } from "../../lib/storage/session/store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { withAssistant } from "./children/pi-session.js";

const by = { kind: "system", reason: "test" } as const;

/** A persistent in-memory SessionLog that records `append` and `sync` calls and the journal files present at each. */
function recordingSession(journalDir: string): SessionLog & { calls: string[] } {
	const entries: Array<{ id: string; type: string; customType?: string; data?: unknown }> = [];
	const calls: string[] = [];
	const journals = () => (existsSync(journalDir) ? readdirSync(journalDir).filter((n) => n.endsWith(".json")).length : 0);
	return {
		calls,
		sessionId: () => "sess-1",
		persistent: () => true,
		branch: () => entries,
		append: (customType, data) => {
			entries.push({ id: `e${entries.length}`, type: "custom", customType, data });
			calls.push(`append ${customType} (journals: ${journals()})`);
		},
		sync: () => void calls.push(`sync (journals: ${journals()})`),
	};
}

function piSessionLog(sm: SessionManager): SessionLog {
	return createSessionLog(
		{ appendEntry: (t: string, d: unknown) => void sm.appendCustomEntry(t, d) } as never,
		() => ({ sessionManager: sm }) as unknown as ExtensionContext,
	);
}

describe("Session fsync before the journal is deleted", () => {
	it("syncs after the Session append and before the journal goes, only for multi-owner transitions with Session", async (t) => {
		const dir = tempDir(t);
		const agentDir = join(dir, "agent");
		const journalDir = join(agentDir, "state-flow", "journal");
		const session = recordingSession(journalDir);
		const stores = openStoresAt({ agentDir, cwd: join(dir, "proj"), session });
		await stores.commit({ session: { tactics: { a: 1 } } }, { by, id: "solo", at: "x" });
		assert.deepEqual(session.calls, [`append ${TRANSITION_ENTRY} (journals: 0)`], "a single-owner Session commit does not sync");
		session.calls.length = 0;
		await stores.commit({ global: { tactics: { g: 1 } }, cwd: { tactics: { c: 1 } } }, { by, id: "files", at: "x" });
		assert.deepEqual(session.calls, [], "a transition without Session does not sync the session");
		await stores.commit({ cwd: { tactics: { b: 2 } }, session: { tactics: { b: 2 } } }, { by, id: "multi", at: "x" });
		assert.deepEqual(session.calls, [`append ${TRANSITION_ENTRY} (journals: 1)`, "sync (journals: 1)"]);
		assert.deepEqual(
			readdirSync(journalDir).filter((n) => n.endsWith(".json")),
			[],
			"the journal is deleted after the sync",
		);
	});

	it("syncs the Session part a roll-forward appends before it deletes the journal", async (t) => {
		const dir = tempDir(t);
		const agentDir = join(dir, "agent");
		const journalDir = join(agentDir, "state-flow", "journal");
		const writer = openStoresAt({ agentDir, cwd: join(dir, "proj") });
		await writer.commit({ cwd: { tactics: { c: 0 } } }, { by, id: "first", at: "x" });
		const record = (seq: number, key: string) =>
			({
				v: 1,
				id: "left",
				at: "x",
				seq,
				by,
				patch: { tactics: { [key]: 1 } },
				undo: { tactics: { [key]: null } },
				cascades: [],
				owners: ["cwd", "session"],
			}) as never;
		new JournalDir(journalDir).write({
			id: "left",
			parts: [
				{ owner: "cwd", root: writer.identity().cwdRoot, record: record(2, "c2") },
				{ owner: "session", sessionId: "sess-1", persistent: true, record: record(1, "s") },
			],
		});
		const session = recordingSession(journalDir);
		const stores = openStoresAt({ agentDir, cwd: join(dir, "proj"), session });
		assert.equal((await stores.load("session")).state.tactics.s, 1);
		assert.deepEqual(session.calls, [`append ${TRANSITION_ENTRY} (journals: 1)`, "sync (journals: 1)"]);
		assert.equal(existsSync(join(journalDir, "left.json")), false);
	});

	it("syncs a Session part the crashed writer had already appended before a roll-forward deletes its journal", async (t) => {
		const dir = tempDir(t);
		const agentDir = join(dir, "agent");
		const journalDir = join(agentDir, "state-flow", "journal");
		const session = recordingSession(journalDir);
		const writer = openStoresAt({ agentDir, cwd: join(dir, "proj"), session });
		await writer.commit({ cwd: { tactics: { c: 1 } }, session: { tactics: { s: 1 } } }, { by, id: "both", at: "x" });
		// The writer died after both appends, before its sync and the journal's deletion.
		const last = async (o: "cwd" | "session") => (await writer.load(o)).tail.at(-1) as never;
		new JournalDir(journalDir).write({
			id: "both",
			parts: [
				{ owner: "cwd", root: writer.identity().cwdRoot, record: await last("cwd") },
				{ owner: "session", sessionId: "sess-1", persistent: true, record: await last("session") },
			],
		});
		session.calls.length = 0;
		await openStoresAt({ agentDir, cwd: join(dir, "proj"), session }).load("cwd");
		assert.deepEqual(session.calls, ["sync (journals: 1)"]);
		assert.equal(existsSync(join(journalDir, "both.json")), false);
	});

	it("pi's file-backed session: the multi-owner Session entry is in the session file once the commit returns; sync is a no-op before the file exists and in memory", async (t) => {
		const dir = tempDir(t);
		const cwd = join(dir, "proj");
		const sm = SessionManager.create(cwd, join(dir, "sessions"));
		const early = piSessionLog(sm);
		early.sync?.(); // No assistant message yet: pi has not written the file.
		assert.equal(existsSync(sm.getSessionFile() as string), false);
		withAssistant(sm);
		const stores = openStoresAt({ agentDir: join(dir, "agent"), cwd, session: piSessionLog(sm) });
		await stores.commit({ global: { tactics: { g: 1 } }, session: { tactics: { s: 1 } } }, { by, id: "both", at: "x" });
		const lines = readFileSync(sm.getSessionFile() as string, "utf8")
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l));
		assert.ok(lines.some((e) => e.type === "custom" && e.customType === TRANSITION_ENTRY && e.data.id === "both"));
		piSessionLog(SessionManager.inMemory(cwd)).sync?.();
	});
});
