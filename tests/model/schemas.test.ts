/**
 * The tool declarations: plain top-level objects that survive every provider's conversion,
 * fresh per call, validated by pi-ai's own validator, and examples that run through the real
 * engine. Byte sizes are guarded because the declarations are sent on every request.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { validateToolArguments } from "@mariozechner/pi-ai";
import type { Tool } from "@mariozechner/pi-ai";
import { newHistory } from "../../lib/core/history.js";
import { evaluate } from "../../lib/core/query.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import type { Owner, OwnerHistory } from "../../lib/core/types.js";
import { toCanonicalLocator, toCanonicalPatch } from "../../lib/model/interface.js";
import { PATCH_LABEL, READ_LABEL, flatPatchSchema, patchDescription, readDescription, readSchema, scopedPatchSchema } from "../../lib/model/schemas.js";

type Shape = "flat" | "scoped";

function tool(name: string, shape: Shape): Tool {
	if (name === "patch_state") {
		return { name, description: patchDescription(shape), parameters: shape === "flat" ? flatPatchSchema() : scopedPatchSchema() };
	}
	return { name, description: readDescription(shape), parameters: readSchema() };
}

/**
 * pi-ai's own argument validation, exactly as the agent loop runs it: false only for its
 * refusal of the arguments; any other error (a crashed validator, a broken schema) fails the test.
 */
function accepts(t: Tool, args: Record<string, unknown>): boolean {
	try {
		validateToolArguments(t, { type: "toolCall", id: "c1", name: t.name, arguments: args });
		return true;
	} catch (e) {
		if (e instanceof Error && e.message.startsWith(`Validation failed for tool "${t.name}":\n  - `)) return false;
		throw e;
	}
}

/** Bytes of one declaration as sent: name + description + JSON of the parameters. */
function declarationBytes(t: Tool): number {
	return Buffer.byteLength(t.name) + Buffer.byteLength(t.description) + Buffer.byteLength(JSON.stringify(t.parameters));
}

/** The JSON example that ends a patch description. */
function exampleOf(description: string): unknown {
	const at = description.indexOf("Example: ");
	assert.ok(at >= 0, "the description carries an example");
	return JSON.parse(description.slice(at + "Example: ".length));
}

