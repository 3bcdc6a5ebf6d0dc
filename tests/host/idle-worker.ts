/**
 * A process that uses a shared owner and then simply has nothing left to do, as pi's print
 * mode does after its answer: it must exit by itself although its database connection stays
 * open (nothing calls `closeDatabases`), and closing it at the end is awaited to the end
 * (nothing else keeps the process alive meanwhile). Args: agentDir cwd url schema [close].
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { closeDatabases } from "../../lib/storage/pg/placed.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";

const [agentDir, cwd, url, schema, close] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const config = { database: url, databaseSchema: schema, links: { [realOrSelf(cwd)]: "idle/project" } };
const stores = openStoresAt({ agentDir, cwd, placement: placementFor(config, cwd, {}) });
await stores.commit({ cwd: { intents: { idle: "written" } } }, { id: "idle-1", at: "2026-11-30T00:00:00.000Z", by: { kind: "system", reason: "idle worker" } });
const h = await stores.load("cwd");
process.stdout.write(`loaded seq ${h.seq}\n`);
if (close === "close") {
	await closeDatabases();
	process.stdout.write("closed\n");
}
