/**
 * Concurrency writer: `count` single-owner CWD commits with ids `<tag>-<i>`, each writing
 * a distinct key and the shared keys `last` and `counts.<tag>` (overlapping writes).
 * argv: agentDir cwd tag count retention
 */
import { openStoresAt } from "../../../lib/storage/open.js";

const [agentDir, cwd, tag, countText, retentionText] = process.argv.slice(2) as [string, string, string, string, string];
const stores = openStoresAt({ agentDir, cwd, retention: Number(retentionText) });
const by = { kind: "system", reason: "concurrency-test" } as const;
for (let i = 0; i < Number(countText); i++) {
	const id = `${tag}-${i}`;
	await stores.commit({ cwd: { tactics: { [id]: i, last: id }, lazy: { counts: { [tag]: i + 1 } } } }, { by, id, at: new Date().toISOString() });
}
