/**
 * The `/state` command (docs/spec.md §11): status, mode and owner selection, show, history,
 * undo/redo/restore (`undo-command.ts`), hand edits and tidy (`edit-command.ts`), the config
 * defaults and the interactive browser. Arguments are validated before anything changes; a bad
 * argument gets the one usage line of its subcommand (`/state help`: all of them) and, for a
 * mistyped word, the nearest one. Every answer is a chat message (`output.ts`). Typed commands ask only before reverting someone else's
 * transition, a hand edit that deletes more than the value named (`--yes` without a UI), and
 * `link`/`unlink`; the browser's undo, `d` and a cascading `e` ask. The browser changes mode
 * and owners through the same function as the typed commands.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import type { AutocompleteItem } from "@mariozechner/pi-tui";
import { messageOf } from "../../core/errors.js";
import { didYouMean } from "../../core/suggest.js";
import { OWNERS, type Owner, isOwner } from "../../core/types.js";
import { configPath, isMode, MODES, parseOwners, updateConfig } from "../../storage/placement/config.js";
import { openBrowser } from "../browser/open.js";
import { describeHistory, describeState, describeStatus } from "./status.js";
import { link, unlink } from "./link.js";
import { commitPlan, runUndoCommand } from "./undo.js";
import { EDIT_USAGE, runEditCommand } from "./edit.js";
import { registerTidyHook, runTidy } from "./tidy.js";
import type { CommandOutput, Level } from "./output.js";
import type { StateFlowHost } from "../runtime.js";
import { allOwnerSelections, describeSelection, type Selection, shapeOf } from "../session/selection.js";

export const USAGE = [
	"Usage:",
	"  /state                        status: mode, owners, stores, retention",
	"  /state active|passive|off     set this session's mode",
	"  /state owners <list>          set this session's owners, e.g. cwd,session",
	"  /state show [owner]           the state of an owner (default: wanted ones)",
	"  /state history [owner] [--full]  retained transitions: who, when, what",
	"  /state undo [owner|id]        revert the latest still in effect, or that id",
	"  /state redo [owner]           apply the latest undone change again",
	"  /state restore <id> [where]   back to how it was after <id> (owner, path)",
	...EDIT_USAGE,
	"  /state browse                 browse owners, planes and history",
	"  /state default <mode>         set the default mode in the config file",
	"  /state default owners <list>  set the default owners in the config file",
	"  /state link [project-id]      share this checkout's CWD memory (asks first)",
	"  /state unlink                 keep this checkout's CWD memory in files again",
	"  /state help                   this list",
].join("\n");

/** Every subcommand word `/state` knows (modes included), for "did you mean". */
const VERBS = [
	"status",
	...MODES,
	"owners",
	"show",
	"history",
	"undo",
	"redo",
	"restore",
	"set",
	"delete",
	"tidy",
	"browse",
	"default",
	"link",
	"unlink",
	"help",
];

/** The usage line of one subcommand (`/state default owners` for `default`, both lines), else the pointer to all. */
export function usageOf(verb: string | undefined): string {
	const lines = USAGE.split("\n").filter((l) => verb !== undefined && (l.startsWith(`  /state ${verb} `) || l === `  /state ${verb}`));
	const modes = USAGE.split("\n").filter((l) => l.startsWith("  /state active|"));
	const found = lines.length > 0 ? lines : verb !== undefined && isMode(verb) ? modes : [];
	const how = "(/state help lists every command)";
	return found.length > 0 ? `Usage:\n${found.join("\n")}\n${how}` : `Usage: /state <command> ${how}`;
}

const SUBCOMMANDS: AutocompleteItem[] = [
	{ value: "active", label: "active", description: "keep the state current, with reconciliation" },
	{ value: "passive", label: "passive", description: "state visible; writes only when asked" },
	{ value: "off", label: "off", description: "withdraw both tools, inject nothing" },
	{ value: "owners ", label: "owners", description: "choose the wanted owners" },
	{ value: "show ", label: "show", description: "print an owner's state" },
	{ value: "history ", label: "history", description: "list retained transitions" },
	{ value: "undo ", label: "undo", description: "revert the latest transition (again: the one before)" },
	{ value: "redo ", label: "redo", description: "apply the latest undone transition again" },
	{ value: "restore ", label: "restore", description: "bring an owner or path back to how it was after a transition" },
	{ value: "set ", label: "set", description: "set one value by hand: /state set <locator> <json>" },
	{ value: "delete ", label: "delete", description: "delete one value by hand" },
	{ value: "tidy", label: "tidy", description: "ask the model to close, delete and merge, as one change" },
	{ value: "default ", label: "default", description: "change the config file defaults" },
	{ value: "browse", label: "browse", description: "browse state and history interactively" },
	{ value: "link ", label: "link", description: "share this checkout's CWD memory with a project (asks first)" },
	{ value: "unlink", label: "unlink", description: "keep this checkout's CWD memory in files again" },
];

