/**
 * Run the terminal scenario against a given pi CLI under this Node:
 * `node dist/tests/terminal/run.js <pi cli.js>`. `scripts/compat.sh` uses it for pi 1.6 on
 * Node 22; the test file runs it for the pi in devDependencies.
 */
import { messageOf } from "../../lib/core/errors.js";
import { runScenario } from "./scenario.js";

const piCli = process.argv[2];
if (!piCli) {
	console.error("usage: node dist/tests/terminal/run.js <path to pi's cli.js>");
	process.exit(2);
}
const started = Date.now();
try {
	await runScenario({ node: process.execPath, piCli, log: (l) => console.log(l), keep: process.env.STATE_FLOW_E2E_KEEP === "1" });
	console.log(`terminal: OK in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (e) {
	console.error(`terminal: FAILED: ${messageOf(e)}`);
	process.exit(1);
}
