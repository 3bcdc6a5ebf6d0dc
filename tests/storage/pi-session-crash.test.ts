/**
 * Roll-forward of the Session part on pi's real file-backed SessionManager: a writer killed
 * after the commit point (the journal) has its transition completed in Global, CWD and the
 * session file when that session is next loaded; killed before it, the transition is absent.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { hostSessionLog } from "../helpers/session-log.js";
import { tempDir } from "../helpers/temp-dir.js";
import { withAssistant } from "./children/pi-session.js";
import { runChild } from "./children/spawn.js";

function newSessionFile(cwd: string, sessionDir: string): string {
	const sm = SessionManager.create(cwd, sessionDir);
	withAssistant(sm);
	return sm.getSessionFile() as string;
}

describe("crash roll-forward with pi's file-backed session", () => {
	// [fault point, is the killed transition committed?]
	const cases: Array<[string, boolean]> = [
		["mid-journal@2", false],
		["after-journal@2", true],
		["after-append-global@2", true],
		["after-append-cwd@2", true],
		["after-append-session@2", true],
	];
	for (const [fault, committed] of cases) {
		it(`${fault}: the second transition is ${committed ? "completed in every owner" : "absent from every owner"} at the next load`, async (t) => {
			const dir = tempDir(t);
			const agentDir = join(dir, "agent");
			const cwd = join(dir, "proj");
			const sessionDir = join(dir, "sessions");
			const file = newSessionFile(cwd, sessionDir);
			const res = await runChild("pi-session-child", [agentDir, cwd, file, sessionDir, "t", "3"], { STATE_FLOW_FAULT: fault }).done;
			assert.equal(res.signal, "SIGKILL", `the child was not killed: ${res.stderr}`);
			const open = () => openStoresAt({ agentDir, cwd, session: hostSessionLog(SessionManager.open(file, sessionDir)) });
			const s = open();
			for (const o of ["global", "cwd", "session"] as const) {
				const tactics = (await s.load(o)).state.tactics;
				assert.equal(tactics["t-0"], 0, `${o} lost the first transition`);
				assert.equal(tactics["t-1"] !== undefined, committed, `${o}: second transition presence`);
				assert.equal(tactics["t-2"], undefined);
			}
			const journal = join(agentDir, "state-flow", "journal");
			assert.deepEqual(existsSync(journal) ? readdirSync(journal).filter((n) => n.endsWith(".json")) : [], []);
			// The roll-forward reached the session file itself: a fresh open sees it without any journal.
			const again = open();
			assert.equal((await again.load("session")).state.tactics["t-1"] !== undefined, committed);
			assert.equal((await again.load("session")).seq, committed ? 2 : 1);
		});
	}
});
