/**
 * The equal-durability anchor: SQLite (through better-sqlite3, a devDependency of the bench only)
 * in WAL mode, one prepared upsert of a record-sized row per commit into a table holding ~2 MB,
 * with `synchronous=FULL` (an fsync per commit, as a State Flow commit makes) and, for reference,
 * `synchronous=NORMAL` (no fsync per commit in WAL mode: what mcp-memory-keeper runs). Where the
 * native module cannot load, the anchor is reported missing and the rest of the bench runs.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { value } from "./shared.js";

/** One upsert per call, each a transaction of its own (autocommit), on one of the two databases. */
export interface SqliteAnchor {
	full(key: string, row: string): void;
	normal(key: string, row: string): void;
	close(): void;
}

interface Statement {
	run(...params: unknown[]): unknown;
}
interface Database {
	pragma(text: string): unknown;
	exec(sql: string): unknown;
	prepare(sql: string): Statement;
	transaction(fn: () => void): () => void;
	close(): void;
}
type DatabaseClass = new (path: string) => Database;

/** Why the anchor is missing, when it is (printed by the bench); undefined once it loaded. */
export let sqliteMissing: string | undefined;

function load(): DatabaseClass | undefined {
	try {
		// A devDependency with a native part: loaded only here, and only if it is installed and builds for this Node.
		return createRequire(import.meta.url)("better-sqlite3") as DatabaseClass;
	} catch (e) {
		sqliteMissing = e instanceof Error ? e.message.split("\n")[0] : String(e);
		return undefined;
	}
}

/**
 * Two databases in `dir` (the 2 MB store's folder: the same disk as the log), each a table of
 * `entries` rows holding what the state holds (~2 MB at 10,000), filled in one transaction.
 * Undefined when better-sqlite3 cannot be loaded here.
 */
export function sqliteAnchor(dir: string, entries: number): SqliteAnchor | undefined {
	const Db = load();
	if (Db === undefined) return undefined;
	const open = (name: string, synchronous: "FULL" | "NORMAL"): { db: Database; upsert: Statement } => {
		const db = new Db(join(dir, name));
		db.pragma("journal_mode = WAL");
		db.pragma(`synchronous = ${synchronous}`);
		db.exec("CREATE TABLE IF NOT EXISTS items (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID");
		const upsert = db.prepare("INSERT INTO items (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
		db.transaction(() => {
			for (let k = 0; k < entries; k++) upsert.run(`k${k}`, value(k));
		})();
		return { db, upsert };
	};
	let full: { db: Database; upsert: Statement };
	let normal: { db: Database; upsert: Statement };
	try {
		full = open("anchor-full.sqlite", "FULL");
		normal = open("anchor-normal.sqlite", "NORMAL");
	} catch (e) {
		sqliteMissing = e instanceof Error ? e.message.split("\n")[0] : String(e);
		return undefined;
	}
	return {
		full: (key, row) => void full.upsert.run(key, row),
		normal: (key, row) => void normal.upsert.run(key, row),
		close: () => {
			full.db.close();
			normal.db.close();
		},
	};
}
