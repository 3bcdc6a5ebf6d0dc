/**
 * A writer process for the PostgreSQL concurrency test and bench: `count` commits into one
 * shared CWD owner, each re-staged under the row lock with the core's `stage`, writing its own
 * key and the shared keys `last` and `counts.<tag>`. Prints when its loop started and ended
 * (ms since the epoch), so a caller can measure the throughput of the overlapping window.
 * argv: url schema project tag count
 */
import { stage } from "../../lib/core/stage.js";
import type { OwnerHistory } from "../../lib/core/types.js";
import { PgDatabase } from "../../lib/storage/pg/database.js";

const [url, schema, project, tag, countText] = process.argv.slice(2) as [string, string, string, string, string];
const db = new PgDatabase({ url, schema, lockTimeoutMs: 60_000 });
const store = db.store("cwd", project, 1000);
const by = { kind: "system", reason: "pg-concurrency" } as const;
const started = performance.timeOrigin + performance.now();
for (let i = 0; i < Number(countText); i++) {
	const id = `${tag}-${i}`;
	await db.commitTogether([store], ([h]) => {
		const r = stage(
			{ cwd: h as OwnerHistory },
			{ cwd: { tactics: { [id]: i, last: id }, lazy: { counts: { [tag]: i + 1 } } } },
			{ id, at: new Date().toISOString(), by },
		);
		return { records: [r.noop ? undefined : r.records.cwd], value: undefined };
	});
}
process.stdout.write(`${started} ${performance.timeOrigin + performance.now()}\n`);
await db.close();
