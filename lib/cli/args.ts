/**
 * Command-line parsing for `state-flow`: one command, its positionals and a small fixed set of
 * options. Anything unexpected is a `UsageError` (exit code 2) naming the offending argument,
 * so a typo never runs a command with a default the user did not mean.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { didYouMean } from "../core/suggest.js";
import { isOneOf } from "../core/types.js";

/** The commands, in help order. */
export const COMMANDS = [
	"show",
	"history",
	"undo",
	"redo",
	"restore",
	"set",
	"delete",
	"edit",
	"export",
	"import",
	"doctor",
	"link",
	"unlink",
	"migrate",
	"adopt",
	"mcp",
] as const;
export type Command = (typeof COMMANDS)[number];

/** A bad command line: printed with the relevant usage, exit code 2. */
export class UsageError extends Error {
	override readonly name = "UsageError";
	constructor(
		message: string,
		/** The command whose usage to print, when known. */
		readonly command?: Command,
	) {
		super(message);
	}
}

/** What the command line asked for. */
export interface Parsed {
	/** Undefined for a bare `state-flow` or `state-flow --help`; for `help <command>`, that command. */
	command: Command | undefined;
	/** `-h`, `--help` or the `help` command: print help instead of running. */
	help: boolean;
	/** `--version`: print the package version instead of running. */
	version: boolean;
	positionals: string[];
	cwd: string;
	agentDir: string;
	owner: string | undefined;
	/** `show`: print lazy bodies instead of the catalog. */
	full: boolean;
	/** `doctor`: report only, change nothing. */
	dryRun: boolean;
	/** `doctor --drop-journal <id>`: give up completing that pending journal. */
	dropJournal?: string;
	/** `doctor --move-aside <owner>`: keep a damaged store aside and start that owner afresh. */
	moveAside?: string;
	/** `doctor --cut-torn <owner>`: cut bytes after the last complete record that no crashed writer explains. */
	cutTorn?: string;
	/** `doctor --accept-store <owner>`: go on from a store older than what this machine committed to it. */
	acceptStore?: string;
	/** `--yes`: go ahead without asking (undo/redo/restore of someone else's transitions; a hand edit that deletes more than the value named). */
	yes: boolean;
	/** `doctor --salvage <owner>`: rebuild a damaged store from its intact transitions. */
	salvage?: string;
	/** `link --force`: link although the checkout's local CWD store holds state (left untouched). */
	force: boolean;
	/** `migrate --global`: move the Global file store into the user's shared Global owner. */
	global: boolean;
	/** `migrate --to-files`: move the shared owner back from the database into its empty local file store. */
	toFiles: boolean;
	/** `adopt --keep`: keep the store apart on purpose instead of moving it in. */
	keep: boolean;
	/** `restore --path <owner|locator>`: what to restore (default: every owner that retains the transition). */
	path?: string;
	/** `set|edit|import --allow-secret`: store what looks like a credential, this once (the user says it is none). */
	allowSecret: boolean;
	/** `mcp --owners <list>`: the owners served (Global and/or CWD). */
	owners?: string;
	/** `mcp --http`: Streamable HTTP on 127.0.0.1 instead of stdio. */
	http: boolean;
	/** `mcp --http --port <n>`. */
	port?: string;
}

/** Options each command accepts beyond `--cwd`, `--agent-dir` and `--help`. */
const COMMAND_OPTIONS: Record<Command, readonly string[]> = {
	show: ["--full", "--owner"],
	history: ["--full", "--owner"],
	undo: ["--yes"],
	redo: ["--yes"],
	restore: ["--path", "--yes"],
	set: ["--yes", "--allow-secret"],
	delete: ["--yes"],
	edit: ["--yes", "--allow-secret"],
	export: ["--owner"],
	import: ["--owner", "--allow-secret"],
	doctor: ["--dry-run", "--drop-journal", "--move-aside", "--cut-torn", "--accept-store", "--salvage"],
	link: ["--force"],
	unlink: [],
	migrate: ["--global", "--to-files"],
	adopt: ["--keep"],
	mcp: ["--owners", "--http", "--port"],
};

/** Highest number of positionals per command (show/history/export take an optional owner). */
const MAX_POSITIONALS: Record<Command, number> = {
	show: 1,
	history: 1,
	undo: 1,
	redo: 1,
	restore: 1,
	set: 2,
	delete: 1,
	edit: 1,
	export: 1,
	import: 1,
	doctor: 0,
	link: 1,
	unlink: 0,
	migrate: 1,
	adopt: 1,
	mcp: 0,
};

