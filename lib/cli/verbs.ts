/**
 * Every `state-flow` command, one record each: its rows in `state-flow --help`, the options it
 * takes, its positionals and the rules about its whole line, its help text and what runs it.
 * Parsing (`args.ts`), help (`help.ts`) and dispatch (`main.ts`) read this table, so a new
 * command is one record here (and its prose in `help-text.ts`).
 */
import { type CommandSpec, type Parsed, parseWith, UsageError } from "./args.js";
import { runAdopt } from "./adopt.js";
import { type Outcome, runExport, runHistory, runImport, runShow } from "./commands.js";
import { runDoctor } from "./doctor/index.js";
import { runDelete, runEdit, runSet } from "./edit.js";
import { HELP } from "./help-text.js";
import { runLink, runMigrate, runUnlink } from "./share.js";
import { runUndo } from "./undo.js";
import { runMcp } from "./mcp.js";
import { packageVersion } from "./version.js";

/** One command: what the parser, the help and the dispatcher know of it. */
export interface CliVerb extends CommandSpec {
	/** Its rows in `state-flow --help`: the form after `state-flow`, and what it does. */
	rows: ReadonlyArray<readonly [form: string, what: string]>;
	/** Its whole help, the usage line(s) first. */
	help: string;
	/** Its standard output is data to keep (JSON for a file or a pipe): printed as is, never laid out to 80 columns. */
	data?: true;
	run: (p: Parsed, stdin: () => string) => Promise<Outcome>;
}

/** A rule: `state-flow <command>` needs at least one positional, else `problem`. */
const needs =
	(problem: string) =>
	(p: Parsed): void => {
		if (p.positionals.length === 0) throw new UsageError(problem, p.command);
	};
const needsLocator = (p: Parsed) => needs(`\`${p.command}\` needs a locator, e.g. \`cwd.tactics.next\`.`)(p);

/** The commands, in help order. */
export const VERBS: readonly CliVerb[] = [
	{
		name: "show",
		rows: [["show [owner]", "print the state of global and/or cwd"]],
		options: ["--full", "--owner"],
		positionals: 1,
		help: HELP.show,
		run: (p) => runShow(p),
	},
	{
		name: "history",
		rows: [["history [owner]", "list retained transitions: when, who, what"]],
		options: ["--full", "--owner"],
		positionals: 1,
		help: HELP.history,
		run: (p) => runHistory(p),
	},
	{
		name: "undo",
		rows: [["undo [owner|id]", "walk back: revert the latest change, or that one"]],
		options: ["--yes"],
		positionals: 1,
		help: HELP.undo,
		run: (p) => runUndo(p),
	},
	{
		name: "redo",
		rows: [["redo [owner]", "walk forward: apply the latest undone change again"]],
		options: ["--yes"],
		positionals: 1,
		help: HELP.redo,
		run: (p) => runUndo(p),
	},
	{
		name: "restore",
		rows: [["restore <id> [--path]", "bring an owner or path back to how it was after <id>"]],
		options: ["--path", "--yes"],
		positionals: 1,
		check: needs("`restore` needs the id of the transition to go back to."),
		help: HELP.restore,
		run: (p) => runUndo(p),
	},
	{
		name: "set",
		rows: [["set <locator> <json>", "set one value by hand (cwd.tactics.next '\"parse\"')"]],
		options: ["--yes", "--allow-secret"],
		positionals: 2,
		check: (p) => {
			needsLocator(p);
			if (p.positionals.length === 1)
				throw new UsageError("`set` needs a JSON value after the locator (a string in quotes: '\"text\"'), or @<file>.", p.command);
		},
		help: HELP.set,
		run: (p) => runSet(p),
	},
	{
		name: "delete",
		rows: [["delete <locator>", "delete one value (and what it owns, with --yes)"]],
		options: ["--yes"],
		positionals: 1,
		check: needsLocator,
		help: HELP.delete,
		run: (p) => runDelete(p),
	},
	{
		name: "edit",
		rows: [["edit <locator>", "edit one value in $VISUAL/$EDITOR"]],
		options: ["--yes", "--allow-secret"],
		positionals: 1,
		check: needsLocator,
		help: HELP.edit,
		run: (p) => runEdit(p),
	},
	{
		name: "export",
		rows: [["export [owner]", "print the state as JSON (for backup or import)"]],
		options: ["--owner"],
		positionals: 1,
		help: HELP.export,
		data: true,
		run: (p) => runExport(p),
	},
	{
		name: "import",
		rows: [["import <file> [--owner]", "replace state with a file's content as ONE transition"]],
		options: ["--owner", "--allow-secret"],
		positionals: 1,
		ownOwner: true,
		check: needs("`import` needs a file to read (`-` for standard input)."),
		help: HELP.import,
		run: (p, stdin) => runImport(p, stdin),
	},
	{
		name: "doctor",
		rows: [["doctor", "verify the stores and repair what a crash left"]],
		options: ["--dry-run", "--drop-journal", "--move-aside", "--cut-torn", "--accept-store", "--salvage"],
		positionals: 0,
		help: HELP.doctor,
		run: (p) => runDoctor(p),
	},
	{
		name: "link",
		rows: [["link <project-id>", "share this checkout's CWD memory through the database"]],
		options: ["--force"],
		positionals: 1,
		help: HELP.link,
		run: (p) => runLink(p),
	},
	{
		name: "unlink",
		rows: [["unlink", "keep this checkout's CWD memory in its own files"]],
		options: [],
		positionals: 0,
		help: HELP.unlink,
		run: (p) => runUnlink(p),
	},
	{
		name: "migrate",
		rows: [
			["migrate <project-id>", "move CWD's file store into the database, then link"],
			["migrate --global", "move the Global file store into your shared Global"],
			["migrate [--global] --to-files", "move it back into the empty local file store"],
		],
		options: ["--global", "--to-files"],
		positionals: 1,
		check: (p) => {
			if (p.toFiles && p.positionals.length > 0) {
				throw new UsageError(
					"`migrate --to-files` takes no project id: it moves back the project this checkout is linked to (or, with `--global`, your shared Global).",
					p.command,
				);
			}
			if (!p.toFiles && p.global === p.positionals.length > 0) {
				throw new UsageError(
					p.global ? "`migrate --global` takes no project id: Global is keyed by your user name." : "`migrate` needs a project id (or `--global`).",
					p.command,
				);
			}
		},
		help: HELP.migrate,
		run: (p) => runMigrate(p),
	},
	{
		name: "adopt",
		rows: [["adopt <folder> [--keep]", "move a store apart (an older build's, in a subfolder or worktree) into the project's memory, or keep it apart"]],
		options: ["--keep"],
		positionals: 1,
		check: needs("`adopt` needs the folder whose store apart to decide about."),
		help: HELP.adopt,
		run: (p) => runAdopt(p),
	},
	{
		name: "mcp",
		rows: [["mcp [--owners] [--http]", "serve this project's memory to MCP clients (stdio, or HTTP on 127.0.0.1 with a token); docs/mcp.md"]],
		options: ["--owners", "--http", "--port"],
		positionals: 0,
		help: HELP.mcp,
		run: (p) => runMcp(p, packageVersion()),
	},
];

/** The command names, in help order. */
export const COMMANDS: readonly string[] = VERBS.map((v) => v.name);

/** The record of a command, or undefined for no such command. */
export const verbNamed = (name: string | undefined): CliVerb | undefined => VERBS.find((v) => v.name === name);

/** Parse `argv` (without node and script) for these commands. Throws `UsageError`. */
export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Parsed {
	return parseWith(VERBS, argv, env, cwd);
}
