/**
 * Shared set-up for the host tests: the real pi SDK (createHarness + faux provider) running
 * State Flow with temp folders, a fixed clock, predictable ids, a notify tap and a count of
 * `registerTool` calls per tool name (the factory gets a thin wrapper around the real `pi`).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AssistantMessage, type Context, registerFauxProvider } from "@mariozechner/pi-ai";
import {
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionAPI,
	type ExtensionFactory,
	type ExtensionUIContext,
	ModelRegistry,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { createStateFlow } from "../../lib/index.js";
import { configPath } from "../../lib/storage/placement/config.js";
import { type Captured, createHarness, scriptedReply, snapshot } from "../helpers/pi-harness.js";

export interface Flow {
	harness: Awaited<ReturnType<typeof createHarness>>;
	seen: Captured[];
	notes: string[];
	registrations: Record<string, number>;
	/** Tool results in the transcript, by tool-call id. */
	results(): Record<string, { isError: boolean; text: string; details: Record<string, unknown> }>;
	/** Run a user prompt whose model replies are the given steps (tool-call replies then text). */
	prompt(text: string, steps: Step[]): Promise<void>;
	command(text: string): Promise<string[]>;
	dispose(): void;
}

/** One scripted model reply: tool calls (ids given), a final text or a provider error; `before` runs while streaming. */
export type Step =
	| { calls: Array<{ id: string; name: string; args: Record<string, unknown> }>; before?: (ctx: Context) => Promise<void> | void }
	| { text: string; before?: (ctx: Context) => Promise<void> | void }
	| { error: string; before?: (ctx: Context) => Promise<void> | void };

export interface FlowOptions {
	cwd?: string;
	agentDir?: string;
	sessionManager?: SessionManager;
	builtinTools?: boolean;
	extraFactories?: ExtensionFactory[];
	/** Extensions pi loads before State Flow (the other load order). */
	factoriesBefore?: ExtensionFactory[];
	/** CLI flags of this process (`{ "state-owners": "cwd" }`). */
	flags?: Record<string, string>;
	/** Transition ids are `<idPrefix>-0001`, … (default `t`): flows sharing a store need distinct ones. */
	idPrefix?: string;
}

/** Count registerTool calls while delegating everything to the real API object. */
function counting(pi: ExtensionAPI, registrations: Record<string, number>): ExtensionAPI {
	return new Proxy(pi, {
		get(target, prop, receiver) {
			if (prop === "registerTool") {
				return (tool: Parameters<ExtensionAPI["registerTool"]>[0]) => {
					registrations[tool.name] = (registrations[tool.name] ?? 0) + 1;
					return target.registerTool(tool);
				};
			}
			const value = Reflect.get(target, prop, receiver);
			return typeof value === "function" ? value.bind(target) : value;
		},
	});
}

export async function startFlow(opts: FlowOptions = {}): Promise<Flow> {
	const seen: Captured[] = [];
	const notes: string[] = [];
	const registrations: Record<string, number> = {};
	let tick = 0;
	let ids = 0;
	// Never fall back to pi's real agent folder: every flow gets its own.
	const agentDir = opts.agentDir ?? mkdtempSync(join(tmpdir(), "state-flow-agent-"));
	const factory = createStateFlow({
		agentDir,
		now: () => new Date(Date.UTC(2026, 10, 30, 9, 0, tick++)),
		newId: () => `${opts.idPrefix ?? "t"}-${String(++ids).padStart(4, "0")}`,
		notify: (m) => notes.push(m),
	});
	const harness = await createHarness({
		extensionFactories: [...(opts.factoriesBefore ?? []), (pi) => factory(counting(pi, registrations)), ...(opts.extraFactories ?? [])],
		...(opts.cwd ? { cwd: opts.cwd } : {}),
		agentDir,
		...(opts.sessionManager ? { sessionManager: opts.sessionManager } : {}),
		...(opts.builtinTools ? { builtinTools: true } : {}),
		...(opts.flags ? { flags: opts.flags } : {}),
	});
	const flow: Flow = {
		harness,
		seen,
		notes,
		registrations,
		results() {
			const out: ReturnType<Flow["results"]> = {};
			for (const m of harness.session.messages) {
				if (m.role !== "toolResult") continue;
				const text = m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
				out[m.toolCallId] = { isError: m.isError, text, details: (m.details ?? {}) as Record<string, unknown> };
			}
			return out;
		},
		async prompt(text, steps) {
			harness.faux.setResponses(
				steps.map((step) => async (context: Context, _o: unknown, state: { callCount: number }): Promise<AssistantMessage> => {
					seen.push(snapshot(context, state.callCount));
					await step.before?.(context);
					return scriptedReply(step);
				}),
			);
			await harness.session.prompt(text);
			await harness.session.agent.waitForIdle();
		},
		async command(text) {
			const before = notes.length;
			await harness.session.prompt(text);
			return notes.slice(before);
		},
		dispose() {
			harness.dispose();
			// Remove only the folders this flow created; callers own the ones they passed in.
			if (!opts.agentDir) rmSync(agentDir, { recursive: true, force: true });
			if (!opts.cwd) rmSync(harness.cwd, { recursive: true, force: true });
		},
	};
	return flow;
}

