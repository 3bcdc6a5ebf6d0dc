/**
 * The user's State Flow config file, `<agentDir>/state-flow/config.json`. Reading validates
 * field by field and never throws: a broken field falls back to its default and is reported.
 * Writing (only `/state default …`) is atomic (temp + rename), preserves unknown keys and
 * refuses to replace a file it cannot parse, so a hand-edited file is never lost.
 */
import { isAbsolute, join } from "node:path";
import { fail, isStateError, messageOf } from "../../core/errors.js";
import { identifierProblem, printable } from "../../core/printable.js";
import { DEFAULT_LIMITS, type Limits, MAX_RETENTION, OWNERS, type Owner, isOneOf, isOwner } from "../../core/types.js";
import { didYouMean } from "../../core/suggest.js";
import { FILE_MODE, atomicWrite, ensureDirIn, readRegular, realOrSelf } from "../fs-util.js";
import { acquireLock } from "../file/lock.js";
import { stateFlowDir } from "../project/paths.js";
import { normalRemote } from "../project/repository.js";
import { isLocalToken } from "../project/repo-token.js";
import { type CommonDir, type Consent, consentsChanged, consentsOf } from "./consent.js";

/** The three modes of docs/spec.md §5. */
export const MODES = ["active", "passive", "off"] as const;
export type Mode = (typeof MODES)[number];

/** Settings the config file may hold; every field optional (absent = built-in default). */
export interface StateFlowConfig {
	mode?: Mode;
	owners?: Owner[];
	retention?: number;
	headBudget?: number;
	reconcile?: boolean;
	/** Per-owner state size limit in bytes (docs/spec.md §8; default 4 MiB). */
	maxStateBytes?: number;
	/** PostgreSQL URL for shared owners (`STATE_FLOW_DATABASE_URL` wins over it); absent: files only. */
	database?: string;
	/** PostgreSQL schema holding State Flow's tables (default `state_flow`). */
	databaseSchema?: string;
	/** Who this user is in shared memory: keys a shared Global owner and signs provenance (default: the OS user). */
	user?: string;
	/** Keep the Global owner in the database (the same personal memory on every machine). */
	shareGlobal?: boolean;
	/** Checkouts linked to shared projects: checkout real path -> project id (`state-flow link`). */
	links?: Record<string, string>;
	/** Repositories linked on this machine: repository identity (`repository.ts`) -> project id, followed where the user said yes (`linkConsents`). */
	repoLinks?: Record<string, string>;
	/** The user's yes per repository on this machine: git common dir `<dev>:<ino>` -> its nonce, repository and project (`consent.ts`). */
	linkConsents?: Record<string, Consent>;
	/** Strings that look like a credential but are none: exact text or `/pattern/flags` (`credentials.ts`). */
	allowSecrets?: string[];
}

/** What reading the config produced: the valid settings and one line per ignored problem. */
export interface ConfigRead {
	config: StateFlowConfig;
	problems: string[];
}

/** Longest project id or user name a shared owner may be keyed by. */
export const MAX_SHARED_KEY = 200;

/**
 * Why a project id or user name cannot key a shared owner, or undefined when it can:
 * 1..200 characters, none of them a control, bidi or invisible character (it is shown in messages
 * and `/state`, and offered in a confirmation: `acme/api\u200b` must never read as `acme/api`).
 */
export function sharedKeyProblem(value: unknown): string | undefined {
	if (typeof value !== "string" || value.length === 0) return "must be a non-empty string";
	if (value.length > MAX_SHARED_KEY) return `must be at most ${MAX_SHARED_KEY} characters`;
	// A repository may suggest the id: it must read as it is in the confirmation (the one identifier rule).
	return identifierProblem(value);
}

/** Why a database URL is unusable, or undefined; never echoes the URL (it may hold a password). */
export function databaseUrlProblem(value: unknown): string | undefined {
	if (typeof value !== "string" || value === "") return "must be a postgres:// URL";
	let u: URL;
	try {
		u = new URL(value);
	} catch {
		return "does not parse as postgres://user:password@host:port/database";
	}
	if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") return `must start with postgres:// or postgresql://, not ${u.protocol}//`;
	return undefined;
}

/** Bounds of the head budget in bytes; below the minimum the head cannot say anything useful. */
export const MIN_HEAD_BUDGET = 512;
export const MAX_HEAD_BUDGET = 1024 * 1024;

/** Bounds of the per-owner size limit: at least 64 KiB, at most 64 MiB (the whole state is held in memory). */
export const MIN_STATE_BYTES = 64 * 1024;
export const MAX_STATE_BYTES = 64 * 1024 * 1024;

