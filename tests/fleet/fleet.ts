/**
 * The test side of the fleet tests: "machines" (each its own agent directory whose config
 * links its own checkout, at its own path, to one shared project in the test database) and
 * `Pi`, one real pi session process on a machine (`driver`), spoken to in JSON lines.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { StateFlowConfig } from "../../lib/storage/placement/config.js";
import { configPath } from "../../lib/storage/placement/config.js";
import { within } from "../helpers/soon.js";
import { tempDir } from "../helpers/temp-dir.js";
import type { DriverCommand, DriverEvent, DriverSetup, DriverStep, ToolOutcome } from "./driver.js";

export type { DriverStep, ToolOutcome };

/** The project id every machine's checkout is linked to. */
export const PROJECT = "acme/api";

export interface Machine {
	agentDir: string;
	/** The checkout's real path (the link key). */
	cwd: string;
	sessionDir: string;
	config: StateFlowConfig;
}

/** A machine whose config points at `url`/`schema` and links its checkout to `PROJECT`. */
export function machine(t: { after(fn: () => void): void }, url: string, schema: string, extra: StateFlowConfig = {}): Machine {
	const root = realpathSync(tempDir(t, "state-flow-fleet-"));
	const agentDir = join(root, "agent");
	const cwd = join(root, "checkout");
	mkdirSync(join(agentDir, "state-flow"), { recursive: true });
	mkdirSync(cwd);
	const config: StateFlowConfig = { database: url, databaseSchema: schema, links: { [cwd]: PROJECT }, ...extra };
	writeFileSync(configPath(agentDir), `${JSON.stringify(config, null, 2)}\n`);
	return { agentDir, cwd, sessionDir: join(root, "sessions"), config };
}

/** How long pi may take to answer one command (a prompt runs the real SDK against PostgreSQL). */
const EVENT_MS = 120_000;

