/**
 * MCP, side by side in one run (issue 38): `state-flow mcp` and the reference memory server
 * (`@modelcontextprotocol/server-memory`, a devDependency for this bench only), each spawned
 * over stdio and driven by the same official client. Round trips at a ~2 MB memory: our
 * `patch_state` (one fsynced transition) and `read_state` of one key, its `add_observations`
 * to one entity (a whole-file rewrite, no fsync) and `open_nodes` of one entity. Then lost
 * updates: 4 server processes on one store, 50 writes each from its own client, all at once;
 * every acknowledged write is looked for afterwards.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { openStoresAt } from "../../lib/storage/open.js";
import { ms, p50, value } from "./shared.js";
import { seeded } from "./storage.js";

const ROUNDS = 100;
const WARM = 10;
const PROCS = 4;
const WRITES = 50;
const CLI = fileURLToPath(new URL("../../lib/cli/main.js", import.meta.url));
const MEMORY = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-memory/dist/index.js");

type Env = Record<string, string>;
type Answer = { isError?: boolean; content?: unknown; structuredContent?: unknown };

function envWith(extra: Env): Env {
	const env: Env = {};
	for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "STATE_FLOW_FAULT") env[k] = v;
	return { ...env, ...extra };
}

async function connect(args: string[], env: Env = {}): Promise<Client> {
	const client = new Client({ name: "bench", version: "0" });
	await client.connect(new StdioClientTransport({ command: process.execPath, args, env: envWith(env), stderr: "ignore" }));
	return client;
}

const ours = (dir: string) => connect([CLI, "mcp", "--cwd", join(dir, "proj"), "--agent-dir", join(dir, "agent")]);
const theirs = (file: string) => connect([MEMORY], { MEMORY_FILE_PATH: file });

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
	const r = (await client.callTool({ name, arguments: args })) as Answer;
	if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
	return r;
}

/** p50 of `ROUNDS` round trips after `WARM` unmeasured ones. */
async function roundTrips(one: (i: number) => Promise<unknown>): Promise<number> {
	const xs: number[] = [];
	for (let i = 0; i < ROUNDS + WARM; i++) {
		const t0 = process.hrtime.bigint();
		await one(i);
		if (i >= WARM) xs.push(ms(t0));
	}
	return p50(xs);
}

/** A memory-server graph of about `bytes` (entities with ten observations each, some relations) and one `target`. */
function seedMemory(file: string, bytes: number): number {
	const lines = [JSON.stringify({ type: "entity", name: "target", entityType: "probe", observations: [] })];
	let size = (lines[0] as string).length;
	for (let i = 0; size < bytes; i++) {
		const line = JSON.stringify({
			type: "entity",
			name: `e${i}`,
			entityType: "thing",
			observations: Array.from({ length: 10 }, (_, j) => `${j}: ${value(i)}`.slice(0, 120)),
		});
		lines.push(line);
		size += line.length + 1;
		if (i % 3 === 0) lines.push(JSON.stringify({ type: "relation", from: `e${i}`, to: "target", relationType: "feeds" }));
	}
	writeFileSync(file, lines.join("\n"));
	return size;
}

/** How many of `expected` the target entity holds after the probe. */
function targetHolds(file: string, expected: string[]): number {
	const line = readFileSync(file, "utf8")
		.split("\n")
		.find((l) => l.includes('"name":"target"'));
	const obs = new Set((JSON.parse(line ?? "{}") as { observations?: string[] }).observations ?? []);
	return expected.filter((o) => obs.has(o)).length;
}

/** `PROCS` clients, each on its own server, `WRITES` writes each, all at once; how many acknowledged writes are missing after. */
async function lost(
	clients: Client[],
	write: (c: Client, p: number, i: number) => Promise<unknown>,
	present: (names: string[]) => Promise<number>,
): Promise<number> {
	await Promise.all(
		clients.map(async (c, p) => {
			for (let i = 0; i < WRITES; i++) await write(c, p, i);
		}),
	);
	const names = clients.flatMap((_, p) => Array.from({ length: WRITES }, (_, i) => `p${p}w${i}`));
	await Promise.all(clients.map((c) => c.close()));
	return names.length - (await present(names));
}

export interface McpBench {
	mcp_patch_p50_ms_2mb: number;
	mcp_read_p50_ms_2mb: number;
	memory_server_write_p50_ms_2mb: number;
	memory_server_read_p50_ms_2mb: number;
	mcp_state_bytes: number;
	memory_server_file_bytes: number;
	mcp_lost_updates_4x50: number;
	memory_server_lost_updates_4x50: number;
}

export async function mcpBench(root: string): Promise<McpBench> {
	// Ours: the CWD owner seeded to ~2 MB through the stores, then served.
	const dir = join(root, "ours");
	const stores = await seeded(dir, 10_000);
	const stateBytes = (await stores.load("cwd")).bytes;
	await stores.close();
	const client = await ours(dir);
	const patch = await roundTrips((i) => call(client, "patch_state", { tactics: { [`k${(i * 7919) % 10_000}`]: value(i + 2_000_000) } }));
	const read = await roundTrips((i) => call(client, "read_state", { path: `tactics.k${(i * 7919) % 10_000}` }));
	await client.close();

	// Theirs: the same client, one entity written and read in a ~2 MB graph.
	mkdirSync(join(root, "theirs"));
	const file = join(root, "theirs", "memory.jsonl");
	const fileBytes = seedMemory(file, stateBytes);
	const memory = await theirs(file);
	const write = await roundTrips((i) => call(memory, "add_observations", { observations: [{ entityName: "target", contents: [`o${i}`] }] }));
	const open = await roundTrips(() => call(memory, "open_nodes", { names: ["e1"] }));
	await memory.close();

	// Lost updates, 4 processes on one store each.
	const conc = join(root, "ours-conc");
	await (await seeded(conc, 10_000)).close();
	const oursClients = await Promise.all(Array.from({ length: PROCS }, () => ours(conc)));
	const oursLost = await lost(
		oursClients,
		(c, p, i) => call(c, "patch_state", { tactics: { [`p${p}w${i}`]: i } }),
		async (names) => {
			// Read back from the store itself, as any later reader would.
			const stores = openStoresAt({ agentDir: join(conc, "agent"), cwd: join(conc, "proj") });
			const tactics = (await stores.load("cwd")).state.tactics;
			await stores.close();
			return names.filter((n) => Object.hasOwn(tactics, n)).length;
		},
	);
	const concFile = join(root, "theirs", "conc.jsonl");
	seedMemory(concFile, stateBytes);
	const theirsClients = await Promise.all(Array.from({ length: PROCS }, () => theirs(concFile)));
	const theirsLost = await lost(
		theirsClients,
		(c, p, i) => call(c, "add_observations", { observations: [{ entityName: "target", contents: [`p${p}w${i}`] }] }),
		async (names) => targetHolds(concFile, names),
	);
	return {
		mcp_patch_p50_ms_2mb: patch,
		mcp_read_p50_ms_2mb: read,
		memory_server_write_p50_ms_2mb: write,
		memory_server_read_p50_ms_2mb: open,
		mcp_state_bytes: stateBytes,
		memory_server_file_bytes: fileBytes,
		mcp_lost_updates_4x50: oursLost,
		memory_server_lost_updates_4x50: theirsLost,
	};
}
