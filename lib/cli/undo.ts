/**
 * `state-flow undo`, `redo` and `restore` over the file and database owners: planned, committed
 * and worded by `ops/undo.ts`, as `/state undo|redo|restore` does in pi. What stays here is the
 * command line's: its arguments (`restore <id> --path <where>`), its consent (running it is the
 * consent for one's own transitions; someone else's need `--yes`, a command line cannot be
 * asked) and its output on stdout and stderr (laid out in 80 columns by `main.ts`, as all is).
 */
import { randomUUID } from "node:crypto";
import { SHARED_OWNERS } from "../core/types.js";
import { ADD_YES, commitPlan, consentOf, doneLine, loadHistories, planFromWords, planLines, type UndoFront, type UndoVerb } from "../ops/undo.js";
import { artifactRootsFor } from "../storage/artifacts/files.js";
import { createArtifactCompiler } from "../storage/artifacts/compiler.js";
import { whoAmI } from "../storage/placement/who.js";
import { type Parsed, UsageError } from "./args.js";
import { lines, ok, type Outcome, openStores } from "./commands.js";
import { frontmatterParser } from "../ops/frontmatter.js";
import { cliText } from "./format.js";
import { IMPORT_ROOTS } from "./transfer.js";

/** The command line serves Global and CWD (Session lives in pi's session file) and walks both. */
const FRONT: UndoFront = { owners: SHARED_OWNERS, walk: SHARED_OWNERS, command: "state-flow" };

/** `state-flow undo [global|cwd|<id>]`, `redo [global|cwd]`, `restore <id> [--path]`. */
export async function runUndo(p: Parsed): Promise<Outcome> {
	const verb = p.command as UndoVerb;
	const asked = p.positionals[0];
	if (asked === "session" || p.path?.startsWith("session")) {
		throw new UsageError(`Session state lives in pi's session file: use \`/state ${verb} session\` inside pi.`, p.command);
	}
	const { stores, warnings, config } = openStores(p);
	const words = [...p.positionals, ...(p.path !== undefined ? [p.path] : [])];
	const planned = planFromWords(await loadHistories(stores, SHARED_OWNERS), verb, words, FRONT);
	if ("usage" in planned) throw new UsageError(planned.usage, p.command);
	if (!planned.plan.ok) return { stdout: "", stderr: lines([...warnings, `state-flow: ${planned.plan.why} Nothing was written.`]), code: 1 };
	const plan = planned.plan.value;
	const now = new Date();
	const described = planLines(plan, cliText, now, FRONT);
	const consent = consentOf(plan, whoAmI(config.user));
	if (consent !== undefined && !p.yes) {
		return { stdout: "", stderr: lines([...warnings, ...described, `state-flow: ${consent.reason}`, ADD_YES]), code: 1 };
	}
	const compile = createArtifactCompiler(artifactRootsFor(p.cwd, p.agentDir), { parseFrontmatter: await frontmatterParser(plan.patch) });
	const outcome = await commitPlan(stores, plan, FRONT, { id: randomUUID(), at: now.toISOString(), roots: IMPORT_ROOTS, compile });
	return ok(lines([doneLine(plan, outcome, cliText), ...(outcome.noop ? [] : described)]), lines(warnings));
}
