/**
 * `/state link [project-id]` and `/state unlink`: the user's consent to share this checkout's
 * CWD memory with a project, recorded in the user's own config. Linking always asks (the
 * project's memory will reach this agent); without an interactive UI nothing can be asked, so
 * it is refused with the `state-flow link` command to run instead. Without an id, the
 * repository's suggestion is what is asked about, named in the question.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { printable, shellWord } from "../../core/printable.js";
import { DATABASE_ENV, type Placement, linkKey, linkPathProblem, linkedProject, placementFor } from "../../storage/placement/placement.js";
import { configPath, readConfig, sharedKeyProblem, updateConfig } from "../../storage/placement/config.js";
import { repositoryLinkOf, repositoryWords } from "../../storage/project/repository.js";
import { whoAmI } from "../../storage/placement/who.js";
import { SUGGESTION_FILE, cwdFolder, databaseWords, readSuggestion, recordLink } from "./link-text.js";
import type { StateFlowHost } from "../runtime.js";

/**
 * Why a link has no database: a bad `STATE_FLOW_DATABASE_URL` as `placementFor` words it, or
 * none configured (not its `unlink` advice, which is for a checkout already linked).
 */
function noDatabase(placement: Placement): string {
	const env = process.env[DATABASE_ENV];
	if (env !== undefined && env !== "" && placement.problem !== undefined) return placement.problem;
	return `no database is configured: set \`${DATABASE_ENV}\` or \`database\` in the State Flow config.json.`;
}

/** Move the session's stores now when pi is idle; a run in progress moves at the next prompt. */
async function apply(host: StateFlowHost, ctx: ExtensionCommandContext): Promise<string> {
	if (ctx.isIdle() && (await host.followPlacement(ctx, false))) return "";
	return " It takes effect at the next prompt.";
}

/** `/state link [project-id]`. */
/** Where a link command answers: a usage problem, or one line (`State Flow: …`). */
export interface LinkOutput {
	usage: (problem: string) => void;
	say: (text: string, level?: "info" | "warning") => void;
}

