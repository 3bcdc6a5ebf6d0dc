/**
 * A project that has lived for months (issues 26 and 36), deterministic, about 75 KB, committed
 * through the real engine with retention 20: an intent in progress (`payments-refactor`) owning
 * 25 steps of which one is "next", a release intent with long step texts (one step doing, one
 * blocked), a planned intent, two closed intents, 7 standing rules, 311 tactics (275 of them
 * finished last year), 7 file artifacts, 4 lazy notes of 2–5 KB and a 3-item `todos` root written
 * through the todo example's registered root (its schema checked by State Flow's root registry).
 * Used by `tests/model/head-relevance.test.ts`, `head-answers.test.ts` and `npm run bench`.
 */
import { TODO_SPEC } from "../../examples/todo/index.js";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Json, JsonObject, OwnerHistory } from "../../lib/core/types.js";
import { RootRegistry } from "../../lib/host/roots/registry.js";

/** What the head must show of the work in flight and of the small root, and where it lives. */
export interface ActiveWork {
	/** Active intents: goal and status. */
	intents: Record<string, { goal: string; status: string }>;
	/** Tactics the active intents own, with their status. */
	steps: Record<string, string>;
	/** Tactics in flight (next, doing, blocked), whole as stored. */
	inflight: Record<string, JsonObject>;
	/** The intent in progress and its one step marked "next". */
	next: { intent: string; step: string };
	lazy: string[];
	artifacts: string[];
	/** The small root's items, whole, by id. */
	todos: Record<string, JsonObject>;
}

const BY = { kind: "system", reason: "fixture" } as const;

/** A sentence of about `bytes` characters, from a seed (no randomness). */
function text(seed: string, bytes: number): string {
	const words = ["update", "the", "handler", "so", "that", "tokens", "refresh", "before", "expiry", "and", "retries", "back", "off", "with", "jitter"];
	let out = seed;
	for (let i = 0; out.length < bytes; i++) out += ` ${words[(i * 7 + seed.length) % words.length]}`;
	return out.slice(0, bytes);
}

const pad2 = (i: number): string => String(i).padStart(2, "0");

/** The `todos` root the todo example registers, admitted by State Flow's own registry: its gate checks every write. */
function todoGate() {
	const registry = new RootRegistry();
	registry.register(TODO_SPEC, {});
	return registry.gate;
}

