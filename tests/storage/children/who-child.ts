/**
 * Writer for the who crash test: one Global + CWD transition `crash-1` as alice on `laptop`;
 * the parent sets STATE_FLOW_FAULT so it dies after its journal (the commit point).
 * argv: agentDir cwd
 */
import { openStoresAt } from "../../../lib/storage/open.js";

const [agentDir, cwd] = process.argv.slice(2) as [string, string];
const stores = openStoresAt({ agentDir, cwd, who: { user: "alice", host: "laptop" } });
process.stdout.write("ready\n");
const entry = { tactics: { t: 1 } };
await stores.commit({ global: entry, cwd: entry }, { by: { kind: "system", reason: "who-crash" }, id: "crash-1", at: new Date().toISOString() });
process.stdout.write("done\n");
