/**
 * The package's version, read from its own `package.json`: printed by `--version`, and named
 * by the MCP server to its clients.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fail } from "../core/errors.js";

const PACKAGE_NAME = "pi-state-flow";

/**
 * The version in this package's `package.json`, found by walking up from this module's folder
 * (`lib/cli` from source, `dist/lib/cli` built, the same inside an installed package).
 */
export function packageVersion(from = dirname(fileURLToPath(import.meta.url))): string {
	for (let dir = from; ; dir = dirname(dir)) {
		try {
			const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
			if (pkg.name === PACKAGE_NAME && typeof pkg.version === "string") return pkg.version;
		} catch {
			// No package.json here (or another package's unreadable one): keep walking up.
		}
		if (dirname(dir) === dir) fail("io", `cannot find the package.json of ${PACKAGE_NAME} above ${from}; reinstall the package`);
	}
}
