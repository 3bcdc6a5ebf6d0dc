/**
 * `/state undo`, `/state redo` and `/state restore` (docs/commands.md): planned by core/undo from
 * every owner's history, committed through the normal commit path only while no owner moved
 * since the plan. When a plan reverts someone else's transition (another user or machine), it
 * says whose and asks (pi's confirm dialog; `--yes` is the consent where no dialog can open).
 */
import { type ExtensionCommandContext, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { fail } from "../../core/errors.js";
import { formatLocator, tryParseLocator } from "../../core/locator.js";
import { patchLeaves } from "../../core/merge.js";
import { printable, spellId } from "../../core/printable.js";
import { OWNERS, type Owner, type Result, isOwner } from "../../core/types.js";
import {
	type LoadedHistories,
	idUndoPlan,
	latestRedoPlan,
	latestUndoPlan,
	movedSince,
	othersIn,
	type RestoreScope,
	resolveId,
	restorePlan,
	reversalFor,
	type UndoPlan,
} from "../../core/undo.js";
import { artifactRootsFor } from "../../storage/artifacts/files.js";
import { createArtifactCompiler } from "../../storage/artifacts/compiler.js";
import { whoAmI } from "../../storage/placement/who.js";
import { clipText, fitList, loadFor, TEXT_WIDTH, transitionLine } from "./status.js";
import type { StateFlowHost } from "../runtime.js";

/** A transition id as listed: its first 8 characters, spelled (`spellId`): a stored id never ends a line. */
const short = (id: string): string => spellId(id.slice(0, 8));

/** Reverted transitions listed before the rest is counted. */
const MAX_LISTED = 8;

async function loadAll(host: StateFlowHost): Promise<LoadedHistories> {
	const histories: LoadedHistories = {};
	for (const owner of OWNERS) histories[owner] = await loadFor(host, owner);
	return histories;
}

/** The owner-qualified keys a plan changes, as locators: `cwd.tactics.a`. */
function changedLocators(plan: UndoPlan): string[] {
	const out: string[] = [];
	for (const owner of plan.owners) {
		for (const leaf of patchLeaves(plan.patch[owner] ?? {})) {
			out.push(formatLocator({ kind: "state", scope: owner, offset: 0, plane: leaf.plane, path: leaf.path.slice(0, 1) }));
		}
	}
	return [...new Set(out)];
}

/** What a plan does, in words and the transitions it reverts (one line each, at most MAX_LISTED). */
export function describePlan(plan: UndoPlan, now: Date): string[] {
	const head =
		plan.op === "restore"
			? `restore ${plan.path ?? plan.owners.join("+")} to how it was after ${short(plan.id)}; it reverts ${plan.reverts.length} transition${plan.reverts.length === 1 ? "" : "s"}:`
			: plan.op === "redo"
				? `redo: apply again what ${short(plan.id)} undid, in ${plan.owners.join("+")}:`
				: `undo ${short(plan.id)} in ${plan.owners.join("+")}:`;
	const lines = [head];
	for (const { owner, record } of plan.reverts.slice(0, MAX_LISTED)) {
		lines.push(transitionLine(record, short(record.id), { now, full: false }, `  ${owner} `));
	}
	if (plan.reverts.length > MAX_LISTED) lines.push(`  … and ${plan.reverts.length - MAX_LISTED} more`);
	lines.push(clipText(`changes: ${fitList(changedLocators(plan), TEXT_WIDTH - 9)}`, TEXT_WIDTH));
	return lines;
}

/** The `/state` words of an undo, redo or restore: the plan, or a usage problem. */
export type Asked = { plan: Result<UndoPlan> } | { usage: string };

/** Parse `undo [owner|id]`, `redo [owner]`, `restore <id> [owner|locator]` (without `--yes`) and plan it. */
export async function planFromWords(host: StateFlowHost, verb: "undo" | "redo" | "restore", words: readonly string[]): Promise<Asked> {
	const sel = host.selection();
	const histories = await loadAll(host);
	const [first, second, ...more] = words;
	if (verb === "undo" || verb === "redo") {
		if (second !== undefined) return { usage: `\`${verb}\` takes at most one owner${verb === "undo" ? " or id" : ""}.` };
		if (first !== undefined && !isOwner(first)) {
			if (verb === "redo") return { usage: `unknown owner \`${first}\`: use global, cwd or session (an undo is redone by undoing it: \`/state undo <id>\`).` };
			return { plan: idUndoPlan(histories, first, "global, cwd, session", "/state history") };
		}
		const owners: Owner[] = first !== undefined ? [first as Owner] : sel.owners;
		return { plan: verb === "undo" ? latestUndoPlan(histories, owners, first !== undefined) : latestRedoPlan(histories, owners, first !== undefined) };
	}
	if (first === undefined || more.length > 0)
		return { usage: "`restore` needs a transition id and at most one owner or locator, e.g. `/state restore 3f2a cwd.tactics`." };
	const found = resolveId(histories, first, `no retained transition's id starts with \`${first}\`; /state history lists them.`);
	if (!found.ok) return { plan: found };
	let scope: RestoreScope | undefined;
	if (second !== undefined) {
		const loc = tryParseLocator(second, "canonical");
		if (loc === undefined || loc.kind !== "state" || loc.scope === null || loc.scope === "effective" || loc.offset !== 0) {
			return { usage: `\`${second}\` is no owner or locator to restore; write an owner (\`cwd\`) or a path in one (\`cwd.tactics.next\`).` };
		}
		scope = loc.plane === null ? { owner: loc.scope } : { owner: loc.scope, section: loc.plane, path: loc.path, locator: formatLocator({ ...loc, offset: 0 }) };
	}
	return { plan: restorePlan(histories, found.value.id, scope) };
}

/**
 * Commit a plan, recorded as a user command naming what it reverted (`by.reverts`); refused,
 * writing nothing, when an owner moved since the plan. Returns what happened in words.
 */
export async function commitPlan(host: StateFlowHost, plan: UndoPlan, ctx: ExtensionCommandContext): Promise<string> {
	// Exact deltas: no cascades; artifacts go through the compiler so a compiled Skill follows the state.
	const compile = createArtifactCompiler(artifactRootsFor(ctx.cwd, host.options.agentDir, host.project(ctx)), { parseFrontmatter });
	const outcome = await host.requireStores().commit(plan.patch, {
		by: { kind: "command", command: `/state ${plan.op} ${plan.owners.join(",")}`, reverts: reversalFor(plan) },
		id: host.options.newId(),
		at: host.options.now().toISOString(),
		exact: true,
		roots: host.roots.gate,
		prepare: (p, histories) => {
			const moved = movedSince(plan, histories);
			if (moved !== undefined) fail("busy", `${moved}; nothing was written. Run the command again to see what it reverts now.`);
			return compile(p, histories);
		},
	});
	await host.roots.sync();
	if (outcome.noop) return `transition ${short(plan.id)} is already ${plan.op === "restore" ? "restored" : "undone"}; nothing changed.`;
	const as = `as transition ${short(outcome.transitionId)}`;
	if (plan.op === "restore") return `restored ${plan.path ?? plan.owners.join("+")} to after ${short(plan.id)} ${as} (${plan.reverts.length} reverted).`;
	if (plan.op === "redo") return `redid what ${short(plan.id)} undid (${plan.owners.join("+")}) ${as}.`;
	return `reverted ${short(plan.id)} (${plan.owners.join("+")}) ${as}.`;
}

/**
 * Run an undo, redo or restore typed as `/state <verb> …`: the plan is shown with the result;
 * someone else's transitions among those reverted are named and asked about first.
 */
export async function runUndoCommand(
	host: StateFlowHost,
	verb: "undo" | "redo" | "restore",
	words: readonly string[],
	ctx: ExtensionCommandContext,
	out: {
		show: (title: string, text: string, level?: "info" | "warning") => void;
		usage: (problem: string) => void;
		say: (text: string, level?: "info" | "warning") => void;
	},
): Promise<void> {
	const yes = words.includes("--yes");
	const asked = await planFromWords(
		host,
		verb,
		words.filter((w) => w !== "--yes"),
	);
	if ("usage" in asked) return out.usage(asked.usage);
	if (!asked.plan.ok) return out.say(`State Flow: ${asked.plan.why}`, "warning");
	const plan = asked.plan.value;
	const now = host.options.now();
	const described = describePlan(plan, now);
	const others = othersIn(plan, whoAmI(host.config.user));
	if (others.length > 0 && !yes) {
		const whose = [...new Set(others.map((o) => `${spellId(String(o.record.who?.user))}@${spellId(String(o.record.who?.host))}`))].join(", ");
		if (!ctx.hasUI) {
			return out.show(
				verb,
				[...described, `This reverts changes made by ${whose}; nothing changed. Add --yes to the command to go ahead.`].join("\n"),
				"warning",
			);
		}
		const question = [...described, "", `This reverts changes made by ${whose}. Go ahead?`].join("\n");
		if (!(await ctx.ui.confirm(`State Flow: ${verb} someone else's change?`, printable(question)))) {
			return out.say(`State Flow: ${verb} cancelled; nothing changed.`);
		}
	}
	const done = await commitPlan(host, plan, ctx);
	out.show(verb, [done, ...described.map((l) => clipText(l, TEXT_WIDTH))].join("\n"));
}
