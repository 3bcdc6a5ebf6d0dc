/**
 * The Session owner on pi's real SessionManager (in-memory and file-backed): transitions
 * are custom entries on the current branch, so forks, branched session files and tree
 * navigation each see their own Session state; the response plane is not a transition.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { readFileSync, writeFileSync } from "node:fs";
import { isStateError } from "../../lib/core/errors.js";
import { replay } from "../../lib/core/history.js";
import type { CanonicalPatch } from "../../lib/core/types.js";
import { RESPONSE_ENTRY, TRANSITION_ENTRY } from "../../lib/storage/session/store.js";
import { hostSessionLog } from "../helpers/session-log.js";
import type { Stores } from "../../lib/storage/stores.js";
import { tempDir } from "../helpers/temp-dir.js";
import { withAssistant } from "./children/pi-session.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("s", "2026-11-30T00:00:00.000Z", by);

function storesFor(dir: string, sm: SessionManager, retention?: number): Stores {
	return openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), session: hostSessionLog(sm), ...(retention === undefined ? {} : { retention }) });
}

describe("session store on pi's SessionManager", () => {
	it("keeps an in-memory session's state in memory only, as custom entries on the branch", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.inMemory(dir);
		const s = storesFor(dir, sm);
		await s.commit({ session: { tactics: { a: 1 } } }, meta());
		await s.commit({ session: { tactics: { b: 2 } } }, meta());
		assert.deepEqual((await s.load("session")).state.tactics, { a: 1, b: 2 });
		const entries = sm.getBranch().filter((e) => e.type === "custom");
		assert.deepEqual(
			entries.map((e) => (e as { customType: string }).customType),
			[TRANSITION_ENTRY, TRANSITION_ENTRY],
		);
		assert.equal(sm.getSessionFile() === undefined || !sm.isPersisted(), true);
		assert.equal((await storesFor(dir, sm).load("session")).seq, 2, "a rebuilt view of the same session sees its entries");
	});

	it("rebuilds a file-backed session's state after reopening the file", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
		withAssistant(sm);
		const s = storesFor(dir, sm, 1);
		await s.commit({ session: { intents: { goal: "ship" }, tactics: { a: 1 } } }, meta());
		await s.commit({ session: { tactics: { a: null, b: 2 } } }, meta());
		const file = sm.getSessionFile() as string;
		assert.match(readFileSync(file, "utf8"), /state-flow\/transition/);
		const reopened = storesFor(dir, SessionManager.open(file, join(dir, "sessions")), 1);
		const h = await reopened.load("session");
		assert.deepEqual(h.state, { intents: { goal: "ship" }, strategy: {}, tactics: { b: 2 }, artifacts: {}, lazy: {} });
		assert.equal(h.seq, 2);
		assert.equal(h.tail.length, 1, "retention applies to the rebuilt history");
		assert.deepEqual(replay(h.checkpoint, h.tail), h.state);
	});

	it("refuses a Session entry whose record was edited in the session file (integrity check), without writing", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
		withAssistant(sm);
		const s = storesFor(dir, sm);
		await s.commit({ session: { tactics: { price: 100 } } }, meta());
		const file = sm.getSessionFile() as string;
		const text = readFileSync(file, "utf8");
		assert.ok(text.includes('"price":100'));
		writeFileSync(file, text.replace('"price":100', '"price":999'));
		const reopened = storesFor(dir, SessionManager.open(file, join(dir, "sessions")));
		await assert.rejects(
			reopened.load("session"),
			(e: unknown) => isStateError(e) && e.code === "corrupt" && /integrity check/.test(e.message) && e.message.includes(sm.getSessionId()),
		);
		await assert.rejects(reopened.commit({ session: { tactics: { more: 1 } } }, meta()), /integrity check/);
		assert.equal(readFileSync(file, "utf8"), text.replace('"price":100', '"price":999'), "nothing was appended");
	});

	it("gives every branch of the tree its own Session state (branch + resetSession)", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.inMemory(dir);
		const s = storesFor(dir, sm);
		await s.commit({ session: { tactics: { a: 1 } } }, meta());
		const forkPoint = sm.getLeafId() as string;
		await s.commit({ session: { tactics: { b: 2 } } }, meta());
		const leafB = sm.getLeafId() as string;
		sm.branch(forkPoint);
		s.resetSession(hostSessionLog(sm));
		assert.deepEqual((await s.load("session")).state.tactics, { a: 1 }, "the fork does not see the later transition");
		await s.commit({ session: { tactics: { c: 3 } } }, meta());
		assert.deepEqual((await s.load("session")).state.tactics, { a: 1, c: 3 });
		assert.equal((await s.load("session")).seq, 2, "seq continues along the branch");
		sm.branch(leafB);
		s.resetSession(hostSessionLog(sm));
		assert.deepEqual((await s.load("session")).state.tactics, { a: 1, b: 2 }, "navigating back restores the other branch");
	});

	it("carries the branch's Session state into a branched session file (fork)", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
		withAssistant(sm);
		const s = storesFor(dir, sm);
		await s.commit({ session: { tactics: { a: 1 } } }, meta());
		const forkLeaf = sm.getLeafId() as string;
		await s.commit({ session: { tactics: { b: 2 } } }, meta());
		const forkFile = sm.createBranchedSession(forkLeaf) as string;
		assert.ok(forkFile);
		const forked = storesFor(dir, SessionManager.open(forkFile, join(dir, "sessions")));
		assert.deepEqual((await forked.load("session")).state.tactics, { a: 1 });
		await forked.commit({ session: { tactics: { f: 1 } } }, meta());
		assert.deepEqual((await forked.load("session")).state.tactics, { a: 1, f: 1 });
	});

	it("stores the response plane as its own entry type, not as a transition", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.inMemory(dir);
		const s = storesFor(dir, sm);
		assert.equal(s.response(), undefined);
		s.setResponse("final answer", "2026-11-30T01:00:00.000Z");
		assert.deepEqual(s.response(), { last: { text: "final answer", at: "2026-11-30T01:00:00.000Z" } });
		assert.equal((await s.load("session")).seq, 0);
		assert.equal(sm.getBranch().filter((e) => e.type === "custom" && (e as { customType: string }).customType === RESPONSE_ENTRY).length, 1);
		const rebuilt = storesFor(dir, sm);
		assert.deepEqual(rebuilt.response(), { last: { text: "final answer", at: "2026-11-30T01:00:00.000Z" } });
	});

	it("commits Session together with CWD and Global atomically (journal for a persistent session)", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
		withAssistant(sm);
		const s = storesFor(dir, sm);
		const r = await s.commit({ global: { tactics: { g: 1 } }, cwd: { tactics: { c: 1 } }, session: { tactics: { s: 1 } } }, meta());
		assert.equal(r.noop, false);
		if (!r.noop) assert.deepEqual(Object.keys(r.records).sort(), ["cwd", "global", "session"]);
		const reopened = storesFor(dir, SessionManager.open(sm.getSessionFile() as string, join(dir, "sessions")));
		for (const o of ["global", "cwd", "session"] as const) assert.equal((await reopened.load(o)).tail.at(-1)?.id, r.noop ? "" : r.transitionId);
	});

	it("reports a damaged transition entry as corrupt naming the session and what to do, at access and not at start-up; Global still works", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.inMemory(dir);
		sm.appendCustomEntry(TRANSITION_ENTRY, { v: 1, id: "x" });
		const s = storesFor(dir, sm);
		const isSessionDamage = (e: unknown) =>
			isStateError(e) &&
			e.code === "corrupt" &&
			e.message.includes(`pi session \`${sm.getSessionId()}\``) &&
			/\/tree/.test(e.message) &&
			/nothing was written/.test(e.message) &&
			!/state-flow doctor/.test(e.message);
		await assert.rejects(s.load("session"), isSessionDamage);
		const entries = sm.getEntries().length;
		await assert.rejects(s.commit({ session: { tactics: { a: 1 } } }, meta()), isSessionDamage);
		assert.equal(sm.getEntries().length, entries, "nothing was appended to the damaged session");
		await s.commit({ global: { tactics: { g: 1 } } }, meta());
		assert.equal((await s.load("global")).state.tactics.g, 1, "Global works from the same stores");
	});
});

describe("in-process commit ordering", () => {
	it("serialises concurrent Session commits whose prepare hook awaits (no duplicate seq)", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.inMemory(dir);
		const s = storesFor(dir, sm);
		// The hook yields a whole event-loop turn (no timer): unserialised commits would all be inside it at once.
		let inside = 0;
		let most = 0;
		const slow = async (patch: CanonicalPatch) => {
			most = Math.max(most, ++inside);
			await new Promise((r) => setImmediate(r));
			inside--;
			return { patch, apply: () => {}, revert: () => {} };
		};
		await Promise.all(Array.from({ length: 5 }, (_, i) => s.commit({ session: { tactics: { [`k${i}`]: i } } }, { ...meta(), prepare: slow })));
		assert.equal(most, 1, "one prepare hook at a time");
		const h = await storesFor(dir, sm).load("session");
		assert.equal(h.seq, 5);
		assert.deepEqual(Object.keys(h.state.tactics).sort(), ["k0", "k1", "k2", "k3", "k4"]);
	});
});
