/**
 * A project that has lived for months (issue 26), deterministic: 5 intents (3 active, 2 closed),
 * 7 strategy entries, 311 tactics of ~170 B (50 owned by the active intents, the rest finished
 * or loose, written last year), 7 file artifacts, 4 lazy notes of 2–5 KB and a `todos` root like
 * the example extension's — about 75 KB, committed through the real engine with retention 20.
 * Used by `tests/model/head-relevance.test.ts` and `npm run bench` (`head_active_work_shown`).
 */
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Json, JsonObject, OwnerHistory } from "../../lib/core/types.js";

/** What the head must show of the active work, whole. */
export interface ActiveWork {
	/** Active intents and their goals. */
	goals: Record<string, string>;
	/** Tactics the active intents own, with their status. */
	steps: Record<string, string>;
	lazy: string[];
	artifacts: string[];
	/** Todo ids and texts. */
	todos: Record<string, string>;
}

const BY = { kind: "system", reason: "fixture" } as const;
const ACTIVE = ["auth-refresh", "billing-export", "search-speed"] as const;
const CLOSED = ["graphql-api", "legacy-cleanup"] as const;
const STATUSES = ["done", "doing", "todo", "todo", "blocked"] as const;

/** A sentence of about `bytes` characters, from a seed (no randomness). */
function text(seed: string, bytes: number): string {
	const words = ["update", "the", "handler", "so", "that", "tokens", "refresh", "before", "expiry", "and", "retries", "back", "off", "with", "jitter"];
	let out = seed;
	for (let i = 0; out.length < bytes; i++) out += ` ${words[(i * 7 + seed.length) % words.length]}`;
	return out.slice(0, bytes);
}

/** The histories (CWD only) and what the head must show of them. */
export function longProject(): { cwd: OwnerHistory; work: ActiveWork; roots: string[] } {
	const histories = { cwd: newHistory("cwd", 20) };
	let n = 0;
	const commit = (patch: CanonicalPatch, day: string): void => {
		n++;
		commitStaged(
			histories,
			stage(histories, patch, { id: `lp${n}`, at: `${day}T10:${String(n % 60).padStart(2, "0")}:00.000Z`, by: BY, roots: () => undefined }),
		);
	};
	// Last year: the GraphQL idea and a cleanup, both closed, with their finished steps and loose notes.
	const old: JsonObject = {};
	for (let i = 0; i < 261; i++) old[`old-${String(i).padStart(3, "0")}`] = { step: text(`Old step ${i}:`, 130), status: i % 4 === 0 ? "dropped" : "done" };
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
					[CLOSED[0]]: { goal: "Offer a GraphQL API beside REST", status: "dropped", owns: oldKeys.slice(0, 30).map((k) => ({ $ref: `cwd.tactics.${k}` })) },
					[CLOSED[1]]: { goal: "Remove the legacy v0 endpoints", status: "done", outcome: "v0 removed in 3.0" },
				},
			},
		},
		"2025-08-01",
	);
	// Standing rules, artifacts and notes.
	const strategy: JsonObject = {};
	const rules = [
		"Indent with tabs",
		"Never add a dependency without asking",
		"Every endpoint gets an integration test",
		"Keep PRs under 400 lines",
		"Use UTC everywhere",
		"Errors name the field and what to do",
		"Benchmarks before and after each perf change",
	];
	rules.forEach((r, i) => {
		strategy[`rule-${i + 1}`] = r;
	});
	const artifacts: JsonObject = {};
	for (const f of [
		"src/auth/refresh.ts",
		"src/auth/session.ts",
		"src/billing/export.ts",
		"src/billing/csv.ts",
		"src/search/index.ts",
		"src/search/query.ts",
		"docs/api.md",
	])
		artifacts[f] = { kind: "file", note: text(`${f.split("/")[1]} module`, 40) };
	const lazy: JsonObject = {
		"notes/auth-research.md": text("Auth research:", 4200),
		"notes/billing-formats.md": text("Billing formats:", 2600),
		"notes/search-profile.md": text("Search profile:", 5000),
		"notes/graphql-eval.md": text("GraphQL evaluation:", 3100),
	};
	commit({ cwd: { strategy, artifacts, lazy } }, "2025-11-20");
	// This month: three active intents, each owning its steps (50 in all) and some notes.
	const counts = [17, 17, 16];
	ACTIVE.forEach((intent, a) => {
		const tactics: JsonObject = {};
		const owns: Json[] = [];
		for (let i = 1; i <= (counts[a] as number); i++) {
			const key = `${intent.split("-")[0]}-${String(i).padStart(2, "0")}`;
			tactics[key] = { step: text(`Step ${i} of ${intent}:`, 120), status: STATUSES[i % STATUSES.length] as string };
			owns.push({ $ref: `cwd.tactics.${key}` });
		}
		if (a < 2) owns.push({ $ref: `cwd.lazy["${Object.keys(lazy)[a]}"]` });
		const goal = text(`Goal of ${intent}:`, 90);
		commit(
			{
				cwd: {
					intents: { [intent]: { goal, status: "active", decisions: [text("Decided:", 70), text("Also decided:", 60)], owns } },
					tactics,
				},
			},
			`2026-11-0${a + 1}`,
		);
	});
	const todos: JsonObject = {
		t1: { text: "Rotate the staging API keys", done: false },
		t2: { text: "Ask finance which CSV columns they need", done: true },
		t3: { text: "Write the search benchmark for the release notes", done: false },
		t4: { text: "Review the token refresh PR", done: false },
	};
	commit({ cwd: { roots: { todos } } }, "2026-11-05");
	const cwd = histories.cwd;
	const goals: Record<string, string> = {};
	const steps: Record<string, string> = {};
	for (const intent of ACTIVE) goals[intent] = (cwd.state.intents[intent] as JsonObject).goal as string;
	for (const [k, v] of Object.entries(cwd.state.tactics)) if (!k.startsWith("old-")) steps[k] = (v as JsonObject).status as string;
	const todoTexts: Record<string, string> = {};
	for (const [k, v] of Object.entries(todos)) todoTexts[k] = (v as JsonObject).text as string;
	return { cwd, work: { goals, steps, lazy: Object.keys(lazy), artifacts: Object.keys(artifacts), todos: todoTexts }, roots: ["todos"] };
}

