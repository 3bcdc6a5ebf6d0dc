/**
 * Run the real `state-flow` binary in a child process: `dist/lib/cli/main.js` when the tests
 * are compiled, `lib/cli/main.ts` through the same loader (tsx) when they run from source.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const ext = import.meta.url.endsWith(".ts") ? "ts" : "js";
/** Absolute path of the CLI entry matching how this test runs. */
export const CLI = fileURLToPath(new URL(`../../lib/cli/main.${ext}`, import.meta.url));

export interface Run {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
}

/** Run `state-flow <args>` in `cwd`; `env` adds to (never replaces) a clean copy of the environment. */
export function runCli(args: string[], opts: { cwd: string; env?: Record<string, string>; input?: string }): Run {
	// Keep the loader flags (tsx) but not the test runner's own flags.
	const execArgv = process.execArgv.filter((a) => !a.startsWith("--test"));
	const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
	if (opts.env?.STATE_FLOW_FAULT === undefined) delete env.STATE_FLOW_FAULT;
	const r = spawnSync(process.execPath, [...execArgv, CLI, ...args], {
		cwd: opts.cwd,
		env,
		input: opts.input ?? "",
		encoding: "utf8",
		timeout: 30_000,
	});
	if (r.error) throw r.error;
	return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Output as the messages it prints, each line the CLI broke to fit 80 columns (`fitLine` in
 * `ops/history-text.ts`) joined back to the line it continues: a continuation is indented two
 * more than that line's start and its first word did not fit after it. Tests match what a
 * message says on this; a layout test looks at the lines as printed.
 */
export function unwrapped(text: string, width = 80): string {
	const out: string[] = [];
	let lead = -1;
	let last = "";
	for (const line of text.split("\n")) {
		const indent = /^ */.exec(line)?.[0].length ?? 0;
		const first = /^`[^`]*`\S*|^\S+/.exec(line.slice(indent))?.[0] ?? "";
		if (out.length > 0 && first !== "" && indent === Math.min(lead + 2, width / 2) && [...last].length + 1 + [...first].length > width) {
			out[out.length - 1] += ` ${line.slice(indent)}`;
			last = line;
			continue;
		}
		out.push(line);
		lead = indent;
		last = line;
	}
	return out.join("\n");
}
