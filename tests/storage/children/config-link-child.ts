/**
 * One of several processes linking checkouts in the same config file at once.
 * argv: agentDir tag count
 */
import { setLink } from "../../../lib/storage/placement/config.js";

const [agentDir, tag, count] = process.argv.slice(2) as [string, string, string];
for (let i = 0; i < Number(count); i++) await setLink(agentDir, `/checkouts/${tag}-${i}`, `team/${tag}-${i}`);
