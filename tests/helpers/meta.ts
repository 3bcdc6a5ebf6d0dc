/**
 * The commit options a test passes to `Stores.commit`: who (`by`), a fresh transition id with
 * the file's own prefix (so ids stay readable in failures), and a fixed time.
 */
import type { Provenance } from "../../lib/core/types.js";

export interface CommitMeta {
	by: Provenance;
	id: string;
	at: string;
}

/** `meta()` gives the next id (`<prefix>1`, `<prefix>2`, …); `meta("x")` uses `x`. */
export function commitMeta(prefix: string, at: string, by: Provenance = { kind: "system", reason: "test" }): (id?: string) => CommitMeta {
	let n = 0;
	return (id) => ({ by, id: id ?? `${prefix}${++n}`, at });
}
