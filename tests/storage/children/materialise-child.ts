/**
 * A process that materialises one compiled Skill artifact when told to (SIGUSR2, after it
 * printed `ready`), so several processes race for the same missing file; prints its outcome.
 * argv: owner cwd agentDir key value-json
 */
import type { Json, SharedOwner } from "../../../lib/core/types.js";
import { materialiseCompiled } from "../../../lib/storage/artifacts/compiled-skills.js";

const [owner, cwd, agentDir, key, value] = process.argv.slice(2) as [SharedOwner, string, string, string, string];
process.on("SIGUSR2", () => {
	const m = materialiseCompiled(owner, key, JSON.parse(value) as Json, { cwd, agentDir });
	process.stdout.write(`${JSON.stringify(m)}\n`);
	process.exit(0);
});
process.stdout.write("ready\n");
// Keep the process alive until the signal comes.
setInterval(() => undefined, 1 << 30);
