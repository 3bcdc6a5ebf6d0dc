/**
 * The two tools. `read_state` has one grammar; `patch_state` has a flat and a scoped
 * declaration and is re-registered (with a fresh schema object) only when the shape changes.
 * `execute` admits the call against its receipt BEFORE touching the arguments, then works
 * only with the captured wanted owners; the commit re-checks admission and the signal.
 */
import { type ExtensionContext, parseFrontmatter, type ToolDefinition } from "@mariozechner/pi-coding-agent";
import { fail } from "../../core/errors.js";
import { isEmptyObject } from "../../core/json.js";
import type { Owner, OwnerHistory, OwnerState, StaleArtifact } from "../../core/types.js";
import { presentLocator, soleOwner, type StateOf, toReadRequest } from "../../model/interface.js";
import { canonicalPatchOf, preparePatchArguments, prepareReadArguments } from "./refusals.js";
import { formatLocator, type Locator } from "../../core/locator.js";
import { searchState } from "../../core/search.js";
import { MAX_SEARCH_MATCHES, searchResult } from "../../model/search-result.js";
import { concurrentNotice } from "../../model/notices.js";
import { artifactRootsFor } from "../../storage/artifacts/files.js";
import { keyLensFor } from "../../storage/project/project.js";
import { checkReadSpelling, patchFromModel, staleToModel, viewHistories, viewState } from "../../core/artifact-keys.js";
import { createArtifactCompiler, type PreparedEffects } from "../../storage/artifacts/compiler.js";
import { stampIntentBranches } from "../../core/intent-branch.js";
import { MAX_STALE_HINTS, patchResult, readResult, staleHintLines } from "../../model/results.js";
import { PATCH_LABEL, READ_LABEL, flatPatchSchema, patchDescription, readDescription, readSchema, scopedPatchSchema } from "../../model/schemas.js";
import { evaluate } from "../../core/query.js";
import { renderPatchCall, renderPatchResult, renderReadCall, renderReadResult } from "./render.js";
import type { Receipt } from "../session/admission.js";
import type { StateFlowHost } from "../runtime.js";
import type { Shape } from "../session/selection.js";
import { checkStaleWindow, staleSignature } from "./stale-window.js";

/** Admit a call: the receipt of the request that issued it must match the present. */
function admit(host: StateFlowHost, tool: string, toolCallId: string, ctx: ExtensionContext): Receipt {
	const { selection, identity } = host.bind(ctx);
	return host.admission.admit(tool, toolCallId, { mode: selection.mode, wanted: selection.owners, identity });
}

function checkSignal(signal: AbortSignal | undefined): void {
	if (signal?.aborted) fail("aborted", "The call was cancelled before it committed; nothing was written.");
}

/**
 * The result's courtesy lines: shared owners changed by other processes since this run's head
 * (docs/spec.md §6.4), then source-change hints. Both look at the same histories, loaded once.
 */
async function courtesyLines(
	host: StateFlowHost,
	wanted: readonly Owner[],
	ctx: ExtensionContext,
	loaded?: Partial<Record<Owner, OwnerHistory>>,
): Promise<string[]> {
	const run = host.run;
	if (!run) return [];
	let histories: Partial<Record<Owner, OwnerHistory>>;
	let text: string | undefined;
	try {
		// An unavailable owner is left out: the call itself says so when it needs that owner.
		histories = loaded ?? (await host.available(wanted)).histories;
		text = concurrentNotice({
			wanted,
			histories: viewHistories(keyLensFor(host.project(ctx)), histories),
			seqAtHead: run.seqAtHead,
			ownSeqs: run.ownSeqs,
			roots: host.declaredRootNames(),
		});
	} catch {
		// A notice is a courtesy; a store that cannot be read now is reported by the call itself.
		return [];
	}
	return [...(text === undefined ? [] : [text]), ...staleHints(host, wanted, histories, ctx)];
}

/**
 * The wanted owners' histories right after a commit, for its result's courtesy lines. The owners
 * it staged on were caught up under their locks, and the stores' live histories now hold its
 * record: only the other wanted owners are loaded again (the journal folder and each log were
 * looked at under the locks a moment ago). Undefined when the commit never staged: load them all.
 */