/** The write limits a config asks for (defaults for what it leaves out). */
export function limitsOf(config: StateFlowConfig): Limits {
	return config.maxStateBytes === undefined ? DEFAULT_LIMITS : { ...DEFAULT_LIMITS, maxOwnerBytes: config.maxStateBytes };
}

/** Where the config file lives for an agent directory. */
export function configPath(agentDir: string): string {
	return join(stateFlowDir(agentDir), "config.json");
}

export function isMode(value: unknown): value is Mode {
	return isOneOf(MODES, value);
}

/**
 * Parse an owner list (`"cwd,session"`, `"cwd+session"`, `"global cwd"` or an array) into the
 * canonical order Global, CWD, Session. Throws `invalid_input` naming the bad entry.
 */
export function parseOwners(input: string | readonly unknown[]): Owner[] {
	const items = typeof input === "string" ? input.split(/[\s,+]+/).filter((s) => s !== "") : [...input];
	if (items.length === 0) fail("invalid_input", "`owners` is empty: name one to three of `global`, `cwd`, `session`.", ["owners"]);
	const seen = new Set<Owner>();
	// Typed text (a command, a flag) is answered in the words typed; a config file's array by its index.
	const typed = typeof input === "string";
	items.forEach((item, i) => {
		const name = typeof item === "string" ? item.toLowerCase() : item;
		if (!isOwner(name)) {
			if (typed)
				fail("invalid_input", `unknown owner ${JSON.stringify(item)} — owners are ${OWNERS.join(", ")}.${didYouMean(String(name), OWNERS)}`, ["owners", i]);
			fail("invalid_input", `\`owners[${i}]\` is ${JSON.stringify(item)}: use \`global\`, \`cwd\` or \`session\`.`, ["owners", i]);
		}
		if (seen.has(name as Owner)) {
			if (typed) fail("invalid_input", `owner \`${name}\` is named twice: name each owner once.`, ["owners", i]);
			fail("invalid_input", `\`owners[${i}]\` repeats \`${name}\`: name each owner once.`, ["owners", i]);
		}
		seen.add(name as Owner);
	});
	return OWNERS.filter((o) => seen.has(o));
}

/** Read and validate the config. A missing file is an empty config; nothing here throws. */
export function readConfig(agentDir: string): ConfigRead {
	const file = configPath(agentDir);
	let text: string;
	try {
		const bytes = readRegular(file);
		if (bytes === undefined) return { config: {}, problems: [] };
		text = bytes.toString("utf8");
	} catch (e) {
		return { config: {}, problems: [`cannot read ${file}: ${messageOf(e)}; using defaults.`] };
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (e) {
		return { config: {}, problems: [`${file} is not valid JSON (${messageOf(e)}); using defaults. Fix or delete the file.`] };
	}
	if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
		return { config: {}, problems: [`${file} must hold a JSON object; using defaults.`] };
	}
	return validateConfig(raw as Record<string, unknown>, file);
}

