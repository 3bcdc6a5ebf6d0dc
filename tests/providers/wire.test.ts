/**
 * Provider fidelity: the request bodies pi-ai's real adapters build for both `patch_state`
 * declarations and `read_state`, captured offline (see capture.ts). Every advertised property
 * must survive; what an adapter drops is pinned here and in the docs/providers.md table, so a
 * pi-ai upgrade that drops more fails loudly instead of silently widening what models may send.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Tool } from "@mariozechner/pi-ai";
import { flatPatchSchema, patchDescription, readDescription, readSchema, scopedPatchSchema } from "../../lib/model/schemas.js";
import { added, capture, dropped, STOP, TARGETS } from "./capture.js";

type Shape = "flat" | "scoped";
type ToolName = "patch_state" | "read_state";

/** What each adapter drops from each declaration (JSON pointers into the parameter schema). */
const EXPECTED_DROPS: Record<string, Record<ToolName, string[]>> = {
	"anthropic-messages": { patch_state: ["/additionalProperties", "/minProperties"], read_state: ["/additionalProperties"] },
	"openai-responses": { patch_state: [], read_state: [] },
	"openai-completions": { patch_state: [], read_state: [] },
	"google-generative-ai": { patch_state: [], read_state: [] },
	"mistral-conversations": { patch_state: [], read_state: [] },
	"bedrock-converse-stream": { patch_state: [], read_state: [] },
};
/** Members an adapter adds (Anthropic always sends `required`, empty when nothing is required). */
const EXPECTED_ADDS: Record<string, string[]> = { "anthropic-messages": ["/required"] };

const HOSTS: Record<string, string> = {
	"anthropic-messages": "api.anthropic.com",
	"openai-responses": "api.openai.com",
	"openai-completions": "api.cerebras.ai",
	"google-generative-ai": "generativelanguage.googleapis.com",
	"mistral-conversations": "api.mistral.ai",
};

function declarations(shape: Shape): Tool[] {
	return [
		{ name: "patch_state", description: patchDescription(shape), parameters: shape === "flat" ? flatPatchSchema() : scopedPatchSchema() },
		{ name: "read_state", description: readDescription(shape), parameters: readSchema() },
	];
}

const json = (v: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

/** The package root (holds package.json), found from this file both under tsx and compiled in dist/. */
function packageRoot(): string {
	let dir = dirname(fileURLToPath(import.meta.url));
	while (!existsSync(join(dir, "package.json"))) dir = dirname(dir);
	return dir;
}
const docs = readFileSync(join(packageRoot(), "docs/providers.md"), "utf8");

for (const target of TARGETS) {
	describe(`${target.api} (${target.provider}/${target.model})`, () => {
		for (const shape of ["flat", "scoped"] as const) {
			it(`sends both ${shape} declarations with every advertised property intact`, async () => {
				const tools = declarations(shape);
				const c = await capture(target, tools);
				assert.equal(c.stopReason, "error", "the intercepted request must fail, proving nothing reached a real endpoint");
				if (target.payloadOnly) assert.equal(c.errorMessage, STOP);
				else {
					assert.equal(new URL(String(c.url)).host, HOSTS[target.api]);
					assert.match(String(c.errorMessage), /intercepted \(no network\)/);
				}
				const wire = target.tools(c.body);
				assert.deepEqual(
					wire.map((w) => w.name),
					tools.map((t) => t.name),
				);
				for (const tool of tools) {
					const w = wire.find((x) => x.name === tool.name);
					assert.ok(w, tool.name);
					assert.equal(w.description, tool.description, `${tool.name} description`);
					const sent = json(tool.parameters);
					const got = json(w.schema);
					assert.equal(got.type, "object", `${tool.name}: top-level type`);
					assert.deepEqual(got.properties, sent.properties, `${tool.name}: every property and its nested schema survive`);
					assert.deepEqual(got.required ?? [], sent.required ?? [], `${tool.name}: required`);
					assert.deepEqual(dropped(sent, got), EXPECTED_DROPS[target.api]?.[tool.name as ToolName], `${tool.name}: dropped`);
					assert.deepEqual(added(sent, got), EXPECTED_ADDS[target.api] ?? [], `${tool.name}: added`);
				}
			});
		}

		if (!target.payloadOnly) {
			it("puts on the wire exactly the tools it showed to onPayload", async () => {
				const c = await capture(target, declarations("flat"));
				assert.deepEqual(target.tools(c.body), target.tools(target.api === "google-generative-ai" ? json(c.payload).config : c.payload));
			});
		}

		if (target.api === "anthropic-messages") {
			it("keeps our tool names and schemas with an OAuth (Claude Code) token, which renames only Claude Code's own tools", async () => {
				const tools = declarations("flat");
				const c = await capture(target, tools, "sk-ant-oat01-dummy");
				const wire = target.tools(c.body);
				assert.deepEqual(
					wire.map((w) => w.name),
					["patch_state", "read_state"],
				);
				for (const tool of tools) assert.deepEqual(json(wire.find((w) => w.name === tool.name)?.schema).properties, json(tool.parameters).properties);
			});
		}

		it("is listed in docs/providers.md with exactly the keywords it drops", () => {
			const row = docs.split("\n").find((l) => l.startsWith(`| \`${target.api}\``));
			assert.ok(row, `docs/providers.md needs a table row for \`${target.api}\``);
			const cells = row.split("|").map((c) => c.trim());
			const drops = EXPECTED_DROPS[target.api];
			assert.ok(drops);
			for (const [tool, cell] of [
				["patch_state", cells[2]],
				["read_state", cells[3]],
			] as const) {
				const want: string = drops[tool].map((p: string) => `\`${p.slice(1)}\``).join(", ") || "none";
				assert.equal(cell, want, `${target.api} ${tool}`);
			}
		});
	});
}
