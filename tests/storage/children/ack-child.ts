/**
 * Kill-test writer for compaction: commits `count` CWD-only transitions `<tag>-<i>` (tactic
 * `<tag>-<i>` = i) and prints `ack <id>` after each commit resolves, so the parent knows exactly
 * which transitions were acknowledged before it killed the process (or a fault point did).
 * argv: agentDir cwd tag count retention
 */
import { openStoresAt } from "../../../lib/storage/open.js";

const [agentDir, cwd, tag, countText, retentionText] = process.argv.slice(2) as [string, string, string, string, string];
const stores = openStoresAt({ agentDir, cwd, retention: Number(retentionText) });
process.stdout.write("ready\n");
const by = { kind: "system", reason: "compaction-kill-test" } as const;
for (let i = 0; i < Number(countText); i++) {
	const id = `${tag}-${i}`;
	await stores.commit({ cwd: { tactics: { [id]: i } } }, { by, id, at: new Date().toISOString() });
	process.stdout.write(`ack ${id}\n`);
}
process.stdout.write("done\n");
