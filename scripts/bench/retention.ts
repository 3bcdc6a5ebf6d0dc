/**
 * What the default retention costs (issue 35): the bytes a typical session's transition adds to
 * the log (the model's small patches, a note now and then, the user's undo and redo clicks), and
 * the cold load of a small and a 2 MB owner at the worst point of the compaction cycle for each
 * retention compared. `node dist/scripts/bench.js --retention` prints it; the decision it informs
 * is docs/decisions.md, "Retention 200".
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { CanonicalPatch, JsonObject, Provenance } from "../../lib/core/types.js";
import { openStoresAt } from "../../lib/storage/open.js";
import { round } from "./shared.js";
import { coldLoadP50 } from "./storage.js";

/** Retentions compared: the old default, and the candidates. */
export const RETENTIONS = [20, 100, 200] as const;

const step = (i: number) => `Port payment call ${i} to the provider API, keeping the old client behind the flag`.slice(0, 110);

/**
 * One transition of a working session, the `i`th: mostly a step's status or a new step, an
 * intent's decisions now and then, a note every 25th; `undo`/`redo` clicks are made by the caller.
 */
function typical(i: number): CanonicalPatch {
	if (i % 25 === 24) return { cwd: { lazy: { [`notes/n${i}.md`]: `Findings ${i}: `.padEnd(1500, "lorem ipsum ") } } };
	if (i % 10 === 9) {
		const decisions = Array.from({ length: 2 + (i % 4) }, (_, d) => `Decision ${d}: keep the retries bounded and logged`);
		return { cwd: { intents: { [`work-${Math.floor(i / 40)}`]: { goal: "Move payments to the new provider API", status: "in progress", decisions } } } };
	}
	const key = `pay-${String(i % 60).padStart(2, "0")}`;
	const value: JsonObject = i % 3 === 0 ? { step: step(i), status: "todo" } : { status: i % 3 === 1 ? "doing" : "done" };
	return { cwd: { tactics: { [key]: value } } };
}

/** Bytes a transition adds to the log in a session of `n` model patches with an undo and a redo after every 10th. */
export async function typicalBytes(dir: string, n = 300): Promise<{ bytesPerTransition: number; transitions: number; undoRedoBytes: number }> {
	mkdirSync(join(dir, "agent"), { recursive: true });
	const stores = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 1000 });
	const session = randomUUID();
	const log = join(dir, "proj", ".pi", "state-flow", "log.jsonl");
	let clicks = 0;
	let clickBytes = 0;
	for (let i = 0; i < n; i++) {
		const by: Provenance = { kind: "tool", sessionId: session, toolCallId: `toolu_01${randomUUID().replace(/-/g, "").slice(0, 22)}` };
		const done = await stores.commit(typical(i), { by, id: randomUUID(), at: new Date().toISOString() });
		if (i % 10 === 9 && !done.noop) {
			// An undo click and a redo click, each its own transition of the inverse patch.
			const h = await stores.load("cwd");
			const last = h.tail.at(-1);
			if (last === undefined) continue;
			for (const [op, patch] of [
				["undo", last.undo],
				["redo", last.patch],
			] as const) {
				const before = statSync(log).size;
				const by2: Provenance = { kind: "command", command: `/state ${op} cwd`, reverts: { op, target: last.id } };
				await stores.commit({ cwd: patch }, { by: by2, id: randomUUID(), at: new Date().toISOString(), exact: true });
				clickBytes += statSync(log).size - before;
				clicks++;
			}
		}
	}
	const h = await stores.load("cwd");
	await stores.close();
	return { bytesPerTransition: Math.round(statSync(log).size / h.seq), transitions: h.seq, undoRedoBytes: Math.round(clickBytes / Math.max(1, clicks)) };
}

/** The retention part: bytes per transition, and the cold loads (p50 ms, the log's bytes then) per retention. */
export async function retentionCosts(root: string): Promise<Record<string, number>> {
	const out: Record<string, number> = {};
	const typicalSession = await typicalBytes(join(root, "typical"));
	out.bytes_per_transition = typicalSession.bytesPerTransition;
	out.bytes_per_undo_or_redo = typicalSession.undoRedoBytes;
	for (const r of RETENTIONS) {
		for (const [name, entries] of [
			["small", 100],
			["2mb", 10_000],
		] as const) {
			const cold = await coldLoadP50(join(root, `cold-${r}-${name}`), entries, r);
			out[`cold_load_p50_ms_${name}_r${r}`] = round(cold.p50);
			out[`cold_log_kb_${name}_r${r}`] = Math.round(cold.logBytes / 1024);
		}
	}
	return out;
}
