/**
 * The `/state` command (docs/spec.md §11), one record per verb (`VERBS`): usage, completion,
 * "did you mean" and dispatch are read from that table. Status, mode and owner selection, show
 * and history live here; undo/redo/restore in `undo.ts`, hand edits in `edit.ts`, tidy in
 * `tidy.ts`, link in `link.ts`, the browser in `../browser/`. Arguments are checked before
 * anything changes; a bad one gets its verb's usage (`/state help`: all) and, for a mistyped
 * word, the nearest one. Every answer is a chat message (`output.ts`). Typed commands ask only
 * before reverting someone else's transition, a hand edit that deletes more than the value named
 * (`--yes` without a UI), and `link`/`unlink`; the browser's undo, `d` and a cascading `e` ask.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import type { AutocompleteItem } from "@mariozechner/pi-tui";
import { messageOf } from "../../core/errors.js";
import { didYouMean } from "../../core/suggest.js";
import { OWNERS, type Owner, isOwner } from "../../core/types.js";
import { configPath, isMode, type Mode, MODES, parseOwners, updateConfig } from "../../storage/placement/config.js";
import { openBrowser } from "../browser/open.js";
import { describeHistory, describeState, describeStatus } from "./status.js";
import { link, unlink } from "./link.js";
import { commitPlan, runUndoCommand } from "./undo.js";
import { runEditCommand } from "./edit.js";
import { registerTidyHook, runTidy } from "./tidy.js";
import type { CommandOutput, Level } from "./output.js";
import type { StateFlowHost } from "../runtime.js";
import { allOwnerSelections, describeSelection, type Selection, shapeOf } from "../session/selection.js";

/** What a verb's `run` is given: the words after it, the raw text after it, and where to answer. */
interface Call {
	host: StateFlowHost;
	ctx: ExtensionCommandContext;
	output: CommandOutput;
	/** The word typed (a mode is its own verb). */
	verb: string;
	/** The words after the verb. */
	rest: string[];
	/** The text after the verb as typed (a JSON value keeps its spaces). */
	raw: string;
	show: (title: string, text: string, level?: Level) => void;
	usage: (problem: string) => void;
	say: (text: string, level?: Level) => void;
}

/**
 * One `/state` verb, whole: the words it is typed with, its usage lines (`/state help` lists
 * them in table order), what completion offers for it and after it, and what it does. Usage,
 * completion, "did you mean" and dispatch are all read from `VERBS`: a new verb is one record.
 */
interface StateVerb {
	names: readonly string[];
	/** Usage rows: the form after `/state`, and what it does. */
	usage: ReadonlyArray<readonly [form: string, what: string]>;
	/** Completion of the word: one item per name offered (absent: not offered), with a space after it when arguments follow. */
	offer?: ReadonlyArray<{ name: string; description: string; args: boolean }>;
	/** Completion after the word: candidates for its arguments (`rest`: the words typed after it), the whole text each. */
	complete?: (rest: readonly string[]) => AutocompleteItem[];
	run: (c: Call) => Promise<void> | void;
}

const ownerItems = (lead: string): AutocompleteItem[] => OWNERS.map((o) => ({ value: `${lead}${o}`, label: o }));
const ownerLists = (lead: string): AutocompleteItem[] => allOwnerSelections().map((o) => ({ value: `${lead}${o.join(",")}`, label: o.join(",") }));
/** An owner after the verb, for `show`, `history`, `undo`, `redo`. */
const oneOwner = (verb: string) => (rest: readonly string[]) => (rest.length === 1 ? ownerItems(`${verb} `) : []);
/** A verb that takes no argument. */
const noArgument = (verb: string, c: Call): boolean => {
	if (c.rest.length > 0) c.usage(`\`${verb}\` takes no argument.`);
	return c.rest.length === 0;
};

const MODE_TEXT: Record<string, string> = {
	active: "keep the state current, with reconciliation",
	passive: "state visible; writes only when asked",
	off: "withdraw both tools, inject nothing",
};

