/** The tool part: `patch_state` and `read_state` timed inside a real pi session (faux model). */
import { lstatSync, statSync } from "node:fs";
import { join } from "node:path";
import { type AssistantMessage, fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { createStateFlow } from "../../lib/index.js";
import { createHarness } from "../../tests/helpers/pi-harness.js";
import { BY, ITER, WARMUP, ms, newId, p50, value } from "./shared.js";
import { type StorageOps, seeded } from "./storage.js";

/** What one tool session measured (p50, ms); `storage` only when it was given the storage operations. */
export interface ToolTimes {
	patch: number;
	read: number;
	commit: number;
	noop: number;
	/** A tool that makes only the two look-ups a read's freshness rule needs (the journal folder's `stat`, the log's `lstat`). */
	stat: number;
	storage?: { small: number; big: number; raw: number; guarded: number; full?: number; normal?: number };
}

/**
 * `patch_state` and `read_state` in a real pi session (faux model, State Flow loaded as an
 * extension) over a CWD state of `entries` entries: p50 between `tool_execution_start` and
 * `tool_execution_end` of one call per model reply. A tool that does nothing gives pi's own
 * floor for a call, and one making only a read's two freshness look-ups the floor of a read. Inside the scripted model replies the same commit goes straight to a store
 * of the same size (`commit`, the former way of comparing under the same disk conditions).
 * Given `ops`, the storage comparison runs in the same session: three bench tools, each called
 * in a model reply of its own like the State Flow tools, time the 20 KB commit, the 2 MB commit
 * and the raw append + fsync inside their `execute` — the same position, caches and fsync
 * spacing as the commit inside a `patch_state` call (docs/decisions.md, "Tool calls at the
 * cost of their commit") — and, where better-sqlite3 loads, the SQLite anchor's two upserts.
 */
export async function toolTimes(dir: string, entries: number, ops?: StorageOps): Promise<ToolTimes> {
	const agentDir = join(dir, "agent");
	const cwd = join(dir, "proj");
	await seeded(dir, entries);
	const reference = await seeded(join(dir, "reference"), entries);
	const started = new Map<string, bigint>();
	const took = new Map<string, number>();
	const inner = new Map<string, number>();
	const commits: number[] = [];
	const timer = (pi: ExtensionAPI): void => {
		pi.on("tool_execution_start", (e) => {
			started.set(e.toolCallId, process.hrtime.bigint());
		});
		pi.on("tool_execution_end", (e) => {
			took.set(e.toolCallId, ms(started.get(e.toolCallId) as bigint));
		});
		pi.registerTool({
			name: "noop",
			label: "noop",
			description: "Does nothing (bench floor).",
			parameters: Type.Object({}),
			execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
		});
		// The floor of a read that must see other processes' commits: its two system calls, nothing else.
		pi.registerTool({
			name: "stat_floor",
			label: "stat_floor",
			description: "Two look-ups (bench floor).",
			parameters: Type.Object({}),
			execute: async () => {
				statSync(join(agentDir, "state-flow", "journal"), { throwIfNoEntry: false });
				lstatSync(join(cwd, ".pi", "state-flow", "log.jsonl"), { throwIfNoEntry: false });
				return { content: [{ type: "text", text: "ok" }], details: {} };
			},
		});
		const tool = (name: string, run: (i: number) => unknown): void =>
			pi.registerTool({
				name,
				label: name,
				description: "Bench operation.",
				parameters: Type.Object({ i: Type.Number() }),
				execute: async (toolCallId, params) => {
					const t0 = process.hrtime.bigint();
					await run(params.i);
					inner.set(toolCallId, ms(t0));
					return { content: [{ type: "text", text: "ok" }], details: {} };
				},
			});
		if (ops) {
			tool("bench_commit_20kb", (i) => ops.small(i + 2_000_000));
			tool("bench_commit_2mb", (i) => ops.big(i + 2_000_000));
			tool("bench_raw_append", (i) => ops.raw(i + 2_000_000));
			tool("bench_guarantee_floor", (i) => ops.guarded(i + 2_000_000));
			const anchor = ops.sqlite;
			if (anchor !== undefined) {
				tool("bench_sqlite_full", (i) => anchor.full(i + 2_000_000));
				tool("bench_sqlite_normal", (i) => anchor.normal(i + 2_000_000));
			}
		}
	};
	let ids = 0;
	const flow = createStateFlow({ agentDir, now: () => new Date(), newId: () => `bench-${process.pid}-${++ids}` });
	const harness = await createHarness({ extensionFactories: [flow, timer], cwd, agentDir });
	try {
		const calls: Array<{ id: string; name: string; args: Record<string, unknown>; counted: boolean }> = [];
		for (let i = 0; i < ITER + WARMUP; i++) {
			const counted = i >= WARMUP;
			calls.push({ id: `p${i}`, name: "patch_state", args: { cwd: { tactics: { [`k${(i * 7919) % entries}`]: value(i + 2_000_000) } } }, counted });
			calls.push({ id: `r${i}`, name: "read_state", args: { path: `cwd.tactics.k${(i * 31) % entries}` }, counted });
			calls.push({ id: `n${i}`, name: "noop", args: {}, counted });
			calls.push({ id: `t${i}`, name: "stat_floor", args: {}, counted });
			if (ops) {
				calls.push({ id: `s${i}`, name: "bench_commit_20kb", args: { i }, counted });
				calls.push({ id: `b${i}`, name: "bench_commit_2mb", args: { i }, counted });
				calls.push({ id: `w${i}`, name: "bench_raw_append", args: { i }, counted });
				calls.push({ id: `g${i}`, name: "bench_guarantee_floor", args: { i }, counted });
				if (ops.sqlite !== undefined) {
					calls.push({ id: `f${i}`, name: "bench_sqlite_full", args: { i }, counted });
					calls.push({ id: `q${i}`, name: "bench_sqlite_normal", args: { i }, counted });
				}
			}
		}
		const at = "2026-01-01T00:00:00.000Z";
		harness.faux.setResponses([
			...calls.map((c, i) => async (): Promise<AssistantMessage> => {
				if (c.name === "patch_state") {
					const t0 = process.hrtime.bigint();
					await reference.commit({ cwd: { tactics: { [`k${(i * 7919) % entries}`]: value(i + 3_000_000) } } }, { by: BY, id: newId(), at });
					if (c.counted) commits.push(ms(t0));
				}
				return fauxAssistantMessage([fauxToolCall(c.name, c.args, { id: c.id })], { stopReason: "toolUse" });
			}),
			() => fauxAssistantMessage(fauxText("done")),
		]);
		await harness.session.prompt("bench");
		await harness.session.agent.waitForIdle();
		const errors = harness.session.messages.filter((m) => m.role === "toolResult" && m.isError);
		if (errors.length > 0 || took.size !== calls.length)
			throw new Error(`bench tool calls failed: ${errors.length} errors, ${took.size}/${calls.length} timed`);
		const of = (prefix: string, times: Map<string, number> = took): number =>
			p50(calls.filter((c) => c.counted && c.id.startsWith(prefix)).map((c) => times.get(c.id) as number));
		return {
			patch: of("p"),
			read: of("r"),
			commit: p50(commits),
			noop: of("n"),
			stat: of("t"),
			...(ops
				? {
						storage: {
							small: of("s", inner),
							big: of("b", inner),
							raw: of("w", inner),
							guarded: of("g", inner),
							...(ops.sqlite !== undefined ? { full: of("f", inner), normal: of("q", inner) } : {}),
						},
					}
				: {}),
		};
	} finally {
		harness.dispose();
	}
}
