/**
 * The `state-flow` show/history/export/import commands over the real stores (`Stores` for
 * reads and the one commit path). Each returns its output and exit code; nothing here writes
 * to the terminal or exits the process.
 */
import { openStores as openStoresOf } from "../storage/open.js";
import type { Stores } from "../storage/stores.js";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { fail, isStateError, messageOf } from "../core/errors.js";
import { formatKeySegment } from "../core/locator.js";
import type { OwnerHistory, OwnerState, SharedOwner } from "../core/types.js";
import { SHARED_OWNERS, isSharedOwner } from "../core/types.js";
import { artifactRootsFor } from "../storage/artifacts/files.js";
import { createArtifactCompiler } from "../storage/artifacts/compiler.js";
import { foreignLinkLine, type Placement, placementFor, userOf } from "../storage/placement/placement.js";
import { readConfig, type StateFlowConfig } from "../storage/placement/config.js";
import { projectLine, projectNote, projectOf } from "../storage/project/project.js";
import { apartLine, storesApart } from "../storage/project/stores-apart.js";
import { movedLine } from "../storage/project/moved-marker.js";
import { type Parsed, UsageError } from "./args.js";
import { uniquePrefixes } from "../ops/history-text.js";
import { frontmatterParser } from "../ops/frontmatter.js";
import { formatHistory, formatShow, linkableLine, TITLES } from "./format.js";
import { databaseInUse, locationWords } from "../ops/where.js";
import { exportDoc, IMPORT_ROOTS, importPatch, parseImport } from "./transfer.js";

/** What a command produced: text for stdout and stderr, and the exit code. */
export interface Outcome {
	stdout: string;
	stderr: string;
	code: 0 | 1 | 2;
}

/** A successful outcome. */
export const ok = (stdout: string, stderr = ""): Outcome => ({ stdout, stderr, code: 0 });

/** The owner argument of show/history/export, or every file owner. */
function ownersFrom(p: Parsed, value: string | undefined): SharedOwner[] {
	if (value === undefined) return [...SHARED_OWNERS];
	if (value === "session") {
		throw new UsageError("Session state lives in pi's session file: use `/state show session` inside pi.", p.command);
	}
	if (!isSharedOwner(value)) throw new UsageError(`unknown owner \`${value}\`: use \`global\` or \`cwd\`.`, p.command);
	return [value];
}

/** Refuse a `--cwd` that is not a folder: an import would otherwise create a project folder by accident. */
export function checkCwd(p: Parsed): void {
	if (!statSync(p.cwd, { throwIfNoEntry: false })?.isDirectory()) {
		fail("invalid_input", `\`--cwd\` ${p.cwd} is not a folder; give an existing project folder.`, ["cwd"]);
	}
}

/** The stores a command works on, placed as pi would place them (the user's config and environment). */
export interface Opened {
	stores: Stores;
	placement: Placement;
	config: StateFlowConfig;
	warnings: string[];
}

export function openStores(p: Parsed): Opened {
	checkCwd(p);
	const { config, problems } = readConfig(p.agentDir);
	const placement = placementFor(config, p.cwd);
	const stores = openStoresOf(config, { agentDir: p.agentDir, cwd: p.cwd, placement });
	return { stores, placement, config, warnings: problems.map((w) => `warning: ${w}`) };
}

/** One owner a command read: its history, or why it cannot be reached now. */
interface Read {
	owner: SharedOwner;
	where: string;
	history?: OwnerHistory;
	error?: string;
}

/**
 * Load the owner the command line names (show/history/export); with none, every owner that has
 * a store (a database owner always does). An unreachable owner is reported, not fatal: the
 * others are still read. Damage stays fatal, as before.
 */
async function loadAsked(p: Parsed): Promise<Opened & { read: Read[] }> {
	const asked = p.positionals[0];
	const owners = ownersFrom(p, asked);
	const opened = openStores(p);
	const shown = owners.filter((o) => {
		const where = opened.stores.location(o);
		return asked !== undefined || where.backend !== "file" || existsSync(where.path);
	});
	// One snapshot: an export of Global and CWD never holds half of a transition another process made meanwhile.
	const loaded = await opened.stores.loadEach(shown);
	const read: Read[] = shown.map((o, i) => {
		const where = locationWords(opened.stores.location(o));
		const got = loaded[i] as (typeof loaded)[number];
		if ("history" in got) return { owner: o, where, history: got.history };
		const e = got.error;
		if (!isStateError(e) || e.code !== "unavailable") throw e;
		return { owner: o, where, error: e.message };
	});
	return { ...opened, read };
}

/** Lines about shared memory for `show`: the database, the user, and what keeps a wanted shared owner from its place. */
function placementLines(placement: Placement, config: StateFlowConfig): string[] {
	const out: string[] = [];
	const db = placement.database;
	if (db !== undefined) out.push(`Database: ${databaseInUse(db)}`);
	if (db !== undefined || placement.project !== undefined || placement.user !== undefined || placement.problem !== undefined) {
		out.push(`User: ${userOf(config)}${placement.user !== undefined ? " (Global is shared under this name)" : ""}`);
	}
	if (placement.problem !== undefined) out.push(`Problem: ${placement.problem}`);
	return out;
}

/** Text of each owner read, and the exit code: 1 when one could not be reached. */
function report(read: readonly Read[], format: (r: Read & { history: OwnerHistory }) => string, extra: string[], warnings: string[]): Outcome {
	const blocks = read.map((r) => (r.history !== undefined ? format(r as Read & { history: OwnerHistory }) : `${TITLES[r.owner]}  ${r.where}  (unavailable)`));
	const errors = read.flatMap((r) => (r.error !== undefined ? [`state-flow: ${r.error}`] : []));
	const stdout = `${[...blocks, ...(extra.length > 0 ? [extra.join("\n")] : [])].join("\n\n")}\n`;
	return { stdout, stderr: lines([...warnings, ...errors]), code: errors.length > 0 ? 1 : 0 };
}