const VERBS: readonly StateVerb[] = [
	{
		names: ["status"],
		usage: [["", "status: mode, owners, stores, retention"]],
		run: async (c) => {
			if (noArgument(c.verb, c)) c.show("status", await describeStatus(c.host, c.ctx.hasUI));
		},
	},
	{
		names: MODES,
		usage: [[MODES.join("|"), "set this session's mode"]],
		offer: MODES.map((m) => ({ name: m, description: MODE_TEXT[m] as string, args: false })),
		run: (c) => {
			if (c.rest.length > 0) return c.usage(`\`/state ${c.verb}\` takes no argument.`);
			c.say(chooseSelection(c.host, { mode: c.verb as Mode, owners: c.host.selection().owners }));
		},
	},
	{
		names: ["owners"],
		usage: [["owners <list>", "set this session's owners, e.g. cwd,session"]],
		offer: [{ name: "owners", description: "choose the wanted owners", args: true }],
		complete: (rest) => (rest.length === 1 ? ownerLists("owners ") : []),
		run: (c) => {
			const sel = c.host.selection();
			if (c.rest.length === 0) {
				return c.say(`State Flow: owners ${sel.owners.join("+")} (${sel.mode}); choose others with /state owners <list>, e.g. cwd,session`);
			}
			const owners = tryOwners(c.rest.join(","), c.usage);
			if (owners) c.say(chooseSelection(c.host, { mode: sel.mode, owners }));
		},
	},
	{
		names: ["show"],
		usage: [["show [owner]", "the state of an owner (default: wanted ones)"]],
		offer: [{ name: "show", description: "print an owner's state", args: true }],
		complete: oneOwner("show"),
		run: (c) => showOrHistory(c),
	},
	{
		names: ["history"],
		usage: [["history [owner] [--full]", "retained transitions: who, when, what"]],
		offer: [{ name: "history", description: "list retained transitions", args: true }],
		complete: (rest) => (rest.length === 1 ? ownerItems("history ") : rest.length === 2 ? [{ value: `history ${rest[0]} --full`, label: "--full" }] : []),
		run: (c) => showOrHistory(c),
	},
	{
		names: ["undo"],
		usage: [["undo [owner|id]", "revert the latest still in effect, or that id"]],
		offer: [{ name: "undo", description: "revert the latest transition (again: the one before)", args: true }],
		complete: oneOwner("undo"),
		run: (c) => runUndoCommand(c.host, "undo", c.rest, c.ctx, c),
	},
	{
		names: ["redo"],
		usage: [["redo [owner]", "apply the latest undone change again"]],
		offer: [{ name: "redo", description: "apply the latest undone transition again", args: true }],
		complete: oneOwner("redo"),
		run: (c) => runUndoCommand(c.host, "redo", c.rest, c.ctx, c),
	},
	{
		names: ["restore"],
		usage: [["restore <id> [where]", "back to how it was after <id> (owner, path)"]],
		offer: [{ name: "restore", description: "bring an owner or path back to how it was after a transition", args: true }],
		run: (c) => runUndoCommand(c.host, "restore", c.rest, c.ctx, c),
	},
	{
		names: ["set"],
		usage: [["set <locator> <json> [--allow-secret]", "set one value by hand (JSON)"]],
		offer: [{ name: "set", description: "set one value by hand: /state set <locator> <json>", args: true }],
		run: (c) => runEditCommand(c.host, "set", c.raw, editOutput(c), c.ctx),
	},
	{
		names: ["delete"],
		usage: [["delete <locator>", "delete one value by hand"]],
		offer: [{ name: "delete", description: "delete one value by hand", args: true }],
		run: (c) => runEditCommand(c.host, "delete", c.raw, editOutput(c), c.ctx),
	},
	{
		names: ["tidy"],
		usage: [["tidy", "the model closes, deletes, merges: one change"]],
		offer: [{ name: "tidy", description: "ask the model to close, delete and merge, as one change", args: false }],
		run: (c) => runTidy(c.host, c.raw, editOutput(c), c.ctx),
	},
	{
		names: ["browse"],
		usage: [["browse", "browse owners, planes and history"]],
		offer: [{ name: "browse", description: "browse state and history interactively", args: false }],
		run: (c) => browse(c),
	},
	{
		names: ["default"],
		usage: [
			["default <mode>", "set the default mode in the config file"],
			["default owners <list>", "set the default owners in the config file"],
		],
		offer: [{ name: "default", description: "change the config file defaults", args: true }],
		complete: (rest) =>
			rest.length === 1
				? [...MODES.map((m) => ({ value: `default ${m}`, label: m })), { value: "default owners ", label: "owners" }]
				: rest.length === 2 && rest[0] === "owners"
					? ownerLists("default owners ")
					: [],
		run: (c) => setDefault(c.host, c.rest, c),
	},
	{
		names: ["link"],
		usage: [["link [project-id]", "share this checkout's CWD memory (asks first)"]],
		offer: [{ name: "link", description: "share this checkout's CWD memory with a project (asks first)", args: true }],
		run: (c) => {
			if (c.rest.length > 1) return c.usage("`link` takes at most one project id.");
			return link(c.host, c.rest[0], c, c.ctx);
		},
	},
	{
		names: ["unlink"],
		usage: [["unlink", "keep this checkout's CWD memory in files again"]],
		offer: [{ name: "unlink", description: "keep this checkout's CWD memory in files again", args: false }],
		run: async (c) => {
			if (noArgument(c.verb, c)) await unlink(c.host, c.say, c.ctx);
		},
	},
	{
		names: ["help"],
		usage: [["help", "this list"]],
		run: (c) => c.show("help", USAGE),
	},
];

