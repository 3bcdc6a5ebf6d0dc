/**
 * `/state undo`, `/state redo` and `/state restore` (docs/commands.md), and the browser's commit
 * of a plan: planned, committed and worded by `ops/undo.ts`, as `state-flow` does. What stays
 * here is pi's: histories read through the host (so the footer hears of a damaged owner), the
 * consent model (pi's confirm dialog when a plan reverts someone else's transition; `--yes` is
 * the consent where no dialog can open) and the output as a titled chat message.
 */
import { type ExtensionCommandContext, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { printable } from "../../core/printable.js";
import { OWNERS } from "../../core/types.js";
import type { UndoPlan } from "../../core/undo.js";
import type { LoadedHistories } from "../../core/undo-chain.js";
import { ADD_YES, commitPlan as commitUndo, consentOf, doneLine, planFromWords, planLines, type UndoFront, type UndoVerb } from "../../ops/undo.js";
import { artifactRootsFor } from "../../storage/artifacts/files.js";
import { createArtifactCompiler } from "../../storage/artifacts/compiler.js";
import type { CommitResult } from "../../storage/stores.js";
import { whoAmI } from "../../storage/placement/who.js";
import { loadFor, piText, TEXT_WIDTH } from "./status.js";
import type { StateFlowHost } from "../runtime.js";

/** `/state` serves every owner; an undo or redo without one walks the wanted ones. */
function frontOf(host: StateFlowHost): UndoFront {
	return { owners: OWNERS, walk: host.selection().owners, command: "/state" };
}

async function loadAll(host: StateFlowHost): Promise<LoadedHistories> {
	const histories: LoadedHistories = {};
	for (const owner of OWNERS) histories[owner] = await loadFor(host, owner);
	return histories;
}

/** Commit a plan as the user (`/state` and the browser), through pi's artifact compiler and the roots' gate; what happened in words. */
export async function commitPlan(host: StateFlowHost, plan: UndoPlan, ctx: ExtensionCommandContext): Promise<string> {
	return doneLine(plan, await commitOutcome(host, plan, ctx), piText);
}

async function commitOutcome(host: StateFlowHost, plan: UndoPlan, ctx: ExtensionCommandContext): Promise<CommitResult> {
	const compile = createArtifactCompiler(artifactRootsFor(ctx.cwd, host.options.agentDir, host.project(ctx)), { parseFrontmatter });
	const outcome = await commitUndo(host.requireStores(), plan, frontOf(host), {
		id: host.options.newId(),
		at: host.options.now().toISOString(),
		roots: host.roots.gate,
		compile,
	});
	await host.roots.sync();
	return outcome;
}

/**
 * Run an undo, redo or restore typed as `/state <verb> …`: the plan is shown with the result;
 * one that reverts someone else's transitions says whose and asks first.
 */
export async function runUndoCommand(
	host: StateFlowHost,
	verb: UndoVerb,
	words: readonly string[],
	ctx: ExtensionCommandContext,
	out: {
		show: (title: string, text: string, level?: "info" | "warning") => void;
		usage: (problem: string) => void;
		say: (text: string, level?: "info" | "warning") => void;
	},
): Promise<void> {
	const yes = words.includes("--yes");
	const front = frontOf(host);
	const asked = planFromWords(
		await loadAll(host),
		verb,
		words.filter((w) => w !== "--yes"),
		front,
	);
	if ("usage" in asked) return out.usage(asked.usage);
	if (!asked.plan.ok) return out.say(`State Flow: ${asked.plan.why}`, "warning");
	const plan = asked.plan.value;
	const described = planLines(plan, piText, host.options.now(), front);
	const consent = consentOf(plan, whoAmI(host.config.user));
	if (consent !== undefined && !yes) {
		if (!ctx.hasUI) return out.show(verb, [...described, ...piText.wrapWords(consent.reason, TEXT_WIDTH), ADD_YES].join("\n"), "warning");
		const question = [...described, "", `${consent.reason} Go ahead?`].join("\n");
		if (!(await ctx.ui.confirm(`State Flow: ${consent.title}`, printable(question)))) {
			return out.say(`State Flow: ${verb} cancelled; nothing was written.`);
		}
	}
	const outcome = await commitOutcome(host, plan, ctx);
	out.show(verb, [doneLine(plan, outcome, piText), ...(outcome.noop ? [] : described)].join("\n"));
}
