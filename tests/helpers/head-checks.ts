/**
 * What a head of the long-lived project (`long-project.ts`) must hold, checked on the parsed
 * plane lines (each is JSON): the facts a model needs to answer without `read_state` (issue 36,
 * item 9), the share of the active work shown whole (`head_active_work_shown`), and the bytes
 * ownership takes. Flat form (the CWD owner alone): lines start at the plane.
 */
import { isDeepStrictEqual } from "node:util";
import type { Json, JsonObject } from "../../lib/core/types.js";
import { utf8Bytes } from "../../lib/core/size.js";
import type { ActiveWork } from "./long-project.js";

/** The JSON object a line starting with `prefix` shows (`{}` when there is none). */
export function lineObject(head: string, prefix: string): JsonObject {
	const line = head.split("\n").find((l) => l.startsWith(prefix));
	return line === undefined ? {} : (JSON.parse(line.slice(prefix.length)) as JsonObject);
}

function planes(head: string) {
	return {
		intents: lineObject(head, "intents: "),
		tactics: lineObject(head, "tactics: "),
		lazy: lineObject(head, "lazy (catalog, bytes): "),
		artifacts: lineObject(head, "artifacts: "),
		todos: lineObject(head, "todos: "),
	};
}

/** A shown value is whole: equal to the stored one (no preview, no marker). */
function whole(shown: Json | undefined, stored: Json): boolean {
	return shown !== undefined && isDeepStrictEqual(shown, stored);
}

/**
 * The facts of the three everyday questions, each as what is missing from the head:
 * - **next**: the intent in progress (goal, status) and its step marked "next", whole;
 * - **tick off**: every item of the small root with its id, whole;
 * - **standup**: every active intent's goal and status, and every step in flight, whole.
 */
export function headAnswers(head: string, work: ActiveWork): { next: string[]; tickOff: string[]; standup: string[] } {
	const p = planes(head);
	const intentFacts = (key: string): string[] => {
		const shown = p.intents[key] as JsonObject | undefined;
		const want = work.intents[key] as { goal: string; status: string };
		const out: string[] = [];
		if (shown?.goal !== want.goal) out.push(`goal of intents.${key}`);
		if (shown?.status !== want.status) out.push(`status of intents.${key}`);
		return out;
	};
	const next = [...intentFacts(work.next.intent)];
	if (!whole(p.tactics[work.next.step], work.inflight[work.next.step] as JsonObject)) next.push(`tactics.${work.next.step} whole`);
	const tickOff = Object.entries(work.todos)
		.filter(([id, item]) => !whole(p.todos[id], item))
		.map(([id]) => `todos.${id} whole`);
	const standup = Object.keys(work.intents).flatMap(intentFacts);
	for (const [key, value] of Object.entries(work.inflight)) if (!whole(p.tactics[key], value)) standup.push(`tactics.${key} whole`);
	return { next, tickOff, standup };
}

/**
 * The share (0–1) of the active work a head shows: each active intent's goal and status, each
 * owned step's key with its status, each lazy note's and artifact's key, each todo whole.
 */
export function activeWorkShown(head: string, work: ActiveWork): { share: number; missing: string[] } {
	const p = planes(head);
	const missing: string[] = [];
	let total = 0;
	const need = (ok: boolean, what: string): void => {
		total++;
		if (!ok) missing.push(what);
	};
	for (const [k, want] of Object.entries(work.intents)) {
		const shown = p.intents[k] as JsonObject | undefined;
		need(shown?.goal === want.goal && shown?.status === want.status, `goal and status of ${k}`);
	}
	for (const [k, status] of Object.entries(work.steps)) need((p.tactics[k] as JsonObject | undefined)?.status === status, `status of ${k}`);
	for (const k of work.lazy) need(Object.hasOwn(p.lazy, k), `lazy ${k}`);
	for (const k of work.artifacts) need(Object.hasOwn(p.artifacts, k), `artifact ${k}`);
	for (const [k, item] of Object.entries(work.todos)) need(whole(p.todos[k], item), `todo ${k}`);
	return { share: (total - missing.length) / total, missing };
}

/** UTF-8 bytes the head spends on ownership: every intent's `"owns":…` member as shown. */
export function ownershipBytes(head: string): number {
	let n = 0;
	for (const v of Object.values(lineObject(head, "intents: "))) {
		if (v !== null && typeof v === "object" && !Array.isArray(v) && Object.hasOwn(v, "owns")) n += utf8Bytes(`"owns":${JSON.stringify(v.owns)}`);
	}
	return n;
}