/** A usage row as `/state help` lists it: the form, then what it does from column 33. */
const usageRow = ([form, what]: readonly [string, string]): string => `${`  /state ${form}`.trimEnd().padEnd(30)}  ${what}`;

export const USAGE = ["Usage:", ...VERBS.flatMap((v) => v.usage.map(usageRow))].join("\n");

const verbNamed = (word: string): StateVerb | undefined => VERBS.find((v) => v.names.includes(word));

/** The usage lines of one verb (`default`: both), else the pointer to all. */
export function usageOf(verb: string | undefined): string {
	const found = verb === undefined ? undefined : verbNamed(verb);
	const how = "(/state help lists every command)";
	return found !== undefined ? `Usage:\n${found.usage.map(usageRow).join("\n")}\n${how}` : `Usage: /state <command> ${how}`;
}

/** Completions for the text after `/state `. */
export function completeStateArgs(prefix: string): AutocompleteItem[] | null {
	const typed = prefix.trimStart();
	const [first = "", ...rest] = typed.split(/\s+/);
	const hits = (items: AutocompleteItem[], text: string) => {
		const found = items.filter((i) => i.value.startsWith(text));
		return found.length > 0 ? found : null;
	};
	if (rest.length === 0) {
		const words = VERBS.flatMap((v) => (v.offer ?? []).map((o) => ({ value: o.args ? `${o.name} ` : o.name, label: o.name, description: o.description })));
		return hits(words, first);
	}
	const complete = verbNamed(first)?.complete;
	return complete === undefined ? null : hits(complete(rest), typed);
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

/** Parse and run one `/state` command line: its first word names the verb (none: status). */
export async function runStateCommand(host: StateFlowHost, output: CommandOutput, args: string, ctx: ExtensionCommandContext): Promise<void> {
	host.bind(ctx);
	const text = args.trim();
	const [word = "status", ...rest] = text.split(/\s+/).filter((w) => w !== "");
	const show = (title: string, body: string, level: Level = "info") => output.show(body, { title, level }, ctx);
	const usage = (problem: string) => show("usage", `${problem}\n${usageOf(word)}`, "warning");
	// One-line answers are chat messages too: pi 1.6 rewrites earlier notices with newer text.
	const say = (line: string, level: Level = "info") => output.line(line, level, ctx);
	const verb = verbNamed(word);
	if (verb === undefined)
		return usage(
			`unknown command \`${word}\`.${didYouMean(
				word,
				VERBS.flatMap((v) => v.names),
			)}`,
		);
	await verb.run({ host, ctx, output, verb: word, rest, raw: text.slice(word.length), show, usage, say });
}

/** Where `set`, `delete` and `tidy` answer: a titled message, and the delivery of what waits. */
function editOutput(c: Call) {
	return { show: c.show, flush: () => c.output.flush(c.ctx) };
}

/** `/state show [owner]` and `/state history [owner] [--full]`. */
async function showOrHistory(c: Call): Promise<void> {
	const full = c.verb === "history" && c.rest.includes("--full");
	const names = c.rest.filter((w) => !(full && w === "--full"));
	if (names.length > 1) return c.usage(`\`${c.verb}\` takes at most one owner.`);
	const owner = names[0];
	if (owner !== undefined && !isOwner(owner)) {
		if (owner.startsWith("-")) return c.usage(`unknown option \`${owner}\`.${didYouMean(owner, c.verb === "history" ? ["--full"] : [])}`);
		return c.usage(`unknown owner "${owner}" — owners are ${OWNERS.join(", ")}.${didYouMean(owner, OWNERS)}`);
	}
	const owners: Owner[] = owner !== undefined ? [owner] : c.host.selection().owners;
	if (c.verb === "show") return c.show("show", await describeState(c.host, owners));
	c.show("history", await describeHistory(c.host, owners, { now: c.host.options.now(), full }));
}

/** `/state browse`: the browser, or without an interactive UI the same information as text. */
async function browse(c: Call): Promise<void> {
	if (!noArgument(c.verb, c)) return;
	const { host, ctx } = c;
	if (await openBrowser(host, ctx, { undo: (plan) => commitPlan(host, plan, ctx), choose: (next) => chooseSelection(host, next) })) return;
	// No interactive UI (print, JSON or RPC mode): the same information as text.
	const owners = host.selection().owners;
	const now = host.options.now();
	c.show("browse", [await describeStatus(host), await describeState(host, owners), await describeHistory(host, owners, { now, full: false })].join("\n"));
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
