/**
 * Crash-test writer on pi's real file-backed SessionManager: opens the session file and
 * commits `count` Global + CWD + Session transitions with ids `<tag>-<i>`.
 * argv: agentDir cwd sessionFile sessionDir tag count
 */
import { openStoresAt } from "../../../lib/storage/open.js";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { hostSessionLog } from "../../helpers/session-log.js";

const [agentDir, cwd, sessionFile, sessionDir, tag, countText] = process.argv.slice(2) as [string, string, string, string, string, string];
const sm = SessionManager.open(sessionFile, sessionDir);
const stores = openStoresAt({ agentDir, cwd, session: hostSessionLog(sm) });
process.stdout.write("ready\n");
const by = { kind: "system", reason: "crash-test" } as const;
for (let i = 0; i < Number(countText); i++) {
	const id = `${tag}-${i}`;
	const entry = { tactics: { [id]: i } };
	await stores.commit({ global: entry, cwd: entry, session: entry }, { by, id, at: new Date().toISOString() });
}
process.stdout.write("done\n");
