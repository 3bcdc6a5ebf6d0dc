/**
 * In-process pi AgentSession driven by pi-ai's faux provider: the real SDK, a scripted
 * model, temporary project and agent folders, no keys and no network. Adapted from the
 * verified probe in shared/pi-probe/test/harness.ts.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	type AssistantMessage,
	type Context,
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	registerFauxProvider,
} from "@mariozechner/pi-ai";
import {
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionFactory,
	ModelRegistry,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";

/** What the scripted model saw on one LLM request. */
export interface Captured {
	call: number;
	tools: Array<{ name: string; description: string; parameters: unknown }>;
	systemPrompt: string;
	messages: Context["messages"];
}

/** Snapshot the exact context a real provider would serialize. */
export function snapshot(context: Context, call: number): Captured {
	return {
		call,
		tools: (context.tools ?? []).map((t) => ({
			name: t.name,
			description: t.description,
			parameters: JSON.parse(JSON.stringify(t.parameters)),
		})),
		systemPrompt: context.systemPrompt ?? "",
		messages: JSON.parse(JSON.stringify(context.messages)),
	};
}

export interface HarnessOptions {
	extensionFactories: ExtensionFactory[];
	sessionManager?: SessionManager;
	settings?: Record<string, unknown>;
	cwd?: string;
	agentDir?: string;
	/** Keep pi's built-in tools (read, bash, edit, write). Default false. */
	builtinTools?: boolean;
	/** Load skills from these paths (default: none). */
	skillPaths?: string[];
	/** Extension flags as pi's CLI would have parsed them (`{ "state-owners": "cwd" }`), set before session start. */
	flags?: Record<string, string>;
}

export async function createHarness(opts: HarnessOptions) {
	const faux = registerFauxProvider({ provider: "faux" });
	const model = faux.getModel();
	const cwd = opts.cwd ?? mkdtempSync(join(tmpdir(), "state-flow-cwd-"));
	const agentDir = opts.agentDir ?? mkdtempSync(join(tmpdir(), "state-flow-agent-"));
	const authStorage = AuthStorage.inMemory();
	authStorage.setRuntimeApiKey("faux", "dummy"); // prompt() preflight requires "configured auth"
	const modelRegistry = ModelRegistry.inMemory(authStorage);
	const settingsManager = SettingsManager.inMemory({
		compaction: { enabled: false },
		retry: { enabled: false },
		...opts.settings,
	});
	const resourceLoader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		extensionFactories: opts.extensionFactories,
		noExtensions: true,
		noSkills: opts.skillPaths === undefined,
		additionalSkillPaths: opts.skillPaths,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
		systemPromptOverride: () => "You are a test agent.",
	});
	await resourceLoader.reload();
	const { session, extensionsResult } = await createAgentSession({
		cwd,
		agentDir,
		model,
		thinkingLevel: "off",
		authStorage,
		modelRegistry,
		settingsManager,
		resourceLoader,
		sessionManager: opts.sessionManager ?? SessionManager.inMemory(cwd),
		...(opts.builtinTools ? {} : { noTools: "builtin" as const }),
	});
	const extensionErrors: string[] = [];
	// pi's CLI parses flags into the runtime before the session starts; the SDK path sets them here.
	const flagValues = (extensionsResult as unknown as { runtime: { flagValues: Map<string, string> } }).runtime.flagValues;
	for (const [name, value] of Object.entries(opts.flags ?? {})) flagValues.set(name, value);
	// bindExtensions() is what emits session_start in SDK usage.
	await session.bindExtensions({ onError: (e) => extensionErrors.push(`${e.event}: ${e.error}`) });
	const dispose = () => {
		session.dispose();
		faux.unregister();
	};
	return { session, faux, model, cwd, agentDir, extensionsResult, extensionErrors, dispose };
}

/** Wrap a scripted reply so that it also records the LLM-facing context. */
export function capturing(sink: Captured[], reply: (ctx: Context) => ReturnType<Extract<FauxResponseStep, (...args: never[]) => unknown>>): FauxResponseStep {
	return (context, _options, state) => {
		sink.push(snapshot(context, state.callCount));
		return reply(context);
	};
}

/** One scripted model reply: a final text, a provider error, or tool calls with the given ids. */
export type ScriptedReply = { text: string } | { error: string } | { calls: ReadonlyArray<{ id: string; name: string; args: Record<string, unknown> }> };

/** The assistant message the faux model answers with for one scripted reply. */
export function scriptedReply(step: ScriptedReply): AssistantMessage {
	if ("text" in step) return fauxAssistantMessage(fauxText(step.text));
	if ("error" in step) return fauxAssistantMessage("", { stopReason: "error", errorMessage: step.error });
	return fauxAssistantMessage(
		step.calls.map((c) => fauxToolCall(c.name, c.args, { id: c.id })),
		{ stopReason: "toolUse" },
	);
}
