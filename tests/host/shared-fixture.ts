/**
 * Set-up shared by the host's shared-memory tests: "machines" (an agent directory and a
 * checkout at its own path, with a config), another machine's stores writing through the
 * database, and a real pi session (SDK + faux model) with an interactive UI whose
 * confirmations answer as told.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AssistantMessage, Context } from "@mariozechner/pi-ai";
import type { ExtensionFactory, ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import type { CanonicalPatch } from "../../lib/core/types.js";
import { HEAD_OPEN } from "../../lib/model/head.js";
import { createStateFlow } from "../../lib/index.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { configPath, type StateFlowConfig, updateConfig } from "../../lib/storage/placement/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import type { Stores } from "../../lib/storage/stores.js";
import { shownOutput } from "../helpers/output.js";
import { type Captured, scriptedReply, snapshot } from "../helpers/pi-harness.js";
import { tempDir } from "../helpers/temp-dir.js";
import { extensionSession, userTexts } from "./fixture.js";

export type T = Parameters<typeof tempDir>[0];

/** One "machine": its own agent directory and a checkout at its own path. */
export interface Machine {
	agentDir: string;
	cwd: string;
	/** What the user types when State Flow asks for text (their name at the first link); undefined: Escape. */
	inputAnswer?: string;
}

export function machine(t: T, config: StateFlowConfig): Machine {
	const root = tempDir(t, "state-flow-machine-");
	const m = { agentDir: join(root, "agent"), cwd: join(root, "checkout") };
	mkdirSync(m.cwd, { recursive: true });
	mkdirSync(m.agentDir, { recursive: true });
	// Set-up, not the code under test: the config file as the user would have it.
	mkdirSync(join(m.agentDir, "state-flow"), { recursive: true });
	writeFileSync(configPath(m.agentDir), `${JSON.stringify(config, null, 2)}\n`);
	return m;
}

export function links(m: Machine): Record<string, string> | undefined {
	return (JSON.parse(readFileSync(configPath(m.agentDir), "utf8")) as StateFlowConfig).links;
}

/** Another machine's stores, linked to `project`: it writes through the database like any other process. */
export function otherMachine(t: T, url: string, schema: string, project: string): Stores {
	const m = machine(t, {});
	const config = { database: url, databaseSchema: schema, links: { [realOrSelf(m.cwd)]: project } };
	return openStoresAt({ agentDir: m.agentDir, cwd: m.cwd, placement: placementFor(config, m.cwd, {}) });
}

/** Machine A with its checkout linked to project `acme/api` in the database, and machine B's stores on that project. */
export async function linkedMachines(t: T, url: string, schema: string): Promise<{ a: Machine; b: Stores }> {
	const a = machine(t, { database: url, databaseSchema: schema });
	await updateConfig(a.agentDir, { links: { [realOrSelf(a.cwd)]: "acme/api" } });
	return { a, b: otherMachine(t, url, schema, "acme/api") };
}

let ids = 0;
export function commitOn(stores: Stores, patch: CanonicalPatch): Promise<unknown> {
	return stores.commit(patch, { id: `other-${++ids}`, at: "2026-11-30T08:00:00.000Z", by: { kind: "system", reason: "other machine" } });
}

export type Step =
	| { calls: Array<{ id: string; name: string; args: Record<string, unknown> }>; before?: () => Promise<void> }
	| { text: string; before?: () => Promise<void> };

/** A pi session on a machine, with an interactive UI whose confirmations answer `answer` (none: no UI), and other extensions beside State Flow. */
export async function piOn(t: T, m: Machine, answer?: boolean, others: ExtensionFactory[] = []) {
	const notes: string[] = [];
	const asked: string[] = [];
	/** Titles of the text inputs State Flow asked for; each is answered with `inputAnswer` (Escape when undefined). */
	const inputs: string[] = [];
	const seen: Captured[] = [];
	let tick = 0;
	let n = 0;
	const factory = createStateFlow({
		agentDir: m.agentDir,
		now: () => new Date(Date.UTC(2026, 10, 30, 9, 0, tick++)),
		newId: () => `t-${String(++n).padStart(4, "0")}`,
		notify: (message) => notes.push(message),
	});
	const ui: Partial<ExtensionUIContext> = {
		confirm: async (title: string, message: string) => {
			asked.push(`${title}\n${message}`);
			return answer === true;
		},
		input: async (title: string) => {
			inputs.push(title);
			return m.inputAnswer;
		},
		notify: () => undefined,
	};
	const uiContext = new Proxy(ui, {
		get: (target, prop) => (prop in target ? target[prop as keyof ExtensionUIContext] : () => undefined),
	}) as ExtensionUIContext;
	const { session, faux } = await extensionSession(t, {
		cwd: m.cwd,
		agentDir: m.agentDir,
		factories: [factory, ...others],
		...(answer !== undefined ? { uiContext } : {}),
	});
	const results = (): Record<string, { isError: boolean; text: string }> => {
		const out: Record<string, { isError: boolean; text: string }> = {};
		for (const msg of session.messages) {
			if (msg.role === "toolResult") out[msg.toolCallId] = { isError: msg.isError, text: msg.content.map((c) => (c.type === "text" ? c.text : "")).join("") };
		}
		return out;
	};
	return {
		session,
		notes,
		asked,
		inputs,
		seen,
		results,
		/** The head of the latest request the model saw. */
		head(): string {
			const texts = userTexts(seen.at(-1) as Captured);
			return texts.find((x) => x.startsWith(HEAD_OPEN)) ?? "";
		},
		async prompt(text: string, steps: Step[]): Promise<void> {
			faux.setResponses(
				steps.map((step) => async (context: Context, _o: unknown, state: { callCount: number }): Promise<AssistantMessage> => {
					seen.push(snapshot(context, state.callCount));
					await step.before?.();
					return scriptedReply(step);
				}),
			);
			await session.prompt(text);
			await session.agent.waitForIdle();
		},
		async command(text: string): Promise<string[]> {
			const before = notes.length;
			await session.prompt(text);
			return notes.slice(before);
		},
		/** The latest `/state` output message of a kind. */
		output(title: string): string {
			return (
				shownOutput(session.messages)
					.filter((o) => o.details.title === title)
					.at(-1)?.text ?? ""
			);
		},
	};
}
