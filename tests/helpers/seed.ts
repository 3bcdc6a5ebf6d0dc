/**
 * One seed for all of a test process's randomness, so that every failure can be replayed.
 * Every fast-check property runs through `assertProperty` (never `fc.assert`), every other random
 * choice a test makes comes from `randomInt`. `STATE_FLOW_SEED=<integer>` replays a run; without
 * it each process draws a fresh seed, and every failure names it (`replayHint`).
 */
import assert from "node:assert/strict";
import { randomInt as freshInt } from "node:crypto";
import fc from "fast-check";

/** The environment variable that replays a run. */
export const SEED_VARIABLE = "STATE_FLOW_SEED";

function seedFromEnvironment(): number {
	const text = process.env[SEED_VARIABLE]?.trim();
	if (text === undefined || text === "") return freshInt(0, 2 ** 31);
	const n = Number(text);
	if (!Number.isSafeInteger(n)) throw new Error(`${SEED_VARIABLE}=${JSON.stringify(text)} is not an integer: set it to the seed a failure printed`);
	// fast-check's seeds are 32-bit integers; a printed one (possibly negative) reads back as itself.
	return n | 0;
}

/** This process's seed. */
export const SEED = seedFromEnvironment();

/** The words a failure ends with: how to run it again with the same randomness. */
export function replayHint(): string {
	return `replay: ${SEED_VARIABLE}=${SEED} node --test <this test file>`;
}

/** Options of `assertProperty`: fast-check's, without `seed` (it is this process's). */
export type PropertyOptions<Ts> = Omit<fc.Parameters<Ts>, "seed"> & {
	/**
	 * Most generated cases `fc.pre` may discard, as a share of the cases checked (default 1: at
	 * least half the generated cases reach the end of the property). A bug that makes a
	 * precondition discard nearly everything then fails instead of passing on a handful of cases.
	 */
	maxSkipRatio?: number;
};

type Checked<Ts> = fc.RunDetails<Ts>;

function judge<Ts>(details: Checked<Ts>, report: string | undefined, options: PropertyOptions<Ts>): Checked<Ts> {
	if (details.failed) {
		throw new Error(`${report ?? "property failed"}\n${replayHint()}`, { cause: details.errorInstance ?? undefined });
	}
	// The cases that reached the end of the property: fast-check stops early only when interrupted.
	const floor = options.numRuns ?? fc.readConfigureGlobal().numRuns ?? 100;
	assert.ok(details.numRuns >= floor, `only ${details.numRuns} of ${floor} cases were checked (interrupted); ${replayHint()}`);
	const ratio = options.maxSkipRatio ?? 1;
	assert.ok(
		details.numSkips <= ratio * details.numRuns,
		`${details.numSkips} generated cases were discarded by a precondition for ${details.numRuns} checked (at most ${ratio} per case); ${replayHint()}`,
	);
	return details;
}

/**
 * `fc.assert` with this process's seed: fails naming the seed that replays it, and checks that
 * the cases were really checked (not interrupted, not mostly discarded). Returns fast-check's
 * run details for tests that count more.
 */
export function assertProperty<Ts>(property: fc.IAsyncProperty<Ts>, options?: PropertyOptions<Ts>): Promise<Checked<Ts>>;
export function assertProperty<Ts>(property: fc.IProperty<Ts>, options?: PropertyOptions<Ts>): Checked<Ts>;
export function assertProperty<Ts>(property: fc.IProperty<Ts> | fc.IAsyncProperty<Ts>, options: PropertyOptions<Ts> = {}): Checked<Ts> | Promise<Checked<Ts>> {
	const { maxSkipRatio: _, ...rest } = options;
	const params: fc.Parameters<Ts> = { ...rest, seed: SEED, includeErrorInReport: true };
	if (property.isAsync()) {
		return fc.check(property as fc.IAsyncProperty<Ts>, params).then(async (d) => judge(d, await fc.asyncDefaultReportMessage(d), options));
	}
	const details = fc.check(property as fc.IProperty<Ts>, params);
	return judge(details, fc.defaultReportMessage(details), options);
}

/** Draws made so far per label (each draw has a seed of its own: the same label replays the same numbers). */
const draws = new Map<string, number>();

/**
 * A uniform integer in [`min`, `max`] drawn from this process's seed, for a random choice a test
 * makes outside a property (kill timing, an order). `label` names the sequence.
 */
export function randomInt(label: string, min: number, max: number): number {
	const n = draws.get(label) ?? 0;
	draws.set(label, n + 1);
	let h = SEED ^ Math.imul(n + 1, 0x9e3779b1);
	for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
	return fc.sample(fc.noBias(fc.integer({ min, max })), { seed: h | 0, numRuns: 1 })[0] as number;
}

/**
 * Run a test body whose randomness comes from `randomInt`: a failure's message ends naming the
 * seed that replays it.
 */
export async function replayable<T>(body: () => Promise<T>): Promise<T> {
	try {
		return await body();
	} catch (e) {
		if (e instanceof Error) e.message = `${e.message}\n${replayHint()}`;
		throw e;
	}
}
