/**
 * Opening stores, in one place: the Global, CWD and Session stores of one agent directory,
 * project and pi session, from the user's config with one option set (placement, retention,
 * limits, allowed secrets, who) for pi, the CLI and doctor alike; and the one constructor of a
 * file owner store as the stores open it (its `.gitignore`, seen marks, refused or superseded
 * folder), which the CLI's repairs use too. The only module that names the concrete stores.
 */
import type { SharedOwner } from "../core/types.js";
import { DEFAULT_LOCK_TIMEOUT_MS, FileOwnerStore } from "./file/owner-store.js";
import { LocalBackend } from "./file/local-backend.js";
import { type SeenMarks, seenMarksOf } from "./file/seen.js";
import { sharedStore } from "./pg/placed.js";
import { limitsOf, type StateFlowConfig } from "./placement/config.js";
import { type Placement, placementFor } from "./placement/placement.js";
import { whoAmI } from "./placement/who.js";
import { rootOf, type StorePaths, storePaths } from "./project/paths.js";
import { locationKey } from "./port.js";
import type { OwnerStore } from "./port.js";
import { PlacedBackend } from "./router.js";
import type { SessionLog, SessionStore } from "./session/store.js";
import { type OpenedBackend, Stores, type StoresOptions } from "./stores.js";

/** Where stores are opened: the agent directory, the folder whose project is the CWD owner, and the pi session (absent: no Session owner). */
export interface OpenAt {
	agentDir: string;
	cwd: string;
	session?: SessionLog;
	/** Where shared owners live, when the caller decided it (a migration's target); absent: the config's placement for `cwd`. */
	placement?: Placement;
}

/** The stores `config` describes for `at`: the one option set every front-end opens with. */
export function openStores(config: StateFlowConfig, at: OpenAt): Stores {
	return openStoresAt({
		agentDir: at.agentDir,
		cwd: at.cwd,
		...(at.session !== undefined ? { session: at.session } : {}),
		...(config.retention !== undefined ? { retention: config.retention } : {}),
		limits: limitsOf(config),
		allowSecrets: config.allowSecrets ?? [],
		placement: at.placement ?? placementFor(config, at.cwd),
		who: whoAmI(config.user),
	});
}

/** Stores with these exact options, wired to the backends their placement names (tests and the config's opener). */
export function openStoresAt(opts: StoresOptions): Stores {
	return new Stores(opts, (session, retention) =>
		openBackend({
			agentDir: opts.agentDir,
			cwd: opts.cwd,
			retention,
			session,
			...(opts.lockTimeoutMs !== undefined ? { lockTimeoutMs: opts.lockTimeoutMs } : {}),
			...(opts.placement !== undefined ? { placement: opts.placement } : {}),
		}),
	);
}

export interface FileStoreAt {
	retention: number;
	lockTimeoutMs?: number;
	/** This machine's seen marks; absent: the store is read without them (a repair that must not depend on them). */
	seen?: SeenMarks;
}

/** The file store of a shared owner as the stores open it: the CWD one keeps its `.gitignore` and its project's refused or superseded folder. */
export function openFileStore(paths: StorePaths, owner: SharedOwner, at: FileStoreAt): FileOwnerStore {
	const { refused, supersededBy } = owner === "cwd" ? paths.project : {};
	return new FileOwnerStore({
		owner,
		root: rootOf(paths, owner),
		retention: at.retention,
		gitignore: owner === "cwd",
		lockTimeoutMs: at.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
		...(at.seen !== undefined ? { seen: at.seen } : {}),
		...(refused !== undefined ? { refused } : {}),
		...(supersededBy !== undefined ? { supersededBy } : {}),
	});
}

/** The store of an owner in a folder a journal or a repair names (never written a `.gitignore`, read without seen marks). */
export function openFileStoreIn(owner: SharedOwner, root: string, at: FileStoreAt): FileOwnerStore {
	return new FileOwnerStore({ owner, root, retention: at.retention, gitignore: false, lockTimeoutMs: at.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS });
}

export interface BackendOptions {
	agentDir: string;
	cwd: string;
	retention: number;
	lockTimeoutMs?: number;
	placement?: Placement;
	/** The Session store attached now (it changes with the session and the branch). */
	session: () => SessionStore | undefined;
}

/** The file stores, the placed database stores and the local backend (journal, Session) for one agent directory, project and session. */
export function openBackend(opts: BackendOptions): OpenedBackend {
	const { retention } = opts;
	const lockTimeoutMs = opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
	const paths = storePaths(opts.agentDir, opts.cwd);
	const seen = seenMarksOf(paths);
	const files = {
		global: openFileStore(paths, "global", { retention, lockTimeoutMs, seen }),
		cwd: openFileStore(paths, "cwd", { retention, lockTimeoutMs, seen }),
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
