/**
 * Shared set-up for the CLI's link tests (real git, real PostgreSQL): the file's test server,
 * and a repository whose user's config names that server's schema, with the CLI run against it
 * and the config read back as written.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repo } from "../helpers/git-repo.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { runCli } from "./run.js";

/** This test file's PostgreSQL server (started before its tests, stopped after). */
export const server = serverForFile(testDatabase);

/** The link entries of the user's config as State Flow wrote them. */
export interface Written {
	links?: Record<string, string>;
	repoLinks?: Record<string, string>;
	linkConsents?: Record<string, { nonce: string; repo: string; project: string }>;
}

/** A repository (`repo`) and an agent folder whose config names the test database's schema. */
export function linkSetup(t: { after(fn: () => void): void }) {
	const { base, dir } = repo(t);
	const agent = join(base, "agent");
	mkdirSync(join(agent, "state-flow"), { recursive: true });
	const file = join(agent, "state-flow", "config.json");
	const schema = server.schema();
	writeFileSync(file, `${JSON.stringify({ databaseSchema: schema })}\n`);
	const run = (cwd: string, ...args: string[]) => runCli([...args, "--agent-dir", agent], { cwd, env: { STATE_FLOW_DATABASE_URL: server.url } });
	const written = () => JSON.parse(readFileSync(file, "utf8")) as Written;
	return { base, dir, agent, file, schema, run, written };
}
