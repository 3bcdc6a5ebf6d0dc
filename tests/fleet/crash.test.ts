/**
 * A real pi session process killed (SIGKILL, `STATE_FLOW_FAULT`) inside `patch_state` at each
 * point of the database commit path, alone and mixed with the Global file owner and the
 * Session (pi's session file): every transition is whole or absent in every owner. Checked
 * by resuming the killed session from its session file in a fresh pi process (which completes
 * or drops the journal by asking the database), and from the stores in this process.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import type { Owner, OwnerHistory } from "../../lib/core/types.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { storePaths } from "../../lib/storage/project/paths.js";
import type { Stores } from "../../lib/storage/stores.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { hostSessionLog } from "../helpers/session-log.js";
import { withAssistant } from "../storage/children/pi-session.js";
import { type Machine, machine, ok, startPi } from "./fleet.js";
import { within } from "../helpers/soon.js";

const server = serverForFile(testDatabase);

const ALL: Owner[] = ["global", "cwd", "session"];

/** The machine's stores as a fresh process sees them, the Session read from the session file. */
function storesOf(m: Machine, sessionFile: string): Stores {
	const sm = SessionManager.open(sessionFile, m.sessionDir);
	return openStoresAt({ agentDir: m.agentDir, cwd: m.cwd, placement: placementFor(m.config, m.cwd, {}), session: hostSessionLog(sm) });
}

/** How many retained transitions of an owner set this tactic (a roll-forward applied twice shows as 2). */
function writesOf(h: OwnerHistory, key: string): number {
	return h.tail.filter((r) => r.patch.tactics !== undefined && Object.hasOwn(r.patch.tactics as object, key)).length;
}

/** A session file on disk (pi writes it once an assistant replied) with one transition over `owners` before the crash. */
async function sessionWithHistory(m: Machine, owners: readonly Owner[]): Promise<string> {
	const sm = SessionManager.create(m.cwd, m.sessionDir);
	withAssistant(sm);
	const file = sm.getSessionFile() as string;
	const stores = openStoresAt({ agentDir: m.agentDir, cwd: m.cwd, placement: placementFor(m.config, m.cwd, {}), session: hostSessionLog(sm) });
	const entry = { tactics: { before: "kept" } };
	await stores.commit(Object.fromEntries(owners.map((o) => [o, entry])), {
		id: "setup-1",
		at: "2026-12-01T00:00:00.000Z",
		by: { kind: "system", reason: "fleet-crash-setup" },
	});
	return file;
}

interface Case {
	point: string;
	/** The owners the killed transition touches. */
	owners: Owner[];
	/** Global lives in the database too (the user's shared Global), not in this machine's files. */
	shareGlobal?: boolean;
	committed: boolean;
}

const cases: Case[] = [
	// The database alone: its COMMIT is the commit point.
	{ point: "pg-after-lock", owners: ["cwd"], committed: false },
	{ point: "pg-before-commit", owners: ["cwd"], committed: false },
	{ point: "pg-after-commit", owners: ["cwd"], committed: true },
	// Two owners in the database: one SQL transaction.
	{ point: "pg-before-commit", owners: ["global", "cwd"], shareGlobal: true, committed: false },
	{ point: "pg-after-commit", owners: ["global", "cwd"], shareGlobal: true, committed: true },
	// Mixed with the Global file and the Session: the journal is written right before COMMIT.
	{ point: "pg-after-lock", owners: ALL, committed: false },
	{ point: "after-journal", owners: ALL, committed: false },
	{ point: "pg-before-commit", owners: ALL, committed: false },
	{ point: "pg-after-commit", owners: ALL, committed: true },
	{ point: "after-append-global", owners: ALL, committed: true },
	{ point: "after-append-session", owners: ALL, committed: true },
	// Two database owners and the Session.
	{ point: "pg-after-commit", owners: ALL, shareGlobal: true, committed: true },
];

function describeCase(c: Case): string {
	return c.owners.map((o) => (o === "session" ? "Session" : o === "cwd" || c.shareGlobal ? `${o} (database)` : `${o} (file)`)).join(" + ");
}

describe("pi killed inside patch_state on the database commit path", { concurrency: 2 }, () => {
	for (const c of cases) {
		const { point, owners, committed } = c;
		it(`${point}, ${describeCase(c)}: the transition is ${committed ? "whole" : "absent"} in every owner after resuming the session`, async (t) => {
			const m = machine(t, server.url, server.schema(), { owners: ALL, ...(c.shareGlobal ? { shareGlobal: true, user: "alice" } : {}) });
			const sessionFile = await sessionWithHistory(m, owners);
			const patch = Object.fromEntries(owners.map((o) => [o, { tactics: { crash: point } }]));

			const { pi: killed } = await startPi(t, m, { tag: "killed", fileSession: { sessionFile }, env: { STATE_FLOW_FAULT: point } });
			killed.send({ op: "prompt", text: "write it", steps: [{ calls: [{ id: "w", name: "patch_state", args: patch }] }, { text: "done" }] });
			const end = await within(killed.ended, `pi to die at ${point}`, 120_000);
			assert.equal(end.signal, "SIGKILL", `pi should die at ${point}:\n${killed.output}`);

			// The killed session resumed in a fresh pi process: what its tools read.
			const { pi } = await startPi(t, m, { tag: "resumed", fileSession: { sessionFile } });
			const reads = await pi.prompt("what is there?", [
				{ calls: ALL.map((o) => ({ id: `r-${o}`, name: "read_state", args: { path: `${o}.tactics` } })) },
				{ calls: [{ id: "after", name: "patch_state", args: Object.fromEntries(owners.map((o) => [o, { tactics: { after: 1 } }])) }] },
				{ text: "ok" },
			]);
			for (const o of owners) {
				const tactics = JSON.parse(ok(reads.results, `r-${o}`).split("\n")[0] as string) as Record<string, unknown>;
				assert.equal(tactics.before, "kept", `${o} lost the transition before the crash`);
				assert.equal(tactics.crash, committed ? point : undefined, `${o}: the killed transition at ${point}`);
			}
			ok(reads.results, "after");
			await pi.exit();

			// Each owner holds it at most once, and no journal is left behind.
			const stores = storesOf(m, sessionFile);
			assert.equal(stores.location("global").backend, c.shareGlobal ? "postgres" : "file");
			for (const o of owners) {
				const h = await stores.load(o);
				assert.equal(writesOf(h, "crash"), committed ? 1 : 0, `${o}: records of the killed transition`);
				assert.equal(writesOf(h, "after"), 1, `${o}: the write after the crash`);
			}
			const journal = storePaths(m.agentDir, m.cwd).journalDir;
			assert.deepEqual(existsSync(journal) ? readdirSync(journal).filter((f) => f.endsWith(".json")) : [], []);
		});
	}
});