/** Completions for the text after `/state `. */
export function completeStateArgs(prefix: string): AutocompleteItem[] | null {
	const words = prefix.trimStart().split(/\s+/);
	const filter = (items: AutocompleteItem[], last: string) => {
		const hits = items.filter((i) => i.value.startsWith(last));
		return hits.length > 0 ? hits : null;
	};
	const ownerLists = (lead: string): AutocompleteItem[] => allOwnerSelections().map((o) => ({ value: `${lead}${o.join(",")}`, label: o.join(",") }));
	const ownerItems = (lead: string): AutocompleteItem[] => OWNERS.map((o) => ({ value: `${lead}${o}`, label: o }));
	if (words.length <= 1) return filter(SUBCOMMANDS, words[0] ?? "");
	const [first, second] = words;
	if (words.length === 2) {
		if (first === "owners") return filter(ownerLists("owners "), prefix.trimStart());
		if (first === "show" || first === "history" || first === "undo" || first === "redo") return filter(ownerItems(`${first} `), prefix.trimStart());
		if (first === "default") {
			const items = [...MODES.map((m) => ({ value: `default ${m}`, label: m })), { value: "default owners ", label: "owners" }];
			return filter(items, prefix.trimStart());
		}
	}
	if (words.length === 3 && first === "default" && second === "owners") return filter(ownerLists("default owners "), prefix.trimStart());
	if (words.length === 3 && first === "history") return filter([{ value: `history ${second} --full`, label: "--full" }], prefix.trimStart());
	return null;
}

/** Register `/state`. */
export function registerStateCommand(host: StateFlowHost, output: CommandOutput): void {
	registerTidyHook(host);
	host.pi.registerCommand("state", {
		description: "State Flow: status, mode (active|passive|off), owners, show, history, undo, defaults, link",
		getArgumentCompletions: completeStateArgs,
		handler: async (args, ctx) => {
			try {
				await runStateCommand(host, output, args, ctx);
			} catch (e) {
				const message = messageOf(e);
				if (message.includes("\n")) output.show(message, { title: "error", level: "error" }, ctx);
				else output.line(`State Flow: ${message}`, "error", ctx);
			}
		},
	});
}

