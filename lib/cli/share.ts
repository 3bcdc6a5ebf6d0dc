/**
 * `state-flow link`, `unlink` and `migrate`: where a checkout's CWD owner and the user's Global
 * owner live. Linking records `links[<project root>] = <project id>`, the repository's keys and
 * the user's yes for this repository on this machine in the user's own config (running the
 * command is the consent; a repository never links itself; what is recorded is `ops/link.ts`'s,
 * shared with `/state link`). A checkout that only claims a linked repository stays local, and
 * `show` and `link` say so, until `state-flow link` runs there. Migrating
 * moves a file store WITH its retained history into an empty database owner in one SQL
 * transaction (`PgOwnerStore.adopt`), verifies it, and only then links, so a failure at any
 * step leaves the checkout using its files as before. The files themselves are never touched.
 */
import { openStores } from "../storage/open.js";
import { fail, isStateError, messageOf } from "../core/errors.js";
import { DEFAULT_RETENTION, type OwnerHistory, type SharedOwner } from "../core/types.js";
import { type Placement, linkKey, linkPathProblem, placementFor, userOf } from "../storage/placement/placement.js";
import { databaseFor } from "../storage/pg/placed.js";
import { repositoryWords } from "../storage/project/repository.js";
import { SUGGESTION_FILE, readSuggestion } from "../storage/project/suggestion.js";
import { markMoved } from "../storage/project/moved-marker.js";
import { configPath, readConfig, sharedKeyProblem, updateConfig, type StateFlowConfig } from "../storage/placement/config.js";
import { DEFAULT_LOCK_TIMEOUT_MS } from "../storage/file/owner-store.js";
import { acquireLock } from "../storage/file/lock.js";
import { PgDatabase } from "../storage/pg/database.js";
import { sameHistoryText } from "../storage/format.js";
import { formatWho, whoAmI } from "../storage/placement/who.js";
import { spellId } from "../core/printable.js";
import { hiddenByLink, hiddenWords, linkCheckout, linkComplete, linkHere, localContent, localStore, movedClearedWords, unlinkCheckout } from "../ops/link.js";
import { databaseInUse, linkCommand, locationWords, noDatabaseWords } from "../ops/where.js";
import type { Parsed } from "./args.js";
import { checkCwd, lines, ok, type Outcome } from "./commands.js";
import { linkableLine } from "./format.js";

/** A project id from the command line, refused (naming the field) before anything is written. */
function projectId(value: string | undefined): string {
	const why = sharedKeyProblem(value);
	if (why !== undefined)
		fail("invalid_input", `the project id ${why} (got ${value === undefined ? "nothing" : `"${spellId(value)}"`}); nothing was written.`, ["project"]);
	return value as string;
}

/** Refuse now, before anything else changes, a config file that `updateConfig` would refuse (not JSON). */
function checkConfig(p: Parsed): void {
	linkHere(p.agentDir, p.cwd);
}

/** The local file store of a shared-capable owner, as the stores open it. */
function fileStore(p: Parsed, owner: SharedOwner, retention: number) {
	return localStore(p.agentDir, p.cwd, owner, retention);
}

/** Where the shared owners go with this config, said in one line each (never a password). */
function databaseLine(p: Parsed, placement: Placement): string {
	const db = placement.database;
	if (db === undefined) {
		return `warning: ${noDatabaseWords(placement, configPath(p.agentDir))} Until one is, this checkout's CWD owner is unavailable in pi and in state-flow (nothing falls back to files).`;
	}
	return `Database: ${databaseInUse(db)}.`;
}

/**
 * `state-flow link` without an id: the project this checkout's repository claims, else the
 * repository's suggestion, offered as the command to run (running it is the consent, as with
 * `/state link`); nothing is linked.
 */
