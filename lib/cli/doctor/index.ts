/**
 * `state-flow doctor`: verify the Global and CWD stores and repair what a crash leaves behind,
 * through Storage's own repair and read paths (no link is followed). It never reports a damaged
 * store healthy and never deletes: damage is reported, kept aside or salvaged on request.
 */
import { openFileStore, openStores } from "../../storage/open.js";
import { fail } from "../../core/errors.js";
import { inline, shellWord } from "../../core/printable.js";
import { storedRefProblems } from "../../core/refs.js";
import { DEFAULT_RETENTION, SHARED_OWNERS, isSharedOwner, type OwnerHistory, type SharedOwner } from "../../core/types.js";
import { placementFor } from "../../storage/placement/placement.js";
import { limitsOf, readConfig } from "../../storage/placement/config.js";
import { JournalDir } from "../../storage/file/journal.js";
import { storePaths } from "../../storage/project/paths.js";
import { type SeenMarks, seenMarksOf } from "../../storage/file/seen.js";
import { tokenProblemOf } from "../../storage/project/repo-token.js";
import { type Project, projectNote } from "../../storage/project/project.js";
import { apartLine, storesApart } from "../../storage/project/stores-apart.js";
import { type Parsed, UsageError } from "../args.js";
import { checkCwd, type Outcome } from "../commands.js";
import { salvageStore } from "./salvage.js";
import { reviewJournals, rollForward } from "./journals.js";
import { acceptStore, moveAside, repairStore } from "./file-repair.js";
import { unrecordedSkills, verifyDatabaseOwner, verifyStore } from "./checks.js";
import type { Report } from "./report.js";

/** A file owner named by a doctor flag; anything else is a usage error. */
function flagOwner(flag: string, value: string | undefined): SharedOwner | undefined {
	if (value === undefined) return undefined;
	if (isSharedOwner(value)) return value;
	throw new UsageError(`\`${flag}\` takes \`global\` or \`cwd\`, got \`${value}\` (the Session owner lives in the pi session file).`, "doctor");
}

/** `state-flow doctor [--dry-run] [--drop-journal <id>]`: exit 0 when every store is healthy after the repairs. */
export async function runDoctor(p: Parsed): Promise<Outcome> {
	checkCwd(p);
	const report: Report = { lines: [], healthy: true };
	const { config, problems } = readConfig(p.agentDir);
	for (const w of problems) report.lines.push(`config: ${w}`);
	const retention = config.retention ?? DEFAULT_RETENTION;
	const placement = placementFor(config, p.cwd);
	const stores = openStores(config, { agentDir: p.agentDir, cwd: p.cwd, placement });
	const paths = storePaths(p.agentDir, p.cwd);
	const journalDir = paths.journalDir;
	const seen = seenMarksOf(paths);
	const fileStore = (o: SharedOwner, marks?: SeenMarks) => openFileStore(paths, o, { retention, ...(marks !== undefined ? { seen: marks } : {}) });
	// Crash repairs (a dead writer's lock, torn bytes) do not depend on this machine's marks: a
	// store behind them is still repaired, then reported by the verification, which checks them.
	const files = { global: fileStore("global"), cwd: fileStore("cwd") };
	// Owners placed in the database are verified there; their local folders are not in use. A
	// refused CWD folder (`Project.refused`) is neither read, repaired, moved nor verified: said once.
	const refused = paths.project.refused;
	const local = SHARED_OWNERS.filter((o) => stores.location(o).backend === "file" && !(o === "cwd" && refused !== undefined));

	await reviewJournals(report, journalDir, retention, p, stores, placement);
	const aside = flagOwner("--move-aside", p.moveAside);
	const cut = flagOwner("--cut-torn", p.cutTorn);
	const accept = flagOwner("--accept-store", p.acceptStore);
	const salvage = flagOwner("--salvage", p.salvage);
	if (refused !== undefined && [aside, cut, accept, salvage].includes("cwd")) fail("unavailable", `${refused}, and doctor leaves it as it is.`);
	if (aside !== undefined) report.lines.push(...moveAside(files[aside], p.dryRun));
	if (salvage !== undefined) report.lines.push(...(await salvageStore(files[salvage], seen, p.dryRun, new Date(), limitsOf(config))).lines);
	if (accept !== undefined) report.lines.push(...acceptStore(files[accept], seen, p.dryRun));
	for (const o of local) await repairStore(report, files[o], cut === o, p.dryRun);
	if (!p.dryRun) await rollForward(report, stores, paths, new JournalDir(journalDir));
	const verified: Partial<Record<SharedOwner, OwnerHistory | "none">> = {};
	for (const o of SHARED_OWNERS) {
		if (o === "cwd" && refused !== undefined && stores.location(o).backend === "file") {
			report.lines.push(`cwd: ${refused}.`);
			report.healthy = false;
			continue;
		}
		const h = local.includes(o) ? verifyStore(report, fileStore(o, seen)) : await verifyDatabaseOwner(report, stores, placement, o, retention, files[o]);
		if (h !== undefined) verified[o] = h;
	}
	unrecordedSkills(report, verified, p);
	projectNotes(report, paths.project, stores.location("cwd").backend === "file");
	storedRefNotes(report, verified);
	report.lines.push(
		report.healthy
			? p.dryRun
				? "Dry run: nothing was changed."
				: "All stores are healthy."
			: "Some stores need attention (see above); nothing damaged was rewritten.",
	);
	// One line each, whatever a line quotes (a planted id, a file name): stored text never prints a line of its own.
	return { stdout: `${report.lines.map(inline).join("\n")}\n`, stderr: "", code: report.healthy ? 0 : 1 };
}

/** What doctor says of the project: its note, an older build's store in the work tree, stores apart, a garbled repository token. */
function projectNotes(report: Report, project: Project, cwdInFiles: boolean): void {
	const note = projectNote(project);
	if (note !== undefined) report.lines.push(`cwd: ${note}`);
	const { store, root, supersededBy } = project;
	if (supersededBy !== undefined && cwdInFiles) {
		report.lines.push(
			`cwd: this project's memory is in ${inline(store)}, inside the work tree, where a git checkout or pull that brings files to that path overwrites it; \`state-flow adopt ${shellWord(inline(root))}\` moves it, with its history, into ${inline(supersededBy)}.`,
		);
	}
	// Each store apart on its own line: doctor is where a user looks for all of them.
	for (const one of storesApart(project, true)) report.lines.push(`cwd: ${apartLine([one])}.`);
	const token = tokenProblemOf(project);
	if (token !== undefined) report.lines.push(`cwd: ${token}.`);
}

/** Stored `$ref` objects that are not references (an older build wrote them), each named with what to send instead. */
function storedRefNotes(report: Report, verified: Partial<Record<SharedOwner, OwnerHistory | "none">>): void {
	for (const o of SHARED_OWNERS) {
		const h = verified[o];
		if (h === undefined || h === "none") continue;
		for (const why of storedRefProblems(o, h.state)) {
			report.lines.push(
				`${o}: a stored \`$ref\` object is not a reference (kept as an older build wrote it; it refers to nothing, and a patch that touches it is refused until it is fixed): ${why}.`,
			);
		}
	}
}