/** Run `fn` on a fresh flow and dispose it afterwards, whether `fn` returns or throws. */
export async function withFlow<T>(opts: FlowOptions, fn: (flow: Flow) => Promise<T>): Promise<T> {
	const flow = await startFlow(opts);
	try {
		return await fn(flow);
	} finally {
		flow.dispose();
	}
}

/** A project, an agent directory and a session folder for one test, removed after it. */
export interface FlowDirs {
	cwd: string;
	agentDir: string;
	sessionDir: string;
}

export function flowDirs(t: { after(fn: () => void): void }, prefix = "state-flow-dirs-"): FlowDirs {
	const root = mkdtempSync(join(tmpdir(), prefix));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const make = (name: string) => mkdtempSync(join(root, `${name}-`));
	return { cwd: make("cwd"), agentDir: make("agent"), sessionDir: join(root, "sessions") };
}

/** Text of every message the model saw on one request, user messages only. */
export function userTexts(c: Captured): string[] {
	return c.messages
		.filter((m) => m.role === "user")
		.map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")));
}

/** The head text request `request` of a flow carried ("" when it had none). */
export function headOf(flow: Flow, request: number): string {
	const c = flow.seen[request];
	assert.ok(c, `no request ${request}`);
	return userTexts(c).find((x) => x.includes("<state_flow_head>")) ?? "";
}

/** Every file below a folder (relative paths), [] when it does not exist. */
export function filesUnder(dir: string): string[] {
	if (!existsSync(dir)) return [];
	const out: string[] = [];
	const walk = (d: string, rel: string) => {
		for (const e of readdirSync(d, { withFileTypes: true })) {
			const r = rel === "" ? e.name : `${rel}/${e.name}`;
			if (e.isDirectory()) walk(join(d, e.name), r);
			else out.push(r);
		}
	};
	walk(dir, "");
	return out.sort();
}

/** All bytes below a folder concatenated (for "the value landed here" checks). */
export function bytesUnder(dir: string): string {
	return filesUnder(dir)
		.map((f) => readFileSync(join(dir, f), "utf8"))
		.join("\n");
}

/**
 * A real AgentSession on the faux provider over a resource loader the caller built — for set-ups
 * the harness does not cover (pi's `-e` loading, pi's own system prompt, a host tool allowlist,
 * an interactive UI). Extension errors are collected; everything is disposed after the test.
 */
export async function fauxSession(
	t: { after(fn: () => void): void },
	opts: {
		cwd: string;
		agentDir: string;
		settingsManager: SettingsManager;
		resourceLoader: DefaultResourceLoader;
		tools?: string[];
		uiContext?: ExtensionUIContext;
	},
) {
	const faux = registerFauxProvider({ provider: "faux" });
	const authStorage = AuthStorage.inMemory();
	authStorage.setRuntimeApiKey("faux", "dummy"); // prompt() preflight requires "configured auth"
	const { session } = await createAgentSession({
		cwd: opts.cwd,
		agentDir: opts.agentDir,
		model: faux.getModel(),
		thinkingLevel: "off",
		authStorage,
		modelRegistry: ModelRegistry.inMemory(authStorage),
		settingsManager: opts.settingsManager,
		resourceLoader: opts.resourceLoader,
		sessionManager: SessionManager.inMemory(opts.cwd),
		...(opts.tools ? { tools: opts.tools } : {}),
	});
	t.after(() => {
		session.dispose();
		faux.unregister();
	});
	const errors: string[] = [];
	await session.bindExtensions({ onError: (e) => errors.push(`${e.event}: ${e.error}`), ...(opts.uiContext ? { uiContext: opts.uiContext } : {}) });
	return { session, faux, errors };
}

/**
 * `fauxSession` over pi's own resource loading, limited to the given extension factories (no
 * skills, prompt templates, themes or context files), with compaction and retries off.
 */
export async function extensionSession(
	t: { after(fn: () => void): void },
	opts: { cwd: string; agentDir: string; factories: ExtensionFactory[]; tools?: string[]; uiContext?: ExtensionUIContext },
) {
	const { cwd, agentDir } = opts;
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
	const resourceLoader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		extensionFactories: opts.factories,
		noExtensions: true,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
	});
	await resourceLoader.reload();
	return fauxSession(t, {
		cwd,
		agentDir,
		settingsManager,
		resourceLoader,
		...(opts.tools ? { tools: opts.tools } : {}),
		...(opts.uiContext ? { uiContext: opts.uiContext } : {}),
	});
}

/** An agent directory whose State Flow config file holds `text`, removed after the test. */
export function agentDirWithConfig(t: { after(fn: () => void): void }, text: string): string {
	const agentDir = mkdtempSync(join(tmpdir(), "state-flow-agent-"));
	t.after(() => rmSync(agentDir, { recursive: true, force: true }));
	mkdirSync(join(agentDir, "state-flow"));
	writeFileSync(configPath(agentDir), text);
	return agentDir;
}
