/**
 * A live pi session (the real SDK, the faux model) that runs one `/state` command and prints
 * what it said, then `done`: for tests that must prove the command returns at all (a planted
 * FIFO must never block it), from a process the test can time out and kill.
 * argv: cwd agentDir
 */
import { startFlow } from "../../host/fixture.js";

const [cwd, agentDir] = process.argv.slice(2) as [string, string];
const flow = await startFlow({ cwd, agentDir });
const said = await flow.command("/state");
process.stdout.write(`${said.join("\n")}\ndone\n`);
flow.dispose();