/**
 * pi's agent directory, exactly as pi's `getAgentDir()` computes it: `$PI_CODING_AGENT_DIR`
 * with `~` expanded, else `~/.pi/agent`. Re-implemented so the CLI starts without loading
 * pi (about a second); tests/cli compare it with pi's own function.
 */
export function defaultAgentDir(env: NodeJS.ProcessEnv = process.env): string {
	const dir = env.PI_CODING_AGENT_DIR;
	if (dir) {
		if (dir === "~") return homedir();
		if (dir.startsWith("~/")) return homedir() + dir.slice(1);
		return dir;
	}
	return join(homedir(), ".pi", "agent");
}

/** How an option is read: a flag, or one value (`--name value` or `--name=value`); `set` records it. */
type OptionSpec = { takesValue: false; set: (out: Parsed) => void } | { takesValue: true; set: (out: Parsed, value: string, cwd: string) => void };

/** Every option the CLI knows. A new option is one row here and its commands in `COMMAND_OPTIONS`. */
const OPTIONS: Record<string, OptionSpec> = {
	"--cwd": { takesValue: true, set: (out, value, cwd) => (out.cwd = resolve(cwd, value)) },
	"--agent-dir": { takesValue: true, set: (out, value, cwd) => (out.agentDir = resolve(cwd, value)) },
	"--owner": { takesValue: true, set: (out, value) => (out.owner = value) },
	"--drop-journal": { takesValue: true, set: (out, value) => (out.dropJournal = value) },
	"--move-aside": { takesValue: true, set: (out, value) => (out.moveAside = value) },
	"--cut-torn": { takesValue: true, set: (out, value) => (out.cutTorn = value) },
	"--accept-store": { takesValue: true, set: (out, value) => (out.acceptStore = value) },
	"--salvage": { takesValue: true, set: (out, value) => (out.salvage = value) },
	"--full": { takesValue: false, set: (out) => (out.full = true) },
	"--dry-run": { takesValue: false, set: (out) => (out.dryRun = true) },
	"--force": { takesValue: false, set: (out) => (out.force = true) },
	"--keep": { takesValue: false, set: (out) => (out.keep = true) },
	"--global": { takesValue: false, set: (out) => (out.global = true) },
	"--to-files": { takesValue: false, set: (out) => (out.toFiles = true) },
	"--yes": { takesValue: false, set: (out) => (out.yes = true) },
	"--allow-secret": { takesValue: false, set: (out) => (out.allowSecret = true) },
	"--path": { takesValue: true, set: (out, value) => (out.path = value) },
	"--owners": { takesValue: true, set: (out, value) => (out.owners = value) },
	"--http": { takesValue: false, set: (out) => (out.http = true) },
	"--port": { takesValue: true, set: (out, value) => (out.port = value) },
};

/** Options every command accepts. */
const COMMON_OPTIONS: readonly string[] = ["--cwd", "--agent-dir"];

/** Parse `argv` (without node and script). Throws `UsageError`. */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Parsed {
	const out: Parsed = {
		command: undefined,
		help: false,
		version: false,
		positionals: [],
		cwd,
		agentDir: defaultAgentDir(env),
		owner: undefined,
		full: false,
		dryRun: false,
		yes: false,
		force: false,
		global: false,
		toFiles: false,
		keep: false,
		allowSecret: false,
		http: false,
	};
	const seen = new Set<string>();
	let helpWord = false;
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i] as string;
		if (arg === "--") {
			out.positionals.push(...argv.slice(i + 1));
			break;
		}
		if (arg === "-h" || arg === "--help") {
			out.help = true;
			continue;
		}
		if (arg === "--version") {
			out.version = true;
			continue;
		}
		// `state-flow help [command]` is `state-flow [command] --help`.
		if (arg === "help" && out.command === undefined && !helpWord) {
			helpWord = true;
			out.help = true;
			continue;
		}
		if (arg.startsWith("-") && arg !== "-") {
			i = readOption(argv, i, out, seen, cwd);
			continue;
		}
		if (out.command === undefined) {
			setCommand(out, arg, seen);
			continue;
		}
		if (helpWord) throw new UsageError(`\`help\` takes one command; unexpected argument \`${arg}\`.`, out.command);
		out.positionals.push(arg);
	}
	checkComplete(out, argv);
	return out;
}

