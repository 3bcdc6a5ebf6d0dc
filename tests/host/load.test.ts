/**
 * Loading the built package the way pi does (issue 4): from the manifest through the same
 * resource-loader option `pi -e <path>` uses, and through the real `pi` CLI: `--help` lists
 * our flags, and a real print-mode run against a local OpenAI-compatible server sees both
 * tools, the protocol and one head, and commits to the project store. `pi install` is covered
 * by tests/package/package.test.ts. Every run uses temporary agent and project folders.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { DefaultResourceLoader, SettingsManager } from "@mariozechner/pi-coding-agent";
import { tempDir } from "../helpers/temp-dir.js";
import { bytesUnder, fauxSession } from "./fixture.js";

function packageRoot(): string {
	for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
		if (existsSync(join(dir, "package.json"))) return dir;
		if (dirname(dir) === dir) throw new Error("package.json not found above this test file");
	}
}
const ROOT = packageRoot();
const PI_CLI = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

function requireBuild(): void {
	assert.ok(existsSync(join(ROOT, "dist/lib/index.js")), "dist/lib is missing: run `npm run build` (or `npx tsc -p tsconfig.json`) first");
}

/** A project folder and an agent folder, so the user's real `~/.pi/agent` is never touched. */
function folders(t: { after(fn: () => void): void }): { cwd: string; agentDir: string } {
	const base = tempDir(t, "state-flow-load-");
	const cwd = join(base, "project");
	const agentDir = join(base, "agent");
	mkdirSync(cwd);
	mkdirSync(agentDir);
	return { cwd, agentDir };
}

/** Run the real pi CLI without blocking this process (the fake model server lives here). */
function runPi(args: string[], cwd: string, agentDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
	return new Promise((resolve, reject) => {
		const env: NodeJS.ProcessEnv = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", NO_COLOR: "1" };
		const child = spawn(process.execPath, [PI_CLI, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
		child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
		let late = false;
		const timer = setTimeout(() => {
			late = true;
			child.kill("SIGKILL");
		}, 30_000);
		child.on("error", reject);
		child.on("close", (code) => {
			clearTimeout(timer);
			if (late) reject(new Error(`pi ${args.join(" ")} did not finish within 30 s and was killed.\nstdout: ${stdout}\nstderr: ${stderr}`));
			else resolve({ code, stdout, stderr });
		});
	});
}

describe("loading from the package manifest (`pi -e <path>`, issue 4)", () => {
	it("registers both tools, `/state`, the flags and both Skills through the resource loader", async (t) => {
		requireBuild();
		const { cwd, agentDir } = folders(t);
		// The default export resolves pi's agent folder itself; point it at the temp one.
		const previous = process.env.PI_CODING_AGENT_DIR;
		process.env.PI_CODING_AGENT_DIR = agentDir;
		t.after(() => {
			if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = previous;
		});
		const settingsManager = SettingsManager.create(cwd, agentDir);
		// `additionalExtensionPaths` is what pi's CLI fills from `-e` (dist/main.js).
		const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, additionalExtensionPaths: [ROOT], noContextFiles: true });
		await resourceLoader.reload();
		const ext = resourceLoader.getExtensions();
		assert.deepEqual(ext.errors, []);
		assert.equal(ext.extensions.length, 1);
		const [loaded] = ext.extensions;
		assert.ok(loaded);
		assert.equal(loaded.resolvedPath, join(ROOT, "extensions/state-flow/index.js"), "the entry comes from package.json `pi.extensions`");
		assert.deepEqual([...loaded.tools.keys()].sort(), ["patch_state", "read_state"]);
		assert.ok(loaded.commands.has("state"));
		assert.deepEqual([...loaded.flags.keys()].sort(), ["state-mode", "state-owners"]);
		const skills = resourceLoader.getSkills();
		assert.deepEqual(skills.skills.map((s) => s.name).sort(), ["state-flow-guide", "state-flow-memory"]);
		assert.deepEqual(skills.diagnostics, []);

		const { session, errors } = await fauxSession(t, { cwd, agentDir, settingsManager, resourceLoader });
		assert.deepEqual(errors, []);
		const active = session.getActiveToolNames();
		assert.ok(active.includes("read_state") && active.includes("patch_state"), `active tools: ${active.join(", ")}`);
		// Loading never writes State Flow files: reading creates nothing.
		assert.equal(existsSync(join(cwd, ".pi")), false);
		assert.equal(existsSync(join(agentDir, "state-flow")), false);
	});
});

