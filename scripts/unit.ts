/**
 * `npm run test:unit`: every test file that needs neither tmux (the real `pi` in a terminal) nor
 * PostgreSQL, built first by the script. `--coverage` adds node's own line/branch/function
 * coverage over `lib/` (CI prints it; the README quotes the figure).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const TESTS = fileURLToPath(new URL("../tests/", import.meta.url));
/** Folders and files that start a PostgreSQL server or drive `pi` in tmux. */
const NEEDS_SERVICES = [
	"pg/",
	"fleet/",
	"terminal/",
	"cli/shared.test.js",
	"cli/shared-migrate.test.js",
	"host/shared-link.test.js",
	"host/shared-memory.test.js",
	"host/shared-outage.test.js",
	"skills/materialise-pg.test.js",
	"mcp/pg.test.js",
];

function testFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const path = join(dir, e.name);
		if (e.isDirectory()) return testFiles(path);
		return e.name.endsWith(".test.js") ? [path] : [];
	});
}

const files = testFiles(TESTS).filter((f) => {
	const rel = relative(TESTS, f).split("\\").join("/");
	return !NEEDS_SERVICES.some((n) => (n.endsWith("/") ? rel.startsWith(n) : rel === n));
});
const coverage = process.argv.includes("--coverage");
const args = ["--test", "--test-concurrency=2", ...(coverage ? ["--experimental-test-coverage"] : []), ...files];
if (!coverage) process.exit(spawnSync(process.execPath, args, { stdio: "inherit" }).status ?? 1);
// Node 20 reports every file it loaded; the figure that matters is `lib/`'s, summed here from its rows.
const run = spawnSync(process.execPath, args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, stdio: ["ignore", "pipe", "inherit"] });
process.stdout.write(run.stdout);
let lines = 0;
let covered = 0;
for (const row of run.stdout.split("\n")) {
	// `# dist/lib/storage/stores.js | 97.12 | 88.00 | 100.00 | …` (line %, branch %, funcs %); weighted by the file's lines below.
	const m = /^# (\S*dist\/lib\/\S+\.js)\s*\|\s*([\d.]+)\s*\|/.exec(row);
	if (m === null) continue;
	const total = lineCount(m[1] as string);
	lines += total;
	covered += (Number(m[2]) / 100) * total;
}
if (lines > 0) console.log(`lib line coverage (unit tests): ${((100 * covered) / lines).toFixed(1)}% of ${lines} lines`);
process.exit(run.status ?? 1);

function lineCount(file: string): number {
	try {
		return readFileSync(file, "utf8").split("\n").length;
	} catch {
		return 0;
	}
}
