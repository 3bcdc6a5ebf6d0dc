/** The credential part: the check every commit runs on its patch, timed alone. */
import { refuseCredentials } from "../../lib/storage/credentials/check.js";
import { ITER, WARMUP, ms, p50, value } from "./shared.js";

/**
 * The credential check (`storage/credentials/check.ts`) on the 2 MB commit's own patch, p50 in ms: it
 * runs inside every commit, before the lock, so `credential_check_share` divides it by
 * `commit_p50_ms_2mb` (issue 24: at most 5 %).
 */
export async function credentialCheckP50(): Promise<number> {
	const xs: number[] = [];
	for (let i = 0; i < ITER + WARMUP; i++) {
		const patch = { cwd: { tactics: { [`k${(i * 7919) % 10_000}`]: value(i + 1_000_000) } } };
		const t0 = process.hrtime.bigint();
		await refuseCredentials(patch);
		if (i >= WARMUP) xs.push(ms(t0));
	}
	return p50(xs);
}
