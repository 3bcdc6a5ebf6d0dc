/**
 * Crash-test writer: commits `count` transitions with ids `<tag>-<i>`; most touch Global,
 * CWD and Session together, every third only CWD. The parent sets STATE_FLOW_FAULT to
 * die at a fault point, or SIGKILLs it at a random moment after "ready".
 * argv: agentDir cwd sessionFile tag count retention
 */
import { openStoresAt } from "../../../lib/storage/open.js";
import { jsonlSession } from "./jsonl-session.js";

const [agentDir, cwd, sessionFile, tag, countText, retentionText] = process.argv.slice(2) as [string, string, string, string, string, string];
const stores = openStoresAt({ agentDir, cwd, session: jsonlSession(sessionFile), retention: Number(retentionText) });
process.stdout.write("ready\n");
const by = { kind: "system", reason: "crash-test" } as const;
for (let i = 0; i < Number(countText); i++) {
	const id = `${tag}-${i}`;
	const entry = { tactics: { [id]: i } };
	const patch = i % 3 === 2 ? { cwd: entry } : { global: entry, cwd: entry, session: entry };
	await stores.commit(patch, { by, id, at: new Date().toISOString() });
}
process.stdout.write("done\n");
