/**
 * Help texts of `state-flow` and each command. Kept apart from the logic so `--help` output is
 * reviewed as prose; docs/cli.md repeats it for readers without the binary at hand.
 */
import type { Command } from "./args.js";

const COMMON = `Options for every command:
  --cwd <dir>        project directory whose CWD state to use (default: the current directory)
  --agent-dir <dir>  pi's agent directory (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent)
  -h, --help         show help (also: state-flow help [command])`;

/** `state-flow --help`. */
export const MAIN_HELP = `state-flow: inspect and maintain State Flow stores outside pi.

Usage: state-flow <command> [options]
       state-flow help [command]
       state-flow --version

Commands:
  show [owner]             print the state of global and/or cwd
  history [owner]          list retained transitions: when, who, what changed
  export [owner]           print the state as JSON (for backup or import)
  import <file> [--owner]  replace state with a file's content as ONE transition
  doctor                   verify the stores and repair what a crash left
  help [command]           show this help, or one command's

Owners: \`global\` (<agent-dir>/state-flow/global) and \`cwd\` (<cwd>/.pi/state-flow).
Session state lives in pi's session file; use /state show inside pi.

${COMMON}

--version prints the package version.

Exit codes: 0 success, 1 failure (damaged store, refused import), 2 usage error.`;

const HELP: Record<Command, string> = {
	show: `Usage: state-flow show [global|cwd] [--full]

Print each owner's planes (intents, strategy, tactics, artifacts, lazy) as indented JSON.
Lazy bodies are listed as a catalog (key and size) unless --full is given.
Without an owner: every owner that has a store. Reading never creates files.
The owner may also be given as --owner global|cwd (show, history, export).

  --full   print lazy bodies too

${COMMON}`,
	history: `Usage: state-flow history [global|cwd]

List the retained transitions, oldest first: sequence number, time, who made it
(a model tool call, a /state command, an import) and the paths it changed,
with any cascades. Older transitions are folded into the checkpoint (retention).

${COMMON}`,
	export: `Usage: state-flow export [global|cwd]

Print a JSON document with the current state of the owner (or of every owner that
has a store): {"format":"state-flow/export","v":1,"owners":{"cwd":{"seq":N,"state":{...}}}}.
The output can be read back with \`state-flow import\`.

${COMMON}`,
	import: `Usage: state-flow import <file|-> [--owner global|cwd]

Make an owner's state equal to the file's content, as ONE transition (provenance
"import"), atomically across owners. The file is either an export document
(\`state-flow export\`) or one owner's state object {"intents":{},...,"lazy":{}},
which needs --owner. Everything is validated first (planes, finite JSON, limits,
references); a refused import writes nothing. \`-\` reads standard input.

  --owner <owner>   the owner a plain state object is for; with an export document,
                    import only that owner

${COMMON}`,
	doctor: `Usage: state-flow doctor [--dry-run] [--drop-journal <id>] [--move-aside <owner>] [--cut-torn <owner>]

Verify the global and cwd stores and repair what a crash can leave behind:
  - the lock of a writer that died: broken
  - a torn last line left by that writer (a write cut short): cut off; it was never committed
  - a pending multi-owner journal: rolled forward, so the transition lands on every owner
Damage (a record failing its integrity check, a checkpoint that does not match its log, a
log cut short, links or folders where files belong) is reported with its path and never
rewritten or deleted. Exit code 0 when every store is healthy after the repairs, 1 otherwise.

  --dry-run             report what would be repaired, change nothing
  --drop-journal <id>   give up completing that pending journal (one a restored or moved
                        store blocks): move it to state-flow/journal-dropped/, never deleted
  --move-aside <owner>  keep a damaged global or cwd store: rename its folder to
                        <folder>.damaged-<time> (named in the output) and start that owner afresh
  --cut-torn <owner>    cut the bytes after the last complete record of that owner's log that
                        no crashed writer explains (after a power loss); complete records stay

${COMMON}`,
};

/** Help for one command, or the overview. */
export function helpText(command: Command | undefined): string {
	return command === undefined ? MAIN_HELP : HELP[command];
}
