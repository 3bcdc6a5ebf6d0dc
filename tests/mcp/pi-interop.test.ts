/**
 * One memory, two front-ends: the same calls through pi (the real SDK, faux provider) and
 * through `state-flow mcp` (the real MCP client over stdio) give the same result texts, ids
 * and times aside, in the flat and the scoped grammar; and a write by either is what the
 * other reads next, in the same project.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startFlow, headOf } from "../host/fixture.js";
import { tempDir } from "../helpers/temp-dir.js";
import { call, ok, stdioServer } from "./fixture.js";

type Args = Record<string, unknown>;
type Step = { tool: "patch_state" | "read_state"; args: Args };

/** Ids, times and the test's temp folder differ by front-end (pi's fixture numbers and clocks them); nothing else may. */
function normal(text: string, base: string): string {
	return text
		.split(base)
		.join("<base>")
		.replace(/\n?seen: \{[^\n]*\}$/, "")
		.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, "<id>")
		.replace(/\bt-\d{4}\b/g, "<id>")
		.replace(/mcp:sf-test:<id>/g, "<call>")
		.replace(/\b(?:c|call)\d+\b/g, "<call>")
		.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z/g, "<time>");
}

const FLAT: Step[] = [
	{
		tool: "patch_state",
		args: {
			intents: { login: { goal: "fix login", owns: [{ $ref: "tactics.t1" }] } },
			tactics: { t1: "reproduce the bug", t2: "other" },
			lazy: { "notes/a.md": "a long body" },
		},
	},
	{ tool: "read_state", args: { path: "tactics" } },
	{ tool: "read_state", args: { paths: ["intents.login", 'lazy["notes/a.md"]'] } },
	{ tool: "patch_state", args: { tactics: { t2: null, nope: null } } },
	{ tool: "read_state", args: { path: "effective[1].tactics" } },
	{ tool: "read_state", args: { path: "patches[0]" } },
	{ tool: "read_state", args: { search: "reproduce" } },
	{ tool: "patch_state", args: { intents: { login: null } } },
	{ tool: "read_state", args: { path: "tactics", projection: "keys" } },
	{ tool: "read_state", args: { path: "intents", projection: "history" } },
	{ tool: "patch_state", args: { plans: { x: 1 } } },
	{ tool: "read_state", args: { path: "tactics.t9" } },
	{ tool: "patch_state", args: { strategy: { db: "postgres://u:hunter2secretpassword@db.example.com/x" } } },
];

const SCOPED: Step[] = [
	{ tool: "patch_state", args: { cwd: { tactics: { t1: "a" } }, global: { strategy: { style: "short" } } } },
	{ tool: "read_state", args: { paths: ["cwd.tactics", "global.strategy"] } },
	{ tool: "read_state", args: { path: "effective.tactics" } },
	{ tool: "patch_state", args: { session: { tactics: { x: 1 } } } },
	{ tool: "patch_state", args: { tactics: { t1: "flat in scoped" } } },
];

/** The texts pi's tools answer `steps` with, in a fresh project with these owners. */
async function viaPi(t: { after(fn: () => void): void }, owners: string, steps: Step[]): Promise<string[]> {
	const base = tempDir(t, "sf-mcp-pi-");
	const cwd = join(base, "p");
	const agentDir = join(base, "a");
	mkdirSync(cwd);
	mkdirSync(agentDir);
	const flow = await startFlow({ cwd, agentDir, flags: { "state-owners": owners } });
	try {
		await flow.prompt("go", [...steps.map((s, i) => ({ calls: [{ id: `c${i}`, name: s.tool, args: s.args }] })), { text: "done" }]);
		const results = flow.results();
		return steps.map((_, i) => normal(results[`c${i}`]?.text ?? "(no result)", base));
	} finally {
		flow.dispose();
	}
}

/** The texts `state-flow mcp` answers `steps` with, in a fresh project with these owners. */
async function viaMcp(t: { after(fn: () => void): void }, owners: string, steps: Step[]): Promise<string[]> {
	const base = tempDir(t, "sf-mcp-mcp-");
	const cwd = join(base, "p");
	const agentDir = join(base, "a");
	mkdirSync(cwd);
	mkdirSync(agentDir);
	const s = await stdioServer({ cwd, agentDir, owners });
	try {
		const out: string[] = [];
		for (const step of steps) out.push(normal((await call(s.client, step.tool, step.args)).text, base));
		return out;
	} finally {
		await s.close();
	}
}

describe("state-flow mcp answers as pi does", () => {
	it("flat (cwd): every step of the grammar gives pi's text, refusals included", async (t) => {
		const [pi, mcp] = await Promise.all([viaPi(t, "cwd", FLAT), viaMcp(t, "cwd", FLAT)]);
		FLAT.forEach((step, i) => assert.equal(mcp[i], pi[i], `step ${i} ${step.tool} ${JSON.stringify(step.args)}`));
		// The grammar was exercised, not an empty echo: ownership, cascades, reports, search, refusals.
		assert.match(pi[3] ?? "", /nope/, "a missing deletion is reported");
		assert.match(pi[7] ?? "", /tactics\.t1|\/tactics\/t1/, "deleting the intent cascades to what it owns");
		assert.match(pi[6] ?? "", /reproduce/, "search finds the value");
		assert.match(pi[10] ?? "", /plans/, "an unknown plane is refused naming it");
		assert.doesNotMatch(pi[12] ?? "", /^Committed/, "a credential is refused");
		assert.doesNotMatch(mcp[12] ?? "", /hunter2secretpassword/, "the refusal never prints the secret");
	});

	it("scoped (global+cwd): owners first, an owner not served and a flat key refused alike", async (t) => {
		const [pi, mcp] = await Promise.all([viaPi(t, "global,cwd", SCOPED), viaMcp(t, "global,cwd", SCOPED)]);
		SCOPED.forEach((step, i) => assert.equal(mcp[i], pi[i], `step ${i} ${step.tool} ${JSON.stringify(step.args)}`));
		assert.match(pi[3] ?? "", /session/, "an owner outside the selection is refused naming it");
	});
});

describe("an MCP client and a pi session in one project", () => {
	it("each reads what the other wrote", async (t) => {
		const base = tempDir(t, "sf-mcp-both-");
		const cwd = join(base, "p");
		const agentDir = join(base, "a");
		mkdirSync(cwd);
		mkdirSync(agentDir);
		const s = await stdioServer({ cwd, agentDir });
		const flow = await startFlow({ cwd, agentDir, flags: { "state-owners": "cwd" } });
		try {
			await ok(s.client, "patch_state", { tactics: { fromMcp: "written by an MCP client" } });
			await flow.prompt("go", [{ calls: [{ id: "w", name: "patch_state", args: { tactics: { fromPi: "written by pi" } } }] }, { text: "done" }]);
			assert.match(headOf(flow, 0), /written by an MCP client/, "pi's head shows the MCP client's write");
			assert.equal(flow.results().w?.isError, false, flow.results().w?.text);
			const read = await ok(s.client, "read_state", { path: "tactics" });
			assert.match(read.text, /"fromPi":"written by pi"/);
			assert.match(read.text, /"fromMcp":"written by an MCP client"/);
			const head = await ok(s.client, "state_head");
			assert.match(head.text, /written by pi/, "the MCP head shows pi's write");
		} finally {
			flow.dispose();
			await s.close();
		}
	});
});
