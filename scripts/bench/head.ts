/**
 * The head part: the renderer at the per-owner size limit (many small tactics, and one deep
 * value), how much of its budget the default head fills, and how much of a long project's
 * active work it shows whole.
 */
import type { Json, JsonObject, OwnerHistory } from "../../lib/core/types.js";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { DEFAULT_HEAD_BUDGET, renderHead } from "../../lib/model/head.js";
import { utf8Bytes } from "../../lib/core/size.js";
import { activeWorkShown } from "../../tests/helpers/head-checks.js";
import { longProject } from "../../tests/helpers/long-project.js";
import { BY, ms, p50 } from "./shared.js";

/** A CWD history of `count` tactics of about `size` bytes each, committed through the engine in batches of 500. */
function tacticsHistory(count: number, size: number): OwnerHistory {
	const histories = { cwd: newHistory("cwd", 100) };
	for (let i = 0; i < count; i += 500) {
		const tactics: JsonObject = {};
		for (let k = i; k < Math.min(count, i + 500); k++) tactics[`step-${k}`] = `step ${k}: `.padEnd(size, "x");
		const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i / 500)).toISOString();
		commitStaged(histories, stage(histories, { cwd: { tactics } }, { id: `h${i}`, at, by: BY }));
	}
	return histories.cwd;
}

/** p50 of the default-budget head (Active, CWD only) over a state at the 4 MiB per-owner limit, and its size. */
export function headAtLimit(): { p50: number; stateBytes: number; headBytes: number } {
	// 21,000 tactics of ~180 B: just under 4 MiB of state (the per-owner limit).
	return headP50(tacticsHistory(21_000, 180));
}

/**
 * The same over one tactic holding a deep value at the limit: 60 nested objects, each beside a
 * 60 KB string (~3.6 MB). The head fits it level by level; each level measures its children.
 */
export function headOneDeepValue(): { p50: number; stateBytes: number; headBytes: number } {
	let deep: Json = "x".repeat(1000);
	for (let i = 0; i < 60; i++) deep = { inner: deep, text: `${i}: `.padEnd(60_000, "y") };
	const histories = { cwd: newHistory("cwd", 100) };
	commitStaged(histories, stage(histories, { cwd: { tactics: { deep, next: "a step" } } }, { id: "deep", at: "2026-01-01T00:00:00.000Z", by: BY }));
	return headP50(histories.cwd);
}

function headP50(cwd: OwnerHistory): { p50: number; stateBytes: number; headBytes: number } {
	const input = { mode: "active" as const, wanted: ["cwd" as const], histories: { cwd }, budget: DEFAULT_HEAD_BUDGET };
	const first = renderHead(input);
	const xs: number[] = [];
	for (let i = 0; i < 60; i++) {
		const t0 = process.hrtime.bigint();
		if (renderHead(input) !== first) throw new Error("the head changed between renders of the same state");
		xs.push(ms(t0));
	}
	return { p50: p50(xs), stateBytes: cwd.bytes, headBytes: utf8Bytes(first) };
}

/** Used ÷ budget of the default head for 250 tactics of ~170 B (about 42 KB, five times the budget). */
export function headFill(): number {
	const cwd = tacticsHistory(250, 170);
	const head = renderHead({ mode: "active", wanted: ["cwd"], histories: { cwd }, budget: DEFAULT_HEAD_BUDGET });
	return utf8Bytes(head) / DEFAULT_HEAD_BUDGET;
}

/**
 * The share of a long-lived project's active work (issue 36's shape, ~75 KB: active intents'
 * goals and status, owned steps with their status, lazy note and artifact names, the todos
 * whole) that the default head shows; target 1.0.
 */
export function headActiveWork(): number {
	const { cwd, work, roots } = longProject();
	return activeWorkShown(renderHead({ mode: "active", wanted: ["cwd"], histories: { cwd }, budget: DEFAULT_HEAD_BUDGET, roots }), work).share;
}