/** Parse and run one `/state` command line. */
export async function runStateCommand(host: StateFlowHost, output: CommandOutput, args: string, ctx: ExtensionCommandContext): Promise<void> {
	host.bind(ctx);
	const words = args
		.trim()
		.split(/\s+/)
		.filter((w) => w !== "");
	const [verb, ...rest] = words;
	const show = (title: string, text: string, level: Level = "info") => output.show(text, { title, level }, ctx);
	const usage = (problem: string) => show("usage", `${problem}\n${usageOf(verb)}`, "warning");
	// One-line answers are chat messages too: pi 1.6 rewrites earlier notices with newer text.
	const say = (text: string, level: Level = "info") => output.line(text, level, ctx);
	const sel = host.selection();
	if (verb === undefined || verb === "status") {
		if (rest.length > 0) return usage(`\`${verb}\` takes no argument.`);
		return show("status", await describeStatus(host, ctx.hasUI));
	}
	if (isMode(verb)) {
		if (rest.length > 0) return usage(`\`/state ${verb}\` takes no argument.`);
		return say(chooseSelection(host, { mode: verb, owners: sel.owners }));
	}
	switch (verb) {
		case "set":
		case "delete":
		case "tidy": {
			const raw = args.trim().slice(verb.length);
			const out = { show: (title: string, text: string, level: Level = "info") => show(title, text, level), flush: () => output.flush(ctx) };
			return verb === "tidy" ? runTidy(host, raw, out, ctx) : runEditCommand(host, verb, raw, out, ctx);
		}
		case "owners": {
			if (rest.length === 0) {
				return say(`State Flow: owners ${sel.owners.join("+")} (${sel.mode}); choose others with /state owners <list>, e.g. cwd,session`);
			}
			const owners = tryOwners(rest.join(","), usage);
			if (!owners) return;
			return say(chooseSelection(host, { mode: sel.mode, owners }));
		}
		case "undo":
		case "redo":
		case "restore":
			return runUndoCommand(host, verb, rest, ctx, { show, usage, say });
		case "show":
		case "history": {
			const full = verb === "history" && rest.includes("--full");
			const names = rest.filter((w) => !(full && w === "--full"));
			if (names.length > 1) return usage(`\`${verb}\` takes at most one owner.`);
			const owner = names[0];
			if (owner !== undefined && !isOwner(owner)) {
				if (owner.startsWith("-")) return usage(`unknown option \`${owner}\`.${didYouMean(owner, verb === "history" ? ["--full"] : [])}`);
				return usage(`unknown owner "${owner}" — owners are ${OWNERS.join(", ")}.${didYouMean(owner, OWNERS)}`);
			}
			const owners: Owner[] = owner !== undefined ? [owner as Owner] : sel.owners;
			if (verb === "show") return show("show", await describeState(host, owners));
			return show("history", await describeHistory(host, owners, { now: host.options.now(), full }));
		}
		case "browse":
			if (rest.length > 0) return usage("`browse` takes no argument.");
			if (await openBrowser(host, ctx, { undo: (plan) => commitPlan(host, plan, ctx), choose: (next) => chooseSelection(host, next) })) return;
			// No interactive UI (print, JSON or RPC mode): the same information as text.
			return show(
				"browse",
				[
					await describeStatus(host),
					await describeState(host, sel.owners),
					await describeHistory(host, sel.owners, { now: host.options.now(), full: false }),
				].join("\n"),
			);
		case "default":
			return setDefault(host, rest, { usage, say });
		case "link":
			if (rest.length > 1) return usage("`link` takes at most one project id.");
			return link(host, rest[0], { usage, say }, ctx);
		case "unlink":
			if (rest.length > 0) return usage("`unlink` takes no argument.");
			return unlink(host, say, ctx);
		case "help":
			return show("help", USAGE);
		default:
			return usage(`unknown command \`${verb}\`.${didYouMean(verb, VERBS)}`);
	}
}

/**
 * Make `next` this session's selection (`/state <mode>`, `/state owners`, the browser's `m` and
 * `w`): recorded in the session, the tools withdrawn or offered at once; returns the confirmation.
 */
export function chooseSelection(host: StateFlowHost, next: Selection): string {
	const before = host.selection();
	host.choose(next);
	host.applyActivation();
	host.showStatus();
	const now = host.selection();
	// The tools' grammar differs only between one owner (flat) and several (scoped).
	const note =
		now.mode === "off"
			? " (tools withdrawn; data untouched)"
			: shapeOf(now.owners) !== shapeOf(before.owners)
				? " (new tool grammar from the next prompt)"
				: "";
	return `State Flow: ${describeSelection(now)}${note}`;
}

function tryOwners(text: string, usage: (p: string) => void): Owner[] | undefined {
	try {
		return parseOwners(text);
	} catch (e) {
		usage(messageOf(e));
		return undefined;
	}
}

/** `/state default <mode>` and `/state default owners <list>`: the only config writers. */
async function setDefault(
	host: StateFlowHost,
	rest: string[],
	{ usage, say }: { usage: (p: string) => void; say: (text: string, level?: Level) => void },
): Promise<void> {
	const [what, ...more] = rest;
	if (what === undefined) return usage("`default` needs a mode or `owners <list>`.");
	let saved: string;
	if (isMode(what)) {
		if (more.length > 0) return usage(`\`/state default ${what}\` takes no further argument.`);
		await updateConfig(host.options.agentDir, { mode: what });
		saved = `default mode ${what}`;
	} else if (what === "owners") {
		if (more.length === 0) return usage("`default owners` needs a list, e.g. `/state default owners cwd,session`.");
		const owners = tryOwners(more.join(","), usage);
		if (!owners) return;
		await updateConfig(host.options.agentDir, { owners });
		saved = `default owners ${owners.join("+")}`;
	} else {
		return usage(`\`${what}\` is neither a mode nor \`owners\`.${didYouMean(what, [...MODES, "owners"])}`);
	}
	for (const p of host.loadSettings()) say(`State Flow: ${p}`, "warning");
	host.settingsChanged();
	host.applyActivation();
	host.showStatus();
	const sel = host.selection();
	const source = host.selectionSource() === "config" ? "" : ` (${host.selectionSource() === "session" ? "this session's own choice" : "set by flags"} wins)`;
	say(`State Flow: saved ${saved} to ${configPath(host.options.agentDir)}; this session: ${describeSelection(sel)}${source}`);
}
