/**
 * The reads and refusals of a long-lived project (issue 26), through the real pi SDK with the
 * faux provider: `read_state` search finds text without reading planes into the context; a
 * cleanup's result names every change and counts deletions per plane; a patch in the other
 * grammar, an undeclared parameter or a root error gets State Flow's advice in the session's
 * grammar, never pi's validator output; a continued conversation keeps the grammar it ran with.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { createTodoExtension } from "../../examples/todo/index.js";
import { type Flow, flowDirs, withFlow } from "../host/fixture.js";

/** 40 tactics, every fourth about GraphQL, one loose artifact about it, one lazy note that mentions it mid-text. */
function project(): Record<string, unknown> {
	const tactics: Record<string, unknown> = {};
	for (let i = 0; i < 40; i++) tactics[`s${i}`] = { do: i % 4 === 0 ? `wire the GraphQL resolver ${i}` : `step ${i}`, status: "done" };
	tactics["graphql-spike"] = "tried it in May";
	return {
		cwd: {
			tactics,
			artifacts: { "src/schema.graphql": { kind: "file", note: "the old schema" } },
			lazy: { "notes/api.md": "We compared REST\nand graphql.\u001b[2J Decided: REST." },
			strategy: { rules: "small commits" },
		},
	};
}

/** The tool result of one call. */
function result(flow: Flow, id: string): { isError: boolean; text: string; details: Record<string, unknown> } {
	const r = flow.results()[id];
	assert.ok(r, `a result for ${id}`);
	return r;
}

describe("a long-lived project through the SDK", () => {
	it("finds text with read_state search: locators and one-line snippets, under a path, bounded and counted", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("seed", [{ calls: [{ id: "seed", name: "patch_state", args: project() }] }, { text: "ok" }]);
			await flow.prompt("find graphql", [
				{
					calls: [
						{ id: "all", name: "read_state", args: { search: "GRAPHQL" } },
						{ id: "under", name: "read_state", args: { search: "graphql", path: "cwd.artifacts" } },
						{ id: "none", name: "read_state", args: { search: "kubernetes" } },
					],
				},
				{ text: "found" },
			]);
			const all = result(flow, "all");
			assert.equal(all.isError, false);
			const lines = all.text.split("\n");
			assert.match(
				lines[0] as string,
				/^search "GRAPHQL" in cwd, session: keys and text of every plane, lazy bodies and registered roots, now \(not history\), case-insensitive: 13 matches$/,
			);
			assert.ok(lines.includes('cwd.tactics.s0.do: "wire the GraphQL resolver 0"'), all.text);
			assert.ok(lines.includes('cwd.tactics.graphql-spike (key): "tried it in May"'), all.text);
			// A matching key's value is previewed (the artifact's bookkeeping follows, cut short).
			assert.ok(
				lines.some((l) => l.startsWith('cwd.artifacts["src/schema.graphql"] (key): {"kind":"file","note":"the old schema",') && l.endsWith("…")),
				all.text,
			);
			// Stored text never ends a line of the result and never reaches the terminal as a control character.
			assert.ok(lines.includes('cwd.lazy["notes/api.md"]: "We compared REST\\nand graphql.\\u001b[2J Decided: REST."'), all.text);
			assert.ok(!all.text.includes("\u001b"));
			assert.equal(lines.length, 14, "a header and one line per match");

			const under = result(flow, "under");
			const found = under.text.split("\n").slice(1);
			assert.equal(found.length, 1, under.text);
			assert.ok(found[0]?.startsWith('cwd.artifacts["src/schema.graphql"] (key): '), under.text);
			assert.match(result(flow, "none").text, /^search "kubernetes" in cwd, session: .*: no match$/);
		});
	});

	it("counts what a bounded search leaves out, and the result stays small", async () => {
		await withFlow({}, async (flow) => {
			const tactics: Record<string, string> = {};
			for (let i = 0; i < 120; i++) tactics[`t${i}`] = `graphql step ${i}`;
			await flow.prompt("seed", [{ calls: [{ id: "seed", name: "patch_state", args: { cwd: { tactics } } }] }, { text: "ok" }]);
			await flow.prompt("find", [{ calls: [{ id: "s", name: "read_state", args: { search: "graphql" } }] }, { text: "ok" }]);
			const s = result(flow, "s");
			assert.match(s.text, /: 120 matches\n/);
			assert.match(s.text, /^\+ 80 more not shown: search under a narrower path/m);
			assert.equal(s.text.split("\n").length, 42);
			assert.ok(s.text.length < 5000, `${s.text.length} characters`);
		});
	});

	it("lists every change of a cleanup and counts its deletions per plane, the loose artifact included", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("seed", [{ calls: [{ id: "seed", name: "patch_state", args: project() }] }, { text: "ok" }]);
			const drop: Record<string, null> = { "graphql-spike": null };
			for (let i = 0; i < 40; i += 4) drop[`s${i}`] = null;
			await flow.prompt("drop graphql", [
				{ calls: [{ id: "drop", name: "patch_state", args: { cwd: { tactics: drop, artifacts: { "src/schema.graphql": null } } } }] },
				{ text: "done" },
			]);
			const text = result(flow, "drop").text;
			assert.match(text, /^deleted: 12 \(cwd\.tactics 11, cwd\.artifacts 1\)$/m);
			const changed = /^changed: (.*)$/m.exec(text)?.[1] ?? "";
			assert.ok(!changed.includes("more"), changed);
			assert.equal(changed.split(", ").length, 12);
			assert.ok(changed.includes("/cwd/artifacts/src~1schema.graphql"), changed);
		});
	});

	it("counts per plane what a very large change does not spell out", async () => {
		await withFlow({}, async (flow) => {
			const tactics: Record<string, string> = {};
			for (let i = 0; i < 300; i++) tactics[`step-number-${i}`] = "x";
			await flow.prompt("seed", [{ calls: [{ id: "big", name: "patch_state", args: { cwd: { tactics, strategy: { a: "b" } } } }] }, { text: "ok" }]);
			const text = result(flow, "big").text;
			const m = /^changed: (.*) \(\+(\d+) more: (.*)\)$/m.exec(text);
			assert.ok(m, text);
			const shown = (m[1] as string).split(", ").length;
			assert.equal(shown + Number(m[2]), 301);
			assert.match(m[3] as string, /cwd\.tactics \d+/);
			assert.ok(text.length < 2600, `${text.length} characters`);
		});
	});
});

