/**
 * The wiring of one agent directory, project and pi session to its backends: the local files
 * (and the Session) always, a PostgreSQL database where the placement puts Global or CWD.
 * The one place that names the concrete stores; `Stores` is handed what it builds.
 */
import type { SharedOwner } from "../core/types.js";
import type { Placement } from "./placement/placement.js";
import { DEFAULT_LOCK_TIMEOUT_MS, FileOwnerStore } from "./file/owner-store.js";
import { LocalBackend } from "./file/local-backend.js";
import { storePaths } from "./project/paths.js";
import { sharedStore } from "./pg/placed.js";
import { locationKey } from "./port.js";
import type { OwnerStore } from "./port.js";
import { PlacedBackend } from "./router.js";
import { seenMarksOf } from "./file/seen.js";
import type { SessionLog, SessionStore } from "./session/store.js";

export { DEFAULT_LOCK_TIMEOUT_MS } from "./file/owner-store.js";

export interface BackendOptions {
	agentDir: string;
	cwd: string;
	retention: number;
	lockTimeoutMs?: number;
	placement?: Placement;
	/** The Session store attached now (it changes with the session and the branch). */
	session: () => SessionStore | undefined;
}

/** What a `Stores` runs on: the Global and CWD stores wherever they live, the router over their backends, and Session stores. */
export interface OpenedBackend {
	shared: Record<SharedOwner, OwnerStore>;
	router: PlacedBackend;
	openSession(log: SessionLog): SessionStore;
}

export function openBackend(opts: BackendOptions): OpenedBackend {
	const { retention } = opts;
	const lockTimeoutMs = opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
	const paths = storePaths(opts.agentDir, opts.cwd);
	const seen = seenMarksOf(paths);
	const files = {
		global: new FileOwnerStore({ owner: "global", root: paths.globalRoot, retention, gitignore: false, lockTimeoutMs, seen }),
		cwd: new FileOwnerStore({
			owner: "cwd",
			root: paths.cwdRoot,
			retention,
			gitignore: true,
			lockTimeoutMs,
			seen,
			refused: paths.project.refused,
			supersededBy: paths.project.supersededBy,
		}),
	};
	const placement = opts.placement ?? {};
	const shared: Record<SharedOwner, OwnerStore> = {
		global: sharedStore(placement, "global", retention) ?? files.global,
		cwd: sharedStore(placement, "cwd", retention) ?? files.cwd,
	};
	// A journal of a mixed transition names its database owner by location: that store tells whether it committed.
	const database = (location: string) => {
		const store = Object.values(shared).find((s) => s.outcomeOf !== undefined && locationKey(s.location()) === location);
		return store?.outcomeOf === undefined ? undefined : (id: string) => (store.outcomeOf as (id: string) => Promise<number | undefined>).call(store, id);
	};
	const local = new LocalBackend({ files, journalDir: paths.journalDir, retention, lockTimeoutMs, session: opts.session, database, seen });
	return { shared, router: new PlacedBackend(), openSession: (log) => local.openSession(log) };
}