/** The histories (CWD only), the registered roots to show, and what the head must show of them. */
export function longProject(): { cwd: OwnerHistory; work: ActiveWork; roots: string[] } {
	const histories = { cwd: newHistory("cwd", 20) };
	const roots = todoGate();
	let n = 0;
	const commit = (patch: CanonicalPatch, day: string): void => {
		n++;
		commitStaged(histories, stage(histories, patch, { id: `lp${n}`, at: `${day}T10:${String(n % 60).padStart(2, "0")}:00.000Z`, by: BY, roots }));
	};
	// Last year: the GraphQL idea (dropped) and a cleanup (done), with their finished steps.
	const old: JsonObject = {};
	for (let i = 0; i < 275; i++) old[`old-${String(i).padStart(3, "0")}`] = { step: text(`Old step ${i}:`, 140), status: i % 4 === 0 ? "dropped" : "done" };
	const oldKeys = Object.keys(old);
	for (let i = 0; i < oldKeys.length; i += 40) {
		const part: JsonObject = {};
		for (const k of oldKeys.slice(i, i + 40)) part[k] = old[k] as Json;
		commit({ cwd: { tactics: part } }, `2025-0${1 + Math.floor(i / 40)}-15`);
	}
	commit(
		{
			cwd: {
				intents: {
					"graphql-api": { goal: "Offer a GraphQL API beside REST", status: "dropped", owns: oldKeys.slice(0, 30).map((k) => ({ $ref: `cwd.tactics.${k}` })) },
					"legacy-cleanup": { goal: "Remove the legacy v0 endpoints", status: "done", outcome: "v0 removed in 3.0" },
				},
			},
		},
		"2025-08-01",
	);
	// Standing rules, artifacts and notes.
	const strategy: JsonObject = {};
	[
		"Indent with tabs",
		"Never add a dependency without asking",
		"Every endpoint gets an integration test",
		"Keep PRs under 400 lines",
		"Use UTC everywhere",
		"Errors name the field and what to do",
		"Benchmarks before and after each perf change",
	].forEach((r, i) => {
		strategy[`rule-${i + 1}`] = r;
	});
	const artifacts: JsonObject = {};
	for (const f of [
		"src/payments/client.ts",
		"src/payments/refunds.ts",
		"src/payments/webhooks.ts",
		"src/search/index.ts",
		"src/search/query.ts",
		"CHANGELOG.md",
		"docs/api.md",
	])
		artifacts[f] = { kind: "file", note: text(`${f.split("/").at(-1)} module`, 40) };
	const lazy: JsonObject = {
		"design/payments.md": text("Payments design:", 4200),
		"notes/release-checklist.md": text("Release checklist:", 2600),
		"notes/search-profile.md": text("Search profile:", 5000),
		"notes/graphql-eval.md": text("GraphQL evaluation:", 3100),
	};
	commit({ cwd: { strategy, artifacts, lazy } }, "2025-11-20");

	// This month: the payments refactor in progress, 25 steps (9 done, 15 to do, one next, decided last).
	const pay: JsonObject = {};
	for (let i = 1; i <= 25; i++) pay[`pay-${pad2(i)}`] = { step: text(`Port payment call ${i} to the provider API:`, 110), status: i < 10 ? "done" : "todo" };
	commit(
		{
			cwd: {
				intents: {
					"payments-refactor": {
						goal: "Move payments to the new provider API without downtime",
						status: "in progress",
						decisions: ["Keep the old client behind a flag until 3.3", "Refunds go through the provider's v2 endpoint"],
						owns: [...Object.keys(pay).map((k) => ({ $ref: `cwd.tactics.${k}` })), { $ref: 'cwd.lazy["design/payments.md"]' }],
					},
				},
				tactics: pay,
			},
		},
		"2026-11-01",
	);
	// The release: six steps with long texts, one doing, one blocked.
	const relStatus = ["done", "done", "doing", "todo", "blocked: waiting on the security review", "todo"];
	const rel: JsonObject = {};
	relStatus.forEach((status, i) => {
		rel[`rel-${pad2(i + 1)}`] = { step: text(`Release 3.2 step ${i + 1}: cut, verify and announce, checking each service's`, 300), status };
	});
	commit(
		{
			cwd: {
				intents: {
					"release-3-2": {
						goal: "Ship release 3.2 to production",
						status: "active",
						owns: [...Object.keys(rel).map((k) => ({ $ref: `cwd.tactics.${k}` })), { $ref: 'cwd.lazy["notes/release-checklist.md"]' }],
					},
				},
				tactics: rel,
			},
		},
		"2026-11-02",
	);
	// A planned intent: nothing in flight yet.
	const srch: JsonObject = {};
	for (let i = 1; i <= 5; i++) srch[`srch-${pad2(i)}`] = { step: text(`Search speed step ${i}:`, 100), status: "todo" };
	commit(
		{
			cwd: {
				intents: {
					"search-speed": {
						goal: "Answer search queries in under 200 ms at p95",
						status: "planned",
						owns: Object.keys(srch).map((k) => ({ $ref: `cwd.tactics.${k}` })),
					},
				},
				tactics: srch,
			},
		},
		"2026-11-03",
	);
	const todos: JsonObject = {
		t1: { text: "Update the CHANGELOG for 3.2", done: false },
		t2: { text: "Rotate the staging API keys", done: false },
		t3: { text: "Ask finance which CSV columns they need", done: true },
	};
	commit({ cwd: { roots: { [TODO_SPEC.name]: todos } } }, "2026-11-05");
	// The next step, decided last: its notes say how.
	const next = {
		step: "Port refundPayment() to the provider's v2 refunds endpoint",
		status: "next",
		notes: "Partial refunds need the original charge id; keep the idempotency key per refund (design/payments.md, section 4).",
	};
	commit({ cwd: { tactics: { "pay-10": next } } }, "2026-11-06");

	const cwd = histories.cwd;
	const state = cwd.state;
	const work: ActiveWork = {
		intents: {},
		steps: {},
		inflight: {},
		next: { intent: "payments-refactor", step: "pay-10" },
		lazy: Object.keys(lazy),
		artifacts: Object.keys(artifacts),
		todos: {},
	};
	for (const key of ["payments-refactor", "release-3-2", "search-speed"]) {
		const v = state.intents[key] as JsonObject;
		work.intents[key] = { goal: v.goal as string, status: v.status as string };
	}
	for (const [k, v] of Object.entries(state.tactics)) {
		if (k.startsWith("old-")) continue;
		const status = (v as JsonObject).status as string;
		work.steps[k] = status;
		if (status === "next" || status === "doing" || status.startsWith("blocked")) work.inflight[k] = v as JsonObject;
	}
	for (const [k, v] of Object.entries(state.roots?.[TODO_SPEC.name] as JsonObject)) work.todos[k] = v as JsonObject;
	return { cwd, work, roots: [TODO_SPEC.name] };
}
