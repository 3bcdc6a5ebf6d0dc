/**
 * What the roots registry may do through the host: read and commit through the session's
 * stores, tell the user, and watch the stores for other processes' commits while they are open.
 */
import { SHARED_OWNERS } from "../core/types.js";
import type { RootsHost } from "./roots.js";
import type { OpenStores } from "./open-stores.js";
import type { StateFlowHost } from "./runtime.js";
import { historiesOf } from "./available.js";

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
