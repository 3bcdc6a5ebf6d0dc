/**
 * Where the Global and CWD owners live: the one place that decides between the file stores
 * (the embedded default) and PostgreSQL (shared by a team or a fleet), from the user's config
 * and environment only. A repository never decides this: a checkout is shared only through a
 * link the user made (`state-flow link`, `/state link`), recorded in the user's own config.
 */
import { fail } from "../core/errors.js";
import type { OwnerHistory, SharedOwner } from "../core/types.js";
import { type StateFlowConfig, databaseUrlProblem } from "./config.js";
import { realOrSelf } from "./fs-util.js";
import { osUser } from "./who.js";
import { PgDatabase, PgOwnerStore } from "./pg/store.js";
import { redactUrl } from "./pg/url.js";
import type { LocalOwners } from "./local-owners.js";
import type { AtomicOwners, CommitOutcome, LockedStage, OwnerLocation, OwnerStore, OwnerStoreStatus } from "./port.js";

/** The environment variable that names the database; it wins over the config's `database`. */
export const DATABASE_ENV = "STATE_FLOW_DATABASE_URL";

/** The PostgreSQL schema State Flow's tables live in unless the config names another. */
export const DEFAULT_SCHEMA = "state_flow";

/** Where this agent directory and checkout keep their shared owners. Holds the URL: never show it, show `shownUrl`. */
export interface Placement {
	database?: { url: string; shownUrl: string; source: "env" | "config"; schema: string };
	/** The project id this checkout is linked to (its CWD owner lives in the database). */
	project?: string;
	/** The user whose Global owner lives in the database (`shareGlobal`). */
	user?: string;
	/** Why a wanted shared owner cannot be placed (a link without a database, a bad URL). */
	problem?: string;
}

/** The user name State Flow signs and keys shared Global memory with. */
export function userOf(config: StateFlowConfig): string {
	return config.user ?? osUser();
}

/** The project a checkout is linked to, by the checkout's real path. */
export function linkedProject(config: StateFlowConfig, cwd: string): string | undefined {
	const links = config.links;
	if (links === undefined) return undefined;
	const real = realOrSelf(cwd);
	return Object.hasOwn(links, real) ? links[real] : undefined;
}

/** Decide where the shared owners live. Pure but for the checkout's real path. */
export function placementFor(config: StateFlowConfig, cwd: string, env: NodeJS.ProcessEnv = process.env): Placement {
	const out: Placement = {};
	const schema = config.databaseSchema ?? DEFAULT_SCHEMA;
	const fromEnv = env[DATABASE_ENV];
	if (fromEnv !== undefined && fromEnv !== "") {
		const why = databaseUrlProblem(fromEnv);
		if (why === undefined) out.database = { url: fromEnv, shownUrl: redactUrl(fromEnv), source: "env", schema };
		else out.problem = `\`${DATABASE_ENV}\` ${why}; fix it or unset it.`;
	} else if (config.database !== undefined) {
		out.database = { url: config.database, shownUrl: redactUrl(config.database), source: "config", schema };
	}
	const project = linkedProject(config, cwd);
	if (project !== undefined) out.project = project;
	if (config.shareGlobal === true) out.user = userOf(config);
	if (out.database === undefined && out.problem === undefined && (out.project !== undefined || out.user !== undefined)) {
		out.problem = `no database is configured: set \`${DATABASE_ENV}\` or \`database\` in the State Flow config.json${out.project !== undefined ? ", or run `state-flow unlink` to keep this checkout's memory in files" : ""}.`;
	}
	return out;
}

/** A key that changes exactly when the placement does (the host reopens its stores then). */
export function placementKey(p: Placement): string {
	return JSON.stringify([p.database?.url ?? null, p.database?.schema ?? null, p.project ?? null, p.user ?? null, p.problem ?? null]);
}

/**
 * One `PgDatabase` per URL in this process: sessions, their reopened stores and the CLI share
 * its connection and its owner caches. Closing it is harmless: the next call reconnects.
 */
const databases = new Map<string, PgDatabase>();

