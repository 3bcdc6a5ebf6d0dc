/**
 * The prose of `state-flow --help` and of each command's help, kept apart from the logic so it
 * is reviewed as prose (docs/cli.md repeats it for readers without the binary at hand). Each
 * command's record in `verbs.ts` points at its text; `help.ts` lays it out at 80 columns.
 */

/** Options every command takes, at the end of every help. */
export const COMMON = `Options for every command:
  --cwd <dir>        project folder (default: the current directory)
  --agent-dir <dir>  pi's agent folder ($PI_CODING_AGENT_DIR, else ~/.pi/agent)
  -h, --help         show help (also: state-flow help [command])`;

/** What `state-flow --help` says before its list of commands (built from `verbs.ts`). */
export const MAIN_HEAD = `state-flow: inspect and maintain State Flow stores outside pi.

Usage: state-flow <command> [options]
       state-flow help [command]
       state-flow --version`;

/** What `state-flow --help` says after its list of commands. */
export const MAIN_TAIL = `Owners: \`global\` (<agent-dir>/state-flow/global) and \`cwd\` (the project's store:
the repository's .git/state-flow for --cwd anywhere in it or its worktrees, or the
.pi/state-flow an older build made at its root; outside git, the folder's), or PostgreSQL
when configured ($STATE_FLOW_DATABASE_URL or \`database\`, plus a link or \`shareGlobal\`;
see docs/shared-memory.md). \`show\` says where each one lives. Session state lives in
pi's session file; use /state show inside pi.

${COMMON}

--version prints the package version.

Exit codes: 0 success, 1 failure (damaged store, refused import, unreachable database),
2 usage error.`;