const DRIVER = fileURLToPath(new URL(`driver${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));

type Prompted = Extract<DriverEvent, { event: "prompted" }>;

export interface PiOptions {
	tag: string;
	/** A file-backed session (resumed when `sessionFile` is given); default in memory. */
	fileSession?: { sessionFile?: string };
	env?: Record<string, string>;
}

/** One real pi session process on a machine. */
export class Pi {
	readonly proc: ChildProcess;
	/** Everything the process wrote, stdout and stderr (for "never the password" checks and failure messages). */
	output = "";
	/** The process's end; a test awaits it through `within` (a deadline). */
	readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	private buffered = "";
	private readonly events: DriverEvent[] = [];
	private readonly waiters: Array<{ want: DriverEvent["event"]; resolve: (e: DriverEvent) => void; reject: (e: Error) => void }> = [];
	private exited = false;

	private constructor(m: Machine, opts: PiOptions) {
		const setup: DriverSetup = {
			agentDir: m.agentDir,
			cwd: m.cwd,
			tag: opts.tag,
			...(opts.fileSession ? { sessionDir: m.sessionDir, ...opts.fileSession } : {}),
		};
		this.proc = spawn(process.execPath, [...process.execArgv, DRIVER, JSON.stringify(setup)], {
			env: { ...process.env, ...opts.env },
			stdio: ["pipe", "pipe", "pipe"],
		});
		this.proc.stderr?.on("data", (d: Buffer) => (this.output += d.toString()));
		this.proc.stdout?.on("data", (d: Buffer) => {
			const text = d.toString();
			this.output += text;
			this.buffered += text;
			for (let nl = this.buffered.indexOf("\n"); nl >= 0; nl = this.buffered.indexOf("\n")) {
				const line = this.buffered.slice(0, nl);
				this.buffered = this.buffered.slice(nl + 1);
				this.events.push(JSON.parse(line) as DriverEvent);
				this.deliver();
			}
		});
		this.ended = new Promise((resolve) =>
			this.proc.on("close", (code, signal) => {
				this.exited = true;
				this.deliver();
				resolve({ code, signal });
			}),
		);
	}

	/** Start pi on a machine and wait until its session has started. */
	static async start(m: Machine, opts: PiOptions): Promise<{ pi: Pi; sessionFile: string | null }> {
		const pi = new Pi(m, opts);
		const ready = (await pi.next("ready")) as Extract<DriverEvent, { event: "ready" }>;
		return { pi, sessionFile: ready.sessionFile };
	}

	private deliver(): void {
		for (let i = 0; i < this.waiters.length; ) {
			const w = this.waiters[i] as (typeof this.waiters)[number];
			const at = this.events.findIndex((e) => e.event === w.want);
			if (at >= 0) {
				this.waiters.splice(i, 1);
				w.resolve(this.events.splice(at, 1)[0] as DriverEvent);
			} else if (this.exited) {
				this.waiters.splice(i, 1);
				w.reject(new Error(`pi process ended before \`${w.want}\`:\n${this.output}`));
			} else i++;
		}
	}

	/** The next event of this kind (already received or still to come); fails, with pi's output, after `timeoutMs`. */
	next(want: DriverEvent["event"], timeoutMs = EVENT_MS): Promise<DriverEvent> {
		return new Promise((resolve, reject) => {
			const waiter = {
				want,
				resolve: (e: DriverEvent) => {
					clearTimeout(timer);
					resolve(e);
				},
				reject: (e: Error) => {
					clearTimeout(timer);
					reject(e);
				},
			};
			const timer = setTimeout(() => {
				this.waiters.splice(this.waiters.indexOf(waiter), 1);
				reject(new Error(`no \`${want}\` from pi within ${timeoutMs} ms:\n${this.output}`));
			}, timeoutMs);
			this.waiters.push(waiter);
			this.deliver();
		});
	}

	send(cmd: DriverCommand): void {
		this.proc.stdin?.write(`${JSON.stringify(cmd)}\n`);
	}

	/** Run one user prompt to its end. */
	async prompt(text: string, steps: DriverStep[]): Promise<Prompted> {
		this.send({ op: "prompt", text, steps });
		return (await this.next("prompted")) as Prompted;
	}

	/**
	 * Start a prompt without waiting for its end: its paused turns are met with `pausedAt` and
	 * `resume`; the returned promise is its result.
	 */
	begin(text: string, steps: DriverStep[]): Promise<Prompted> {
		const done = this.next("prompted") as Promise<Prompted>;
		// Awaited by the caller later; keep an early rejection from counting as unhandled meanwhile.
		done.catch(() => undefined);
		this.send({ op: "prompt", text, steps });
		return done;
	}

	/** Wait until the running prompt's script reached this pause. */
	async pausedAt(name: string): Promise<void> {
		const e = (await this.next("paused")) as Extract<DriverEvent, { event: "paused" }>;
		if (e.name !== name) throw new Error(`pi paused at \`${e.name}\`, expected \`${name}\``);
	}

	/** Let the paused prompt go on. */
	resume(name: string): void {
		this.send({ op: "resume", name });
	}

	/** Run a slash command; resolves with what it showed the user. */
	async command(text: string): Promise<string[]> {
		this.send({ op: "command", text });
		return ((await this.next("commanded")) as Extract<DriverEvent, { event: "commanded" }>).notes;
	}

	/** Quit pi cleanly. */
	async exit(): Promise<void> {
		if (this.exited) return;
		this.send({ op: "exit" });
		await within(this.ended, "pi to exit when asked", EVENT_MS);
	}

	/** Kill the process if it is still running (test clean-up). */
	kill(): void {
		if (!this.exited) this.proc.kill("SIGKILL");
	}
}

/** Start pi on a machine; it is killed after the test if the test did not end it. */
export async function startPi(
	t: { after(fn: () => void | Promise<void>): void },
	m: Machine,
	opts: PiOptions,
): Promise<{ pi: Pi; sessionFile: string | null }> {
	const started = await Pi.start(m, opts);
	t.after(() => started.pi.kill());
	return started;
}

/** The head the model received on one request (the inserted `<state_flow_head>` user message). */
export function headOf(request: readonly string[] | undefined): string {
	const heads = (request ?? []).filter((t) => t.includes("<state_flow_head>"));
	if (heads.length !== 1) throw new Error(`expected exactly one head in the request, found ${heads.length}: ${JSON.stringify(request)}`);
	return heads[0] as string;
}

/** A tool result that must have succeeded. */
export function ok(results: Record<string, ToolOutcome>, id: string): string {
	const r = results[id];
	if (r === undefined) throw new Error(`no result for tool call ${id}: ${JSON.stringify(results)}`);
	if (r.isError) throw new Error(`tool call ${id} failed: ${r.text}`);
	return r.text;
}