/** Read the option at `argv[i]` (and its value); returns the index of the last argument it used. */
function readOption(argv: readonly string[], i: number, out: Parsed, seen: Set<string>, cwd: string): number {
	const arg = argv[i] as string;
	const eq = arg.indexOf("=");
	const name = eq < 0 ? arg : arg.slice(0, eq);
	const spec = Object.hasOwn(OPTIONS, name) ? OPTIONS[name] : undefined;
	if (spec === undefined) {
		// The nearest option this command takes (any option before the command is known).
		const known = out.command === undefined ? Object.keys(OPTIONS) : [...COMMON_OPTIONS, ...COMMAND_OPTIONS[out.command]];
		throw new UsageError(`unknown option \`${arg}\`.${didYouMean(name, known)}`, out.command);
	}
	if (out.command !== undefined) checkAccepted(out.command, name);
	if (seen.has(name)) throw new UsageError(`\`${name}\` is given twice.`, out.command);
	seen.add(name);
	if (!spec.takesValue) {
		if (eq >= 0) throw new UsageError(`\`${name}\` takes no value.`, out.command);
		spec.set(out);
		return i;
	}
	const value = eq >= 0 ? arg.slice(eq + 1) : argv[i + 1];
	if (value === undefined || value === "" || (eq < 0 && value.startsWith("--"))) throw new UsageError(`\`${name}\` needs a value.`, out.command);
	spec.set(out, value, cwd);
	return eq >= 0 ? i : i + 1;
}

/** The first word that is not an option names the command; options given before it must be ones it accepts. */
function setCommand(out: Parsed, arg: string, seen: ReadonlySet<string>): void {
	if (!isOneOf(COMMANDS, arg)) {
		const hint = didYouMean(arg, [...COMMANDS, "help"]);
		throw new UsageError(`unknown command \`${arg}\`.${hint === "" ? " `state-flow help` lists the commands." : hint}`);
	}
	out.command = arg;
	for (const name of seen) checkAccepted(arg, name);
}

function checkAccepted(command: Command, option: string): void {
	if (!COMMON_OPTIONS.includes(option) && !COMMAND_OPTIONS[command].includes(option)) {
		throw new UsageError(`\`${command}\` does not take \`${option}\`.`, command);
	}
}

/** Rules about the whole command line: positional counts, the owner given once, a file for `import`. */
function checkComplete(out: Parsed, argv: readonly string[]): void {
	if (out.command !== undefined && !out.help && !out.version) {
		const max = MAX_POSITIONALS[out.command];
		if (out.positionals.length > max) {
			throw new UsageError(`unexpected argument \`${out.positionals[max]}\`.`, out.command);
		}
		// `show --owner cwd` means `show cwd`: the same spelling as `import --owner cwd`.
		if (out.command !== "import" && out.owner !== undefined) {
			if (out.positionals.length > 0) throw new UsageError(`give the owner once: \`${out.positionals[0]}\` or \`--owner ${out.owner}\`.`, out.command);
			out.positionals.push(out.owner);
			out.owner = undefined;
		}
		if (out.command === "import" && out.positionals.length === 0) {
			throw new UsageError("`import` needs a file to read (`-` for standard input).", out.command);
		}
		if (out.command === "restore" && out.positionals.length === 0) throw new UsageError("`restore` needs the id of the transition to go back to.", out.command);
		if ((out.command === "set" || out.command === "delete" || out.command === "edit") && out.positionals.length === 0) {
			throw new UsageError(`\`${out.command}\` needs a locator, e.g. \`cwd.tactics.next\`.`, out.command);
		}
		if (out.command === "set" && out.positionals.length === 1) {
			throw new UsageError("`set` needs a JSON value after the locator (a string in quotes: '\"text\"'), or @<file>.", out.command);
		}
		if (out.command === "adopt" && out.positionals.length === 0)
			throw new UsageError("`adopt` needs the folder whose store apart to decide about.", out.command);
		if (out.command === "migrate" && out.toFiles && out.positionals.length > 0) {
			throw new UsageError(
				"`migrate --to-files` takes no project id: it moves back the project this checkout is linked to (or, with `--global`, your shared Global).",
				out.command,
			);
		}
		if (out.command === "migrate" && !out.toFiles && out.global === out.positionals.length > 0) {
			throw new UsageError(
				out.global ? "`migrate --global` takes no project id: Global is keyed by your user name." : "`migrate` needs a project id (or `--global`).",
				out.command,
			);
		}
	}
	if (out.command === undefined && !out.help && !out.version && argv.length > 0) {
		throw new UsageError("no command given.");
	}
}
