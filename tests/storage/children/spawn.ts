/**
 * Spawning test children so that both runs work: under tsx (`.ts` sources, tsx loader in
 * execArgv) and compiled (`dist/**.js`, plain node).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

/** Absolute path of a script in this folder, by base name. */
export function childPath(name: string): string {
	return fileURLToPath(new URL(`./${name}${EXT}`, import.meta.url));
}

export interface ChildRun {
	proc: ChildProcess;
	/** Resolves with exit code and signal once the process ended; stdout/stderr collected. */
	done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
	/** Resolves when the child printed `ready`. */
	ready: Promise<void>;
}

/** Longest a child may run: a hung child is killed and its run fails, naming it (never a hung test). */
const CHILD_MS = 120_000;

export function runChild(name: string, args: string[], env: Record<string, string> = {}, timeoutMs = CHILD_MS): ChildRun {
	const proc = spawn(process.execPath, [...process.execArgv, childPath(name), ...args], {
		env: { ...process.env, ...env },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let stdout = "";
	let stderr = "";
	let onReady: () => void = () => {};
	const ready = new Promise<void>((r) => (onReady = r));
	proc.stdout?.on("data", (d: Buffer) => {
		stdout += d.toString();
		if (stdout.includes("ready\n")) onReady();
	});
	proc.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
	let late = false;
	const deadline = setTimeout(() => {
		late = true;
		proc.kill("SIGKILL");
	}, timeoutMs);
	const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
		proc.on("close", (code, signal) => {
			clearTimeout(deadline);
			// A child that never said `ready` ends the wait for it: its exit is what the test checks.
			onReady();
			if (late) reject(new Error(`child ${name} ${args.join(" ")} ran past ${timeoutMs} ms and was killed.\nstdout: ${stdout}\nstderr: ${stderr}`));
			else resolve({ code, signal, stdout, stderr });
		});
	});
	// Awaited by the test when it needs the outcome; a late child's failure never goes unhandled meanwhile.
	done.catch(() => undefined);
	return { proc, done, ready };
}