async function afterCommit(
	host: StateFlowHost,
	wanted: readonly Owner[],
	staged: Partial<Record<Owner, OwnerHistory>> | undefined,
): Promise<Partial<Record<Owner, OwnerHistory>> | undefined> {
	if (staged === undefined) return undefined;
	const out: Partial<Record<Owner, OwnerHistory>> = {};
	const rest: Owner[] = [];
	for (const owner of wanted) {
		const h = staged[owner];
		if (h === undefined) rest.push(owner);
		else out[owner] = h;
	}
	if (rest.length === 0) return out;
	try {
		return { ...out, ...(await host.available(rest)).histories };
	} catch {
		// A notice is a courtesy: `courtesyLines` loads them all and reports nothing it cannot read.
		return undefined;
	}
}

/**
 * The wanted owners' current states for phrasing reference refusals: loaded up front (the
 * stores answer asynchronously), but a store that cannot be read throws only when its state
 * is asked for, as a lazy load would.
 */
async function statesOf(host: StateFlowHost, wanted: readonly Owner[], ctx: ExtensionContext): Promise<StateOf> {
	const lens = keyLensFor(host.project(ctx));
	const loaded = new Map<Owner, { state: OwnerState | undefined } | { error: unknown }>();
	// One snapshot of the wanted owners, each with its state or the error reading it met.
	const read = await host.requireStores().loadEach(wanted);
	wanted.forEach((owner, i) => {
		const got = read[i];
		loaded.set(owner, got === undefined || "error" in got ? { error: got?.error } : { state: viewState(lens, owner, got.history.state) });
	});
	return (owner) => {
		const got = loaded.get(owner);
		if (got !== undefined && "error" in got) throw got.error;
		return got?.state;
	};
}

/**
 * Source-change hints for a tool result (docs/spec.md §9): tracked artifacts of the wanted owners whose
 * file changed since it was recorded and that this run has not shown yet. Bounded by
 * `checkStaleWindow`.
 */
function staleHints(host: StateFlowHost, wanted: readonly Owner[], histories: Partial<Record<Owner, OwnerHistory>>, ctx: ExtensionContext): string[] {
	const run = host.run;
	if (!run) return [];
	try {
		const { stale } = checkStaleWindow(host, wanted, histories, artifactRootsFor(ctx.cwd, host.options.agentDir, host.project(ctx)));
		const fresh: Array<StaleArtifact & { sig: string }> = [];
		for (const s of stale) {
			const sig = staleSignature(s, histories[s.owner]?.state);
			if (!run.hinted.has(sig)) fresh.push({ ...s, sig });
		}
		// Only what a line names counts as shown; the counted rest is named by later calls.
		host.markHinted(fresh.slice(0, MAX_STALE_HINTS).map((s) => s.sig));
		const lens = keyLensFor(host.project(ctx));
		return staleHintLines(
			fresh.map((s) => staleToModel(lens, s)),
			wanted,
		);
	} catch {
		// A hint is a courtesy; a store that cannot be read now is reported by the call itself.
		return [];
	}
}

/** Histories where reading an unavailable owner throws its error (the evaluator reads only the owners a locator needs). */
function refusing(histories: Partial<Record<Owner, OwnerHistory>>, unavailable: Partial<Record<Owner, Error>>): Partial<Record<Owner, OwnerHistory>> {
	if (isEmptyObject(unavailable)) return histories;
	const out = { ...histories };
	for (const [owner, e] of Object.entries(unavailable)) {
		Object.defineProperty(out, owner, {
			enumerable: true,
			get() {
				throw e;
			},
		});
	}
	return out;
}

