/**
 * `state-flow mcp`: the command line of the MCP server. Checks its options here, in the CLI's
 * words, then imports the server (`lib/mcp`, and with it the MCP SDK) only now: no other verb,
 * and never pi, pays for loading it. Runs until the client goes away or the process is stopped.
 */
import { fail } from "../core/errors.js";
import { SHARED_OWNERS, type SharedOwner } from "../core/types.js";
import { parseOwners } from "../storage/placement/config.js";
import { type Parsed, UsageError } from "./args.js";
import { checkCwd, type Outcome } from "./commands.js";

/** The port `--http` listens on when none is given. */
export const DEFAULT_MCP_PORT = 8765;

/** `--owners`: Global and/or CWD; Session is pi's (docs/decisions.md, "MCP: no Session owner"). */
export function mcpOwners(text: string | undefined): SharedOwner[] {
	if (text === undefined) return ["cwd"];
	const owners = parseOwners(text);
	if (owners.includes("session")) {
		fail("invalid_input", "`--owners`: Session is the pi conversation's own owner and is not served over MCP; serve `cwd`, `global`, or `global,cwd`.", [
			"owners",
		]);
	}
	return owners.filter((o): o is SharedOwner => (SHARED_OWNERS as readonly string[]).includes(o));
}

function portOf(p: Parsed): number {
	if (p.port === undefined) return DEFAULT_MCP_PORT;
	if (!p.http) throw new UsageError("`--port` is for `--http`; stdio has no port.", "mcp");
	const n = Number(p.port);
	if (!/^\d+$/.test(p.port) || n > 65535) throw new UsageError(`\`--port\` must be a port number 0–65535, not \`${p.port}\`.`, "mcp");
	return n;
}

export async function runMcp(p: Parsed, version: string): Promise<Outcome> {
	checkCwd(p);
	const owners = mcpOwners(p.owners);
	const port = portOf(p);
	const { serveMcp } = await import("../mcp/serve.js");
	await serveMcp({ cwd: p.cwd, agentDir: p.agentDir, owners, version, ...(p.http ? { http: { port } } : {}) });
	return { stdout: "", stderr: "", code: 0 };
}
