/**
 * The host's side of what the roots registry may do (`RootsHost`, declared by the registry):
 * read and commit through the session's open stores, tell the user, and watch the stores for
 * other processes' commits while they are open. It is handed narrow functions, not the host.
 */
import { SHARED_OWNERS } from "../../core/types.js";
import type { RootGate } from "../../core/types.js";
import type { OpenStores } from "../session/open-stores.js";
import { historiesOf } from "../../surface/available.js";
import type { RootsHost } from "./registry.js";

/** What the host lends the registry's port: its open stores, ids and clock, notices and the roots' gate. */
export interface RootsHostDeps {
	open: OpenStores;
	newId(): string;
	now(): Date;
	say(message: string, level: "info" | "warning" | "error"): void;
	gate: RootGate;
}

/** The host's side of `RootsHost`: its open stores, its ids and clock, its notices. */
export function rootsHostOf({ open, newId, now, say, gate }: RootsHostDeps): RootsHost {
	return {
		histories: async (owners) => {
			const stores = open.current;
			if (!stores) return undefined;
			// One snapshot of the owners; one that is unavailable (no Session) or damaged is reported where the store is used.
			return historiesOf(owners, await stores.loadEach(owners), true);
		},
		commit: async (patch, extension) => {
			const outcome = await open.require().commit(patch, {
				by: { kind: "extension", extension },
				id: newId(),
				at: now().toISOString(),
				roots: gate,
			});
			return outcome.noop ? null : outcome.transitionId;
		},
		say,
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