/**
 * The share (0–1) of the active work a rendered head shows whole: each active intent's goal,
 * each owned tactic's key with its status, each lazy note's and artifact's key, each todo's text.
 * Looks for the exact JSON members (`"key":`, `"status":"todo"`) on the plane's line.
 */
export function activeWorkShown(head: string, work: ActiveWork): { share: number; missing: string[] } {
	const line = (prefix: string): string => head.split("\n").find((l) => l.startsWith(prefix)) ?? "";
	const intents = line("intents: ");
	const tactics = line("tactics: ");
	const lazy = line("lazy (catalog, bytes): ");
	const artifacts = line("artifacts: ");
	const todos = line("todos: ");
	const missing: string[] = [];
	let total = 0;
	const need = (ok: boolean, what: string): void => {
		total++;
		if (!ok) missing.push(what);
	};
	const member = (key: string): string => `${JSON.stringify(key)}:`;
	for (const [k, goal] of Object.entries(work.goals))
		need(intents.includes(`${member(k)}{`) && intents.includes(`"goal":${JSON.stringify(goal)}`), `goal of ${k}`);
	// The step's own object: its key, then (up to the next top-level key) its status.
	for (const [k, status] of Object.entries(work.steps)) {
		const at = tactics.indexOf(`${member(k)}{`);
		const end = at < 0 ? -1 : tactics.indexOf("}", at);
		need(at >= 0 && tactics.slice(at, end).includes(`"status":${JSON.stringify(status)}`), `status of ${k}`);
	}
	for (const k of work.lazy) need(lazy.includes(member(k)), `lazy ${k}`);
	for (const k of work.artifacts) need(artifacts.includes(member(k)), `artifact ${k}`);
	for (const [k, t] of Object.entries(work.todos)) need(todos.includes(member(k)) && todos.includes(`"text":${JSON.stringify(t)}`), `todo ${k}`);
	return { share: (total - missing.length) / total, missing };
}
