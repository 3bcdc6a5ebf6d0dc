/**
 * The real `pi` (the devDependency line, 0.73.1) in a real terminal (tmux) against a scripted
 * OpenAI-compatible server: the whole flow of `scenario.ts`. pi 1.6 on Node 22 runs the same
 * scenario from `scripts/compat.sh`.
 */
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runScenario } from "./scenario.js";

/** pi's `dist/` (the package's main entry lives there, next to `cli.js`). */
const piDist = dirname(fileURLToPath(import.meta.resolve("@mariozechner/pi-coding-agent")));

describe("pi in a terminal", () => {
	it("writes, shows /state, browses, switches owners, goes Off, resumes, comes back Active and writes again", { timeout: 300_000 }, async (t) => {
		await runScenario({ node: process.execPath, piCli: join(piDist, "cli.js"), log: (l) => t.diagnostic(l) });
	});
});
