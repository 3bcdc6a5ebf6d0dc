/**
 * Deadlines for what a test waits on: an event expected to arrive by itself (a file watch, a
 * database notification), a condition that becomes true (a report shown after a run), a
 * promise that settles. Each fails naming what did not happen; none decides anything by
 * sleeping: the test goes on the moment the event comes or the condition holds.
 */

/** Default deadline: far above any healthy wait on a loaded 2-core machine, short enough to fail a hang. */
const DEFAULT_MS = 10_000;
/** Checks made on consecutive event-loop turns before polling slows to `pollMs` (a wait on I/O). */
const FAST_TURNS = 50;

/** `arrive` resolves `arrived`; if it has not come within `ms`, `arrived` rejects with `why`. */
export function expectSoon(why: string, ms = DEFAULT_MS): { arrived: Promise<void>; arrive: () => void } {
	let arrive: () => void = () => {};
	const arrived = new Promise<void>((resolve, reject) => {
		const deadline = setTimeout(() => reject(new Error(why)), ms);
		arrive = () => {
			clearTimeout(deadline);
			resolve();
		};
	});
	return { arrived, arrive };
}

/** `promise`, or a failure naming `what` when it has not settled within `timeoutMs`. */
export function within<T>(promise: Promise<T>, what: string, timeoutMs = DEFAULT_MS): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const late = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
	});
	return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Check `ready` until it returns something other than `undefined`, `null` or `false` (returned);
 * fails naming `what` after `timeoutMs`. Checked on every event-loop turn at first, then every
 * `pollMs` (a condition that waits on another process or a timer).
 */
export async function waitFor<T>(
	ready: () => T | undefined | null | false,
	{ what, timeoutMs = DEFAULT_MS, pollMs = 5 }: { what: string; timeoutMs?: number; pollMs?: number },
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (let turn = 0; ; turn++) {
		const value = ready();
		if (value !== undefined && value !== null && value !== false) return value;
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((r) => (turn < FAST_TURNS ? setImmediate(r) : setTimeout(r, pollMs)));
	}
}
