/**
 * The user's yes for one repository on this machine (issue 33): what lets a checkout follow a
 * link it only *claims* through its repository (`repoLinks`: its `origin`, or its token). A
 * clone of the team's remote and an archive that ships a `.git/config` naming the same URL look
 * alike, and either may carry a hostile `AGENTS.md`, so the claim alone links nothing.
 *
 * A yes is keyed by what the repository's content cannot forge: the identity of its git common
 * dir on this machine (device and inode, which a move or rename on one disk keeps and every
 * worktree shares, and which an archive or clone cannot choose), bound to a random nonce State
 * Flow writes into that common dir at the yes and records beside it in the user's config. The
 * nonce closes the gap the inode leaves: once a consented repository is deleted, a new folder
 * may get its inode number; it cannot also hold the nonce, which only that repository and the
 * user's config knew (docs/decisions.md, "A link needs the user's yes").
 */
import { lstatSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { printable } from "../../core/printable.js";
import { isLocalToken } from "../project/repo-token.js";
import { normalRemote } from "../project/repository.js";
import type { Project } from "../project/project.js";
import { atomicWrite, ownedByMe } from "../fs-util.js";
import { readGitFile } from "../project/git-files.js";

/** The nonce's file in the git common dir (git ignores files it does not know there; a clone never copies it). */
export const CONSENT_FILE = "state-flow-consent";

/** A nonce as State Flow writes it: 256 random bits, hex. */
const NONCE = /^[0-9a-f]{64}$/;

/** Largest consent file read: the nonce and a newline, with room to spare; larger is not ours. */
const MAX_CONSENT_FILE = 128;

/** One yes, as the config records it under the common dir's `<dev>:<ino>`. */
export interface Consent {
	/** The random value written into the common dir at the yes. */
	nonce: string;
	/** The `repoLinks` key the yes was for (the checkout's `origin` or token). */
	repo: string;
	/** The project that key linked to when the user said yes. */
	project: string;
}

/** A common dir's identity on this machine, and its path. */
export interface CommonDir {
	/** `<dev>:<ino>` of the common dir (the `linkConsents` key). */
	key: string;
	dir: string;
}

/**
 * The common dir of a checkout State Flow follows (`projectOf`), as a folder of the user's (never
 * through a link), with its `<dev>:<ino>`; undefined otherwise (no consent can be kept there).
 */
export function commonDirOf(p: Project): CommonDir | undefined {
	if (p.git === undefined) return undefined;
	try {
		const st = lstatSync(p.git.commonDir, { bigint: true });
		if (!st.isDirectory() || !ownedByMe({ uid: Number(st.uid) })) return undefined;
		return { key: `${st.dev}:${st.ino}`, dir: p.git.commonDir };
	} catch {
		return undefined;
	}
}

/** The nonce in a common dir's consent file, or undefined: none, or not a small regular file of the user's in the exact form (git-files.ts reads it: never through a link, never from a FIFO). Never throws. */
export function readNonce(dir: string): string | undefined {
	const text = readGitFile(join(dir, CONSENT_FILE), MAX_CONSENT_FILE);
	if (text === undefined) return undefined;
	const nonce = text.endsWith("\n") ? text.slice(0, -1) : text;
	return NONCE.test(nonce) ? nonce : undefined;
}

/**
 * Whether the user said yes, in this checkout's repository on this machine, to following
 * `repo` to `project`: a record for its common dir's `<dev>:<ino>` naming them, whose nonce the
 * common dir holds. A copy of a consented repository (another inode), a folder that reuses a
 * deleted one's inode (no nonce, or another), or a yes for another project is no yes.
 */
export function consented(consents: Readonly<Record<string, Consent>> | undefined, p: Project, repo: string, project: string): boolean {
	if (consents === undefined) return false;
	const common = commonDirOf(p);
	if (common === undefined || !Object.hasOwn(consents, common.key)) return false;
	const c = consents[common.key] as Consent;
	return c.repo === repo && c.project === project && readNonce(common.dir) === c.nonce;
}

/**
 * The nonce a yes records for a common dir: the one it holds when that is the one recorded for
 * it already (a yes again, or one for another project), else a fresh one written now (atomic,
 * mode 0600, replacing only a regular file: a link, folder or FIFO there is refused). Called
 * under the config's lock, so two yeses at once cannot leave the file and the record apart.
 */
export function nonceFor(common: CommonDir, recorded: unknown): string {
	const held = readNonce(common.dir);
	if (held !== undefined && consentProblem(recorded) === undefined && (recorded as Consent).nonce === held) return held;
	const nonce = randomBytes(32).toString("hex");
	atomicWrite(join(common.dir, CONSENT_FILE), `${nonce}\n`);
	return nonce;
}

/** Why a `linkConsents` key cannot be one State Flow writes, or undefined. */
export function consentKeyProblem(key: string): string | undefined {
	return /^\d{1,40}:\d{1,40}$/.test(key) ? undefined : "is not a git common dir's `<device>:<inode>`";
}

/** Why a `linkConsents` value cannot be one State Flow writes, or undefined (the project id is checked by the caller's rule). */
export function consentProblem(value: unknown): string | undefined {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return "must be an object of nonce, repo and project";
	const c = value as Record<string, unknown>;
	if (typeof c.nonce !== "string" || !NONCE.test(c.nonce)) return "has no nonce as State Flow writes it";
	if (typeof c.repo !== "string" || (normalRemote(c.repo) !== c.repo && !isLocalToken(c.repo))) return "names no repository identity State Flow records";
	if (typeof c.project !== "string") return "names no project";
	return undefined;
}

/** `linkConsents` as the config holds it, entry by entry: one State Flow would not write is ignored with a problem (that repository asks again). */
export function consentsOf(raw: unknown, file: string, problems: string[], projectProblem: (id: unknown) => string | undefined): Record<string, Consent> {
	const kept: Record<string, Consent> = {};
	if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
		problems.push(`${file}: \`linkConsents\` must be an object of git common dir -> consent; ignoring it (linked repositories ask again).`);
		return kept;
	}
	for (const [key, value] of Object.entries(raw)) {
		const why = consentKeyProblem(key) ?? consentProblem(value) ?? projectProblem((value as Consent).project);
		if (why === undefined) kept[key] = value as Consent;
		else problems.push(`${file}: \`linkConsents[${JSON.stringify(printable(key).slice(0, 80))}]\` ${why}; ignoring it (that repository asks again).`);
	}
	return kept;
}

/**
 * The config's `linkConsents` as written, after a link (one yes recorded: `consent`, its nonce
 * from `nonceFor`) or an unlink (`project` undefined: every yes for `repos` forgotten);
 * undefined when nothing changes. Entries reading ignores are kept as written.
 */
export function consentsChanged(
	written: unknown,
	project: string | undefined,
	repos: readonly string[],
	consent: { common: CommonDir; repo: string } | undefined,
): Record<string, unknown> | undefined {
	const consents: Record<string, unknown> = written !== null && typeof written === "object" && !Array.isArray(written) ? { ...written } : {};
	if (project !== undefined) {
		if (consent === undefined) return undefined;
		const nonce = nonceFor(consent.common, consents[consent.common.key]);
		consents[consent.common.key] = { nonce, repo: consent.repo, project } satisfies Consent;
		return consents;
	}
	const gone = Object.keys(consents).filter((k) => {
		const repo = (consents[k] as { repo?: unknown } | null)?.repo;
		return typeof repo === "string" && repos.includes(repo);
	});
	if (gone.length === 0) return undefined;
	for (const k of gone) delete consents[k];
	return consents;
}