describe("refusals in the session's grammar (through pi's validation step)", () => {
	it("a flat patch in a scoped session, an undeclared read parameter: State Flow's advice, not pi's validator", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("go", [
				{
					calls: [
						{ id: "flat", name: "patch_state", args: { intents: { x: { goal: "g" } } } },
						{ id: "extra", name: "read_state", args: { path: "cwd.tactics", depth: 2 } },
					],
				},
				{ text: "ok" },
			]);
			const flat = result(flow, "flat");
			assert.equal(flat.isError, true);
			assert.match(flat.text, /this session has several owners \(cwd, session\): wrap planes in an owner, e\.g\. \{ "cwd": \{ "intents": \{ \.\.\. \} \} \}/);
			assert.doesNotMatch(flat.text, /Validation failed|schema is false|additional properties/);
			const extra = result(flow, "extra");
			assert.match(extra.text, /unknown parameter `depth`; use `path`, `paths`, `projection` and `search`/);
			assert.doesNotMatch(extra.text, /Validation failed/);
		});
	});

	it("a scoped patch in a flat session, a root's schema error and an unknown plane in flat form: no owner in the paths", async () => {
		await withFlow({ flags: { "state-owners": "cwd" }, extraFactories: [createTodoExtension()] }, async (flow) => {
			await flow.prompt("go", [
				{
					calls: [
						{ id: "scoped", name: "patch_state", args: { cwd: { tactics: { a: "x" } } } },
						{ id: "bad", name: "patch_state", args: { todos: { milk: { text: 3 } } } },
						{ id: "planes", name: "patch_state", args: { plans: { a: 1 } } },
					],
				},
				{ text: "ok" },
			]);
			const scoped = result(flow, "scoped");
			assert.match(scoped.text, /this session has one owner \(cwd\): send planes at the top level/);
			assert.doesNotMatch(scoped.text, /Validation failed/);
			const bad = result(flow, "bad");
			assert.match(bad.text, /^`todos\.milk\.text` must be string \(schema of root `todos`, extension todo\); nothing was written$/);
			const planes = result(flow, "planes");
			assert.match(planes.text, /unknown key `plans`; expected planes `intents`, `strategy`, `tactics`, `artifacts`, `lazy`, `todos`/);
		});
	});

	it("a write to a root whose extension is not loaded says so, in a flat session too", async () => {
		await withFlow({ flags: { "state-owners": "cwd" } }, async (flow) => {
			await flow.prompt("go", [{ calls: [{ id: "r", name: "patch_state", args: { todos: { a: { text: "t" } } } }] }, { text: "ok" }]);
			const r = result(flow, "r");
			assert.match(r.text, /unknown key `todos`; expected planes/);
			assert.doesNotMatch(r.text, /Validation failed|additional properties/);
		});
	});
});

