/**
 * `state-flow undo`, `redo` and `restore` over the file and database owners: the plans of
 * `/state undo|redo|restore` (core/undo), committed through the same path only while no owner
 * moved since the plan. What is reverted is printed with whose it was; a transition made by
 * another user or machine is reverted only with `--yes` (a command line cannot be asked).
 */
import { spellId } from "../core/printable.js";
import { randomUUID } from "node:crypto";
import { fail, isStateError } from "../core/errors.js";
import { formatLocator, tryParseLocator } from "../core/locator.js";
import {
	idUndoPlan,
	type LoadedHistories,
	latestRedoPlan,
	latestUndoPlan,
	movedSince,
	othersIn,
	type RestoreScope,
	resolveId,
	restorePlan,
	reversalFor,
	type UndoPlan,
} from "../core/undo.js";
import { artifactRootsFor } from "../storage/artifacts/files.js";
import { createArtifactCompiler } from "../storage/artifacts/compiler.js";
import { formatWho, whoAmI } from "../storage/placement/who.js";
import { type Parsed, UsageError } from "./args.js";
import { lines, ok, type Outcome, openStores } from "./commands.js";
import { frontmatterParser } from "../ops/frontmatter.js";
import { transitionLine } from "./format.js";
import { uniquePrefixes } from "../ops/history-text.js";
import { IMPORT_ROOTS } from "./transfer.js";
import { SHARED_OWNERS, isSharedOwner } from "../core/types.js";

/** Transitions printed before the rest is counted. */
const MAX_LISTED = 8;

/** The plan the command line asks for. */
function planOf(p: Parsed, histories: LoadedHistories): ReturnType<typeof latestUndoPlan> {
	const asked = p.positionals[0];
	if (p.command === "restore") {
		const found = resolveId(histories, asked as string, `no retained transition's id starts with \`${asked}\`; \`state-flow history\` lists them.`);
		if (!found.ok) return found;
		let scope: RestoreScope | undefined;
		if (p.path !== undefined) {
			const loc = tryParseLocator(p.path, "canonical");
			if (loc === undefined || loc.kind !== "state" || loc.scope === null || loc.scope === "effective" || loc.offset !== 0 || !isSharedOwner(loc.scope)) {
				throw new UsageError(
					`\`--path ${p.path}\` is no owner or locator to restore; write \`global\`, \`cwd\` or a path in one (\`cwd.tactics.next\`).`,
					"restore",
				);
			}
			scope = loc.plane === null ? { owner: loc.scope } : { owner: loc.scope, section: loc.plane, path: loc.path, locator: formatLocator(loc) };
		}
		return restorePlan(histories, found.value.id, scope);
	}
	if (asked === undefined) return p.command === "redo" ? latestRedoPlan(histories, SHARED_OWNERS, false) : latestUndoPlan(histories, SHARED_OWNERS, false);
	if (isSharedOwner(asked)) return p.command === "redo" ? latestRedoPlan(histories, [asked], true) : latestUndoPlan(histories, [asked], true);
	if (p.command === "redo")
		throw new UsageError(`unknown owner \`${asked}\`: use \`global\` or \`cwd\` (an undo is redone by undoing it: \`state-flow undo <id>\`).`, "redo");
	return idUndoPlan(histories, asked, "global, cwd", "`state-flow history`");
}

/** What a plan reverts, one line each as `history` prints it, led by its owner. */
function describe(plan: UndoPlan): string[] {
	const head =
		plan.op === "restore"
			? `It brings ${plan.path ?? plan.owners.join(" and ")} back to how it was after ${spellId(plan.id)}, reverting ${plan.reverts.length} transition${plan.reverts.length === 1 ? "" : "s"}:`
			: plan.op === "redo"
				? `It applies again what ${spellId(plan.id)} undid:`
				: "It reverts:";
	const out = [head];
	const listed = plan.reverts.slice(0, MAX_LISTED);
	const short = uniquePrefixes(
		listed.map((r) => r.record.id),
		8,
	);
	const now = new Date();
	for (const { owner, record } of listed) out.push(transitionLine(record, short.get(record.id) ?? record.id, { now, full: false }, `${owner} `));
	if (plan.reverts.length > MAX_LISTED) out.push(`… and ${plan.reverts.length - MAX_LISTED} more (state-flow history lists them)`);
	return out;
}

/** `state-flow undo [global|cwd|<id>]`, `redo [global|cwd]`, `restore <id> [--path]`. */
export async function runUndo(p: Parsed): Promise<Outcome> {
	const asked = p.positionals[0];
	const verb = p.command as "undo" | "redo" | "restore";
	if (asked === "session" || p.path?.startsWith("session")) {
		throw new UsageError(`Session state lives in pi's session file: use \`/state ${verb} session\` inside pi.`, p.command);
	}
	const { stores, warnings, config } = openStores(p);
	// An unreachable or damaged owner is planned around (a plan that needs it is refused, naming why).
	const histories: LoadedHistories = {};
	const loaded = await stores.loadEach(SHARED_OWNERS);
	SHARED_OWNERS.forEach((o, i) => {
		const got = loaded[i] as (typeof loaded)[number];
		if ("history" in got) histories[o] = { ok: true, value: got.history };
		else if (isStateError(got.error) && (got.error.code === "unavailable" || got.error.code === "corrupt"))
			histories[o] = { ok: false, why: got.error.message };
		else throw got.error;
	});
	const planned = planOf(p, histories);
	if (!planned.ok) return { stdout: "", stderr: lines([...warnings, `state-flow: ${planned.why} Nothing was written.`]), code: 1 };
	const plan = planned.value;
	const others = othersIn(plan, whoAmI(config.user));
	if (others.length > 0 && !p.yes) {
		const whose = [...new Set(others.map((o) => formatWho(o.record.who as NonNullable<typeof o.record.who>)))].join(", ");
		return {
			stdout: "",
			stderr: lines([...warnings, ...describe(plan), `state-flow: this ${verb} reverts changes made by ${whose}; nothing was written. Add --yes to go ahead.`]),
			code: 1,
		};
	}
	// Exact deltas (no cascades); artifacts go through the compiler, so a compiled Skill follows the state.
	const compile = createArtifactCompiler(artifactRootsFor(p.cwd, p.agentDir), { parseFrontmatter: await frontmatterParser(plan.patch) });
	const result = await stores.commit(plan.patch, {
		by: { kind: "command", command: `state-flow ${verb} ${plan.owners.join(",")}`, reverts: reversalFor(plan) },
		id: randomUUID(),
		at: new Date().toISOString(),
		exact: true,
		roots: IMPORT_ROOTS,
		prepare: (staged, now) => {
			const moved = movedSince(plan, now);
			if (moved !== undefined) fail("busy", `${moved}; nothing was written. Run the command again to see what it reverts now.`);
			return compile(staged, now);
		},
	});
	const owners = plan.owners.join(" and ");
	if (result.noop)
		return ok(`Transition ${spellId(plan.id)} is already ${verb === "restore" ? "restored" : "undone"}; nothing was written.\n`, lines(warnings));
	const done =
		verb === "restore"
			? `Restored ${plan.path ?? owners} to after ${spellId(plan.id)} as transition ${result.transitionId}.`
			: verb === "redo" || plan.op === "redo"
				? `Redid what ${spellId(plan.id)} undid (${owners}) as transition ${result.transitionId}.`
				: `Reverted ${spellId(plan.id)} (${owners}) as transition ${result.transitionId}.`;
	return ok(`${[done, ...describe(plan)].join("\n")}\n`, lines(warnings));
}