function offerSuggestion(p: Parsed): Outcome {
	checkCwd(p);
	const here = linkHere(p.agentDir, p.cwd);
	if (here.linkable !== undefined)
		return ok(`${linkableLine(here.linkable)}\nTo share this checkout's CWD memory with it, run: \`${linkCommand(here.linkable.project)}\`\n`);
	const suggestion = readSuggestion(p.cwd);
	if (suggestion === undefined) {
		fail(
			"invalid_input",
			`\`link\` needs the project id to link this checkout to (this repository suggests none in ${SUGGESTION_FILE}); nothing was changed.`,
			["project"],
		);
	}
	if ("problem" in suggestion)
		fail("invalid_input", `${suggestion.problem} Give the project id: \`state-flow link <project-id>\`; nothing was changed.`, ["project"]);
	const now = here.current === undefined ? "It is not linked now." : `It is linked to \`${here.current}\` now.`;
	return ok(
		`This repository suggests project \`${suggestion.project}\` (${SUGGESTION_FILE}, untrusted: only offered). ${now}\nTo share this project's CWD memory with it, run: \`${linkCommand(suggestion.project)}\`\n`,
	);
}

/** `state-flow link [<project-id>] [--cwd DIR] [--force]`. */
export async function runLink(p: Parsed): Promise<Outcome> {
	if (p.positionals.length === 0) return offerSuggestion(p);
	const id = projectId(p.positionals[0]);
	checkCwd(p);
	const foreign = linkPathProblem(p.cwd);
	if (foreign !== undefined) fail("invalid_input", `Cannot link: ${foreign}. Nothing was changed.`);
	const here = linkHere(p.agentDir, p.cwd);
	const real = here.checkout;
	const { config, problems } = readConfig(p.agentDir);
	const warnings = problems.map((w) => `warning: ${w}`);
	if (here.current === id) {
		// A link an older build made (by path alone, or without this repository's yes) is completed now: the same project, no new consent needed.
		if (linkComplete(p.agentDir, p.cwd, id))
			return ok(`${real} is already linked to project \`${id}\`; nothing changed.\n${databaseLine(p, placementFor(config, p.cwd))}\n`, lines(warnings));
		const { repo } = await linkCheckout(p.agentDir, p.cwd, id);
		return ok(
			`${real} is already linked to project \`${id}\`; its repository is recorded now. ${repositoryWords(repo, real)}\n${databaseLine(p, placementFor(readConfig(p.agentDir).config, p.cwd))}\n`,
			lines(warnings),
		);
	}
	const hidden = hiddenByLink(p.agentDir, p.cwd, here, id, config.retention ?? DEFAULT_RETENTION);
	const out: string[] = [];
	if (hidden !== undefined) {
		if (!p.force) {
			fail(
				"invalid_input",
				`This checkout's local CWD store ${hidden.root} ${hiddenWords(hidden)}; linking would stop using it. Nothing was changed. Run \`state-flow migrate ${id}\` to move it (with its history) into the shared project, or \`state-flow link ${id} --force\` to link anyway and leave the local files untouched (unused while linked; \`state-flow unlink\` uses them again).`,
			);
		}
		out.push(`The local CWD store ${hidden.root} ${hiddenWords(hidden)}; it is left untouched and unused while linked (--force).`);
	}
	const { repo, consentProblem } = await linkCheckout(p.agentDir, p.cwd, id);
	const { config: now } = readConfig(p.agentDir);
	const placement = placementFor(now, p.cwd);
	out.unshift(
		`Linked ${real} to project \`${id}\`${here.current !== undefined ? ` (was \`${here.current}\`)` : ""}, recorded in ${configPath(p.agentDir)}.`,
		`This checkout's CWD memory is now shared with every checkout linked to \`${id}\` in that database; pi sessions started here use it, and a running session picks it up at its next prompt.`,
		repositoryWords(repo, real),
	);
	if (consentProblem !== undefined) out.push(`warning: a moved checkout of it is asked again: ${consentProblem}.`);
	out.push(databaseLine(p, placement));
	if (placement.database !== undefined) out.push(await projectLine(p, now, placement));
	// Teammates read who made each change: without `user` they see the OS user (often `root@vm`).
	if (now.user === undefined) out.push(`Teammates see your changes as ${formatWho(whoAmI())}; to choose the name, set "user" in ${configPath(p.agentDir)}.`);
	return { stdout: `${out.join("\n")}\n`, stderr: lines(warnings), code: 0 };
}