export function databaseFor(url: string, schema = DEFAULT_SCHEMA): PgDatabase {
	const id = `${schema}\n${url}`;
	let db = databases.get(id);
	if (db === undefined) {
		db = new PgDatabase({ url, schema });
		databases.set(id, db);
	}
	return db;
}

/** Close every database connection this process opened (the CLI before it exits, tests). */
export async function closeDatabases(): Promise<void> {
	await Promise.all([...databases.values()].map((db) => db.close()));
}

/** The database store of a shared owner, or a store that says why it cannot be reached. */
export function sharedStore(placement: Placement, owner: SharedOwner, retention: number): OwnerStore | undefined {
	const key = owner === "cwd" ? placement.project : placement.user;
	if (key === undefined) return undefined;
	if (placement.database === undefined) return new UnavailableStore(owner, key, placement.problem ?? "no database is configured.");
	return databaseFor(placement.database.url, placement.database.schema).store(owner, key, retention);
}

/**
 * A shared owner whose database is not configured (or misconfigured): every access says so,
 * nothing falls back to files silently (that would split the owner's memory in two).
 */
export class UnavailableStore implements OwnerStore {
	constructor(
		readonly owner: SharedOwner,
		private readonly key: string,
		private readonly why: string,
	) {}

	location(): OwnerLocation {
		return { backend: "postgres", owner: this.owner, url: "(not configured)", schema: "state_flow", kind: this.owner, key: this.key };
	}

	private refuse(): never {
		const what = this.owner === "cwd" ? `project \`${this.key}\`` : `user \`${this.key}\``;
		fail(
			"unavailable",
			`The \`${this.owner}\` owner (${what}) is shared through PostgreSQL, but ${this.why} Nothing was written; the other owners keep working.`,
		);
	}

	load(): Promise<never> {
		return Promise.resolve().then(() => this.refuse());
	}

	commit(): Promise<CommitOutcome> {
		return Promise.resolve().then(() => this.refuse());
	}

	committedSeq(): Promise<number | undefined> {
		return Promise.resolve().then(() => this.refuse());
	}

	async status(): Promise<OwnerStoreStatus> {
		try {
			this.refuse();
		} catch (e) {
			return { location: this.location(), exists: false, seq: 0, retained: 0, bytes: 0, error: (e as Error).message };
		}
	}

	async close(): Promise<void> {}
}

/**
 * The atomic multi-owner commit over wherever the owners live: all local (files and Session)
 * through `LocalOwners`, all in the database in one SQL transaction, or both, with the
 * database's COMMIT as the commit point and the local journal written right before it.
 */
export class PlacedOwners implements AtomicOwners {
	constructor(private readonly local: LocalOwners) {}

	async recover(store: OwnerStore): Promise<void> {
		// A database owner has nothing to complete: its part of a mixed transition is committed or absent.
		if (store instanceof PgOwnerStore || store instanceof UnavailableStore) return;
		await this.local.recover(store);
	}

	settled(stores: readonly OwnerStore[]): boolean {
		// Database owners never wait for a journal (see `recover`): a read of those alone looks at nothing.
		if (stores.every((s) => s instanceof PgOwnerStore || s instanceof UnavailableStore)) return true;
		return this.local.settled();
	}

	async commitLocked<T>(stores: readonly OwnerStore[], stage: (histories: readonly OwnerHistory[]) => Promise<LockedStage<T>> | LockedStage<T>): Promise<T> {
		for (const s of stores) if (s instanceof UnavailableStore) await s.load();
		const remote = stores.filter((s): s is PgOwnerStore => s instanceof PgOwnerStore);
		if (remote.length === 0) return this.local.commitLocked(stores, stage);
		const db = (remote[0] as PgOwnerStore).db;
		if (remote.some((s) => s.db !== db)) fail("invalid_input", "One transition cannot span two databases.");
		if (remote.length === stores.length) return db.commitLocked(stores, stage);
		return this.local.commitWith(stores, db, (s) => s instanceof PgOwnerStore, stage);
	}
}
