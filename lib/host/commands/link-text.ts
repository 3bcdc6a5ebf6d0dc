/**
 * Linking a checkout to a shared project from pi: the project id a repository suggests (read
 * as untrusted input: it is only ever offered, never bound), the link recorded in the user's
 * own config, and where the owners live, in words for `/state` and notices. Where the owners
 * live is decided in one place only (`placementFor`); this module never decides it.
 */
import type { SharedOwner } from "../../core/types.js";
import type { Placement } from "../../storage/placement/placement.js";
import { linkEntry, linkKey } from "../../storage/placement/placement.js";
import { readConfig, setLink, type StateFlowConfig } from "../../storage/placement/config.js";
import { realOrSelf } from "../../storage/artifacts/files.js";
import { projectOf } from "../../storage/project/project.js";
import { type RepositoryLink, repositoryKeysOf, repositoryLinkOf } from "../../storage/project/repository.js";
import type { OwnerLocation } from "../../storage/port.js";
import { readSuggestion } from "../../storage/project/suggestion.js";

export { MAX_SUGGESTION_BYTES, SUGGESTION_FILE, type Suggestion, readSuggestion } from "../../storage/project/suggestion.js";

/**
 * Record (or, with `project` undefined, remove) the link of a checkout, by its project's root, in
 * the user's config, keeping every other link and key as written (`setLink`: under the
 * config's lock, atomic, refusing a file it cannot parse). Linking records the repository too
 * (`repositoryLinkOf`: its `origin`, else a token written now into its git common dir, and its
 * root's path); unlinking removes every repository key of this checkout. Returns what was
 * recorded for the repository when linking.
 */
export async function recordLink(agentDir: string, cwd: string, project: string | undefined): Promise<RepositoryLink | undefined> {
	// An older link made in a subfolder is replaced (or removed), never left to shadow the project's.
	const older = linkEntry(readConfig(agentDir).config.links, cwd);
	if (older !== undefined && older !== linkKey(cwd)) await setLink(agentDir, older, undefined);
	// The repository is linked (or unlinked) with it: every checkout of it on this machine follows.
	if (project === undefined) {
		await setLink(agentDir, linkKey(cwd), undefined, repositoryKeysOf(cwd));
		return undefined;
	}
	const repo = repositoryLinkOf(cwd);
	await setLink(agentDir, linkKey(cwd), project, repo.keys);
	return repo;
}

/** The database a placement names, in words that never hold the password. */
export function databaseWords(p: Placement): string {
	return p.database === undefined ? "no database" : `PostgreSQL at ${p.database.shownUrl} (schema ${p.database.schema})`;
}

/** Where an owner lives, in lines for `/state` (the URL or folder in full on its own line). */
export function locationLines(l: OwnerLocation): string[] {
	switch (l.backend) {
		case "file":
			return [l.path];
		case "session":
			return [`session ${l.sessionId}`];
		case "postgres":
			return [`postgres ${l.url}`, `schema ${l.schema}, ${l.kind === "cwd" ? "project" : "user"} ${l.key}`];
	}
}

/** One owner's place, in one phrase: `PostgreSQL at … (schema s), project acme/api` or `files in /x`. */
function placeOf(p: Placement, owner: SharedOwner, files: string): string {
	const key = owner === "cwd" ? p.project : p.user;
	if (key === undefined) return `files in ${files}`;
	return `${databaseWords(p)}, ${owner === "cwd" ? "project" : "user"} ${key}`;
}

/**
 * The notice a running session gives when the user's config moved its shared owners (a link
 * made in another terminal, a new database URL): each moved owner and where it lives now, and
 * the placement problem if there is one. Undefined when nothing a user sees changed.
 */
export function placementChange(before: Placement, after: Placement, files: { global: string; cwd: string }): string | undefined {
	const moved: string[] = [];
	for (const owner of ["global", "cwd"] as const) {
		const now = placeOf(after, owner, files[owner]);
		if (now !== placeOf(before, owner, files[owner])) moved.push(`${owner} now lives in ${now}`);
	}
	if (moved.length === 0 && after.problem === before.problem) return undefined;
	const problem = after.problem === undefined ? "" : ` Problem: ${after.problem}`;
	return `State Flow: the config changed where the state lives: ${moved.length > 0 ? moved.join("; ") : "same places"}.${problem}`;
}

/** The CWD store folder of a checkout's project (what a link stops using, and an unlink uses again). */
export function cwdFolder(cwd: string): string {
	return projectOf(cwd).store;
}

/** Config fields that say where the shared owners live: a running session follows them at its next prompt. */
const PLACEMENT_FIELDS = ["database", "databaseSchema", "user", "shareGlobal", "links", "repoLinks"] as const;

/**
 * `current` with only the placement fields taken over from the config file as it is now (the
 * other settings wait for the next session start). Undefined when the file cannot be read at
 * all (mid-edit by hand): that moves nothing, and the next session start reports it.
 */
export function withPlacementOf(agentDir: string, current: StateFlowConfig): StateFlowConfig | undefined {
	const { config, problems } = readConfig(agentDir);
	if (problems.length > 0 && Object.keys(config).length === 0) return undefined;
	const next: StateFlowConfig = { ...current };
	for (const field of PLACEMENT_FIELDS) {
		if (config[field] === undefined) delete next[field];
		else (next as Record<string, unknown>)[field] = config[field];
	}
	return next;
}

/**
 * At session start: why a shared owner cannot be placed, if so; else the repository's
 * suggested project, offered once per checkout and id (`offered` remembers them), only when a
 * database is configured and the checkout is not linked. Never links anything.
 */
export function placementNotice(placement: Placement, cwd: string, offered: Set<string>): { message: string; level: "info" | "warning" } | undefined {
	if (placement.problem !== undefined) return { message: `State Flow: shared memory is unavailable: ${placement.problem}`, level: "warning" };
	if (placement.database === undefined || placement.project !== undefined) return undefined;
	const suggestion = readSuggestion(cwd);
	if (suggestion === undefined) return undefined;
	const key = JSON.stringify([realOrSelf(cwd), "project" in suggestion ? suggestion.project : suggestion.problem]);
	if (offered.has(key)) return undefined;
	offered.add(key);
	if ("problem" in suggestion) return { message: `State Flow: ${suggestion.problem}`, level: "warning" };
	return {
		message: `State Flow: this repository suggests sharing its CWD memory as project \`${suggestion.project}\`. Nothing is shared unless you agree: \`/state link\` links it after confirmation.`,
		level: "info",
	};
}
