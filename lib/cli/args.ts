/**
 * Command-line parsing for `state-flow`: one command, its positionals and a small fixed set of
 * options. Anything unexpected is a `UsageError` (exit code 2) naming the offending argument,
 * so a typo never runs a command with a default the user did not mean.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { didYouMean } from "../core/suggest.js";

/** A bad command line: printed with the relevant usage, exit code 2. */
export class UsageError extends Error {
	override readonly name = "UsageError";
	constructor(
		message: string,
		/** The command whose usage to print, when known. */
		readonly command?: string,
	) {
		super(message);
	}
}

/** What the command line asked for. */
export interface Parsed {
	/** Undefined for a bare `state-flow` or `state-flow --help`; for `help <command>`, that command. */
	command: string | undefined;
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
	/** `set|edit|import --allow-secret`: store what looks like a credential, this once (the user says it is none). */
	allowSecret: boolean;
	/** `restore --path <owner|locator>`: what to restore (default: every owner that retains the transition). */
	path?: string;
	/** `mcp --owners <list>`: the owners served (Global and/or CWD). */
	owners?: string;
	/** `mcp --http`: Streamable HTTP on 127.0.0.1 instead of stdio. */
	http: boolean;
	/** `mcp --http --port <n>`. */
	port?: string;
}

/**
 * One command as the parser knows it (`verbs.ts` holds the records): the options it takes, how
 * many positionals, and the rules about its whole line.
 */
export interface CommandSpec {
	name: string;
	/** Options it accepts beyond `--cwd`, `--agent-dir` and `--help`. */
	options: readonly string[];
	/** Highest number of positionals. */
	positionals: number;
	/** `--owner` is its own option (import), not another spelling of the owner positional. */
	ownOwner?: boolean;
	/** Rules about the whole line once parsed (a needed argument); throws `UsageError`. */
	check?: (p: Parsed) => void;
}

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

/** Every option the CLI knows. A new option is one row here and its commands' `options` in `verbs.ts`. */
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

/** Parse `argv` (without node and script) for these commands. Throws `UsageError`. */
export function parseWith(specs: readonly CommandSpec[], argv: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Parsed {
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
			i = readOption(specs, argv, i, out, seen, cwd);
			continue;
		}
		if (out.command === undefined) {
			setCommand(specs, out, arg, seen);
			continue;
		}
		if (helpWord) throw new UsageError(`\`help\` takes one command; unexpected argument \`${arg}\`.`, out.command);
		out.positionals.push(arg);
	}
	checkComplete(specs, out, argv);
	return out;
}

const specOf = (specs: readonly CommandSpec[], name: string): CommandSpec => specs.find((s) => s.name === name) as CommandSpec;

/** Read the option at `argv[i]` (and its value); returns the index of the last argument it used. */
function readOption(specs: readonly CommandSpec[], argv: readonly string[], i: number, out: Parsed, seen: Set<string>, cwd: string): number {
	const arg = argv[i] as string;
	const eq = arg.indexOf("=");
	const name = eq < 0 ? arg : arg.slice(0, eq);
	const spec = Object.hasOwn(OPTIONS, name) ? OPTIONS[name] : undefined;
	if (spec === undefined) {
		// The nearest option this command takes (any option before the command is known).
		const known = out.command === undefined ? Object.keys(OPTIONS) : [...COMMON_OPTIONS, ...specOf(specs, out.command).options];
		throw new UsageError(`unknown option \`${arg}\`.${didYouMean(name, known)}`, out.command);
	}
	if (out.command !== undefined) checkAccepted(specOf(specs, out.command), name);
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
function setCommand(specs: readonly CommandSpec[], out: Parsed, arg: string, seen: ReadonlySet<string>): void {
	const spec = specs.find((s) => s.name === arg);
	if (spec === undefined) {
		const hint = didYouMean(arg, [...specs.map((s) => s.name), "help"]);
		throw new UsageError(`unknown command \`${arg}\`.${hint === "" ? " `state-flow help` lists the commands." : hint}`);
	}
	out.command = arg;
	for (const name of seen) checkAccepted(spec, name);
}

function checkAccepted(spec: CommandSpec, option: string): void {
	if (!COMMON_OPTIONS.includes(option) && !spec.options.includes(option)) {
		throw new UsageError(`\`${spec.name}\` does not take \`${option}\`.`, spec.name);
	}
}

/** Rules about the whole command line: positional counts, the owner given once, then the command's own. */
function checkComplete(specs: readonly CommandSpec[], out: Parsed, argv: readonly string[]): void {
	if (out.command !== undefined && !out.help && !out.version) {
		const spec = specOf(specs, out.command);
		if (out.positionals.length > spec.positionals) {
			throw new UsageError(`unexpected argument \`${out.positionals[spec.positionals]}\`.`, out.command);
		}
		// `show --owner cwd` means `show cwd`: the same spelling as `import --owner cwd`.
		if (!spec.ownOwner && out.owner !== undefined) {
			if (out.positionals.length > 0) throw new UsageError(`give the owner once: \`${out.positionals[0]}\` or \`--owner ${out.owner}\`.`, out.command);
			out.positionals.push(out.owner);
			out.owner = undefined;
		}
		spec.check?.(out);
	}
	if (out.command === undefined && !out.help && !out.version && argv.length > 0) {
		throw new UsageError("no command given.");
	}
}
