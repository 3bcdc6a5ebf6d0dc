/** A project folder and an agent folder in a fresh temporary folder, and the file stores opened over them. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { openStoresAt } from "../../lib/storage/open.js";
import { tempDir } from "./temp-dir.js";

export interface StoreWorld {
	base: string;
	proj: string;
	agent: string;
}

/** `<tmp>/proj` and `<tmp>/agent`, removed after the test. */
export function storeWorld(t: { after(fn: () => void): void }, prefix: string): StoreWorld {
	const base = tempDir(t, prefix);
	const w = { base, proj: join(base, "proj"), agent: join(base, "agent") };
	mkdirSync(w.proj);
	mkdirSync(w.agent);
	return w;
}

/** The stores of `w` (a 3 s lock wait: a test that waits longer has a bug). */
export function openWorld(w: { proj: string; agent: string }, retention?: number) {
	return openStoresAt({ agentDir: w.agent, cwd: w.proj, lockTimeoutMs: 3_000, ...(retention === undefined ? {} : { retention }) });
}
