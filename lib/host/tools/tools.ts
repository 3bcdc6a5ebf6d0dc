/**
 * The two tools. `read_state` has one grammar; `patch_state` has a flat and a scoped
 * declaration and is re-registered (with a fresh schema object) only when the shape changes.
 * `execute` admits the call against its receipt BEFORE touching the arguments, then works
 * only with the captured wanted owners; the commit re-checks admission and the signal.
 */
import type { ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { fail } from "../../core/errors.js";
import { preparePatchArguments, prepareReadArguments } from "./refusals.js";
import { PATCH_LABEL, READ_LABEL, flatPatchSchema, patchDescription, readDescription, readSchema, scopedPatchSchema } from "../../model/schemas.js";
import { readCall } from "../../surface/read.js";
import { patchCall } from "../../surface/patch.js";
import { renderPatchCall, renderPatchResult, renderReadCall, renderReadResult } from "./render.js";
import type { Receipt } from "../session/admission.js";
import type { StateFlowHost } from "../runtime.js";
import type { Shape } from "../session/selection.js";
import { surfaceOf } from "./surface.js";

/** Admit a call: the receipt of the request that issued it must match the present. */
function admit(host: StateFlowHost, tool: string, toolCallId: string, ctx: ExtensionContext): Receipt {
	const { selection, identity } = host.bind(ctx);
	return host.admission.admit(tool, toolCallId, { mode: selection.mode, wanted: selection.owners, identity });
}

function checkSignal(signal: AbortSignal | undefined): void {
	if (signal?.aborted) fail("aborted", "The call was cancelled before it committed; nothing was written.");
}

/** Register `read_state` (once; its parameters never change, only the description does). */
export function registerReadTool(host: StateFlowHost, shape: Shape): void {
	const tool: ToolDefinition = {
		name: "read_state",
		label: READ_LABEL,
		description: readDescription(shape),
		parameters: readSchema(),
		prepareArguments: (args) => prepareReadArguments(host, args),
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			const receipt = admit(host, "read_state", toolCallId, ctx);
			checkSignal(signal);
			return (await readCall(surfaceOf(host, ctx), params, receipt.wanted)).result;
		},
		renderCall: (args, theme, context) => renderReadCall(args, theme, context),
		renderResult: (result, options, theme, context) => renderReadResult(result, options, theme, context),
	};
	host.pi.registerTool(tool);
}

/** Register the `patch_state` declaration for a shape. Every call builds a fresh schema. */
export function registerPatchTool(host: StateFlowHost, shape: Shape): void {
	const tool: ToolDefinition = {
		name: "patch_state",
		label: PATCH_LABEL,
		description: patchDescription(shape, host.declaredRoots),
		// Calls of one answer commit in the order the model wrote them.
		executionMode: "sequential",
		parameters: shape === "flat" ? flatPatchSchema(host.declaredRoots) : scopedPatchSchema(),
		// Arguments outside the declaration get State Flow's refusal, not pi's validator output (issue 26).
		prepareArguments: (args) => preparePatchArguments(host, shape, args),
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			const receipt = admit(host, "patch_state", toolCallId, ctx);
			checkSignal(signal);
			const answered = await patchCall(surfaceOf(host, ctx), params, {
				wanted: [...receipt.wanted],
				by: { kind: "tool", sessionId: receipt.identity.sessionId, toolCallId },
				...(signal ? { signal } : {}),
				// Right before the durable write: the selection may have moved while we waited for a lock.
				check: () => {
					admit(host, "patch_state", toolCallId, ctx);
				},
			});
			return answered.result;
		},
		renderCall: (args, theme, context) => renderPatchCall(args, theme, context),
		renderResult: (result, options, theme, context) => renderPatchResult(result, options, theme, context),
	};
	host.pi.registerTool(tool);
	host.declared(shape);
}

/**
 * Register both tools again only when the shape or the set of registered roots changed
 * (docs/spec.md §5, §12); `read_state` for its description. Called only where a new
 * declaration may start (session start, before a prompt's run), so a root that registers
 * mid-run joins from the next prompt.
 */
export function ensureShape(host: StateFlowHost, shape: Shape = host.shape()): boolean {
	const roots = host.roots.declarations();
	if (host.registeredShape === shape && JSON.stringify(roots) === JSON.stringify(host.declaredRoots)) return false;
	host.declareRoots(roots);
	// With a host allowlist, pi's registry refresh re-activates every allowed tool: put back what was active.
	const active = host.pi.getActiveTools();
	registerReadTool(host, shape);
	registerPatchTool(host, shape);
	const now = host.pi.getActiveTools();
	if (now.length !== active.length || now.some((n) => !active.includes(n))) host.pi.setActiveTools(active);
	return true;
}
