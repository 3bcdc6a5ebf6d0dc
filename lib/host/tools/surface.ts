/**
 * pi's side of the model surface (`surface/surface.ts`): the engine reads and commits through
 * the session's open stores, with the roots the declaration named, pi's own frontmatter parser,
 * the branch read before the prompt, the run's notices and hints, and the footer's health.
 * Built per call from pi's context: a handful of closures, no work of its own.
 */
import { type ExtensionContext, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import type { Surface } from "../../surface/surface.js";
import type { StateFlowHost } from "../runtime.js";
import { canonicalPatchOf } from "./refusals.js";

export function surfaceOf(host: StateFlowHost, ctx: ExtensionContext): Surface {
	return {
		cwd: ctx.cwd,
		agentDir: host.options.agentDir,
		project: () => host.project(ctx),
		stores: () => host.requireStores(),
		available: (owners) => host.available(owners),
		rootNames: () => host.declaredRootNames(),
		rootGate: (sole) => host.roots.gateFor(sole),
		toCanonical: (params, wanted, states) => canonicalPatchOf(host, params, wanted, states),
		frontmatter: () => parseFrontmatter,
		branch: () => host.git.branch,
		gitView: (recorded) => host.git.refresh(ctx.cwd, recorded),
		newId: () => host.options.newId(),
		now: () => host.options.now(),
		runs: host.runs,
		committed: async (outcome) => {
			await host.roots.sync();
			if (!outcome.noop) host.runs.recordOwnWrite(outcome.records);
		},
	};
}
