/**
 * Linking a checkout to a shared project from pi: the project id a repository suggests (read
 * as untrusted input: it is only ever offered, never bound), the link recorded in the user's
 * own config, and where the owners live, in words for `/state` and notices. Where the owners
 * live is decided in one place only (`placementFor`); this module never decides it.
 */
import { closeSync, constants, fstatSync } from "node:fs";
import { join } from "node:path";
import { isPlainObject } from "../core/json.js";
import { messageOf } from "../core/errors.js";
import type { SharedOwner } from "../core/types.js";
import type { Placement } from "../storage/backend.js";
import { linkEntry, linkKey } from "../storage/backend.js";
import { readConfig, setLink, sharedKeyProblem } from "../storage/config.js";
import { checkContained, openFile, readFrom } from "../storage/fs-util.js";
import { projectOf } from "../storage/project.js";
import type { OwnerLocation } from "../storage/port.js";

/** Where a repository may suggest its shared project id, relative to the checkout. */
export const SUGGESTION_FILE = ".pi/state-flow.json";

/** A suggestion file is a few bytes; anything larger is not one (and is never read whole). */
export const MAX_SUGGESTION_BYTES = 4096;

/** What the repository suggests: a valid project id, a reason it was ignored, or nothing. */
export type Suggestion = { project: string } | { problem: string } | undefined;

/**
 * Read the checkout's `.pi/state-flow.json` (at its work tree root, `projectOf`): a regular file (no link, FIFO or folder) inside
 * the checkout, at most 4 KiB, a JSON object whose `project` is a valid project id. Never
 * throws: anything else is a problem to report, and the suggestion is ignored.
 */
export function readSuggestion(cwd: string): Suggestion {
	const checkout = projectOf(cwd).checkout;
	const file = join(checkout, SUGGESTION_FILE);
	const ignored = (why: string): Suggestion => ({ problem: `the repository's ${SUGGESTION_FILE} is ignored: ${why}` });
	let text: string;
	try {
		checkContained(join(checkout, ".pi"), checkout, "The folder");
		const fd = openFile(file, constants.O_RDONLY);
		if (fd === undefined) return undefined;
		try {
			const size = fstatSync(fd).size;
			if (size > MAX_SUGGESTION_BYTES) return ignored(`it holds ${size} bytes, more than the ${MAX_SUGGESTION_BYTES} a project suggestion may.`);
			text = readFrom(fd, 0, size).toString("utf8");
		} finally {
			closeSync(fd);
		}
	} catch (e) {
		return ignored(messageOf(e));
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		return ignored('it is not valid JSON (expected { "project": "team/repo" }).');
	}
	if (!isPlainObject(raw) || !Object.hasOwn(raw, "project")) return ignored('it must be a JSON object such as { "project": "team/repo" }.');
	const why = sharedKeyProblem(raw.project);
	if (why !== undefined) return ignored(`its \`project\` ${why}.`);
	return { project: raw.project as string };
}

/**
 * Record (or, with `project` undefined, remove) the link of a checkout, by its project's root, in
 * the user's config, keeping every other link and key as written (`setLink`: under the
 * config's lock, atomic, refusing a file it cannot parse).
 */
export async function recordLink(agentDir: string, cwd: string, project: string | undefined): Promise<void> {
	// An older link made in a subfolder is replaced (or removed), never left to shadow the project's.
	const older = linkEntry(readConfig(agentDir).config.links, cwd);
	if (older !== undefined && older !== linkKey(cwd)) await setLink(agentDir, older, undefined);
	if (project !== undefined || older === undefined || older === linkKey(cwd)) await setLink(agentDir, linkKey(cwd), project);
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
