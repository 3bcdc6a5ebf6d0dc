/** Set-up shared by the head renderer's tests: owner histories built by the real engine. */
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { CanonicalPatch, Owner, OwnerHistory } from "../../lib/core/types.js";

export type Histories = Partial<Record<Owner, OwnerHistory>>;

/**
 * Histories for `wanted` after committing `patches` through the engine, one minute apart.
 * `exact`: store them as sent (as an older build may have), without reference checks.
 */
export function build(wanted: readonly Owner[], patches: CanonicalPatch[], exact = false): Histories {
	const histories: Histories = {};
	for (const o of wanted) histories[o] = newHistory(o, 20);
	patches.forEach((patch, i) => {
		const at = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
		commitStaged(histories, stage(histories, patch, { id: `t${i + 1}`, at, by: { kind: "system", reason: "test" }, ...(exact ? { exact } : {}) }));
	});
	return histories;
}

/** One case of the head budget law: wanted owners, the patches committed, budget, mode and git branch. */
export type HeadCase = [wanted: Owner[], patches: Array<Partial<Record<Owner, unknown>>>, budget: number, mode: string, branch: string | undefined];

/**
 * What the head budget law found (seed 1950138472, fill 823 / 1030), as fast-check shrank it (spaces spelled out by `pad`; the
 * computed `["__proto__"]` is an own key, as fast-check generated it).
 */
const pad = (s: string, n = 40) => s.padEnd(n, " ");
export const SKIPPED_THEN_ROOM: HeadCase = [
	["session"],
	[
		{
			session: {
				intents: {
					"": { goal: "main", gitBranch: "main", owns: [{ $ref: "session.tactics.t" }] },
					a: [
						[{ a: pad(""), "[0]": pad("           <           <           #") }],
						{
							a: { ["__proto__"]: [pad("            <                            \\ \\         <", 58)], a: 1000000000 },
							"b.c": 100000000,
							gitBranch: [
								{ n1: 100000000, "[0]": false, "x y": "                 <        \\                                <         < " },
								'   "',
								-100000000,
							],
							provenance: false,
						},
					],
					fingerprint: { goal: false, gitBranch: "feature/x", owns: [{ $ref: "global.tactics.a" }, { $ref: "session.lazy.n1" }] },
					n10: { goal: -1000000000, gitBranch: "main", owns: [{ $ref: "session.lazy.n1" }, { $ref: "global.tactics.a" }, { $ref: "cwd.tactics.t" }] },
					n1: {},
				},
				tactics: { a: "main" },
				lazy: { provenance: { a: { a: pad(""), 'q"': pad("") } } },
			},
		},
	],
	1030,
	"passive",
	"main",
];