/** `state-flow show [owner] [--full]`. */
export async function runShow(p: Parsed): Promise<Outcome> {
	const { read, warnings, placement, config, stores } = await loadAsked(p);
	const project = projectOf(p.cwd);
	const apart = apartLine(storesApart(project));
	const note = projectNote(project);
	const moved = movedLine(project.store, placement.project);
	const foreign = foreignLinkLine(config, p.cwd);
	const extra = [
		projectLine(project, placement.project),
		...(note !== undefined ? [note] : []),
		...(apart !== undefined ? [`Note: ${apart}`] : []),
		...(moved !== undefined ? [moved] : []),
		...(foreign !== undefined ? [foreign] : []),
		...(placement.linkable !== undefined ? [linkableLine(placement.linkable)] : []),
		...placementLines(placement, config),
	];
	if (read.length === 0) {
		const where = `global: ${locationWords(stores.location("global"))}, cwd: ${locationWords(stores.location("cwd"))}`;
		return ok(`${[`No State Flow stores yet (${where}).`, ...extra].join("\n")}\n`, lines(warnings));
	}
	return report(read, (r) => formatShow(r.owner, r.where, r.history, p.full), extra, warnings);
}

/** `state-flow history [owner] [--full]`: newest first, in `/state history`'s words. */
export async function runHistory(p: Parsed): Promise<Outcome> {
	const { read, warnings } = await loadAsked(p);
	if (read.length === 0) return ok("No State Flow stores yet: no transitions.\n", lines(warnings));
	const f = { now: new Date(), full: p.full };
	const short = uniquePrefixes(read.flatMap((r) => r.history?.tail.map((t) => t.id) ?? []));
	const hint = p.full ? [] : ["full ids, ISO times and every changed key: state-flow history --full"];
	return report(read, (r) => formatHistory(r.owner, r.where, r.history, f, short), hint, warnings);
}

/** `state-flow export [owner]`: the export document on stdout; refused whole when an owner cannot be reached (a backup is never silently partial). */
export async function runExport(p: Parsed): Promise<Outcome> {
	const { warnings, read } = await loadAsked(p);
	const missing = read.find((r) => r.error !== undefined);
	if (missing !== undefined) {
		return {
			stdout: "",
			stderr: lines([
				...warnings,
				`state-flow: ${missing.error} Nothing was exported; name the owners that can be reached (\`state-flow export global\`) to export those.`,
			]),
			code: 1,
		};
	}
	const doc = exportDoc(Object.fromEntries(read.map((r) => [r.owner, { seq: r.history?.seq ?? 0, state: (r.history as OwnerHistory).state }])));
	return ok(`${JSON.stringify(doc, null, 2)}\n`, lines(warnings));
}

function readInput(file: string, cwd: string, stdin: () => string): { text: string; source: string } {
	if (file === "-") return { text: stdin(), source: "stdin" };
	const path = resolve(cwd, file);
	try {
		return { text: readFileSync(path, "utf8"), source: path };
	} catch (e) {
		return fail("io", `cannot read \`${path}\`: ${messageOf(e)}`);
	}
}

/** `state-flow import <file|-> [--owner]`: one transition that makes each owner equal the file. */
export async function runImport(p: Parsed, stdin: () => string): Promise<Outcome> {
	const only = p.owner === undefined ? undefined : ownersFrom(p, p.owner)[0];
	const { text, source } = readInput(p.positionals[0] as string, p.cwd, stdin);
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (e) {
		fail("invalid_input", `\`${source}\` is not valid JSON (${messageOf(e)}).`);
	}
	const targets = parseImport(raw, only);
	const { stores, warnings } = openStores(p);
	const current: Partial<Record<SharedOwner, OwnerState>> = {};
	for (const o of SHARED_OWNERS) if (targets[o]) current[o] = (await stores.load(o)).state;
	const patch = importPatch(current, targets);
	const names = Object.keys(targets).join(" and ");
	if (Object.keys(patch).length === 0) return ok(`No change: ${names} already equal ${source}; nothing was written.\n`, lines(warnings));
	// The patch was planned against a snapshot; the commit re-stages under the locks, so a
	// concurrent writer's change is merged rather than silently overwritten by stale deletions.
	// Artifacts go through the same compiler as patch_state: territory checks, fingerprints, Skills compiled.
	const compile = createArtifactCompiler(artifactRootsFor(p.cwd, p.agentDir), { parseFrontmatter: await frontmatterParser(patch) });
	const result = await stores.commit(patch, {
		by: { kind: "import", source },
		id: randomUUID(),
		at: new Date().toISOString(),
		roots: IMPORT_ROOTS,
		prepare: (staged, histories) => compile(staged, histories),
		...(p.allowSecret ? { allowSecret: true } : {}),
	});
	if (result.noop) return ok(`No change: ${names} already equal ${source}; nothing was written.\n`, lines(warnings));
	const summary = [`Imported ${source} into ${result.report.scopes.join(" and ")} as transition ${result.transitionId}.`];
	summary.push(`${result.report.changed.length} path(s) changed.`);
	for (const c of result.report.cascades) summary.push(`cascaded: ${c.owner}.intents${formatKeySegment(c.intent)} -> ${c.targets.join(", ")}`);
	for (const d of result.report.danglingRefs) summary.push(`dangling reference: ${d.owner}.intents${formatKeySegment(d.intent)} -> ${d.ref}`);
	return ok(`${summary.join("\n")}\n`, lines(warnings));
}

export function lines(items: string[]): string {
	return items.length === 0 ? "" : `${items.join("\n")}\n`;
}
