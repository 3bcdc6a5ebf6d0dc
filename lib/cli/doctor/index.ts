/**
 * `state-flow doctor`: verify the Global and CWD stores and repair what a crash leaves behind,
 * through Storage's own repair and read paths (no link is followed). It never reports a damaged
 * store healthy and never deletes: damage is reported, kept aside or salvaged on request.
 */
import { fail } from "../../core/errors.js";
import { inline, shellWord } from "../../core/printable.js";
import { storedRefProblems } from "../../core/refs.js";
import { DEFAULT_RETENTION, type OwnerHistory } from "../../core/types.js";
import { placementFor } from "../../storage/backend.js";
import { limitsOf, readConfig } from "../../storage/config.js";
import { FileOwnerStore } from "../../storage/file-store.js";
import { JournalDir } from "../../storage/journal.js";
import { rootOf, storePaths } from "../../storage/paths.js";
import { type SeenMarks, seenMarksOf } from "../../storage/seen.js";
import { tokenProblemOf } from "../../storage/repo-token.js";
import { projectNote } from "../../storage/project.js";
import { apartLine, storesApart } from "../../storage/stores-apart.js";
import { Stores } from "../../storage/stores.js";
import { whoAmI } from "../../storage/who.js";
import { type Parsed, UsageError } from "../args.js";
import { checkCwd, type Outcome } from "../commands.js";
import { salvageStore } from "../salvage.js";
import { FILE_OWNERS, type FileOwner, isFileOwner } from "../transfer.js";
import { reviewJournals, rollForward } from "./journals.js";
import { acceptStore, moveAside, repairStore } from "./file-repair.js";
import { unrecordedSkills, verifyDatabaseOwner, verifyStore } from "./checks.js";

/** A file owner named by a doctor flag; anything else is a usage error. */
function flagOwner(flag: string, value: string | undefined): FileOwner | undefined {
	if (value === undefined) return undefined;
	if (isFileOwner(value)) return value;
	throw new UsageError(`\`${flag}\` takes \`global\` or \`cwd\`, got \`${value}\` (the Session owner lives in the pi session file).`, "doctor");
}

/** What doctor says, line by line, and whether every store is healthy. */
export interface Report {
	lines: string[];
	healthy: boolean;
}

/** `state-flow doctor [--dry-run] [--drop-journal <id>]`: exit 0 when every store is healthy after the repairs. */
export async function runDoctor(p: Parsed): Promise<Outcome> {
	checkCwd(p);
	const report: Report = { lines: [], healthy: true };
	const { config, problems } = readConfig(p.agentDir);
	for (const w of problems) report.lines.push(`config: ${w}`);
	const retention = config.retention ?? DEFAULT_RETENTION;
	const placement = placementFor(config, p.cwd);
	const stores = new Stores({
		agentDir: p.agentDir,
		cwd: p.cwd,
		placement,
		who: whoAmI(config.user),
		...(config.retention !== undefined ? { retention } : {}),
	});
	const paths = storePaths(p.agentDir, p.cwd);
	const journalDir = paths.journalDir;
	const seen = seenMarksOf(paths);
	const fileStore = (o: FileOwner, marks?: SeenMarks) =>
		new FileOwnerStore({
			owner: o,
			root: rootOf(paths, o),
			retention,
			gitignore: false,
			...(marks !== undefined ? { seen: marks } : {}),
			...(o === "cwd" ? { refused: paths.project.refused } : {}),
		});
	// Crash repairs (a dead writer's lock, torn bytes) do not depend on this machine's marks: a
	// store behind them is still repaired, then reported by the verification, which checks them.
	const files = { global: fileStore("global"), cwd: fileStore("cwd") };
	// Owners placed in the database are verified there; their local folders are not in use. A
	// refused CWD folder (`Project.refused`) is neither read, repaired, moved nor verified: said once.
	const refused = paths.project.refused;
	const local = FILE_OWNERS.filter((o) => stores.location(o).backend === "file" && !(o === "cwd" && refused !== undefined));

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
	const verified: Partial<Record<FileOwner, OwnerHistory | "none">> = {};
	for (const o of FILE_OWNERS) {
		if (o === "cwd" && refused !== undefined && stores.location(o).backend === "file") {
			report.lines.push(`cwd: ${refused}.`);
			report.healthy = false;
			continue;
		}
		const h = local.includes(o) ? verifyStore(report, fileStore(o, seen)) : await verifyDatabaseOwner(report, stores, placement, o, retention, files[o]);
		if (h !== undefined) verified[o] = h;
	}
	unrecordedSkills(report, verified, p);
	// Each store apart on its own line: doctor is where a user looks for all of them.
	const note = projectNote(paths.project);
	if (note !== undefined) report.lines.push(`cwd: ${note}`);
	const { store, root, supersededBy } = paths.project;
	if (supersededBy !== undefined && stores.location("cwd").backend === "file") {
		report.lines.push(
			`cwd: this project's memory is in ${inline(store)}, inside the work tree, where a git checkout or pull that brings files to that path overwrites it; \`state-flow adopt ${shellWord(inline(root))}\` moves it, with its history, into ${inline(supersededBy)}.`,
		);
	}
	for (const one of storesApart(paths.project, true)) report.lines.push(`cwd: ${apartLine([one])}.`);
	const token = tokenProblemOf(paths.project);
	if (token !== undefined) report.lines.push(`cwd: ${token}.`);
	for (const o of FILE_OWNERS) {
		const h = verified[o];
		if (h === undefined || h === "none") continue;
		for (const why of storedRefProblems(o, h.state)) {
			report.lines.push(
				`${o}: a stored \`$ref\` object is not a reference (kept as an older build wrote it; it refers to nothing, and a patch that touches it is refused until it is fixed): ${why}.`,
			);
		}
	}
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
