/**
 * What the roots registry may do through the host (`RootsHost`, kept small so the registry reads
 * on its own): read and commit through the session's stores, tell the user, and watch the
 * stores for other processes' commits while they are open.
 */
import { SHARED_OWNERS } from "../../core/types.js";
import type { JsonObject, Owner, OwnerHistory } from "../../core/types.js";
import type { OpenStores } from "../session/open-stores.js";
import type { StateFlowHost } from "../runtime.js";
import { historiesOf } from "../session/available.js";

/** What the registry needs from the host; kept small so the registry can be read on its own. */
export interface RootsHost {
	/** Histories of `owners` now, or undefined when no stores are open. */
	histories(owners: readonly Owner[]): Promise<Partial<Record<Owner, OwnerHistory>> | undefined>;
	/** Commit a canonical patch through the stores, recorded as the extension's. */
	commit(patch: Partial<Record<Owner, JsonObject>>, extension: string): Promise<string | null>;
	/** Tell the user (notify). */
	say(message: string, level: "info" | "warning" | "error"): void;
	/** The folders of the owners kept in files here (a database owner has none to watch). */
	storeFolders(): string[];
	/** Call `changed` after each commit to an owner kept in a database; returns the way to stop (none without stores). */
	watchDatabases(changed: () => void): (() => void) | undefined;
}

/** The host's side of `RootsHost`: its open stores, its ids and clock, its notices. */
export function rootsHostOf(host: StateFlowHost, open: OpenStores): RootsHost {
	return {
		histories: async (owners) => {
			const stores = open.current;
			if (!stores) return undefined;
			// One snapshot of the owners; one that is unavailable (no Session) or damaged is reported where the store is used.
			return historiesOf(owners, await stores.loadEach(owners), true);
		},
		commit: async (patch, extension) => {
			const outcome = await host.requireStores().commit(patch, {
				by: { kind: "extension", extension },
				id: host.options.newId(),
				at: host.options.now().toISOString(),
				roots: host.roots.gate,
			});
			return outcome.noop ? null : outcome.transitionId;
		},
		say: (message, level) => host.say(message, level),
		watchDatabases: (changed) => open.watched?.watchDatabases(changed),
		storeFolders: () => {
			const stores = open.watched;
			if (!stores) return [];
			return SHARED_OWNERS.flatMap((o) => {
				const where = stores.location(o);
				return where.backend === "file" ? [where.path] : [];
			});
		},
	};
}
