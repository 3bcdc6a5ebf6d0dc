/**
 * Test child: print whether `pidAlive` judges the pid at argv[2] alive. Run as another user
 * than that pid's owner, its check meets EPERM (the process exists but is not ours to signal).
 */
import { pidAlive } from "../../../lib/storage/file/lock-stale.js";

process.stdout.write(`${pidAlive(Number(process.argv[2]))}\n`);
