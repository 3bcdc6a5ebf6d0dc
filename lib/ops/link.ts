/**
 * Linking and unlinking a checkout: the one place that decides what a link or unlink writes,
 * for `/state link|unlink`, the question pi asks at a prompt and `state-flow link|unlink|
 * migrate`. The front-ends keep their own consent (pi asks; the CLI's invocation is the
 * consent) and their own words; what is recorded, what is removed and what a link would stop
 * reading is decided here only, so the two can no longer drift (an unlink from pi left the
 * `moved-to` marker that the CLI's cleared).
 */
import { messageOf } from "../core/errors.js";
import type { SharedOwner } from "../core/types.js";
import type { FileOwnerStore } from "../storage/file/owner-store.js";
import { openFileStore } from "../storage/open.js";
import { seenMarksOf } from "../storage/file/seen.js";
import { realOrSelf } from "../storage/fs-util.js";
import { commonDirOf } from "../storage/placement/consent.js";
import { type ConsentWrite, linksAsWritten, readConfig, setLink, writtenConfig } from "../storage/placement/config.js";
import { type Linkable, linkEntry, linkKey, linkState } from "../storage/placement/placement.js";
import { clearMoved, movedTo } from "../storage/project/moved-marker.js";
import { storePaths } from "../storage/project/paths.js";
import { projectOf } from "../storage/project/project.js";
import { type RepositoryLink, repositoryKeysOf, repositoryLinkOf } from "../storage/project/repository.js";

/** Where a checkout stands before a link or unlink there. */
export interface LinkHere {
	/** The key a link here is recorded under: the project's root (`linkKey`). */
	checkout: string;
	/** The `links` key that applies here as the config file holds it (an older build's subfolder entry included). */
	entry?: string;
	/** The project followed here now: by a path, or by the repository where the user said yes. */
	current?: string;
	/** A link claimed through the repository that the user never said yes to here. */
	linkable?: Linkable;
}

/**
 * Where a checkout stands (`LinkHere`). Refuses, before anything changes, a config file that a
 * link or unlink could not update (not JSON): what it would write is computed from the file as
 * written, entries reading ignores included.
 */
export function linkHere(agentDir: string, cwd: string): LinkHere {
	const links = linksAsWritten(writtenConfig(agentDir, "changing links"));
	const entry = linkEntry(links, cwd);
	const { link, linkable } = linkState(readConfig(agentDir).config, cwd);
	const current = entry !== undefined ? links[entry] : link?.project;
	return {
		checkout: linkKey(cwd),
		...(entry !== undefined ? { entry } : {}),
		...(current !== undefined ? { current } : {}),
		...(linkable !== undefined ? { linkable } : {}),
	};
}

/** The local file store of a shared-capable owner, as the stores open it. */
export function localStore(agentDir: string, cwd: string, owner: SharedOwner, retention: number): FileOwnerStore {
	const paths = storePaths(agentDir, cwd);
	return openFileStore(paths, owner, { retention, seen: seenMarksOf(paths) });
}

/** What a local store holds: its seq, or why it cannot be read (a folder without its log included). */
export interface LocalContent {
	root: string;
	seq: number;
	error?: string;
}

export function localContent(store: FileOwnerStore): LocalContent {
	try {
		return { root: store.root, seq: store.read().seq };
	} catch (e) {
		return { root: store.root, seq: 0, error: messageOf(e) };
	}
}

/**
 * What linking a checkout to `project` would stop reading: its local CWD store, when it holds
 * state (or cannot be read) and this checkout is not linked already (then it is unread anyway)
 * and its memory was not moved to this very project (`migrate`: the project has it). Undefined
 * when a link hides nothing. The CLI refuses such a link without `--force`; pi names it in its
 * question.
 */
export function hiddenByLink(agentDir: string, cwd: string, here: LinkHere, project: string, retention: number): LocalContent | undefined {
	if (here.current !== undefined) return undefined;
	const local = localStore(agentDir, cwd, "cwd", retention);
	if (movedTo(local.root) === project) return undefined;
	const content = localContent(local);
	return content.seq > 0 || content.error !== undefined ? content : undefined;
}

