/**
 * Where owners, databases and projects live, in words: one spelling for `/state`, its notices
 * and questions, and every `state-flow` command (they had two: `postgres <url> schema s` and
 * `PostgreSQL at <url> (schema s)`). The words follow the storage errors' own (`PostgreSQL at
 * <url> cannot be reached`); each phrase is its lines joined by commas, and the lines break
 * after the URL (`PostgreSQL at <url>` / `schema s, project acme/api`) so `/state` fits 80
 * columns. A URL is only ever the placement's or location's shown one, whose password
 * `redactUrl` replaced: nothing here can print a secret.
 */
import type { SharedOwner } from "../core/types.js";
import { inline, shellWord } from "../core/printable.js";
import { DATABASE_ENV, type Linkable, type Placement } from "../storage/placement/placement.js";
import type { OwnerLocation } from "../storage/port.js";

type Database = NonNullable<Placement["database"]>;

/** A database in one phrase: `PostgreSQL at <url without password>, schema s`. */
export function databaseWords(db: Pick<Database, "shownUrl" | "schema">): string {
	return `PostgreSQL at ${db.shownUrl}, schema ${db.schema}`;
}

/** The database in use and where its URL came from, in lines: `PostgreSQL at <url>` and `schema s, from config.json` (or `STATE_FLOW_DATABASE_URL`). */
export function databaseInUseLines(db: Database): [string, string] {
	return [`PostgreSQL at ${db.shownUrl}`, `schema ${db.schema}, from ${db.source === "env" ? DATABASE_ENV : "config.json"}`];
}

/** `databaseInUseLines` in one line. */
export function databaseInUse(db: Database): string {
	return databaseInUseLines(db).join(", ");
}

/** A placement's database, or `no database`. */
export function placementDatabaseWords(p: Placement): string {
	return p.database === undefined ? "no database" : databaseWords(p.database);
}

/**
 * Why a link has no database: a bad `STATE_FLOW_DATABASE_URL` as `placementFor` words it, or
 * none configured (not `placementFor`'s `unlink` advice, which is for a checkout already linked).
 */
export function noDatabaseWords(p: Placement, configFile: string, env: NodeJS.ProcessEnv = process.env): string {
	const set = env[DATABASE_ENV];
	if (set !== undefined && set !== "" && p.problem !== undefined) return p.problem;
	return `no database is configured: set \`${DATABASE_ENV}\` or \`database\` in ${configFile}.`;
}

/**
 * Where an owner lives, in lines (the URL or folder in full on a line of its own, so `/state`
 * fits 80 columns): a folder; `pi session <id>`; or `PostgreSQL at <url>` and
 * `schema s, project|user <key>`.
 */
export function locationLines(l: OwnerLocation): string[] {
	switch (l.backend) {
		case "file":
			return [l.path];
		case "session":
			return [`pi session ${l.sessionId}`];
		case "postgres":
			return [`PostgreSQL at ${l.url}`, `schema ${l.schema}, ${l.kind === "cwd" ? "project" : "user"} ${l.key}`];
	}
}

/** Where an owner lives, in one line: `locationLines` joined (`PostgreSQL at <url>, schema s, project acme/api`). */
export function locationWords(l: OwnerLocation): string {
	return locationLines(l).join(", ");
}

/** Where a placement puts one shared owner, in one phrase: `PostgreSQL at <url>, schema s, project acme/api`, or its folder. */
export function placedWords(p: Placement, owner: SharedOwner, folder: string): string {
	const key = owner === "cwd" ? p.project : p.user;
	if (key === undefined || p.database === undefined) return folder;
	return locationWords({ backend: "postgres", owner, url: p.database.shownUrl, schema: p.database.schema, kind: owner, key });
}

/**
 * A link a checkout only claims (`Linkable`), in one sentence after `linkable: <project> — …`:
 * which repository claims it and why nothing is shared yet. The repository and project come from
 * the repository's own config and the user's: shown with controls spelled, on one line.
 */
export function linkableWords(l: Linkable): string {
	return `this checkout's repository (${inline(l.repo)}) is linked to project \`${inline(l.project)}\` on this machine, but you never said yes for this checkout (a clone of the real remote and an archive claiming its URL look the same), so its CWD memory stays local`;
}

/** The command that links a checkout to a project from a shell, the id one shell word. */
export function linkCommand(project: string, cwd?: string): string {
	return `state-flow link ${shellWord(project)}${cwd === undefined ? "" : ` --cwd ${shellWord(cwd)}`}`;
}
