/**
 * The `state-flow` show/history/export/import commands over the real stores (`Stores` for
 * reads and the one commit path). Each returns its output and exit code; nothing here writes
 * to the terminal or exits the process.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { fail, messageOf } from "../core/errors.js";
import { formatKeySegment } from "../core/locator.js";
import type { CanonicalPatch, OwnerHistory, OwnerState } from "../core/types.js";
import { createArtifactCompiler } from "../storage/artifacts.js";
import { limitsOf, readConfig } from "../storage/config.js";
import { type FrontmatterParser, simpleFrontmatter } from "../storage/skill-format.js";
import { rootOf, storePaths } from "../storage/paths.js";
import type { StorePaths } from "../storage/paths.js";
import { Stores } from "../storage/stores.js";
import { whoAmI } from "../storage/who.js";
import { type Parsed, UsageError } from "./args.js";
import { formatHistory, formatShow } from "./format.js";
import { exportDoc, FILE_OWNERS, type FileOwner, IMPORT_ROOTS, importPatch, isFileOwner, parseImport } from "./transfer.js";

/** What a command produced: text for stdout and stderr, and the exit code. */
export interface Outcome {
	stdout: string;
	stderr: string;
	code: 0 | 1 | 2;
}

/** A successful outcome. */
export const ok = (stdout: string, stderr = ""): Outcome => ({ stdout, stderr, code: 0 });

/** The owner argument of show/history/export, or every file owner. */
function ownersFrom(p: Parsed, value: string | undefined): FileOwner[] {
	if (value === undefined) return [...FILE_OWNERS];
	if (value === "session") {
		throw new UsageError("Session state lives in pi's session file: use `/state show session` inside pi.", p.command);
	}
	if (!isFileOwner(value)) throw new UsageError(`unknown owner \`${value}\`: use \`global\` or \`cwd\`.`, p.command);
	return [value];
}

/** Refuse a `--cwd` that is not a folder: an import would otherwise create a project folder by accident. */
export function checkCwd(p: Parsed): void {
	if (!statSync(p.cwd, { throwIfNoEntry: false })?.isDirectory()) {
		fail("invalid_input", `\`--cwd\` ${p.cwd} is not a folder; give an existing project folder.`, ["cwd"]);
	}
}

function openStores(p: Parsed): { stores: Stores; warnings: string[] } {
	checkCwd(p);
	const { config, problems } = readConfig(p.agentDir);
	const stores = new Stores({
		agentDir: p.agentDir,
		cwd: p.cwd,
		limits: limitsOf(config),
		who: whoAmI(config.user),
		...(config.retention !== undefined ? { retention: config.retention } : {}),
	});
	return { stores, warnings: problems.map((w) => `warning: ${w}`) };
}

/** Load the owner the command line names (show/history/export); with none, every owner that has a store. */
async function loadAsked(p: Parsed): Promise<{ paths: StorePaths; warnings: string[]; loaded: Array<[FileOwner, OwnerHistory]> }> {
	const asked = p.positionals[0];
	const owners = ownersFrom(p, asked);
	const { stores, warnings } = openStores(p);
	const paths = storePaths(p.agentDir, p.cwd);
	const loaded: Array<[FileOwner, OwnerHistory]> = [];
	for (const o of owners) {
		if (asked === undefined && !existsSync(rootOf(paths, o))) continue;
		loaded.push([o, await stores.load(o)]);
	}
	return { paths, warnings, loaded };
}

/** `state-flow show [owner] [--full]`. */
export async function runShow(p: Parsed): Promise<Outcome> {
	const { paths, warnings, loaded } = await loadAsked(p);
	if (loaded.length === 0) return ok(`No State Flow stores yet (global: ${paths.globalRoot}, cwd: ${paths.cwdRoot}).\n`, lines(warnings));
	return ok(`${loaded.map(([o, h]) => formatShow(o, rootOf(paths, o), h, p.full)).join("\n\n")}\n`, lines(warnings));
}

/** `state-flow history [owner]`. */
export async function runHistory(p: Parsed): Promise<Outcome> {
	const { paths, warnings, loaded } = await loadAsked(p);
	if (loaded.length === 0) return ok("No State Flow stores yet: no transitions.\n", lines(warnings));
	return ok(`${loaded.map(([o, h]) => formatHistory(o, rootOf(paths, o), h)).join("\n\n")}\n`, lines(warnings));
}

/** `state-flow export [owner]`: the export document on stdout. */
export async function runExport(p: Parsed): Promise<Outcome> {
	const { warnings, loaded } = await loadAsked(p);
	const doc = exportDoc(Object.fromEntries(loaded.map(([o, h]) => [o, { seq: h.seq, state: h.state }])));
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
	const current: Partial<Record<FileOwner, OwnerState>> = {};
	for (const o of FILE_OWNERS) if (targets[o]) current[o] = (await stores.load(o)).state;
	const patch = importPatch(current, targets);
	const names = Object.keys(targets).join(" and ");
	if (Object.keys(patch).length === 0) return ok(`No change: ${names} already equal ${source}; nothing was written.\n`, lines(warnings));
	// The patch was planned against a snapshot; the commit re-stages under the locks, so a
	// concurrent writer's change is merged rather than silently overwritten by stale deletions.
	// Artifacts go through the same compiler as patch_state: territory checks, fingerprints, Skills compiled.
	const compile = createArtifactCompiler({ cwd: p.cwd, agentDir: p.agentDir }, { parseFrontmatter: await frontmatterParser(patch) });
	const result = await stores.commit(patch, {
		by: { kind: "import", source },
		id: randomUUID(),
		at: new Date().toISOString(),
		roots: IMPORT_ROOTS,
		prepare: (staged, histories) => compile(staged, histories),
	});
	if (result.noop) return ok(`No change: ${names} already equal ${source}; nothing was written.\n`, lines(warnings));
	const summary = [`Imported ${source} into ${result.report.scopes.join(" and ")} as transition ${result.transitionId}.`];
	summary.push(`${result.report.changed.length} path(s) changed.`);
	for (const c of result.report.cascades) summary.push(`cascaded: ${c.owner}.intents${formatKeySegment(c.intent)} -> ${c.targets.join(", ")}`);
	for (const d of result.report.danglingRefs) summary.push(`dangling reference: ${d.owner}.intents${formatKeySegment(d.intent)} -> ${d.ref}`);
	return ok(`${summary.join("\n")}\n`, lines(warnings));
}

/**
 * pi's own frontmatter parser when the import touches artifacts (Skills are then read exactly
 * as pi reads them); loading pi takes seconds, so other imports, and a CLI run where pi is not
 * installed, use the built-in parser for the same YAML subset.
 */
async function frontmatterParser(patch: CanonicalPatch): Promise<FrontmatterParser> {
	if (!Object.values(patch).some((planes) => planes?.artifacts !== undefined)) return simpleFrontmatter;
	try {
		return (await import("@mariozechner/pi-coding-agent")).parseFrontmatter;
	} catch {
		return simpleFrontmatter;
	}
}

function lines(items: string[]): string {
	return items.length === 0 ? "" : `${items.join("\n")}\n`;
}
