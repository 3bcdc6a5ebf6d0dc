/**
 * A process that commits one transition over a file owner (Global) and a database owner (the
 * CWD owner linked to a project), for the crash tests of the mixed commit path: run with
 * `STATE_FLOW_FAULT=<point>` it dies by SIGKILL at that point.
 * argv: agentDir cwd url schema project id
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { closeDatabases } from "../../lib/storage/pg/placed.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";

const [agentDir, cwd, url, schema, project, id] = process.argv.slice(2) as [string, string, string, string, string, string];
const placement = placementFor({ database: url, databaseSchema: schema, links: { [realOrSelf(cwd)]: project } }, cwd, {});
const stores = openStoresAt({ agentDir, cwd, placement });
await stores.commit(
	{ global: { intents: { [id]: "global part" } }, cwd: { intents: { [id]: "cwd part" } } },
	{ id, at: new Date().toISOString(), by: { kind: "system", reason: "mixed-worker" } },
);
await closeDatabases();
process.stdout.write("committed\n");
