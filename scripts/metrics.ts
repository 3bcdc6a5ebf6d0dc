/**
 * `npm run metrics`: context cost of State Flow on a fixed fixture, for all 7 selections ×
 * Active/Passive — bytes of the two tool declarations as sent (name + description + JSON of
 * the parameters), of everything added to the system prompt (the protocol block; the tools carry
 * no prompt snippets) and of the head. Prints a table, writes metrics.json.
 * Targets (issue 5): declarations ≤ 1,800 B, protocol ≤ 2,500 B, head ≤ 1.15 × visible + 400 B.
 */

import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { newHistory } from "../lib/core/history.js";
import { commitStaged, stage } from "../lib/core/stage.js";
import { OWNERS, PLANES } from "../lib/core/types.js";
import type { CanonicalPatch, Json, JsonObject, Owner, OwnerHistory } from "../lib/core/types.js";
import { DEFAULT_HEAD_BUDGET, isBootstrap, renderHead } from "../lib/model/head.js";
import { utf8Bytes } from "../lib/core/size.js";
import { renderProtocol } from "../lib/model/protocol.js";
import { flatPatchSchema, patchDescription, readDescription, readSchema, type RootDeclaration, scopedPatchSchema } from "../lib/model/schemas.js";
import { TODO_SPEC } from "../examples/todo/index.js";

/** The example's root (examples/todo), declared as State Flow declares a registered root. */
const TODO_ROOT: RootDeclaration = { name: TODO_SPEC.name, description: TODO_SPEC.description, owners: TODO_SPEC.owners, schema: TODO_SPEC.schema };

/** Bytes one registered root adds to the `patch_state` declaration of a shape, and its own payload (description + schema). */
function rootCost(shape: "flat" | "scoped"): { added: number; payload: number } {
	const schema = (roots: RootDeclaration[]) => (shape === "flat" ? flatPatchSchema(roots) : scopedPatchSchema());
	const added =
		declarationBytes("patch_state", patchDescription(shape, [TODO_ROOT]), schema([TODO_ROOT])) -
		declarationBytes("patch_state", patchDescription(shape), schema([]));
	return { added, payload: utf8Bytes(TODO_ROOT.description) + utf8Bytes(JSON.stringify(TODO_ROOT.schema)) };
}

/** A plausible working state: a feature in flight in the project, a user preference, a session plan. */
const FIXTURE: CanonicalPatch[] = [
	{
		global: {
			intents: { style: { want: "small commits, tests first", status: "standing" } },
			strategy: { reviews: "run the full suite before every commit" },
		},
	},
	{
		cwd: {
			intents: {
				login: {
					goal: "fix the login redirect loop",
					status: "in progress",
					owns: [{ $ref: "cwd.tactics.repro" }, { $ref: "cwd.tactics.fix" }, { $ref: 'cwd.lazy["notes/login.md"]' }],
				},
			},
			strategy: { approach: "reproduce with a failing test, then fix the cookie path", rejected: ["rewrite the auth middleware"] },
			tactics: { repro: { do: "write a failing test in tests/auth.test.ts", done: true }, fix: { do: "set the cookie path to /", done: false } },
			artifacts: { "src/auth/session.ts": { kind: "file", why: "sets the cookie" }, "tests/auth.test.ts": { kind: "file", why: "the repro" } },
			lazy: { "notes/login.md": "Investigation log. ".repeat(60) },
		},
	},
	{ cwd: { tactics: { repro: { done: true, result: "fails as reported" } } }, session: { tactics: { next: "run npm test after the fix" } } },
	{ session: { strategy: { focus: "login first, then the flaky test" } } },
];

interface Row {
	selection: string;
	mode: "active" | "passive";
	declarations_bytes: number;
	protocol_bytes: number;
	protocol_bootstrap_bytes: number;
	head_bytes: number;
	visible_state_bytes: number;
	head_overhead_ratio: number;
}

/** What `before_agent_start` appends to the system prompt: a blank line and the protocol block, nothing else. */
function systemPromptBytes(protocol: string): number {
	return utf8Bytes(`\n\n${protocol}`);
}

function declarationBytes(name: string, description: string, parameters: unknown): number {
	return utf8Bytes(name) + utf8Bytes(description) + utf8Bytes(JSON.stringify(parameters));
}

