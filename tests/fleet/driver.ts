/**
 * One "machine" of the fleet tests: a real pi session (createAgentSession on the faux provider,
 * State Flow reading its own agent directory's config) in its own OS process, driven by the
 * test over stdin/stdout, one JSON object per line.
 *
 * argv[2]: a JSON `DriverSetup`. Commands in (`DriverCommand`), events out (`DriverEvent`):
 * `ready` once the session started; `prompt` runs one user prompt whose model replies are the
 * scripted steps and answers `prompted` with what the model saw on each request and the tool
 * results; a step with `pause` first says `paused` and waits for `resume` (so another machine
 * can write while this run is going, synchronised by messages, never by sleeping); `command`
 * runs a slash command and answers with what it showed; `exit` disposes the session and
 * closes the database connections. Under `STATE_FLOW_FAULT` the process may die by SIGKILL
 * inside a tool call: the test sees the process end instead of an answer.
 */
import { createInterface } from "node:readline";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { createStateFlow } from "../../lib/index.js";
import { closeDatabases } from "../../lib/storage/pg/placed.js";
import { createHarness, scriptedReply } from "../helpers/pi-harness.js";

export interface DriverSetup {
	agentDir: string;
	cwd: string;
	/** Prefix of this process's transition ids: ids must be unique across the fleet (the database is idempotent by id). */
	tag: string;
	/** A file-backed session in this folder (absent: in memory); with `sessionFile`, that session is resumed. */
	sessionDir?: string;
	sessionFile?: string;
}

export interface ScriptedCall {
	id: string;
	name: string;
	args: Record<string, unknown>;
}

/** One scripted model reply; with `pause`, the driver waits for `resume` before giving it. */
export type DriverStep = ({ calls: ScriptedCall[] } | { text: string }) & { pause?: string };

export type DriverCommand =
	| { op: "prompt"; text: string; steps: DriverStep[] }
	| { op: "resume"; name: string }
	| { op: "command"; text: string }
	| { op: "exit" };

export interface ToolOutcome {
	isError: boolean;
	text: string;
}

export type DriverEvent =
	| { event: "ready"; sessionFile: string | null }
	| { event: "paused"; name: string }
	/** `requests[i]`: the user-message texts of the i-th model request of this prompt (the head is one of them). */
	| { event: "prompted"; requests: string[][]; results: Record<string, ToolOutcome>; notes: string[] }
	| { event: "commanded"; notes: string[] }
	| { event: "exited" };

const setup = JSON.parse(process.argv[2] ?? "{}") as DriverSetup;

function send(e: DriverEvent): void {
	process.stdout.write(`${JSON.stringify(e)}\n`);
}

let notes: string[] = [];
function takeNotes(): string[] {
	const out = notes;
	notes = [];
	return out;
}

let ids = 0;
const factory = createStateFlow({
	agentDir: setup.agentDir,
	now: () => new Date(),
	newId: () => `${setup.tag}-${++ids}`,
	notify: (m) => notes.push(m),
});

function sessionManager(): SessionManager {
	if (setup.sessionDir === undefined) return SessionManager.inMemory(setup.cwd);
	if (setup.sessionFile !== undefined) return SessionManager.open(setup.sessionFile, setup.sessionDir);
	return SessionManager.create(setup.cwd, setup.sessionDir);
}

const harness = await createHarness({ extensionFactories: [factory], cwd: setup.cwd, agentDir: setup.agentDir, sessionManager: sessionManager() });
const { session, faux } = harness;

const resumes = new Map<string, () => void>();
function pausedAt(name: string): Promise<void> {
	return new Promise((resolve) => {
		resumes.set(name, resolve);
		send({ event: "paused", name });
	});
}

function userTexts(messages: ReadonlyArray<{ role: string; content?: unknown }>): string[] {
	return messages
		.filter((m) => m.role === "user")
		.map((m) =>
			typeof m.content === "string"
				? m.content
				: (m.content as Array<{ type: string; text?: string }>).map((p) => (p.type === "text" ? (p.text ?? "") : "")).join(""),
		);
}

async function prompt(text: string, steps: DriverStep[]): Promise<void> {
	const requests: string[][] = [];
	faux.setResponses(
		steps.map((step) => async (context: { messages: ReadonlyArray<{ role: string; content?: unknown }> }): Promise<AssistantMessage> => {
			requests.push(userTexts(context.messages));
			if (step.pause !== undefined) await pausedAt(step.pause);
			return scriptedReply(step);
		}),
	);
	await session.prompt(text);
	await session.agent.waitForIdle();
	const wanted = new Set(steps.flatMap((s) => ("calls" in s ? s.calls.map((c) => c.id) : [])));
	const results: Record<string, ToolOutcome> = {};
	for (const m of session.messages) {
		if (m.role !== "toolResult" || !wanted.has(m.toolCallId)) continue;
		results[m.toolCallId] = { isError: m.isError, text: m.content.map((c) => (c.type === "text" ? c.text : "")).join("") };
	}
	send({ event: "prompted", requests, results, notes: takeNotes() });
}

async function run(cmd: DriverCommand): Promise<void> {
	switch (cmd.op) {
		case "prompt":
			return prompt(cmd.text, cmd.steps);
		case "command":
			await session.prompt(cmd.text);
			return send({ event: "commanded", notes: takeNotes() });
		case "exit":
			harness.dispose();
			await closeDatabases();
			send({ event: "exited" });
			process.exit(0);
			return;
		case "resume":
			return;
	}
}

// Commands run one after another; `resume` is answered at once (a prompt is waiting for it).
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on("line", (line) => {
	const cmd = JSON.parse(line) as DriverCommand;
	if (cmd.op === "resume") {
		resumes.get(cmd.name)?.();
		resumes.delete(cmd.name);
		return;
	}
	queue = queue.then(() => run(cmd));
	queue.catch((e: unknown) => {
		process.stderr.write(`driver: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
		process.exit(1);
	});
});

send({ event: "ready", sessionFile: session.sessionManager.getSessionFile() ?? null });
