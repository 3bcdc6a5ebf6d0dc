/**
 * Test child: take the lock at argv[2], print `ready`, then either hold it until killed
 * (`hold`) or release it and exit normally (`release`).
 */
import { acquireLock } from "../../../lib/storage/file/lock.js";

const [path = "", mode] = process.argv.slice(2);
const lock = await acquireLock(path, 5_000);
process.stdout.write("ready\n");
if (mode === "release") {
	lock.release();
} else {
	setInterval(() => {}, 1_000);
}
