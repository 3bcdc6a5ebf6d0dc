/**
 * Where the Global and CWD owners live: the one place that decides between the file stores
 * (the embedded default) and PostgreSQL (shared by a team or a fleet), from the user's config
 * and environment only. A repository never decides this: a checkout is shared only through a
 * link the user made (`state-flow link`, `/state link`), recorded in the user's own config, and
 * a link it merely claims through its repository (`repoLinks`) is followed only where the user
 * said yes for that repository on this machine (`consent.ts`); until then it is `linkable`.
 */
import { type StateFlowConfig, databaseUrlProblem } from "./config.js";
import { lstatSync } from "node:fs";
import { inline, printable } from "../../core/printable.js";
import { ownedByMe, realOrSelf } from "../fs-util.js";
import { projectOf } from "../project/project.js";
import { identitiesOf } from "../project/repository.js";
import { consented } from "./consent.js";
import { osUser } from "./who.js";
import { redactUrl } from "../pg/url.js";

/** The environment variable that names the database; it wins over the config's `database`. */
export const DATABASE_ENV = "STATE_FLOW_DATABASE_URL";

/** The PostgreSQL schema State Flow's tables live in unless the config names another. */
export const DEFAULT_SCHEMA = "state_flow";

/** Where this agent directory and checkout keep their shared owners. Holds the URL: never show it, show `shownUrl`. */
export interface Placement {
	database?: { url: string; shownUrl: string; source: "env" | "config"; schema: string };
	/** The project id this checkout is linked to (its CWD owner lives in the database). */
	project?: string;
	/** A link this checkout claims through its repository, never said yes to here: its CWD stays local until the user does. */
	linkable?: Linkable;
	/** The user whose Global owner lives in the database (`shareGlobal`). */
	user?: string;
	/** Why a wanted shared owner cannot be placed (a link without a database, a bad URL). */
	problem?: string;
}

/** The user name State Flow signs and keys shared Global memory with. */
export function userOf(config: StateFlowConfig): string {
	return config.user ?? osUser();
}

/**
 * The path a link is recorded under: the project's root (`projectOf`), so that a subfolder and
 * every worktree of a linked repository follow its link (issue 25).
 */
export function linkKey(cwd: string): string {
	return projectOf(cwd).root;
}

/** The `links` key that applies to a folder: its project root's, else (a link an older build made there) the folder's own real path. */
export function linkEntry(links: Readonly<Record<string, string>> | undefined, cwd: string): string | undefined {
	if (links === undefined) return undefined;
	for (const key of [linkKey(cwd), realOrSelf(cwd)]) if (Object.hasOwn(links, key)) return key;
	return undefined;
}

/**
 * How a checkout is linked: by a path (`links[<project root>]`, or an older build's subfolder
 * entry), else by its repository (`repoLinks[<identity>]`: its `origin`, else the token State
 * Flow wrote into its git common dir when it was linked; so a moved or renamed checkout and a
 * new worktree of a linked repository follow it) where the user said yes for that repository
 * on this machine (`consent.ts`). A path entry wins: it is the most specific thing the user said.
 */
export interface LinkOf {
	project: string;
	/** The `links` key it came from. */
	path?: string;
	/** The `repoLinks` key it came from (or would be recorded under: this checkout's repository). */
	repo?: string;
}

/** A link a checkout claims through its repository (`repoLinks[repo]`) that the user never said yes to for it. */
export interface Linkable {
	project: string;
	repo: string;
}

/**
 * The link that applies to a checkout (`link`), or the one it only claims (`linkable`). Reads
 * the repository's config only when `repoLinks` exist. A path entry applies only while the
 * folder at that path is the user's own (`foreignLinkLine`): a path outlives the checkout that
 * was linked there, and in a shared folder (`/tmp`) another user could make a folder at it and
 * be handed the project.
 */