/** One streamed chat-completions answer in OpenAI's SSE format. */
function sse(res: ServerResponse, delta: Record<string, unknown>, finish: string): void {
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
	const chunk = (body: Record<string, unknown>) =>
		res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m1", ...body })}\n\n`);
	chunk({ choices: [{ index: 0, delta: { role: "assistant", ...delta }, finish_reason: null }] });
	chunk({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
	chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } });
	res.end("data: [DONE]\n\n");
}

interface SeenRequest {
	tools: string[];
	system: string;
	texts: string[];
}

/** A local OpenAI-compatible model: first a `patch_state` call, then a final answer. */
async function fakeModel(t: { after(fn: () => void): void }): Promise<{ url: string; seen: SeenRequest[] }> {
	const seen: SeenRequest[] = [];
	const server = createServer((req: IncomingMessage, res: ServerResponse) => {
		let body = "";
		req.on("data", (b: Buffer) => (body += b.toString("utf8")));
		req.on("end", () => {
			const json = JSON.parse(body) as { tools?: Array<{ function: { name: string } }>; messages: Array<{ role: string; content: unknown }> };
			const text = (c: unknown) => (typeof c === "string" ? c : JSON.stringify(c));
			seen.push({
				tools: (json.tools ?? []).map((x) => x.function.name),
				system: json.messages
					.filter((m) => m.role === "system" || m.role === "developer")
					.map((m) => text(m.content))
					.join("\n"),
				texts: json.messages.filter((m) => m.role !== "system" && m.role !== "developer").map((m) => `${m.role}: ${text(m.content)}`),
			});
			if (seen.length === 1) {
				const args = JSON.stringify({ cwd: { intents: { loaded: { goal: "prove pi -e works" } } } });
				sse(res, { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "patch_state", arguments: args } }] }, "tool_calls");
			} else {
				sse(res, { content: "All recorded." }, "stop");
			}
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	t.after(() => server.close());
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

describe("the real `pi` CLI with `-e <package root>` (issue 4)", () => {
	it("lists the extension's flags in `--help`, and only with `-e`", async (t) => {
		requireBuild();
		const { cwd, agentDir } = folders(t);
		const [withExt, without] = await Promise.all([runPi(["-e", ROOT, "--help"], cwd, agentDir), runPi(["--help"], cwd, agentDir)]);
		// pi 0.73.1 prints help on stderr; read both streams so the test does not hinge on that.
		const help = `${withExt.stdout}${withExt.stderr}`;
		assert.equal(withExt.code, 0, help);
		assert.match(help, /--state-mode <value>\s+State Flow mode/);
		assert.match(help, /--state-owners <value>\s+State Flow owners/);
		assert.doesNotMatch(help, /Failed to load extension/);
		assert.equal(without.code, 0, without.stderr);
		assert.match(`${without.stdout}${without.stderr}`, /--extension, -e <path>/, "the control run printed help too");
		assert.doesNotMatch(`${without.stdout}${without.stderr}`, /--state-mode/);
	});

	it("runs a print-mode prompt that sees both tools, the protocol, both Skills and one head, and commits", async (t) => {
		requireBuild();
		const { cwd, agentDir } = folders(t);
		const model = await fakeModel(t);
		const models = {
			providers: {
				sflocal: {
					baseUrl: model.url,
					api: "openai-completions",
					apiKey: "test-key",
					compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
					models: [{ id: "m1" }],
				},
			},
		};
		writeFileSync(join(agentDir, "models.json"), JSON.stringify(models));
		const run = await runPi(["-e", ROOT, "--provider", "sflocal", "--model", "m1", "-p", "Remember that we load with -e."], cwd, agentDir);
		assert.equal(run.code, 0, `pi exited ${run.code}\n${run.stderr}`);
		assert.match(run.stdout, /All recorded\./);
		assert.equal(model.seen.length, 2);
		const [first, second] = model.seen;
		assert.ok(first && second);
		for (const name of ["read_state", "patch_state", "read"]) assert.ok(first.tools.includes(name), `tools sent: ${first.tools.join(", ")}`);
		assert.equal(first.system.split("<state_flow_protocol>").length, 2, "the protocol block is in the system prompt once");
		for (const skill of ["state-flow-guide", "state-flow-memory"]) assert.ok(first.system.includes(`<name>${skill}</name>`), `Skill ${skill} is offered`);
		for (const r of model.seen) assert.equal(r.texts.filter((x) => x.includes("<state_flow_head>")).length, 1, "one head per request");
		assert.ok(
			second.texts.some((x) => x.startsWith("tool: ") && x.includes("Committed transition")),
			second.texts.join("\n"),
		);
		// The commit reached the project store of the run's cwd.
		const store = join(cwd, ".pi", "state-flow");
		assert.ok(existsSync(store), "the CWD store was created by the write");
		assert.match(bytesUnder(store), /prove pi -e works/);
	});
});