/** What the linked project holds now (read through the stores, so an unreachable database is said, not fatal). */
async function projectLine(p: Parsed, config: StateFlowConfig, placement: Placement): Promise<string> {
	const stores = openStores(config, { agentDir: p.agentDir, cwd: p.cwd, placement });
	const s = await stores.status("cwd");
	if (s.error !== undefined) return `warning: ${s.error}`;
	return s.seq === 0 ? `The project holds nothing yet (seq 0).` : `The project holds seq ${s.seq} (${s.retained} retained transition(s), ${s.bytes} bytes).`;
}

/** `state-flow unlink [--cwd DIR]`. */
export async function runUnlink(p: Parsed): Promise<Outcome> {
	checkCwd(p);
	const done = await unlinkCheckout(p.agentDir, p.cwd);
	const content = localContent(fileStore(p, "cwd", readConfig(p.agentDir).config.retention ?? DEFAULT_RETENTION));
	if (done.project === undefined) {
		const what = done.wasMovedTo === undefined ? "nothing changed" : "its link is unchanged";
		return ok(`${done.checkout} is not linked to a project; ${what}. Its CWD memory is in ${done.store}.${movedClearedWords(done)}\n`);
	}
	const state = content.error !== undefined ? `it cannot be read: ${content.error}` : content.seq === 0 ? "empty" : `seq ${content.seq}`;
	return ok(
		`Unlinked ${done.checkout} from project \`${done.project}\` (recorded in ${configPath(p.agentDir)}). The project's rows in the database are untouched.\nThis checkout's CWD memory is in its local folder again: ${done.store} (${state}).\n`,
	);
}

/**
 * `state-flow migrate <project-id> [--cwd DIR]` and `state-flow migrate --global`: the local
 * file store, with its retained history, into an empty database owner in ONE transaction,
 * verified, then linked (`links` / `shareGlobal`). The file store's lock is held from the read
 * to the link, so no local writer slips a transition in between.
 */