export function linkState(config: StateFlowConfig, cwd: string): { link?: LinkOf; linkable?: Linkable } {
	const path = linkEntry(config.links, cwd);
	if (path !== undefined) return folderIsMine(path) ? { link: { project: config.links?.[path] as string, path } } : {};
	const repoLinks = config.repoLinks;
	if (repoLinks === undefined || Object.keys(repoLinks).length === 0) return {};
	const p = projectOf(cwd);
	for (const repo of identitiesOf(p)) {
		if (!Object.hasOwn(repoLinks, repo)) continue;
		const project = repoLinks[repo] as string;
		return consented(config.linkConsents, p, repo, project) ? { link: { project, repo } } : { linkable: { project, repo } };
	}
	return {};
}

/** The link that applies to a checkout (`linkState`), or undefined. */
export function linkOf(config: StateFlowConfig, cwd: string): LinkOf | undefined {
	return linkState(config, cwd).link;
}

/** Whether the folder at `path` belongs to the user running State Flow (`fs-util.ts` decides "mine"). */
function folderIsMine(path: string): boolean {
	try {
		return ownedByMe(lstatSync(path));
	} catch {
		return false;
	}
}

/** Why a folder cannot be linked by its path (it is another user's: the link would never be followed), or undefined. */
export function linkPathProblem(cwd: string): string | undefined {
	const key = linkKey(cwd);
	return folderIsMine(key)
		? undefined
		: `the folder ${inline(key)} belongs to another user, and State Flow follows a link only in a folder of yours (a path outlives the checkout linked there)`;
}

/** The loud line when a path link exists for this folder but is not followed: the folder is another user's. */
export function foreignLinkLine(config: StateFlowConfig, cwd: string): string | undefined {
	const path = linkEntry(config.links, cwd);
	if (path === undefined || folderIsMine(path)) return undefined;
	const project = config.links?.[path] as string;
	return `warning: this folder is linked to project \`${printable(project)}\` in your config, but the folder ${inline(path)} belongs to another user, so the link is not followed (the checkout you linked there was moved or deleted?); run \`state-flow unlink\` here to drop the stale link.`;
}

/** The project a checkout is linked to (`linkOf`). */
export function linkedProject(config: StateFlowConfig, cwd: string): string | undefined {
	return linkOf(config, cwd)?.project;
}

/** Decide where the shared owners live. Pure but for the checkout's real path. */
export function placementFor(config: StateFlowConfig, cwd: string, env: NodeJS.ProcessEnv = process.env): Placement {
	const out: Placement = {};
	const schema = config.databaseSchema ?? DEFAULT_SCHEMA;
	const fromEnv = env[DATABASE_ENV];
	if (fromEnv !== undefined && fromEnv !== "") {
		const why = databaseUrlProblem(fromEnv);
		if (why === undefined) out.database = { url: fromEnv, shownUrl: redactUrl(fromEnv), source: "env", schema };
		else out.problem = `\`${DATABASE_ENV}\` ${why}; fix it or unset it.`;
	} else if (config.database !== undefined) {
		out.database = { url: config.database, shownUrl: redactUrl(config.database), source: "config", schema };
	}
	const { link, linkable } = linkState(config, cwd);
	if (link !== undefined) out.project = link.project;
	if (linkable !== undefined) out.linkable = linkable;
	if (config.shareGlobal === true) out.user = userOf(config);
	if (out.database === undefined && out.problem === undefined && (out.project !== undefined || out.user !== undefined)) {
		out.problem = `no database is configured: set \`${DATABASE_ENV}\` or \`database\` in the State Flow config.json${out.project !== undefined ? ", or run `state-flow unlink` to keep this checkout's memory in files" : ""}.`;
	}
	return out;
}

/** A key that changes exactly when the placement does (the host reopens its stores then). */
export function placementKey(p: Placement): string {
	return JSON.stringify([p.database?.url ?? null, p.database?.schema ?? null, p.project ?? null, p.user ?? null, p.problem ?? null]);
}
