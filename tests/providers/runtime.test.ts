/**
 * Runtime validation covers what the wire drops (see wire.test.ts and docs/providers.md).
 * Through the real extension in a real pi AgentSession (faux provider), arguments that only
 * closure or non-emptiness would reject, and JSON-encoded strings where objects belong, are
 * refused with nothing written. The same inputs go straight into State Flow's own
 * normalization too, which must refuse them without pi's validator in front.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { isStateError } from "../../lib/core/errors.js";
import type { Owner } from "../../lib/core/types.js";
import { createStateFlow } from "../../lib/index.js";
import { toCanonicalPatch, toReadRequest } from "../../lib/model/interface.js";
import { createHarness } from "../helpers/pi-harness.js";

type Harness = Awaited<ReturnType<typeof createHarness>>;

interface ToolOutcome {
	name: string;
	isError: boolean;
	text: string;
}

/** One prompt in which the model makes `calls` in order (one per turn), then stops. */
async function callTools(h: Harness, calls: Array<[string, Record<string, unknown> | string]>): Promise<ToolOutcome[]> {
	const before = h.session.messages.length;
	h.faux.setResponses([
		...calls.map(([name, args], i) =>
			fauxAssistantMessage([fauxToolCall(name, args as Record<string, unknown>, { id: `call-${before}-${i}` })], { stopReason: "toolUse" }),
		),
		fauxAssistantMessage([fauxText("done")]),
	]);
	await h.session.prompt("go");
	return h.session.messages
		.slice(before)
		.flatMap((m) =>
			m.role === "toolResult" ? [{ name: m.toolName, isError: m.isError, text: m.content.map((c) => (c.type === "text" ? c.text : "")).join("") }] : [],
		);
}

/** The agent and project folders with a config selecting `owners`, plus one committed write. */
async function open(owners: Owner[]): Promise<{ h: Harness; root: string; log: string }> {
	const root = mkdtempSync(join(tmpdir(), "state-flow-runtime-"));
	const agentDir = join(root, "agent");
	const cwd = join(root, "project");
	mkdirSync(join(agentDir, "state-flow"), { recursive: true });
	mkdirSync(cwd);
	writeFileSync(join(agentDir, "state-flow", "config.json"), JSON.stringify({ owners, mode: "passive" }));
	const h = await createHarness({ extensionFactories: [createStateFlow({ agentDir })], cwd, agentDir });
	assert.deepEqual(h.extensionErrors, []);
	const seed = owners.length === 1 ? { tactics: { seed: true } } : { cwd: { tactics: { seed: true } } };
	const [r] = await callTools(h, [["patch_state", seed]]);
	assert.equal(r?.isError, false, r?.text);
	return { h, root, log: join(cwd, ".pi", "state-flow", "log.jsonl") };
}

function assertRefusedAndNothingWritten(outcomes: ToolOutcome[], log: string, logBefore: string, label: string, message: RegExp): void {
	assert.equal(outcomes.length, 1, label);
	const [o] = outcomes;
	assert.equal(o?.isError, true, `${label} must be refused: ${o?.text}`);
	assert.match(String(o?.text), message, label);
	assert.equal(readFileSync(log, "utf8"), logBefore, `${label}: nothing written`);
}

