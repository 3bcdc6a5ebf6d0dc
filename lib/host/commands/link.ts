/**
 * `/state link [project-id]` and `/state unlink`: the user's consent to share this checkout's
 * CWD memory with a project, recorded in the user's own config (what is recorded is
 * `ops/link.ts`'s). Linking always asks (the project's memory will reach this agent); without
 * an interactive UI nothing can be asked, so it is refused with the `state-flow link` command
 * to run instead. Without an id, the project this checkout's repository claims (`linkable`) or
 * the repository's suggestion is what is asked about, named in the question.
 */
import type { ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { printable } from "../../core/printable.js";
import { DEFAULT_RETENTION } from "../../core/types.js";
import { hiddenByLink, linkCheckout, linkComplete, linkHere, movedClearedWords, unlinkCheckout } from "../../ops/link.js";
import { linkCommand, noDatabaseWords, placementDatabaseWords } from "../../ops/where.js";
import { linkPathProblem, placementFor } from "../../storage/placement/placement.js";
import { configPath, readConfig, sharedKeyProblem, updateConfig } from "../../storage/placement/config.js";
import { projectOf } from "../../storage/project/project.js";
import { repositoryWords } from "../../storage/project/repository.js";
import { SUGGESTION_FILE, readSuggestion } from "../../storage/project/suggestion.js";
import { whoAmI } from "../../storage/placement/who.js";
import { type LinkQuestion, linkQuestion } from "./link-ask.js";
import type { StateFlowHost } from "../runtime.js";

/** Move the session's stores now when pi is idle; a run in progress moves at the next prompt. */
async function apply(host: StateFlowHost, ctx: ExtensionCommandContext): Promise<string> {
	if (ctx.isIdle() && (await host.followPlacement(ctx, false))) return "";
	return " It takes effect at the next prompt.";
}

/** Where a link command answers: a usage problem, or one line (`State Flow: …`). */
export interface LinkOutput {
	usage: (problem: string) => void;
	say: (text: string, level?: "info" | "warning") => void;
}

/** The project `/state link` without an id asks about: the one the repository claims, else its suggestion; or the usage problem. */
function impliedProject(host: StateFlowHost, cwd: string): { project: string; from: LinkQuestion["from"] } | { problem: string } {
	const claim = placementFor(readConfig(host.options.agentDir).config, cwd).linkable;
	if (claim !== undefined) return { project: claim.project, from: claim };
	const suggestion = readSuggestion(cwd);
	if (suggestion === undefined)
		return { problem: `\`link\` needs a project id, e.g. \`/state link acme/api\` (this repository suggests none in ${SUGGESTION_FILE}).` };
	if ("problem" in suggestion) return { problem: `${suggestion.problem} Name the project yourself: \`/state link <project-id>\`.` };
	return { project: suggestion.project, from: "suggestion" };
}

/** `/state link [project-id]`. */
export async function link(host: StateFlowHost, id: string | undefined, { usage, say }: LinkOutput, ctx: ExtensionCommandContext): Promise<void> {
	let project: string;
	let from: LinkQuestion["from"];
	if (id === undefined) {
		const implied = impliedProject(host, ctx.cwd);
		if ("problem" in implied) return usage(implied.problem);
		({ project, from } = implied);
	} else {
		const why = sharedKeyProblem(id);
		if (why !== undefined) return usage(`the project id ${why}.`);
		project = id;
	}
	const agentDir = host.options.agentDir;
	const foreign = linkPathProblem(ctx.cwd);
	if (foreign !== undefined) return say(`State Flow: cannot link: ${foreign}. Nothing changed.`, "warning");
	const here = linkHere(agentDir, ctx.cwd);
	const { config } = readConfig(agentDir);
	const placement = placementFor({ ...config, links: { ...config.links, [here.checkout]: project } }, ctx.cwd);
	if (placement.database === undefined) {
		return say(`State Flow: nothing to link to: ${noDatabaseWords(placement, configPath(agentDir))} Nothing changed.`, "warning");
	}
	if (here.current === project) {
		// A link an older build made (by path alone, or without this repository's yes) is completed now: the same project, no new consent needed.
		const recorded = linkComplete(agentDir, ctx.cwd, project)
			? ""
			: ` Its repository is recorded now: ${repositoryWords((await linkCheckout(agentDir, ctx.cwd, project)).repo, here.checkout)}`;
		const moved = await apply(host, ctx);
		return say(`State Flow: this checkout is already linked to project \`${project}\` (${placementDatabaseWords(placement)}).${recorded}${moved}`);
	}
	if (!ctx.hasUI) {
		return say(
			`State Flow: linking shares this checkout's memory with project \`${project}\` and needs your confirmation, which cannot be asked here (no interactive UI); nothing changed. To link, run: ${linkCommand(project, here.checkout)}`,
			"warning",
		);
	}
	const store = projectOf(ctx.cwd).store;
	const hidden = hiddenByLink(agentDir, ctx.cwd, here, project, config.retention ?? DEFAULT_RETENTION);
	const question = linkQuestion({
		project,
		checkout: here.checkout,
		placement,
		store,
		...(from !== undefined ? { from } : {}),
		...(here.current !== undefined ? { current: here.current } : {}),
		...(hidden !== undefined ? { hidden } : {}),
	});
	// The project id may come from the repository: shown with any bidi override as an escape, so it reads as it is.
	if (!(await ctx.ui.confirm("State Flow: link to a shared project?", printable(question)))) {
		return say(`State Flow: not linked; nothing changed.`);
	}
	const linked = await linkCheckout(agentDir, ctx.cwd, project);
	const named = config.user === undefined ? await askUser(agentDir, ctx) : "";
	const moved = await apply(host, ctx);
	say(
		`State Flow: linked this checkout to project \`${project}\` (${placementDatabaseWords(placement)}); its CWD memory is shared now. ${repositoryWords(linked.repo, here.checkout)}${named}${moved}`,
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
 * consent, since going back to the checkout's own files brings no one else's memory in. Not
 * linked, it still clears a `moved-to` marker (`unlinkCheckout`): the files are in use.
 */
export async function unlink(host: StateFlowHost, say: LinkOutput["say"], ctx: ExtensionCommandContext): Promise<void> {
	const agentDir = host.options.agentDir;
	const here = linkHere(agentDir, ctx.cwd);
	const folder = projectOf(ctx.cwd).store;
	if (here.current === undefined) {
		const done = await unlinkCheckout(agentDir, ctx.cwd);
		return say(`State Flow: this checkout is not linked to a project; its CWD memory is in files already.${movedClearedWords(done)}`);
	}
	if (ctx.hasUI) {
		const question = `Unlink this checkout from project \`${here.current}\`?\n\nIts CWD memory goes back to the files in ${folder} (as they were before linking). The project's memory stays in the database for everyone else linked to it.`;
		if (!(await ctx.ui.confirm("State Flow: unlink?", printable(question)))) return say("State Flow: still linked; nothing changed.");
	}
	const done = await unlinkCheckout(agentDir, ctx.cwd);
	const moved = await apply(host, ctx);
	say(`State Flow: unlinked from project \`${done.project ?? here.current}\`; this checkout's CWD memory is in ${done.store} again.${moved}`);
}