/** Validate each known field on its own; unknown keys are kept in the file but ignored. */
export function validateConfig(raw: Record<string, unknown>, file = "config.json"): ConfigRead {
	const config: StateFlowConfig = {};
	const problems: string[] = [];
	const has = (key: string) => Object.hasOwn(raw, key);
	if (has("mode")) {
		if (isMode(raw.mode)) config.mode = raw.mode;
		else problems.push(`${file}: \`mode\` must be one of ${MODES.join(", ")}; ignoring ${JSON.stringify(raw.mode)}.`);
	}
	if (has("owners")) {
		try {
			if (!Array.isArray(raw.owners)) fail("invalid_input", '`owners` must be an array such as ["cwd", "session"].', ["owners"]);
			config.owners = parseOwners(raw.owners);
		} catch (e) {
			problems.push(`${file}: ${messageOf(e)} Ignoring it.`);
		}
	}
	if (has("retention")) {
		const r = raw.retention;
		if (Number.isInteger(r) && (r as number) >= 0 && (r as number) <= MAX_RETENTION) config.retention = r as number;
		else problems.push(`${file}: \`retention\` must be an integer from 0 to ${MAX_RETENTION}; ignoring ${JSON.stringify(r)}.`);
	}
	if (has("headBudget")) {
		const b = raw.headBudget;
		if (Number.isInteger(b) && (b as number) >= MIN_HEAD_BUDGET && (b as number) <= MAX_HEAD_BUDGET) config.headBudget = b as number;
		else problems.push(`${file}: \`headBudget\` must be an integer from ${MIN_HEAD_BUDGET} to ${MAX_HEAD_BUDGET} bytes; ignoring ${JSON.stringify(b)}.`);
	}
	if (has("maxStateBytes")) {
		const m = raw.maxStateBytes;
		if (Number.isInteger(m) && (m as number) >= MIN_STATE_BYTES && (m as number) <= MAX_STATE_BYTES) config.maxStateBytes = m as number;
		else problems.push(`${file}: \`maxStateBytes\` must be an integer from ${MIN_STATE_BYTES} to ${MAX_STATE_BYTES}; ignoring ${JSON.stringify(m)}.`);
	}
	if (has("reconcile")) {
		if (typeof raw.reconcile === "boolean") config.reconcile = raw.reconcile;
		else problems.push(`${file}: \`reconcile\` must be true or false; ignoring ${JSON.stringify(raw.reconcile)}.`);
	}
	if (has("database")) {
		const why = databaseUrlProblem(raw.database);
		if (why === undefined) config.database = raw.database as string;
		else problems.push(`${file}: \`database\` ${why}; ignoring it (shared owners are unavailable until it is fixed).`);
	}
	if (has("databaseSchema")) {
		const v = raw.databaseSchema;
		if (typeof v === "string" && /^[a-z_][a-z0-9_]{0,62}$/.test(v)) config.databaseSchema = v;
		else problems.push(`${file}: \`databaseSchema\` must be a lower-case identifier (letters, digits, _; at most 63); ignoring ${JSON.stringify(v)}.`);
	}
	if (has("user")) {
		const why = sharedKeyProblem(raw.user);
		if (why === undefined) config.user = raw.user as string;
		else problems.push(`${file}: \`user\` ${why}; ignoring it and using the OS user.`);
	}
	if (has("shareGlobal")) {
		if (typeof raw.shareGlobal === "boolean") config.shareGlobal = raw.shareGlobal;
		else problems.push(`${file}: \`shareGlobal\` must be true or false; ignoring ${JSON.stringify(raw.shareGlobal)}.`);
	}
	if (has("links")) {
		const links = raw.links;
		if (links === null || typeof links !== "object" || Array.isArray(links)) {
			problems.push(`${file}: \`links\` must be an object of checkout path -> project id; ignoring it.`);
		} else {
			const kept: Record<string, string> = {};
			for (const [path, project] of Object.entries(links)) {
				const why = isAbsolute(path) ? sharedKeyProblem(project) : "is not under an absolute checkout path";
				if (why === undefined) kept[path] = project as string;
				else problems.push(`${file}: \`links[${JSON.stringify(path)}]\` ${why}; ignoring that link (run \`state-flow link\` again).`);
			}
			config.links = kept;
		}
	}
	if (has("repoLinks")) {
		const repoLinks = raw.repoLinks;
		if (repoLinks === null || typeof repoLinks !== "object" || Array.isArray(repoLinks)) {
			problems.push(`${file}: \`repoLinks\` must be an object of repository -> project id; ignoring it.`);
		} else {
			const kept: Record<string, string> = {};
			for (const [repo, project] of Object.entries(repoLinks)) {
				const why = normalRemote(repo) === repo || isLocalToken(repo) ? sharedKeyProblem(project) : "is not a repository identity State Flow records";
				if (why === undefined) kept[repo] = project as string;
				else
					problems.push(`${file}: \`repoLinks[${JSON.stringify(printable(repo).slice(0, 200))}]\` ${why}; ignoring that link (run \`state-flow link\` again).`);
			}
			config.repoLinks = kept;
		}
	}
	if (has("linkConsents")) config.linkConsents = consentsOf(raw.linkConsents, file, problems, sharedKeyProblem);
	if (has("allowSecrets")) {
		const list = raw.allowSecrets;
		if (!Array.isArray(list)) problems.push(`${file}: \`allowSecrets\` must be an array of strings (exact text or /pattern/flags); ignoring it.`);
		else {
			config.allowSecrets = [];
			list.forEach((entry, i) => {
				const why = allowEntryProblem(entry);
				if (why === undefined) config.allowSecrets?.push(entry as string);
				else problems.push(`${file}: \`allowSecrets[${i}]\` ${why}; ignoring that entry.`);
			});
		}
	}
	return { config, problems };
}

/** Longest `allowSecrets` entry: an exact credential-like string or a pattern, never a document. */
const MAX_ALLOW_ENTRY = 4096;

/** Why an `allowSecrets` entry is unusable, or undefined; never echoes the entry (it looks like a secret). */
function allowEntryProblem(entry: unknown): string | undefined {
	if (typeof entry !== "string" || entry === "") return "must be a non-empty string";
	if (entry.length > MAX_ALLOW_ENTRY) return `must be at most ${MAX_ALLOW_ENTRY} characters`;
	const re = /^\/(.+)\/([a-z]*)$/s.exec(entry);
	if (re) {
		try {
			new RegExp(re[1] as string, re[2]);
		} catch {
			// The engine's message quotes the pattern: say only that it does not compile.
			return "is not a valid pattern (/pattern/flags, as in JavaScript)";
		}
	}
	return undefined;
}

