/**
 * Multi-owner writer: `count` transitions, each setting `tactics.n` to its number in Global
 * and CWD at once. Prints `ready` once the stores are open.
 * argv: agentDir cwd count [config] — `config`, a State Flow config as JSON, places the owners
 * (a database); without it both are files.
 */
import { openStoresAt } from "../../../lib/storage/open.js";
import { placementFor } from "../../../lib/storage/placement/placement.js";

const [agentDir, cwd, countText, configText] = process.argv.slice(2) as [string, string, string, string | undefined];
const placement = configText === undefined ? undefined : placementFor(JSON.parse(configText), cwd, {});
const stores = openStoresAt({ agentDir, cwd, ...(placement !== undefined ? { placement } : {}) });
const by = { kind: "system", reason: "snapshot-test" } as const;
process.stdout.write("ready\n");
for (let n = 1; n <= Number(countText); n++) {
	await stores.commit({ global: { tactics: { n } }, cwd: { tactics: { n } } }, { by, id: `pair-${n}`, at: new Date().toISOString() });
}
