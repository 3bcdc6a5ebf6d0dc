/**
 * What every part of the bench shares: the author, iteration counts, the one id counter (every
 * commit of a run takes its id from it, so ids never repeat across parts), the ~180 B value,
 * and the timing and rounding helpers.
 */

export const BY = { kind: "system", reason: "bench" } as const;
export const ITER = 300;
/** Iterations measured but not counted (start-up, first JIT tiers). */
export const WARMUP = 20;

let idc = 0;
export const newId = (): string => `b${process.pid}-${++idc}`;
export const value = (i: number): string => `v${i}-`.padEnd(180, "x");

export function ms(t0: bigint): number {
	return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** The median of a sample (the upper one for an even count); shared with scripts/bench-pg.ts. */
export function p50(xs: number[]): number {
	const s = xs.slice().sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)] as number;
}

export function round(x: number): number {
	return Math.round(x * 1000) / 1000;
}
