/**
 * The two tools. `read_state` has one grammar; `patch_state` has a flat and a scoped
 * declaration and is re-registered (with a fresh schema object) only when the shape changes.
 * `execute` admits the call against its receipt BEFORE touching the arguments, then works
 * only with the captured wanted owners; the commit re-checks admission and the signal.
 */
import { type ExtensionContext, parseFrontmatter, type ToolDefinition } from "@mariozechner/pi-coding-agent";
import { fail } from "../core/errors.js";
import { isPlainObject, setOwn } from "../core/json.js";
import { emptyState } from "../core/state.js";
import type { Json, Owner, OwnerHistory, OwnerState, TransitionRecord } from "../core/types.js";
import { modelLocator } from "../model/head-elide.js";
import { presentLocator, toCanonicalPatch, toReadRequest } from "../model/interface.js";
import type { Locator } from "../core/locator.js";
import { concurrentNotice } from "../model/notices.js";
import { type ArtifactRoots, createArtifactCompiler, type PreparedEffects, staleArtifacts } from "../storage/artifacts.js";
import { MAX_STALE_HINTS, patchResult, readResult, type StaleHint, staleHintLines } from "../model/results.js";
import { PATCH_LABEL, READ_LABEL, flatPatchSchema, patchDescription, readDescription, readSchema, scopedPatchSchema } from "../model/schemas.js";
import { evaluate } from "../core/query.js";
import { renderPatchCall, renderPatchResult, renderReadCall, renderReadResult } from "./render.js";
import type { Receipt } from "./admission.js";
import type { StateFlowHost } from "./runtime.js";
import type { Shape } from "./selection.js";

/** Admit a call: the receipt of the request that issued it must match the present. */
function admit(host: StateFlowHost, tool: string, toolCallId: string, ctx: ExtensionContext): Receipt {
	host.bind(ctx);
	const sel = host.selection();
	return host.admission.admit(tool, toolCallId, { mode: sel.mode, wanted: sel.owners, identity: host.identity(ctx) });
}

function checkSignal(signal: AbortSignal | undefined): void {
	if (signal?.aborted) fail("aborted", "The call was cancelled before it committed; nothing was written.");
}

/** Shared owners changed by other processes since this run's head (docs/spec.md §6.4), as result lines. */
function notices(host: StateFlowHost, wanted: readonly Owner[]): string[] {
	const run = host.run;
	if (!run) return [];
	try {
		const text = concurrentNotice({ wanted, histories: host.histories(wanted), seqAtHead: run.seqAtHead, ownSeqs: run.ownSeqs });
		return text === undefined ? [] : [text];
	} catch {
		// A notice is a courtesy; a store that cannot be read now is reported by the call itself.
		return [];
	}
}

/** Artifacts whose source one check (the head, or one tool call) looks at, at most; larger sets are walked over several checks. */
export const STALE_CHECKS_PER_CALL = 32;

/**
 * Check the next `STALE_CHECKS_PER_CALL` tracked artifacts of `wanted` for source changes,
 * continuing where the previous check (head or tool call) stopped, so a large artifacts plane
 * is walked over several checks instead of every file being read each time. `unchecked`
 * counts, per owner, the artifacts this check did not look at.
 */
export function checkStaleWindow(
	host: StateFlowHost,
	wanted: readonly Owner[],
	histories: Partial<Record<Owner, OwnerHistory>>,
	roots: ArtifactRoots,
): { stale: StaleHint[]; unchecked: Partial<Record<Owner, number>> } {
	const all: Array<{ owner: Owner; key: string }> = [];
	const unchecked: Partial<Record<Owner, number>> = {};
	for (const owner of wanted) {
		const keys = Object.keys(histories[owner]?.state.artifacts ?? {});
		for (const key of keys) all.push({ owner, key });
		if (keys.length > 0) unchecked[owner] = keys.length;
	}
	if (all.length === 0) return { stale: [], unchecked };
	const count = Math.min(STALE_CHECKS_PER_CALL, all.length);
	const start = host.staleCursor % all.length;
	host.staleCursor = start + count;
	const picked = new Map<Owner, OwnerState>();
	for (let i = 0; i < count; i++) {
		const { owner, key } = all[(start + i) % all.length] as { owner: Owner; key: string };
		const sub = picked.get(owner) ?? emptyState();
		setOwn(sub.artifacts, key, (histories[owner] as OwnerHistory).state.artifacts[key] as Json);
		picked.set(owner, sub);
		unchecked[owner] = (unchecked[owner] ?? 0) - 1;
	}
	const stale = [...picked].flatMap(([owner, sub]) => staleArtifacts(owner, sub, roots));
	return { stale, unchecked };
}

/** Identity of one stale finding: the same file, recorded value and note is hinted once per run. */
export function staleSignature(s: StaleHint, state: OwnerState | undefined): string {
	const v = state?.artifacts[s.key];
	const rec = isPlainObject(v) ? [v.fingerprint ?? null, v.compiledHash ?? null, v.sourceHash ?? null] : null;
	return JSON.stringify([s.owner, s.key, s.note, rec]);
}

