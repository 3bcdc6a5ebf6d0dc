/**
 * Set-up shared by the tests of the real `state-flow` binary with shared owners on a real
 * PostgreSQL server (tests/helpers/pg-server.ts): "machines" (an agent directory with a config
 * naming its own schema, and a checkout) whose every command is checked never to print the
 * password, and commits through the stores as pi would open them.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CanonicalPatch, Owner, OwnerHistory } from "../../lib/core/types.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { readConfig } from "../../lib/storage/placement/config.js";
import type { Stores } from "../../lib/storage/stores.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import type { TestDatabase } from "../helpers/pg-server.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli } from "./run.js";

let server: TestDatabase;
let password: string | undefined;

/**
 * The server of the calling test file (call once, at its top): started before its tests and
 * stopped after them, with every connection the stores opened closed first.
 */
export function sharedServer(): TestDatabase {
	server = serverForFile(testDatabase);
	return server;
}

/** The test server's password, for the no-leak checks (read at first use: node 20 runs a file's `before` hooks as they are registered). */
function serverPassword(): string {
	if (password === undefined) {
		password = decodeURIComponent(new URL(server.url).password);
		assert.ok(password.length >= 8, "the test server's URL must carry a password for the no-leak checks");
	}
	return password;
}

export interface Env {
	root: string;
	cwd: string;
	agent: string;
	schema: string;
	/** The real binary, `--agent-dir` set, the database URL (with its password) in the environment unless `url` says otherwise. */
	run(args: string[], opts?: { url?: string; env?: Record<string, string> }): ReturnType<typeof runCli>;
	config(): Record<string, unknown>;
	/** The stores as pi would open them in this checkout (placement from the config file and the URL). */
	stores(url?: string): Stores;
}

/** One "machine": an agent directory with a config naming its own schema, and a checkout. */
export function setup(t: { after(fn: () => void): void }, schema = server.schema(), extra: Record<string, unknown> = {}): Env {
	const root = tempDir(t, "state-flow-shared-");
	const cwd = join(root, "checkout");
	const agent = join(root, "agent");
	mkdirSync(cwd);
	mkdirSync(join(agent, "state-flow"), { recursive: true });
	const file = join(agent, "state-flow", "config.json");
	writeFileSync(file, `${JSON.stringify({ databaseSchema: schema, mode: "passive", custom: { kept: true }, ...extra }, null, 2)}\n`);
	return {
		root,
		cwd,
		agent,
		schema,
		run(args, opts = {}) {
			const url = opts.url ?? server.url;
			const r = runCli([...args, "--agent-dir", agent], { cwd, env: { STATE_FLOW_DATABASE_URL: url, ...opts.env } });
			// No command ever prints a password, whatever it does.
			for (const secret of [serverPassword(), url === "" ? "" : decodeURIComponent(new URL(url).password)].filter((s) => s !== "")) {
				assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), `\`state-flow ${args.join(" ")}\` printed the password:\n${r.stdout}\n${r.stderr}`);
			}
			return r;
		},
		config: () => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>,
		stores(url = server.url) {
			const { config } = readConfig(agent);
			return openStoresAt({
				agentDir: agent,
				cwd,
				placement: placementFor(config, cwd, { STATE_FLOW_DATABASE_URL: url }),
				...(config.retention !== undefined ? { retention: config.retention } : {}),
			});
		},
	};
}

let n = 0;
export async function write(stores: Stores, patch: CanonicalPatch): Promise<void> {
	const r = await stores.commit(patch, { id: `t-${++n}`, at: "2026-12-01T00:00:00.000Z", by: { kind: "system", reason: "cli-test" } });
	assert.equal(r.noop, false);
}

/** Five transitions on one owner (retention 3 in these configs: a checkpoint at seq 2 and three retained). */
export async function fiveWrites(stores: Stores, owner: Owner): Promise<void> {
	for (let i = 1; i <= 5; i++) await write(stores, { [owner]: { intents: { [`i${i}`]: `step ${i}` }, strategy: { last: i } } });
}

/** Everything a history says: head, fold point, checkpoint, retained records and state. */
export function text(h: OwnerHistory): string {
	return JSON.stringify([h.seq, h.checkpointSeq, h.checkpoint, h.tail, h.state]);
}

export const NO_DB = "";