describe("tool schemas", () => {
	it("returns a fresh but equal object on every call, because pi caches validators by identity", () => {
		for (const make of [flatPatchSchema, scopedPatchSchema, readSchema]) {
			const a = make();
			const b = make();
			assert.notEqual(a, b);
			assert.deepEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
		}
	});

	it("declares every schema as a plain top-level object with no top-level union", () => {
		for (const s of [flatPatchSchema(), scopedPatchSchema(), readSchema()]) {
			const json = JSON.parse(JSON.stringify(s)) as Record<string, unknown>;
			assert.equal(json.type, "object");
			assert.equal(json.anyOf, undefined);
			assert.equal(json.oneOf, undefined);
			assert.equal(json.additionalProperties, false);
		}
	});

	it("keeps the planes and owners visible to Anthropic, which sends only top-level properties", () => {
		const anthropicView = (s: object): string[] => Object.keys((JSON.parse(JSON.stringify(s)) as { properties: object }).properties);
		assert.deepEqual(anthropicView(flatPatchSchema()), ["intents", "strategy", "tactics", "artifacts", "lazy"]);
		assert.deepEqual(anthropicView(scopedPatchSchema()), ["global", "cwd", "session"]);
		assert.deepEqual(anthropicView(readSchema()), ["path", "paths", "projection", "search"]);
		assert.deepEqual((readSchema() as { properties: { projection: { enum: string[] } } }).properties.projection.enum, ["value", "keys", "history"]);
	});

	it("accepts flat plane patches and refuses empty, unknown-plane and non-object planes", () => {
		const t = tool("patch_state", "flat");
		assert.equal(accepts(t, { tactics: { a: 1 }, lazy: { "notes/x.md": "body" } }), true);
		assert.equal(accepts(t, { intents: {} }), true);
		assert.equal(accepts(t, {}), false);
		assert.equal(accepts(t, { plans: { a: 1 } }), false);
		assert.equal(accepts(t, { tactics: 3 }), false);
		assert.equal(accepts(t, { tactics: ["a"] }), false);
	});

	it("accepts scoped owner patches and refuses empty, unknown-owner and non-object owners", () => {
		const t = tool("patch_state", "scoped");
		assert.equal(accepts(t, { cwd: { tactics: { a: 1 } }, session: { intents: { b: null } } }), true);
		assert.equal(accepts(t, { global: {} }), true);
		assert.equal(accepts(t, {}), false);
		assert.equal(accepts(t, { response: { last: 1 } }), false);
		assert.equal(accepts(t, { cwd: "tactics" }), false);
	});

	it("accepts read arguments with a path or a batch and refuses an unknown projection", () => {
		const t = tool("read_state", "flat");
		assert.equal(accepts(t, { path: "tactics" }), true);
		assert.equal(accepts(t, { paths: ["tactics", "lazy"], projection: "keys" }), true);
		assert.equal(accepts(t, { path: "tactics", projection: "history" }), true);
		assert.equal(accepts(t, { path: "tactics", projection: "bodies" }), false);
		assert.equal(accepts(t, { path: "tactics", limit: 3 }), false);
	});

	it("has a patch example per shape that the real engine commits", () => {
		const cases: Array<{ shape: Shape; wanted: Owner[] }> = [
			{ shape: "flat", wanted: ["cwd"] },
			{ shape: "scoped", wanted: ["cwd", "session"] },
		];
		for (const { shape, wanted } of cases) {
			const example = exampleOf(patchDescription(shape)) as Record<string, unknown>;
			assert.equal(accepts(tool("patch_state", shape), example), true, `${shape} example passes pi validation`);
			const histories: Partial<Record<Owner, OwnerHistory>> = {};
			for (const o of wanted) histories[o] = newHistory(o, 20);
			const staged = stage(histories, toCanonicalPatch(example, wanted), { id: "t1", at: "2026-01-01T00:00:00.000Z", by: { kind: "system", reason: "test" } });
			assert.equal(staged.noop, false);
			assert.deepEqual(staged.report.danglingRefs, [], `${shape} example references what it creates`);
			commitStaged(histories, staged);
			assert.equal(histories.cwd?.state.tactics.t1, "reproduce bug");
		}
	});

	it("shows read locators in each description that resolve in that grammar", () => {
		const cases: Array<{ shape: Shape; wanted: Owner[]; locators: string[]; writes: Array<Record<string, unknown>> }> = [
			{
				shape: "flat",
				wanted: ["cwd"],
				locators: ["tactics", "tactics.items[1]", 'lazy["notes/a.md"]', "effective[1].tactics", "patches[0]"],
				writes: [{ cwd: { tactics: { items: [1, 2] }, lazy: { "notes/a.md": "body" } } }, { cwd: { tactics: { next: true } } }],
			},
			{
				shape: "scoped",
				wanted: ["global", "cwd", "session"],
				locators: ["cwd.tactics", 'cwd.lazy["notes/a.md"]', "global[1].strategy", "session.patches[0]", "effective.tactics"],
				writes: [
					{ global: { strategy: { a: 1 } }, cwd: { tactics: { a: 1 }, lazy: { "notes/a.md": "body" } }, session: { tactics: { b: 1 } } },
					{ global: { strategy: { a: 2 } } },
				],
			},
		];
		for (const { shape, wanted, locators, writes } of cases) {
			const text = readDescription(shape);
			const histories: Partial<Record<Owner, OwnerHistory>> = {};
			for (const o of wanted) histories[o] = newHistory(o, 20);
			writes.forEach((patch, i) =>
				commitStaged(histories, stage(histories, patch, { id: `t${i}`, at: "2026-01-01T00:00:00.000Z", by: { kind: "system", reason: "test" } })),
			);
			for (const loc of locators) {
				assert.ok(text.includes(loc), `${shape} description shows ${loc}`);
				const [result] = evaluate({ wanted, histories }, [toCanonicalLocator(loc, wanted)]);
				assert.notEqual(result?.value, undefined, `${loc} resolves`);
			}
		}
	});

	// 1,300 until issue 26 added `search` (+~90 B); the target stays 1,800.
	it("keeps both declarations together under 1,400 bytes per shape (target 1,800)", () => {
		for (const shape of ["flat", "scoped"] as const) {
			const total = declarationBytes(tool("patch_state", shape)) + declarationBytes(tool("read_state", shape));
			assert.ok(total <= 1400, `${shape} declarations are ${total} bytes`);
		}
	});

	it("labels both tools", () => {
		assert.equal(PATCH_LABEL, "Patch state");
		assert.equal(READ_LABEL, "Read state");
	});
});