/** How the head names a stale artifact (`artifacts["a.ts"]: file changed…`), to tell what it already showed. */
export function staleMention(s: StaleHint, wanted: readonly Owner[]): string {
	return `${modelLocator(wanted.length === 1 ? undefined : s.owner, "artifacts", [s.key])}: ${s.note}`;
}

/**
 * Source-change hints for a tool result (docs/spec.md §9): tracked artifacts of the wanted owners whose
 * file changed since it was recorded and that this run has not shown yet. Bounded by
 * `checkStaleWindow`.
 */
function staleHints(host: StateFlowHost, wanted: readonly Owner[], ctx: ExtensionContext): string[] {
	const run = host.run;
	if (!run) return [];
	try {
		const histories = host.histories(wanted);
		const { stale } = checkStaleWindow(host, wanted, histories, { cwd: ctx.cwd, agentDir: host.options.agentDir });
		const fresh: Array<StaleHint & { sig: string }> = [];
		for (const s of stale) {
			const sig = staleSignature(s, histories[s.owner]?.state);
			if (!run.hinted.has(sig)) fresh.push({ ...s, sig });
		}
		// Only what a line names counts as shown; the counted rest is named by later calls.
		for (const s of fresh.slice(0, MAX_STALE_HINTS)) run.hinted.add(s.sig);
		return staleHintLines(fresh, wanted);
	} catch {
		// A hint is a courtesy; a store that cannot be read now is reported by the call itself.
		return [];
	}
}

/** Register `read_state` (once; its parameters never change, only the description does). */
export function registerReadTool(host: StateFlowHost, shape: Shape): void {
	const tool: ToolDefinition = {
		name: "read_state",
		label: READ_LABEL,
		description: readDescription(shape),
		parameters: readSchema(),
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			const receipt = admit(host, "read_state", toolCallId, ctx);
			checkSignal(signal);
			const wanted = receipt.wanted;
			const roots = host.declaredRootNames();
			const request = toReadRequest(params, wanted, roots);
			const stores = host.requireStores();
			const histories = host.histories(wanted);
			const response = wanted.includes("session") ? stores.response() : undefined;
			// Errors spell locators the way the model writes them (relative for a sole owner).
			const view = { wanted, histories, roots, present: (loc: Locator) => presentLocator(loc, wanted), ...(response !== undefined ? { response } : {}) };
			const results = evaluate(view, request.locators, request.projection);
			// The locator texts come from the detached request: the caller's arguments are read once.
			const texts = request.texts;
			return readResult({
				items: results.map((r, i) => ({
					locator: texts[i] ?? r.locator,
					canonical: r.locator,
					value: r.value,
					...(r.transitionId !== undefined ? { transitionId: r.transitionId } : {}),
				})),
				batch: request.batch,
				projection: request.projection,
				wanted,
				notices: [...notices(host, wanted), ...staleHints(host, wanted, ctx)],
			});
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
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			const receipt = admit(host, "patch_state", toolCallId, ctx);
			checkSignal(signal);
			const wanted: Owner[] = [...receipt.wanted];
			const patch = toCanonicalPatch(params, wanted, host.declaredRootNames());
			const stores = host.requireStores();
			const compile = createArtifactCompiler({ cwd: ctx.cwd, agentDir: host.options.agentDir }, { parseFrontmatter });
			let effects: PreparedEffects | undefined;
			const outcome = await stores.commit(patch, {
				by: { kind: "tool", sessionId: receipt.identity.sessionId, toolCallId },
				id: host.options.newId(),
				at: host.options.now().toISOString(),
				...(signal ? { signal } : {}),
				roots: host.roots.gate,
				// Right before the durable write: the selection may have moved while we waited for a lock.
				check: () => {
					admit(host, "patch_state", toolCallId, ctx);
					checkSignal(signal);
				},
				prepare: (p, histories) => {
					effects = compile(p, histories);
					return effects;
				},
			});
			const artifacts = effects?.artifacts ?? [];
			host.roots.sync();
			if (!outcome.noop && host.run) {
				host.run.committed = true;
				for (const [owner, record] of Object.entries(outcome.records) as Array<[Owner, TransitionRecord]>) {
					(host.run.ownSeqs[owner] ??= new Set()).add(record.seq);
				}
			}
			const lines = [...(effects?.notes ?? []), ...notices(host, wanted), ...staleHints(host, wanted, ctx)];
			return patchResult({ transitionId: outcome.noop ? null : outcome.transitionId, report: outcome.report, wanted, artifacts, notices: lines });
		},
		renderCall: (args, theme, context) => renderPatchCall(args, theme, context),
		renderResult: (result, options, theme, context) => renderPatchResult(result, options, theme, context),
	};
	host.pi.registerTool(tool);
	host.registeredShape = shape;
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
	host.declaredRoots = roots;
	// With a host allowlist, pi's registry refresh re-activates every allowed tool: put back what was active.
	const active = host.pi.getActiveTools();
	registerReadTool(host, shape);
	registerPatchTool(host, shape);
	const now = host.pi.getActiveTools();
	if (now.length !== active.length || now.some((n) => !active.includes(n))) host.pi.setActiveTools(active);
	return true;
}