/** The words for what `hiddenByLink` found: `holds 3 transition(s)` or `cannot be read (…)`. */
export function hiddenWords(content: LocalContent): string {
	return content.error !== undefined ? `cannot be read (${content.error})` : `holds ${content.seq} transition(s)`;
}

/** What a link recorded: for the repository (`repositoryWords` says it), and why its yes could not be kept, if so. */
export interface Linked {
	repo: RepositoryLink;
	/** Why moved checkouts of this repository will be asked again (its common dir keeps no yes). */
	consentProblem?: string;
}

/**
 * Link a checkout to `project` (the caller has the user's consent): an older build's subfolder
 * entry is replaced, never left to shadow the project's; `links[<project root>]`, the
 * repository's keys (`repositoryLinkOf`: its `origin`, else a token written now and its root's
 * path) and the user's yes for this repository on this machine (`consent.ts`) are recorded in
 * one config update, so its worktrees and moved checkouts follow without asking.
 */
export async function linkCheckout(agentDir: string, cwd: string, project: string): Promise<Linked> {
	const here = linkHere(agentDir, cwd);
	if (here.entry !== undefined && here.entry !== here.checkout) await setLink(agentDir, here.entry, undefined);
	const repo = repositoryLinkOf(cwd);
	const common = commonDirOf(projectOf(cwd));
	const consent: ConsentWrite | undefined = common !== undefined && repo.identity !== undefined ? { common, repo: repo.identity } : undefined;
	await setLink(agentDir, here.checkout, project, repo.keys, consent);
	if (consent !== undefined || repo.identity === undefined) return { repo };
	return { repo, consentProblem: "its git common dir is not a folder of yours, so its yes cannot be kept there" };
}

/**
 * Whether a checkout linked to `project` has all a link records now: its repository's keys and
 * its yes (a link an older build made by path alone, or before the yes existed, has not; `link`
 * again completes it). Called at a link only: a repository without `origin` gets its token here.
 */
export function linkComplete(agentDir: string, cwd: string, project: string): boolean {
	const { config } = readConfig(agentDir);
	const repo = repositoryLinkOf(cwd);
	if (!repo.keys.every((k) => config.repoLinks?.[k] === project)) return false;
	const { link } = linkState({ ...config, links: {} }, cwd);
	return repo.identity === undefined || commonDirOf(projectOf(cwd)) === undefined || link?.project === project;
}

/** What an unlink did: the project the checkout was linked to (undefined: it was not), and its local store folder, in use again. */
export interface Unlinked {
	project?: string;
	/** The `links` key removed (or the project's root). */
	checkout: string;
	store: string;
	/** The project the `moved-to` marker named, now cleared. */
	wasMovedTo?: string;
}

/**
 * Unlink a checkout (the caller has the consent): every `links` key that applies here (the
 * project root's and an older build's subfolder entry), every repository key of it and every
 * yes given for those keys are removed, so neither this checkout nor another of its repository
 * stays linked through it; checkouts linked by their own path stay linked. The `moved-to` marker
 * is cleared ALWAYS, linked or not: the local files are in use again, and a checkout that is not
 * linked is told to unlink to keep using them.
 */
export async function unlinkCheckout(agentDir: string, cwd: string): Promise<Unlinked> {
	const here = linkHere(agentDir, cwd);
	const store = projectOf(cwd).store;
	if (here.current !== undefined) {
		const keys = new Set([here.checkout, realOrSelf(cwd), ...(here.entry !== undefined ? [here.entry] : [])]);
		await setLink(agentDir, [...keys], undefined, repositoryKeysOf(cwd));
	}
	const wasMovedTo = movedTo(store);
	clearMoved(store);
	return {
		...(here.current !== undefined ? { project: here.current } : {}),
		checkout: here.entry ?? here.checkout,
		store,
		...(wasMovedTo !== undefined ? { wasMovedTo } : {}),
	};
}

/** What an unlink says about a cleared `moved-to` marker, or "" (both front-ends). */
export function movedClearedWords(u: Unlinked): string {
	return u.wasMovedTo === undefined ? "" : ` The note that its memory was moved to project \`${u.wasMovedTo}\` is removed: these files are in use.`;
}