/** How long a config change waits for another writer of the same file (`/state default`, links). */
const CONFIG_LOCK_TIMEOUT_MS = 5_000;

/** The config file as written (unknown keys included); {} when there is none. Refuses one it cannot parse. */
export function writtenConfig(agentDir: string, what: string): Record<string, unknown> {
	const file = configPath(agentDir);
	let text: string | undefined;
	try {
		text = readRegular(file)?.toString("utf8");
	} catch (e) {
		if (isStateError(e)) throw e;
		fail("io", `Cannot read ${file}: ${messageOf(e)}.`, [], e);
	}
	if (text === undefined) return {};
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch {
		fail("invalid_input", `${file} is not valid JSON; fix or delete it before ${what} (it was left untouched).`);
	}
	if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
		fail("invalid_input", `${file} does not hold a JSON object; fix or delete it before ${what} (it was left untouched).`);
	}
	return parsed as Record<string, unknown>;
}

/**
 * Set some keys of the config file, keeping every other key. `changes` may be computed from
 * the file as written at that moment: the read, the change and the write happen under the
 * config's lock, so two writers at once (a `/state link` and a `state-flow link` in another
 * terminal) both land. Atomic: a reader sees the old file or the new one. Refuses
 * (`invalid_input`) when the existing file is not a JSON object, because replacing it would
 * lose what the user wrote.
 */
export async function updateConfig(
	agentDir: string,
	changes: StateFlowConfig | ((written: Record<string, unknown>) => StateFlowConfig),
	what = "changing defaults",
): Promise<void> {
	const file = configPath(agentDir);
	// Global files are private to the user (docs/spec.md §8): folders 0700, files 0600.
	ensureDirIn(stateFlowDir(agentDir), realOrSelf(agentDir), "The State Flow folder");
	const lock = await acquireLock(`${file}.lock`, CONFIG_LOCK_TIMEOUT_MS);
	try {
		const current = writtenConfig(agentDir, what);
		const next: Record<string, unknown> = { ...current };
		for (const [key, value] of Object.entries(typeof changes === "function" ? changes(current) : changes)) {
			if (value !== undefined) next[key] = value;
		}
		atomicWrite(file, `${JSON.stringify(next, null, 2)}\n`, { mode: FILE_MODE });
	} finally {
		lock.release();
	}
}

/** A map key of the config as written (entries kept as they are, even ones reading ignores). */
function objectAsWritten(value: unknown): Record<string, string> {
	return value !== null && typeof value === "object" && !Array.isArray(value) ? { ...(value as Record<string, string>) } : {};
}

/** The links as written in the file (entries kept as they are, even ones reading ignores). */
export function linksAsWritten(written: Record<string, unknown>): Record<string, string> {
	return objectAsWritten(written.links);
}

/** The user's yes recorded with a link: the checkout's common dir and the repository key it follows. */
export interface ConsentWrite {
	common: CommonDir;
	repo: string;
}

/**
 * Link a checkout (by its real path) to a project, or unlink it (`project` undefined: every key
 * given is removed), keeping every other link and key as written: the one writer of `links`,
 * `repoLinks` and `linkConsents`. With `repos` (the checkout's repository keys,
 * `repository.ts`) the repository is linked or unlinked too; unlinking also forgets every yes
 * given for those keys, so a link made again later asks again in the other checkouts. With
 * `consent` the user's yes for the checkout's repository on this machine is recorded, its nonce
 * written into the common dir under the same lock (`nonceFor`), so a moved checkout and a
 * worktree of it follow (docs/shared-memory.md, "Links").
 */
export function setLink(
	agentDir: string,
	checkoutReal: string | readonly string[],
	project: string | undefined,
	repos: readonly string[] = [],
	consent?: ConsentWrite,
): Promise<void> {
	return updateConfig(
		agentDir,
		(written) => {
			const links = linksAsWritten(written);
			for (const key of typeof checkoutReal === "string" ? [checkoutReal] : checkoutReal) {
				if (project === undefined) delete links[key];
				else links[key] = project;
			}
			const changes: StateFlowConfig = { links };
			if (repos.length > 0) {
				const repoLinks = objectAsWritten(written.repoLinks);
				for (const repo of repos) {
					if (project === undefined) delete repoLinks[repo];
					else repoLinks[repo] = project;
				}
				changes.repoLinks = repoLinks;
			}
			const consents = consentsChanged(written.linkConsents, project, repos, consent);
			if (consents !== undefined) changes.linkConsents = consents as Record<string, Consent>;
			return changes;
		},
		project === undefined ? "unlinking" : "linking",
	);
}