export async function link(host: StateFlowHost, id: string | undefined, { usage, say }: LinkOutput, ctx: ExtensionCommandContext): Promise<void> {
	let project = id;
	if (project === undefined) {
		const suggestion = readSuggestion(ctx.cwd);
		if (suggestion === undefined)
			return usage(`\`link\` needs a project id, e.g. \`/state link acme/api\` (this repository suggests none in ${SUGGESTION_FILE}).`);
		if ("problem" in suggestion) return usage(`${suggestion.problem} Name the project yourself: \`/state link <project-id>\`.`);
		project = suggestion.project;
	} else {
		const why = sharedKeyProblem(project);
		if (why !== undefined) return usage(`the project id ${why}.`);
	}
	const agentDir = host.options.agentDir;
	const foreign = linkPathProblem(ctx.cwd);
	if (foreign !== undefined) return say(`State Flow: cannot link: ${foreign}. Nothing changed.`, "warning");
	const checkout = linkKey(ctx.cwd);
	const { config } = readConfig(agentDir);
	const current = linkedProject(config, ctx.cwd);
	const placement = placementFor({ ...config, links: { ...config.links, [checkout]: project } }, ctx.cwd);
	if (placement.database === undefined) {
		return say(`State Flow: nothing to link to: ${noDatabase(placement)} Nothing changed (config: ${configPath(agentDir)}).`, "warning");
	}
	if (current === project) {
		// A link an older build made by path alone gains its repository now (the same project: no new consent needed).
		const known = repositoryLinkOf(ctx.cwd);
		const repo = known.keys.every((k) => config.repoLinks?.[k] === project) ? undefined : await recordLink(agentDir, ctx.cwd, project);
		const moved = await apply(host, ctx);
		const recorded = repo === undefined ? "" : ` Its repository is recorded now: ${repositoryWords(repo, checkout)}`;
		return say(`State Flow: this checkout is already linked to project \`${project}\` (${databaseWords(placement)}).${recorded}${moved}`);
	}
	if (!ctx.hasUI) {
		return say(
			`State Flow: linking shares this checkout's memory with project \`${project}\` and needs your confirmation, which cannot be asked here (no interactive UI); nothing changed. To link, run: state-flow link ${shellWord(project)} --cwd ${shellWord(checkout)}`,
			"warning",
		);
	}
	const question = [
		`Link this checkout to project \`${project}\`${id === undefined ? ` (suggested by the repository's ${SUGGESTION_FILE})` : ""}?`,
		"",
		`checkout: ${checkout}`,
		`database: ${databaseWords(placement)}`,
		...(current !== undefined ? [`now linked to: ${current}`] : []),
		"",
		`This checkout's CWD memory becomes the project's, shared with everyone linked to \`${project}\`: their intents, strategy and tactics reach this agent, and what it records reaches them. The files in ${cwdFolder(ctx.cwd)} stay but are no longer used (\`/state unlink\` goes back to them).`,
	].join("\n");
	// The project id may come from the repository: shown with any bidi override as an escape, so it reads as it is.
	if (!(await ctx.ui.confirm("State Flow: link to a shared project?", printable(question)))) {
		return say(`State Flow: not linked; nothing changed.`);
	}
	const repo = await recordLink(agentDir, ctx.cwd, project);
	const named = config.user === undefined ? await askUser(agentDir, ctx) : "";
	const moved = await apply(host, ctx);
	say(
		`State Flow: linked this checkout to project \`${project}\` (${databaseWords(placement)}); its CWD memory is shared now. ${repo === undefined ? "" : repositoryWords(repo, checkout)}${named}${moved}`,
	);
}

/**
 * The first link, with no `user` in the config: ask once how teammates should see this user
 * (issue 27; otherwise everyone is `<os user>@<host>`, often `root@vm`). An empty answer or
 * Escape keeps the OS user and asks no more (the link is made either way); a name that cannot
 * key a shared owner is refused with the reason. Returns what to add to the confirmation.
 */
async function askUser(agentDir: string, ctx: ExtensionCommandContext): Promise<string> {
	const os = whoAmI(undefined).user;
	const answer = (await ctx.ui.input(`State Flow: your name for teammates (empty keeps "${os}")`, os))?.trim();
	const name = answer === undefined || answer === "" ? os : answer;
	const why = sharedKeyProblem(name);
	if (why !== undefined) return ` Your name was not saved: it ${why}; set \`"user"\` in ${configPath(agentDir)}.`;
	await updateConfig(agentDir, { user: name }, "saving your name");
	return ` Teammates see you as ${name} (\`"user"\` in ${configPath(agentDir)}).`;
}

/**
 * `/state unlink`: asks when it can; without an interactive UI the typed command is the
 * consent, since going back to the checkout's own files brings no one else's memory in.
 */
export async function unlink(host: StateFlowHost, say: LinkOutput["say"], ctx: ExtensionCommandContext): Promise<void> {
	const agentDir = host.options.agentDir;
	const { config } = readConfig(agentDir);
	const current = linkedProject(config, ctx.cwd);
	if (current === undefined) return say("State Flow: this checkout is not linked to a project; its CWD memory is in files already.");
	const folder = cwdFolder(ctx.cwd);
	if (ctx.hasUI) {
		const question = `Unlink this checkout from project \`${current}\`?\n\nIts CWD memory goes back to the files in ${folder} (as they were before linking). The project's memory stays in the database for everyone else linked to it.`;
		if (!(await ctx.ui.confirm("State Flow: unlink?", printable(question)))) return say("State Flow: still linked; nothing changed.");
	}
	await recordLink(agentDir, ctx.cwd, undefined);
	const moved = await apply(host, ctx);
	say(`State Flow: unlinked from project \`${current}\`; this checkout's CWD memory is in ${folder} again.${moved}`);
}