describe("flat declaration (one wanted owner): runtime refuses what Anthropic's wire drops", () => {
	let env: Awaited<ReturnType<typeof open>>;
	before(async () => {
		env = await open(["cwd"]);
	});
	after(() => {
		env.h.dispose();
		rmSync(env.root, { recursive: true, force: true });
	});

	const cases: Array<[string, Record<string, unknown> | string, RegExp]> = [
		["an empty object (minProperties)", {}, /the patch is empty; send at least one plane/],
		["mixed flat and scoped keys (additionalProperties)", { tactics: { a: 1 }, cwd: { tactics: { a: 1 } } }, /cwd/],
		["an unknown top-level key (additionalProperties)", { notes: { a: 1 } }, /notes/],
		["a JSON-encoded string where a plane object belongs", { tactics: '{"next":"x"}' }, /tactics/],
	];
	for (const [label, args, message] of cases) {
		it(`refuses ${label} with nothing written`, async () => {
			assert.ok(existsSync(env.log));
			const logBefore = readFileSync(env.log, "utf8");
			assertRefusedAndNothingWritten(await callTools(env.h, [["patch_state", args]]), env.log, logBefore, label, message);
		});
	}

	it("still accepts a valid write afterwards (the refusals left the session usable)", async () => {
		const [o] = await callTools(env.h, [["patch_state", { tactics: { next: "x" } }]]);
		assert.equal(o?.isError, false, o?.text);
		assert.match(readFileSync(env.log, "utf8"), /"next":"x"/);
	});

	it("refuses read_state arguments outside the declaration", async () => {
		const outcomes = await callTools(env.h, [
			["read_state", {}],
			["read_state", { path: "tactics", paths: ["tactics"] }],
			["read_state", { path: "tactics", extra: 1 }],
		]);
		assert.deepEqual(
			outcomes.map((o) => o.isError),
			[true, true, true],
			outcomes.map((o) => o.text).join("\n"),
		);
	});
});

describe("scoped declaration (two wanted owners): runtime refuses what Anthropic's wire drops", () => {
	let env: Awaited<ReturnType<typeof open>>;
	before(async () => {
		env = await open(["cwd", "session"]);
	});
	after(() => {
		env.h.dispose();
		rmSync(env.root, { recursive: true, force: true });
	});

	const cases: Array<[string, Record<string, unknown>, RegExp]> = [
		["an empty object (minProperties)", {}, /the patch is empty; send at least one plane/],
		["mixed scoped and flat keys (additionalProperties)", { cwd: { tactics: { a: 1 } }, tactics: { a: 1 } }, /tactics/],
		["an excluded owner", { global: { tactics: { a: 1 } } }, /global/],
		["a JSON-encoded string where an owner object belongs", { cwd: '{"tactics":{"a":1}}' }, /cwd/],
	];
	for (const [label, args, message] of cases) {
		it(`refuses ${label} with nothing written`, async () => {
			const logBefore = readFileSync(env.log, "utf8");
			assertRefusedAndNothingWritten(await callTools(env.h, [["patch_state", args]]), env.log, logBefore, label, message);
		});
	}
});

describe("State Flow's own normalization, without pi's validator in front", () => {
	const refuses = (f: () => unknown, field: RegExp, code = "invalid_input") =>
		assert.throws(f, (e: unknown) => isStateError(e) && e.code === code && field.test(e.message));

	it("refuses every input the wire may let through, for both shapes", () => {
		refuses(() => toCanonicalPatch({}, ["cwd"]), /empty|nothing|at least/i);
		refuses(() => toCanonicalPatch({ tactics: {}, cwd: {} }, ["cwd"]), /cwd/);
		refuses(() => toCanonicalPatch({ notes: {} }, ["cwd"]), /notes/);
		refuses(() => toCanonicalPatch({ tactics: '{"a":1}' }, ["cwd"]), /tactics/);
		refuses(() => toCanonicalPatch({}, ["cwd", "session"]), /empty|nothing|at least/i);
		refuses(() => toCanonicalPatch({ cwd: {}, tactics: {} }, ["cwd", "session"]), /tactics/);
		refuses(() => toCanonicalPatch({ global: { tactics: {} } }, ["cwd", "session"]), /global/, "excluded_owner");
		refuses(() => toCanonicalPatch({ cwd: '{"tactics":{}}' }, ["cwd", "session"]), /cwd/);
		refuses(() => toReadRequest({}, ["cwd"]), /path/);
		refuses(() => toReadRequest({ path: "tactics", extra: 1 }, ["cwd"]), /extra/);
	});
});