/** Each command's help: its usage line(s) first. */
export const HELP = {
	show: `Usage: state-flow show [global|cwd] [--full]

Print each owner's planes (intents, strategy, tactics, artifacts, lazy) as indented JSON,
after a header saying where it lives: its folder, or postgres, the URL without its
password, the schema and the project id or user. Lazy bodies are listed as a catalog (key
and size) unless --full is given. Without an owner: every owner that has a store (a
database owner always). With a database configured, the last lines name it, your user name
and any problem (a link without a database). An owner that cannot be reached is reported
on stderr and the others are still shown (exit code 1). Reading never creates files.
The owner may also be given as --owner global|cwd (show, history, export).

  --full   print lazy bodies too

${COMMON}`,
	history: `Usage: state-flow history [global|cwd] [--full]

List the retained transitions, newest first, as /state history does: sequence
number, short id, local time, who made it (a model tool call, a command, an
undo, an import; then user@host) and the keys it changed. Older transitions are
folded into the checkpoint (retention).

  --full   whole ids, ISO times (UTC), every changed leaf and the cascades

${COMMON}`,
	undo: `Usage: state-flow undo [global|cwd|<id>] [--yes]

Walk back: revert a transition as a NEW one that names it (\`state-flow history\`
shows "undo of <id>"), by applying its stored inverse, as /state undo does in pi:
  (none)      the latest transition of global and cwd still in effect; run
              again to revert the one before it (an undo is never undone)
  global|cwd  the same, in that owner only
  <id>        the transition whose id starts with <id>, in every owner that
              retains it; an undo's id redoes what it undid. Refused, writing
              nothing, when later work still in effect changed one of its keys
              (undo that one first), or when <id> starts no id or several
It prints what it reverts and whose it was. A transition made by another user
or machine is reverted only with --yes. A Session part stays (use /state undo
inside pi). Exit code 1 when there is nothing to undo or it is refused.

  --yes   revert someone else's transitions too

${COMMON}`,
	redo: `Usage: state-flow redo [global|cwd] [--yes]

Walk forward: apply again the change the latest undo reverted (of global and cwd,
or of the owner named), as a NEW transition. New work after an undo ends its
redo (undo the undo by its id instead). --yes as for undo.

${COMMON}`,
	restore: `Usage: state-flow restore <id> [--path <owner|locator>] [--yes]

Bring state back to how it was right after transition <id>, as ONE new
transition that names <id> and the transitions it reverts: every owner that
retains <id>, or the owner or path given (\`--path cwd\`, \`--path
cwd.tactics.next\`). It prints what it reverts and whose they were; someone
else's are reverted only with --yes. Exit code 1 when nothing would change.

  --path <locator>   restore only this owner, plane or key
  --yes              revert someone else's transitions too

${COMMON}`,
	set: `Usage: state-flow set <locator> <json|@file> [--yes] [--allow-secret]

Set the value at <locator> (cwd.tactics.next, global.intents.x.goal,
cwd.artifacts) to a JSON value, replacing what is there whole, as ONE transition
signed by you (recorded as \`state-flow set <locator>\`). The value is JSON: a
string needs its quotes ('"write the parser"'); @<file> reads it from a file.
Validation, limits and artifacts are as for the model's patches. What changes
is printed first; when it deletes more than the value named (tactics owned by a
replaced intent), nothing is written unless --yes is given. Text that looks
like a credential (a key, a token, a password) is refused; --allow-secret stores
it this once, when you know it is none (for good: allowSecrets in the config).

  --yes            go ahead although more than the named value is deleted
  --allow-secret   store text that looks like a credential, this once

${COMMON}`,
	delete: `Usage: state-flow delete <locator> [--yes]

Delete the value at <locator> (cwd.tactics.next, cwd.intents.x) as ONE
transition signed by you. Deleting an intent also deletes the tactics and lazy
notes it owns and no other intent references: they are listed, and nothing is
written unless --yes is given. References left pointing at nothing are listed.

  --yes   go ahead although more than the named value is deleted

${COMMON}`,
	edit: `Usage: state-flow edit <locator> [--yes] [--allow-secret]

Open the value at <locator> as indented JSON in $VISUAL (else $EDITOR, else vi)
and set what you save as ONE transition, as \`state-flow set\` would. An empty
or unchanged file changes nothing. Text that is refused (not JSON, over a
limit, the value changed meanwhile) is kept in its temporary file, named with
the \`state-flow set <locator> @<file>\` command that applies it once fixed.

  --yes            go ahead although more than the named value is deleted
  --allow-secret   store text that looks like a credential, this once

${COMMON}`,
	export: `Usage: state-flow export [global|cwd]

Print a JSON document with the current state of the owner (or of every owner that
has a store): {"format":"state-flow/export","v":1,"owners":{"cwd":{"seq":N,"state":{...}}}}.
The output can be read back with \`state-flow import\`. Refused whole (nothing printed,
exit code 1) when an owner cannot be reached: name the others to export them.

${COMMON}`,
	import: `Usage: state-flow import <file|-> [--owner global|cwd] [--allow-secret]

Make an owner's state equal to the file's content, as ONE transition (provenance
"import"), atomically across owners. The file is either an export document
(\`state-flow export\`) or one owner's state object {"intents":{},...,"lazy":{}},
which needs --owner. Everything is validated first (planes, finite JSON, limits,
references, credentials); a refused import writes nothing. \`-\` reads standard
input.

  --owner <owner>   the owner a plain state object is for; with an export document,
                    import only that owner
  --allow-secret    store text that looks like a credential, this once

${COMMON}`,
	doctor: `Usage: state-flow doctor [--dry-run] [--drop-journal <id>] [--move-aside <owner>] [--cut-torn <owner>] [--accept-store <owner>] [--salvage <owner>]

Verify the global and cwd stores and repair what a crash can leave behind:
  - the lock of a writer that died: broken
  - a torn last line left by that writer (a write cut short): cut off; it was never committed
  - a pending multi-owner journal: rolled forward, so the transition lands on every owner
Damage (a record failing its integrity check, a checkpoint that does not match its log, a
log cut short, a store older than what a writer on this machine committed to it, links or
folders where files belong) is reported with its path and never
rewritten or deleted. An owner in PostgreSQL is read afresh and every row verified (never
changed); a journal that also touched it is settled by asking that database. Exit code 0
when every store is healthy after the repairs, 1 otherwise.

  --dry-run             report what would be repaired, change nothing
  --drop-journal <id>   give up completing that pending journal (one a restored or moved
                        store blocks): move it to state-flow/journal-dropped/, never deleted
  --move-aside <owner>  keep a damaged global or cwd store: rename its folder to
                        <folder>.damaged-<time> (named in the output) and start that owner afresh
  --salvage <owner>     rebuild a damaged global or cwd store from its intact transitions
                        (a byte proven by the records' checks is repaired; the damaged rest
                        and what cannot be replayed without it are listed and left out), as
                        a new store; the old folder is renamed <folder>.damaged-<time>
  --cut-torn <owner>    cut the bytes after the last complete record of that owner's log that
                        no crashed writer explains (after a power loss); complete records stay
  --accept-store <owner>  go on from a global or cwd store as it is although a writer on this
                        machine committed more to it (the missing transitions stay missing)

${COMMON}`,
	link: `Usage: state-flow link <project-id> [--force]
       state-flow link          (offers the id the repository suggests; links nothing)

Share this checkout's CWD owner through the database: record
links[<project root of --cwd>] = <project-id> in <agent-dir>/state-flow/config.json (other
keys kept). Running it is the consent: a repository never links itself. pi sessions
started here afterwards use the project's memory; a running session at its next prompt.
Without a configured database the CWD owner is unavailable until one is (it says so).
Refused when the checkout's local CWD store holds state: move it with
\`state-flow migrate <project-id>\`, or link anyway with --force (the local files are left
untouched and unused while linked).

  --force   link although the local CWD store holds state

${COMMON}`,
	unlink: `Usage: state-flow unlink

Remove this checkout's link: its CWD memory is in its local files again
(the project's local store). The project's rows in the database stay as they are.

${COMMON}`,
	migrate: `Usage: state-flow migrate <project-id>
       state-flow migrate --global
       state-flow migrate [--global] --to-files

Move a file store WITH its retained history (checkpoint and retained transitions, so
cwd[N], patches and /state undo keep working) into an empty database owner in ONE
transaction, read it back and compare, then record where the owner lives:
  <project-id>  the checkout's CWD store into that project, then link the checkout
  --global      the Global store into your shared Global owner (keyed by \`user\`, default
                the OS user), then set \`shareGlobal\`
Refused, with nothing written, when the target already holds transitions, the local store
is damaged (run doctor), or the database cannot be reached. The local files are left in
place and no longer used. Stop pi sessions working here first.

With --to-files, the way back: the linked project's history (or, with --global, your
shared Global's) as the database holds it now, folded to this config's retention, into the
EMPTY local file store, read back and compared; then the link is removed (or \`shareGlobal\`
turned off). Refused, with nothing changed, when the owner is not shared, the local store
holds state or cannot be read (move that folder aside first), or the database cannot be
reached. The database's rows are left as they are for the checkouts still sharing them.

${COMMON}`,
	adopt: `Usage: state-flow adopt <folder> [--keep]

Decide about a store apart: a CWD store an older build made in <folder>, a subfolder or
a worktree of this project (\`state-flow doctor\` and /state list them). Into an empty
project store it moves WITH its history (read back and compared); into one that holds
state its entries are added as ONE transition, refused with nothing written when a key
exists in both. With --keep it stays apart on purpose. Either way the store apart is left
in place, marked, and no longer reported; nothing is deleted.

Given the repository's root while its memory is still the .pi/state-flow an older build
made there, it moves that store WITH its history into the repository's .git/state-flow,
where git's checkout, pull and clean never touch it (\`state-flow doctor\` suggests it).

  --keep    keep it apart on purpose (no longer reported)

${COMMON}`,
	mcp: `Usage: state-flow mcp [--owners cwd|global|global,cwd] [--http [--port <n>]]

Serve this project's State Flow memory to MCP clients (Claude Code, Codex, Cursor,
Gemini CLI, pi's own MCP client): the tools read_state and patch_state, with pi's
grammar and results, and state_head, the head pi shows before each prompt. The
project is found from --cwd (default: here) as pi finds it. Every write commits
atomically, as pi's do; a client that sends back the \`seen\` of its last result is
refused, with the current values, when another writer changed what it writes.

  --owners <list>  the owners served: cwd (default: this project), global (you,
                   every project), or both. Session state is pi's alone.
  --http           serve Streamable HTTP at http://127.0.0.1:<port>/mcp instead
                   of stdio. Every request needs "Authorization: Bearer <token>":
                   $STATE_FLOW_MCP_TOKEN, else a token printed on stderr at start.
                   Requests from other hosts or web pages are refused.
  --port <n>       the HTTP port (default 8765; 0: any free port)

See docs/mcp.md for each client's configuration.

${COMMON}`,
};
