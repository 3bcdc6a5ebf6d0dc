/**
 * The PostgreSQL side of a placement: one `PgDatabase` per URL in this process, the store of a
 * shared owner placed in a database, and the store that says why a placed owner cannot be
 * reached (never a silent fallback to files).
 */
import { fail } from "../../core/errors.js";
import type { SharedOwner } from "../../core/types.js";
import type { Placement } from "../placement/placement.js";
import { DEFAULT_SCHEMA } from "../placement/placement.js";
import type { CommitOutcome, OwnerBackend, OwnerLocation, OwnerStore, OwnerStoreStatus } from "../port.js";
import { PgDatabase } from "./database.js";

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
	readonly backend: OwnerBackend = UNREACHABLE;

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

/** The backend of owners placed in a database that is not configured: every commit is refused before anything is locked. */
const UNREACHABLE: OwnerBackend = {
	async ready(stores) {
		for (const s of stores) await s.load();
	},
	async commitTogether(stores) {
		for (const s of stores) await s.load();
		return fail("unavailable", "no database is configured for these owners.");
	},
};