/** Compact JSON of what the head shows: the wanted owners' planes, lazy as its catalog. */
function visibleState(histories: Partial<Record<Owner, OwnerHistory>>, wanted: readonly Owner[]): string {
	const out: Record<string, JsonObject> = {};
	for (const owner of wanted) {
		const state = histories[owner]?.state;
		if (state === undefined) continue;
		const planes: JsonObject = {};
		for (const plane of PLANES) {
			if (plane !== "lazy") planes[plane] = state[plane];
			else planes[plane] = Object.fromEntries(Object.keys(state.lazy).map((k) => [k, utf8Bytes(JSON.stringify(state.lazy[k] as Json))]));
		}
		out[owner] = planes;
	}
	return JSON.stringify(out);
}

function main(): void {
	const histories: Partial<Record<Owner, OwnerHistory>> = {};
	for (const o of OWNERS) histories[o] = newHistory(o, 20);
	FIXTURE.forEach((patch, i) => {
		const meta = {
			id: `fixture-${i + 1}`,
			at: new Date(Date.UTC(2026, 10, 30, 9, i)).toISOString(),
			by: { kind: "system", reason: "metrics fixture" } as const,
		};
		commitStaged(histories, stage(histories, patch, meta));
	});
	const rows: Row[] = [];
	for (let bits = 1; bits < 8; bits++) {
		const wanted = OWNERS.filter((_, i) => bits & (1 << i));
		const shape = wanted.length === 1 ? "flat" : "scoped";
		const declarations =
			declarationBytes("patch_state", patchDescription(shape), shape === "flat" ? flatPatchSchema() : scopedPatchSchema()) +
			declarationBytes("read_state", readDescription(shape), readSchema());
		for (const mode of ["active", "passive"] as const) {
			const head = renderHead({ mode, wanted, histories, budget: DEFAULT_HEAD_BUDGET });
			const visible = utf8Bytes(visibleState(histories, wanted));
			const headBytes = utf8Bytes(head);
			rows.push({
				selection: wanted.join("+"),
				mode,
				declarations_bytes: declarations,
				protocol_bytes: systemPromptBytes(renderProtocol({ mode, wanted, bootstrap: isBootstrap(histories, wanted) })),
				protocol_bootstrap_bytes: mode === "active" ? systemPromptBytes(renderProtocol({ mode, wanted, bootstrap: true })) : 0,
				head_bytes: headBytes,
				visible_state_bytes: visible,
				head_overhead_ratio: Math.round((headBytes / (visible + 400)) * 1000) / 1000,
			});
		}
	}
	const summary = {
		declarations_bytes_max: Math.max(...rows.map((r) => r.declarations_bytes)),
		protocol_bytes_max: Math.max(...rows.map((r) => Math.max(r.protocol_bytes, r.protocol_bootstrap_bytes))),
		head_overhead_ratio: Math.max(...rows.map((r) => r.head_overhead_ratio)),
		targets: { declarations_bytes_max: 1800, protocol_bytes_max: 2500, head_overhead_ratio: 1.15 },
		head_budget: DEFAULT_HEAD_BUDGET,
		// One registered root (the todo example): what it adds to the declarations, and how much of that is its own description and schema.
		registered_root: { flat: rootCost("flat"), scoped: rootCost("scoped") },
		rows,
	};
	const cols = [
		"selection",
		"mode",
		"declarations_bytes",
		"protocol_bytes",
		"protocol_bootstrap_bytes",
		"head_bytes",
		"visible_state_bytes",
		"head_overhead_ratio",
	] as const;
	console.log(cols.join("\t"));
	for (const r of rows) console.log(cols.map((c) => String(r[c])).join("\t"));
	console.log(`\ndeclarations_bytes_max ${summary.declarations_bytes_max} (target ≤ 1800)`);
	console.log(`protocol_bytes_max ${summary.protocol_bytes_max} (target ≤ 2500)`);
	console.log(`head_overhead_ratio ${summary.head_overhead_ratio} (target ≤ 1.15: head ÷ (visible state JSON + 400))`);
	for (const shape of ["flat", "scoped"] as const) {
		const c = summary.registered_root[shape];
		console.log(`registered_root ${shape}: +${c.added} B per root (its description and schema: ${c.payload} B; framing ${c.added - c.payload} B)`);
	}
	const out = resolve(process.cwd(), "metrics.json");
	writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
	console.log(`wrote ${out}`);
}

main();