export async function runMigrate(p: Parsed): Promise<Outcome> {
	if (p.toFiles) return runMigrateToFiles(p);
	checkCwd(p);
	const owner: SharedOwner = p.global ? "global" : "cwd";
	const asked = p.global ? undefined : projectId(p.positionals[0]);
	// A config that could not be updated afterwards is refused before anything moves.
	checkConfig(p);
	const { config, problems } = readConfig(p.agentDir);
	const warnings = problems.map((w) => `warning: ${w}`);
	const key = asked ?? userOf(config);
	const placement = placementFor(config, p.cwd);
	const db = placement.database;
	if (db === undefined) {
		fail("unavailable", `${noDatabaseWords(placement, configPath(p.agentDir))} Nothing was changed.`);
	}
	if (owner === "cwd" && placement.project !== undefined) {
		fail(
			"invalid_input",
			`This checkout is already linked to project \`${placement.project}\`; its local CWD store is not in use. Run \`state-flow unlink\` first to migrate the local store. Nothing was changed.`,
		);
	}
	if (owner === "global" && placement.user !== undefined) {
		fail("invalid_input", `Global is already shared (user \`${placement.user}\`, \`shareGlobal\` in the config); nothing was changed.`);
	}
	const retention = config.retention ?? DEFAULT_RETENTION;
	// Complete what a crashed writer left (a pending journal) through the stores' own recovery; a damaged store is refused.
	try {
		await openStores(config, { agentDir: p.agentDir, cwd: p.cwd, placement }).load(owner);
	} catch (e) {
		const msg = messageOf(e);
		fail(isStateError(e) ? e.code : "io", `The local ${owner} store cannot be migrated: ${msg} Nothing was changed; run \`state-flow doctor\` first.`);
	}
	const source = fileStore(p, owner, retention);
	const target = databaseFor(db.url, db.schema).store(owner, key, retention);
	const where = locationWords(target.location());
	const out: string[] = [];
	if (!source.exists()) {
		out.push(`There is no local ${owner} store (${source.root}): nothing to move.`);
		await record(p, owner, key);
	} else {
		const lock = await acquireLock(source.lockPath, DEFAULT_LOCK_TIMEOUT_MS);
		try {
			const h = source.catchUpLocked(lock.recoveredCrash);
			if (h.seq === 0) out.push(`The local ${owner} store ${source.root} is empty: nothing to move.`);
			else {
				await target.adopt(h);
				await verifyCopy(db.url, db.schema, owner, key, retention, h);
				try {
					await record(p, owner, key);
					// The files stay; a checkout reading them unlinked later (moved, renamed) is told, not silently served stale memory.
					if (owner === "cwd") markMoved(source.root, key);
				} catch (e) {
					fail(
						isStateError(e) ? e.code : "io",
						`The ${owner} store was moved into ${where} and verified, but where it lives could not be recorded: ${messageOf(e)} Fix that, then finish with ${owner === "cwd" ? `\`state-flow link ${key} --force\`` : '`"shareGlobal": true` in config.json'}; until then the local files stay in use.`,
					);
				}
				out.push(
					`Moved the local ${owner} store ${source.root} (seq ${h.seq}: ${h.tail.length} retained transition(s)${h.checkpointSeq > 0 ? `, checkpoint at seq ${h.checkpointSeq}` : ""}) into ${where} in one transaction; read back and verified.`,
					`The local files are left in place and are no longer used${owner === "cwd" ? " while this checkout is linked (`state-flow unlink` uses them again)" : " while `shareGlobal` is true"}; delete them when you no longer need them.`,
				);
			}
			if (h.seq === 0) await record(p, owner, key);
		} finally {
			lock.release();
		}
	}
	out.push(
		owner === "cwd"
			? `Linked ${linkKey(p.cwd)} to project \`${key}\` (recorded in ${configPath(p.agentDir)}); pi sessions started here use it, and a running session picks it up at its next prompt (stop sessions working here before migrating: a change made before that goes to the local files).`
			: `Global is now shared under user \`${key}\` (\`shareGlobal\` recorded in ${configPath(p.agentDir)}). On your other machines set \`"shareGlobal": true\`${config.user === undefined ? ` and \`"user": "${key}"\`` : ""} in their config.json to use it.`,
	);
	out.push(databaseLine(p, placement));
	return { stdout: `${out.join("\n")}\n`, stderr: lines(warnings), code: 0 };
}

/**
 * `state-flow migrate --to-files [--cwd DIR]` and `migrate --global --to-files`: the way back.
 * The shared owner's history as the database holds it now (checkpoint and retained
 * transitions, folded to this config's retention) into the EMPTY local file store
 * (`FileOwnerStore.adopt`), read back and compared, and only then the link removed (or
 * `shareGlobal` turned off). The database's rows are never touched: other checkouts and
 * machines keep sharing them, and what they write from then on stays there.
 */
async function runMigrateToFiles(p: Parsed): Promise<Outcome> {
	checkCwd(p);
	const owner: SharedOwner = p.global ? "global" : "cwd";
	checkConfig(p);
	const { config, problems } = readConfig(p.agentDir);
	const warnings = problems.map((w) => `warning: ${w}`);
	const placement = placementFor(config, p.cwd);
	const retention = config.retention ?? DEFAULT_RETENTION;
	const local = fileStore(p, owner, retention);
	const real = linkKey(p.cwd);
	const key = owner === "cwd" ? placement.project : placement.user;
	if (key === undefined) {
		fail(
			"invalid_input",
			`${owner === "cwd" ? `${real} is not linked to a project` : "Global is not shared (`shareGlobal` is off)"}: its memory is already in its local files (${local.root}). Nothing was changed.`,
		);
	}
	const db = placement.database;
	if (db === undefined) fail("unavailable", `${placement.problem ?? "no database is configured."} Nothing was changed.`);
	const content = localContent(local);
	if (content.seq > 0 || content.error !== undefined) {
		const what = content.error !== undefined ? `cannot be read (${content.error})` : `holds ${content.seq} transition(s) from before it was shared`;
		fail(
			"invalid_input",
			`The local ${owner} store ${local.root} ${what}; a migration only fills an empty store, so nothing was changed. Move that folder aside (or delete it) first, or ${owner === "cwd" ? "run `state-flow unlink` to use it as it is" : 'set `"shareGlobal": false` in config.json to use it as it is'}.`,
		);
	}
	// Through the stores: a journal a crashed mixed transition left is completed first, as a pi session would.
	let source: OwnerHistory;
	try {
		source = await openStores(config, { agentDir: p.agentDir, cwd: p.cwd, placement }).load(owner);
	} catch (e) {
		fail(isStateError(e) ? e.code : "io", `The shared ${owner} owner cannot be read: ${messageOf(e)} Nothing was changed.`);
	}
	const where = locationWords(databaseFor(db.url, db.schema).store(owner, key, retention).location());
	const out: string[] = [];
	if (source.seq === 0) out.push(`${where} holds nothing yet: nothing to move.`);
	else {
		const written = await local.adopt(source);
		const back = fileStore(p, owner, retention).read();
		const differs = sameHistoryText(back, written);
		if (differs !== undefined) {
			fail(
				"corrupt",
				`The ${owner} owner was copied into ${local.root}, but reading it back differs from the copy (${differs}). The database is still in use: nothing else was changed. Move that folder aside before trying again.`,
			);
		}
		const retained = `${written.tail.length} retained transition(s)${written.checkpointSeq > 0 ? `, checkpoint at seq ${written.checkpointSeq}` : ""}`;
		out.push(`Moved ${where} (seq ${written.seq}: ${retained}) into the local ${owner} store ${local.root}; read back and verified.`);
	}
	try {
		if (owner === "cwd") {
			await unlinkCheckout(p.agentDir, p.cwd);
		} else await updateConfig(p.agentDir, { shareGlobal: false }, "keeping Global in files");
	} catch (e) {
		fail(
			isStateError(e) ? e.code : "io",
			`${out.join(" ")} But the change could not be recorded: ${messageOf(e)} Fix that, then finish with ${owner === "cwd" ? "`state-flow unlink`" : '`"shareGlobal": false` in config.json'}; until then the database stays in use.`,
		);
	}
	out.push(
		owner === "cwd"
			? `Unlinked ${real} from project \`${key}\` (recorded in ${configPath(p.agentDir)}); pi sessions started here use the local files, and a running session picks them up at its next prompt.`
			: `Global is in its local files again (\`shareGlobal\` turned off in ${configPath(p.agentDir)}).`,
		`The database's rows are untouched: ${owner === "cwd" ? `checkouts still linked to \`${key}\`` : "machines with `shareGlobal` on"} keep sharing them, and what they write from now on stays there.`,
	);
	return { stdout: `${out.join("\n")}\n`, stderr: lines(warnings), code: 0 };
}

/** Record where the owner now lives: the checkout's link, or `shareGlobal`. */
async function record(p: Parsed, owner: SharedOwner, key: string): Promise<void> {
	if (owner === "cwd") await linkCheckout(p.agentDir, p.cwd, key);
	else await updateConfig(p.agentDir, { shareGlobal: true }, "sharing Global");
}

/** Read the copy back on a connection of its own (no cache) and compare it with the source; a difference is never linked. */
async function verifyCopy(url: string, schema: string, owner: SharedOwner, key: string, retention: number, source: OwnerHistory): Promise<void> {
	const fresh = new PgDatabase({ url, schema });
	try {
		const differs = sameHistoryText(await fresh.store(owner, key, retention).load(), source);
		if (differs !== undefined) {
			fail(
				"corrupt",
				`The ${owner} owner was copied into ${fresh.shownUrl}, but reading it back differs from the local store (${differs}). It was NOT linked: this checkout keeps using its files. Inspect the database owner with \`state-flow doctor\` after linking by hand, or ask for help.`,
			);
		}
	} finally {
		await fresh.close();
	}
}
