/**
 * `read_state`'s execution for any front-end: the model's arguments → locators in its grammar,
 * evaluated over one snapshot of the wanted owners (an unavailable owner refuses only the
 * locators that need it), the result text of `model/results.ts` or `model/search-result.ts`,
 * and the seqs the values were read at. Admission and cancellation are the front-end's.
 */
import { checkEffectiveSpelling, checkReadSpelling, viewHistories } from "../core/artifact-keys.js";
import { isEmptyObject } from "../core/json.js";
import { formatLocator, type Locator } from "../core/locator.js";
import { evaluate } from "../core/query.js";
import { searchState } from "../core/search.js";
import type { Owner, OwnerHistory } from "../core/types.js";
import { presentLocator, toReadRequest } from "../model/interface.js";
import { type ReadDetails, readResult, type ToolText } from "../model/results.js";
import { MAX_SEARCH_MATCHES, type SearchDetails, searchResult } from "../model/search-result.js";
import { courtesyLines } from "./courtesy.js";
import { lensOf, type Seqs, type Surface, seqsOf } from "./surface.js";

/** A result the front-end sends as it is, and the seqs of the owners it was computed on. */
export interface Answered<D> {
	result: ToolText<D>;
	seqs: Seqs;
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

/** Run one `read_state` call for the captured `wanted` owners. */
export async function readCall(s: Surface, params: unknown, wanted: readonly Owner[]): Promise<Answered<ReadDetails | SearchDetails>> {
	const roots = s.rootNames();
	const request = toReadRequest(params, wanted, roots);
	const lens = lensOf(s);
	request.locators.forEach((loc, i) => checkReadSpelling(lens, loc, request.texts[i] ?? ""));
	const stores = s.stores();
	const { histories, unavailable } = await s.available(wanted);
	const seqs = seqsOf(wanted, histories);
	request.locators.forEach((loc, i) => checkEffectiveSpelling(lens, loc, request.texts[i] ?? "", histories));
	const response = wanted.includes("session") ? stores.response() : undefined;
	// Errors spell locators the way the model writes them (relative for a sole owner).
	// A locator that needs an unavailable owner is refused with why; the others are answered.
	// Artifact keys as the model is shown them: relative to the folder the front-end runs in.
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
		const result = searchResult({
			query: request.search,
			...(request.texts[0] !== undefined ? { under: request.texts[0], canonical: formatLocator(request.locators[0] as Locator) } : {}),
			answer,
			wanted,
			notices: await courtesyLines(s, wanted, histories),
		});
		return { result, seqs };
	}
	const results = evaluate(view, request.locators, request.projection);
	// The locator texts come from the detached request: the caller's arguments are read once.
	const texts = request.texts;
	const result = readResult({
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
		notices: await courtesyLines(s, wanted, histories),
	});
	return { result, seqs };
}
