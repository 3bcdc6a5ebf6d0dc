#!/usr/bin/env node
/**
 * `state-flow`: the package's command-line tool for State Flow stores outside pi. Parses the
 * command line, runs one command and maps the outcome to Unix exit codes: 0 success,
 * 1 failure (a refused import, a damaged store, an unreachable database), 2 usage error.
 */
import { readFileSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { isStateError } from "../core/errors.js";
import { printable } from "../core/printable.js";
import { DATABASE_ENV } from "../storage/placement/placement.js";
import { closeDatabases } from "../storage/pg/placed.js";
import { readConfig } from "../storage/placement/config.js";
import { scrubber } from "../storage/pg/url.js";
import { defaultAgentDir, UsageError } from "./args.js";
import type { Outcome } from "./commands.js";
import { usageLine, helpText } from "./help.js";
import { fitText } from "./format.js";
import { parseArgs, verbNamed } from "./verbs.js";
import { packageVersion } from "./version.js";

/**
 * Commands whose standard output reports configuration (where the stores live, connection
 * outcomes). Every other command prints stored data on it — an export, a value, a history —
 * which is never scrubbed: a stored "run postgres 16" stays itself whatever URL is configured.
 */
const CONFIG_OUTPUT: ReadonlySet<string> = new Set(["link", "unlink", "migrate", "doctor"]);

/**
 * Run the CLI on `argv` (without node and script); never throws, never exits; closes the
 * database connections it opened. Every message already shows database URLs without their
 * password (`redactUrl`); as a last guard, what is printed as configuration — error output, and
 * the standard output of the commands that report configuration — is scrubbed of the configured
 * URLs' secrets too. Terminal controls are spelled as escapes everywhere (`printable`: JSON
 * output keeps its meaning). What a person reads is laid out in 80 columns as the terminal shows
 * it (`fitText`: after the escapes); a command's data (`export`) is printed as is.
 */
export async function main(argv: readonly string[], stdin: () => string = () => readFileSync(0, "utf8")): Promise<Outcome> {
	let agentDir = defaultAgentDir();
	let command: string | undefined;
	const out = await run(argv, stdin, (dir, name) => {
		agentDir = dir;
		command = name;
	});
	const urls = [process.env[DATABASE_ENV], readConfig(agentDir).config.database].filter((u): u is string => u !== undefined && u !== "");
	const scrub = (text: string) => urls.reduce((t, url) => scrubber(url)(t), text);
	const stdout = command !== undefined && !CONFIG_OUTPUT.has(command) ? out.stdout : scrub(out.stdout);
	// Stored text may carry terminal controls (a planted store): shown as escapes, never sent raw to a terminal.
	const data = verbNamed(command)?.data === true && out.code === 0;
	return { ...out, stdout: data ? printable(stdout) : fitText(printable(stdout)), stderr: fitText(printable(scrub(out.stderr))) };
}

async function run(argv: readonly string[], stdin: () => string, seen: (agentDir: string, command: string | undefined) => void): Promise<Outcome> {
	let command: ReturnType<typeof parseArgs>["command"];
	try {
		const p = parseArgs(argv);
		seen(p.agentDir, p.command);
		command = p.command;
		if (p.version) return { stdout: `${packageVersion()}\n`, stderr: "", code: 0 };
		if (p.help || p.command === undefined) return { stdout: `${helpText(p.command)}\n`, stderr: "", code: 0 };
		const verb = verbNamed(p.command);
		if (verb === undefined) throw new UsageError(`unknown command \`${String(p.command)}\`.`);
		return await verb.run(p, stdin);
	} catch (e) {
		if (e instanceof UsageError) {
			// The problem and the one usage line; the whole help is one command away.
			return { stdout: "", stderr: `state-flow: ${e.message}\n${usageLine(e.command ?? command)}\n`, code: 2 };
		}
		const text = isStateError(e) ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
		return { stdout: "", stderr: `state-flow: ${text}\n`, code: 1 };
	} finally {
		// An open database connection would keep the process alive; the next run reconnects.
		await closeDatabases();
	}
}

/** True when this module is the process entry (also through npm's `bin` symlink). */
function isEntry(): boolean {
	const script = process.argv[1];
	if (script === undefined) return false;
	try {
		return import.meta.url === pathToFileURL(realpathSync(script)).href;
	} catch {
		return false;
	}
}

if (isEntry()) {
	// `state-flow export | head`: a closed pipe is the reader's choice, not a failure to report.
	process.stdout.on("error", (e: NodeJS.ErrnoException) => {
		if (e.code !== "EPIPE") throw e;
	});
	const outcome = await main(process.argv.slice(2));
	if (outcome.stdout) process.stdout.write(outcome.stdout);
	if (outcome.stderr) process.stderr.write(outcome.stderr);
	process.exitCode = outcome.code;
}