describe("no refusal is pi's validator output (fast-check, through the SDK)", () => {
	const key = fc.constantFrom("intents", "tactics", "lazy", "cwd", "session", "global", "notes", "response", "todos");
	const value = fc.constantFrom<unknown>({}, { a: "x" }, "x", [], null, 3, { tactics: { a: "x" } });
	const patch = fc.dictionary(key, value, { maxKeys: 3 });
	for (const flags of [{ "state-owners": "cwd" }, undefined]) {
		it(`${flags ? "flat" : "scoped"}: any patch is committed or refused in State Flow's words`, async () => {
			await withFlow(flags ? { flags } : {}, async (flow) => {
				let n = 0;
				await assertProperty(
					fc.asyncProperty(patch, async (args) => {
						const id = `c${++n}`;
						await flow.prompt("go", [{ calls: [{ id, name: "patch_state", args: args as Record<string, unknown> }] }, { text: "ok" }]);
						const r = result(flow, id);
						assert.doesNotMatch(r.text, /Validation failed|schema is false|additional properties|fewer than/, JSON.stringify(args));
						if (!r.isError) assert.match(r.text, /^(Committed transition|No change)/m, JSON.stringify(args));
					}),
					{ numRuns: 25 },
				);
			});
		});
	}
});

describe("one grammar per conversation", () => {
	it("a continued session keeps the owners it ran with; a flag given now wins and /state says so", async (t) => {
		const d = flowDirs(t, "state-flow-grammar-");
		let file = "";
		await withFlow(
			{ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.create(d.cwd, d.sessionDir), flags: { "state-owners": "cwd" } },
			async (flow) => {
				await flow.prompt("flat run", [{ calls: [{ id: "w", name: "patch_state", args: { tactics: { a: "x" } } }] }, { text: "ok" }]);
				assert.equal(result(flow, "w").isError, false);
				file = flow.harness.session.sessionManager.getSessionFile() as string;
			},
		);
		// Continued without the flag: still flat, from the earlier runs.
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.open(file, d.sessionDir) }, async (flow) => {
			assert.match((await flow.command("/state"))[0] as string, /^active cwd — flat interface, from this session's earlier runs \(kept when continued\)$/m);
			await flow.prompt("again", [{ calls: [{ id: "w2", name: "patch_state", args: { tactics: { b: "y" } } }] }, { text: "ok" }]);
			assert.equal(result(flow, "w2").isError, false, result(flow, "w2").text);
			const tool = flow.seen.at(-1)?.tools.find((x) => x.name === "patch_state");
			assert.ok(Object.keys((tool?.parameters as { properties?: object } | undefined)?.properties ?? {}).includes("tactics"), "the flat declaration");
		});
		// Continued with another flag: the flag wins, and /state names the stored choice it replaced.
		await withFlow(
			{ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.open(file, d.sessionDir), flags: { "state-owners": "cwd,session" } },
			async (flow) => {
				const status = (await flow.command("/state"))[0] as string;
				assert.match(
					status,
					/^active cwd\+session — scoped interface, from this session's earlier runs \(kept when continued\); CLI flags overrode its stored active cwd$/m,
				);
				await flow.prompt("scoped run", [{ text: "ok" }]);
			},
		);
		// A /state choice replaces it for good.
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, sessionManager: SessionManager.open(file, d.sessionDir) }, async (flow) => {
			assert.match((await flow.command("/state"))[0] as string, /active cwd\+session — scoped interface/, "the flagged run was recorded too");
			await flow.command("/state owners global,cwd");
			assert.match((await flow.command("/state"))[0] as string, /^active global\+cwd — scoped interface, from this session's \/state choice$/m);
		});
	});
});