/** An owner's whole current state: its planes and registered roots. */
function wholeOwner(owner: Owner): Locator {
	return { kind: "state", scope: owner, offset: 0, plane: null, path: [] };
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
			const wanted = receipt.wanted;
			const roots = host.declaredRootNames();
			const request = toReadRequest(params, wanted, roots);
			const lens = keyLensFor(host.project(ctx));
			request.locators.forEach((loc, i) => checkReadSpelling(lens, loc, request.texts[i] ?? ""));
			const stores = host.requireStores();
			const { histories, unavailable } = await host.available(wanted);
			const response = wanted.includes("session") ? stores.response() : undefined;
			// Errors spell locators the way the model writes them (relative for a sole owner).
			// A locator that needs an unavailable owner is refused with why; the others are answered.
			// Artifact keys as the model is shown them: relative to the folder pi runs in.
			const view = {
				wanted,
				histories: refusing(viewHistories(lens, histories), unavailable),
				roots,
				present: (loc: Locator) => presentLocator(loc, wanted),
				...(response !== undefined ? { response } : {}),
			};
			if (request.search !== undefined) {
				// Under the one locator given, else in every wanted owner's planes and registered roots.
				const starts: Locator[] = request.locators.length > 0 ? request.locators : wanted.map((owner) => wholeOwner(owner));
				const answer = searchState(view, starts, request.search, view.present, MAX_SEARCH_MATCHES);
				return searchResult({
					query: request.search,
					...(request.texts[0] !== undefined ? { under: request.texts[0], canonical: formatLocator(request.locators[0] as Locator) } : {}),
					answer,
					wanted,
					notices: await courtesyLines(host, wanted, ctx, histories),
				});
			}
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
				// Nothing was written since `histories` was loaded: the notices look at the same state.
				notices: await courtesyLines(host, wanted, ctx, histories),
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
		// Arguments outside the declaration get State Flow's refusal, not pi's validator output (issue 26).
		prepareArguments: (args) => preparePatchArguments(host, shape, args),
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			const receipt = admit(host, "patch_state", toolCallId, ctx);
			checkSignal(signal);
			const wanted: Owner[] = [...receipt.wanted];
			// The current state only phrases reference refusals in the model's spelling; the commit checks again under the lock.
			// Only a patch that writes a `$ref` asks for them: a cheap superset test spares every other call the loads.
			const states = JSON.stringify(params).includes('"$ref"') ? await statesOf(host, wanted, ctx) : undefined;
			// The model's artifact keys are relative to the folder pi runs in; stored ones to the checkout's root.
			const lens = keyLensFor(host.project(ctx));
			const patch = patchFromModel(lens, canonicalPatchOf(host, params, wanted, states));
			const stores = host.requireStores();
			const compile = createArtifactCompiler(artifactRootsFor(ctx.cwd, host.options.agentDir, host.project(ctx)), { parseFrontmatter, lens });
			let effects: PreparedEffects | undefined;
			// The histories the commit staged on (the last `prepare` call: caught up under the locks).
			let staged: Partial<Record<Owner, OwnerHistory>> | undefined;
			const outcome = await stores.commit(patch, {
				by: { kind: "tool", sessionId: receipt.identity.sessionId, toolCallId },
				id: host.options.newId(),
				at: host.options.now().toISOString(),
				...(signal ? { signal } : {}),
				// Root refusals spell paths as the model writes them (flat: without the owner).
				roots: host.roots.gateFor(soleOwner(wanted)),
				// Right before the durable write: the selection may have moved while we waited for a lock.
				check: () => {
					admit(host, "patch_state", toolCallId, ctx);
					checkSignal(signal);
				},
				prepare: (p, histories) => {
					staged = histories;
					// New intents record the checkout's branch; a gitBranch the model sent is never stored as sent.
					effects = compile(stampIntentBranches(p, histories, host.git.branch), histories);
					return effects;
				},
			});
			const artifacts = effects?.artifacts ?? [];
			await host.roots.sync();
			if (!outcome.noop) host.recordOwnWrite(outcome.records);
			const lines = [...(effects?.notes ?? []), ...(await courtesyLines(host, wanted, ctx, await afterCommit(host, wanted, staged)))];
			return patchResult({
				transitionId: outcome.noop ? null : outcome.transitionId,
				report: outcome.report,
				wanted,
				lens,
				artifacts,
				notices: lines,
				...(outcome.noop ? {} : { records: outcome.records }),
			});
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
