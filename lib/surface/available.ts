/**
 * What a load of several owners means to a front-end (pi's host, the MCP server): the histories
 * that could be read, and the owners that are refused for now (an outage or damage, kept apart so
 * the others keep working) with the one word pi's footer shows for each.
 */
import { isStateError, type StateError } from "../core/errors.js";
import type { Owner, OwnerHistory } from "../core/types.js";
import type { LoadAnswer } from "../storage/port.js";

/** What a store load last said about an owner that could not be read. */
export type Health = "damaged" | "unavailable";

/** Histories of the owners that could be read, and why the others are unavailable right now. */
export interface Available {
	histories: Partial<Record<Owner, OwnerHistory>>;
	unavailable: Partial<Record<Owner, StateError>>;
}

/**
 * Sort the answers of `loadEach(owners)`; `health` (a copy, updated here) keeps one word per
 * refused owner. A failure that is neither an outage nor damage is thrown.
 */
export function sortLoaded(owners: readonly Owner[], loaded: readonly LoadAnswer[], health: Partial<Record<Owner, Health>>): Available {
	const out: Available = { histories: {}, unavailable: {} };
	owners.forEach((owner, i) => {
		const got = loaded[i] as LoadAnswer;
		if ("history" in got) {
			out.histories[owner] = got.history;
			delete health[owner];
			return;
		}
		const e = got.error;
		// Damage is kept apart like an outage: that owner is refused with what to do, the others keep working.
		if (!isStateError(e) || (e.code !== "unavailable" && e.code !== "corrupt")) throw e;
		out.unavailable[owner] = e;
		health[owner] = e.code === "corrupt" ? "damaged" : "unavailable";
	});
	return out;
}

/** The histories of `loadEach(owners)`; any owner that could not be read throws its error, unless `skip` leaves it out. */
export function historiesOf(owners: readonly Owner[], loaded: readonly (LoadAnswer | undefined)[], skip = false): Partial<Record<Owner, OwnerHistory>> {
	const out: Partial<Record<Owner, OwnerHistory>> = {};
	owners.forEach((owner, i) => {
		const got = loaded[i];
		if (got !== undefined && "history" in got) out[owner] = got.history;
		else if (!skip) throw (got as { error: unknown }).error;
	});
	return out;
}
