/**
 * Doctor's read-only checks: a file store verified by reading it whole, an owner placed in
 * PostgreSQL verified on a connection of its own, and compiled Skills on disk that no artifact
 * records (named, never deleted).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isStateError, messageOf } from "../../core/errors.js";
import { SHARED_OWNERS, type OwnerHistory, type SharedOwner } from "../../core/types.js";
import type { Placement } from "../../storage/placement/placement.js";
import type { FileOwnerStore } from "../../storage/file/owner-store.js";
import { inside, lstatOrUndefined, realOrSelf } from "../../storage/fs-util.js";
import { artifactRootsFor, ownerRoot, readIfFile } from "../../storage/artifacts/files.js";
import { MAX_HASHED_FILE_BYTES } from "../../storage/artifacts/compiler.js";
import { compiledMarker, skillFolders } from "../../storage/artifacts/skill-format.js";
import { PgDatabase } from "../../storage/pg/database.js";
import type { Stores } from "../../storage/stores.js";
import type { Parsed } from "../args.js";
import { locationWords } from "../../ops/where.js";
import { present, type Report } from "./report.js";

/**
 * Compiled Skills that State Flow wrote (its marker line names the owner and key) but that no
 * artifact of that owner records: a crash between writing the file and committing, or a store
 * restored from before it. Listed with the way out, never removed (the file may be someone's
 * now); not store damage, so the exit code stays as the stores make it.
 */
export function unrecordedSkills(report: Report, verified: Partial<Record<SharedOwner, OwnerHistory | "none">>, p: Parsed): void {
	for (const owner of SHARED_OWNERS) {
		const h = verified[owner];
		// A store that could not be read is reported above; one that does not exist records nothing.
		if (h === undefined) continue;
		const artifacts = h === "none" ? {} : h.state.artifacts;
		const root = ownerRoot(owner, artifactRootsFor(p.cwd, p.agentDir));
		// Every folder a Skill of the owner compiles into: a project's `.pi/skills/` and `.agents/skills/`.
		for (const folder of skillFolders(owner)) unrecordedIn(report, owner, root, folder, artifacts);
	}
}

/** The unrecorded compiled Skills in one Skill folder of an owner: one level of folders, each file bounded. */
function unrecordedIn(report: Report, owner: SharedOwner, root: string, folder: string, artifacts: Record<string, unknown>): void {
	const dir = join(root, folder);
	// A Skill folder that leads out of the owner's folder (a link in a repository) is not read.
	if (!inside(realOrSelf(dir), realOrSelf(root))) return;
	let names: string[];
	try {
		names = readdirSync(dir).sort();
	} catch {
		return;
	}
	for (const name of names) {
		const key = `${folder}/${name}/SKILL.md`;
		// Only a real folder is looked into (a link there is not State Flow's, and is never followed); the file itself is opened without following one.
		if (Object.hasOwn(artifacts, key) || !lstatOrUndefined(join(dir, name))?.isDirectory()) continue;
		const bytes = readIfFile(join(root, key), { followLink: false, maxBytes: MAX_HASHED_FILE_BYTES });
		if (bytes === undefined || !bytes.toString("utf8").includes(compiledMarker(owner, key))) continue;
		report.lines.push(
			`${owner}: ${join(root, key)} was compiled by State Flow from ${owner}.artifacts[${JSON.stringify(key)}], which the state does not record (a crash between writing it and committing, or a store restored from before it). Patch that artifact again to adopt the file, or delete the file; doctor leaves it.`,
		);
	}
}

/**
 * A database owner read afresh on a connection of its own (no cache): every retained row and
 * the checkpoint are verified. Unreachable or unconfigured: reported, and unhealthy.
 */
export async function verifyDatabaseOwner(
	report: Report,
	stores: Stores,
	placement: Placement,
	o: SharedOwner,
	retention: number,
	files: FileOwnerStore,
): Promise<OwnerHistory | undefined> {
	const where = stores.location(o);
	const db = placement.database;
	if (where.backend !== "postgres" || db === undefined) {
		report.healthy = false;
		report.lines.push(`${o}: UNAVAILABLE: ${(await stores.status(o)).error ?? "its database is not configured."}`);
		return undefined;
	}
	const fresh = new PgDatabase({ url: db.url, schema: db.schema });
	let verified: OwnerHistory | undefined;
	try {
		const h = await fresh.store(o, where.key, retention).load();
		verified = h;
		const folded = h.checkpointSeq > 0 ? `, checkpoint at seq ${h.checkpointSeq}` : "";
		report.lines.push(`${o}: ok, ${locationWords(where)}, seq ${h.seq}, ${h.tail.length} retained transition(s)${folded}, every row verified.`);
	} catch (e) {
		report.healthy = false;
		const unavailable = isStateError(e) && e.code === "unavailable";
		report.lines.push(`${o}: ${unavailable ? "UNAVAILABLE" : "DAMAGED"}: ${messageOf(e)}`);
	} finally {
		await fresh.close();
	}
	if (present(files.root)) {
		report.lines.push(
			`${o}: the local folder ${files.root} is not used while this owner lives in the database (left by \`state-flow migrate\` or \`link --force\`); it was not checked.`,
		);
	}
	return verified;
}

/**
 * Read a store afresh through every check: `ok` with its size, or DAMAGED with the way out.
 * Returns its history, "none" when there is no store, undefined when it cannot be read.
 */
export function verifyStore(report: Report, store: FileOwnerStore): OwnerHistory | "none" | undefined {
	const o = store.owner;
	if (!present(store.root)) return "none";
	try {
		const h = store.read();
		report.lines.push(`${o}: ok, seq ${h.seq}, ${h.tail.length} retained transition(s), ${store.diskBytes()} bytes on disk.`);
		return h;
	} catch (e) {
		report.healthy = false;
		report.lines.push(
			`${o}: DAMAGED: ${messageOf(e)}${/move-aside/.test(messageOf(e)) ? "" : ` To rebuild it from its intact transitions: \`state-flow doctor --salvage ${o}\`; to keep it aside and start afresh: \`state-flow doctor --move-aside ${o}\` (either renames ${store.root}, deletes nothing).`}`,
		);
		return undefined;
	}
}
