/**
 * The house rules of `lib/` (AGENTS.md, docs/architecture.md), checked on the sources: the
 * import graph has no cycles, every import obeys the layer rule, and no file is over 400
 * lines. Type-only imports count: a reader follows them as much as value imports.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

function packageRoot(): string {
	for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
		if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "lib"))) return dir;
		if (dirname(dir) === dir) throw new Error("the package root (package.json beside lib/) is not above this test file");
	}
}
const ROOT = packageRoot();
const LIB = join(ROOT, "lib");

/** What each layer may import besides itself (the layer rule, written once in AGENTS.md). */
const MAY_IMPORT: Record<string, readonly string[]> = {
	core: [],
	model: ["core"],
	storage: ["core"],
	ops: ["core", "storage"],
	// the model surface any front-end serves (read_state, patch_state, the head), written once.
	surface: ["core", "model", "storage", "ops"],
	host: ["core", "model", "storage", "ops", "surface", "api"],
	mcp: ["core", "model", "storage", "ops", "surface"],
	// the CLI starts the MCP server (`state-flow mcp`, a dynamic import in that verb only).
	cli: ["core", "storage", "ops", "mcp"],
	"": ["core", "model", "storage", "ops", "surface", "host", "mcp", "cli", "api"],
	// the public contract for other extensions: a leaf that imports nothing.
	api: [],
};
/** Packages a pure layer may still import, each with why it stays pure. */
const PURE_PACKAGES: Record<string, readonly string[]> = {
	// posix path arithmetic on artifact keys: string functions, no file system.
	core: ["node:path"],
	// the tools' declarations are TypeBox schemas.
	model: ["typebox", "@mariozechner/pi-ai"],
};
/** Files allowed over the line limit, each with its reason. */
const LONG_FILES: Record<string, string> = {};
/** Import cycles still to break, each as its sorted files. */
const KNOWN_CYCLES: string[][] = [];
const MAX_LINES = 400;

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const path = join(dir, e.name);
		if (e.isDirectory()) return sources(path);
		return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
	});
}

/** Every module specifier a file names: static imports and re-exports (type-only too) and dynamic imports. */
function specifiers(text: string): string[] {
	const out: string[] = [];
	const patterns = [/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm, /^\s*import\s*["']([^"']+)["']/gm, /\bimport\(\s*["']([^"']+)["']\s*\)/g];
	for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1] as string);
	return out;
}

const files = sources(LIB).map((f) => relative(LIB, f).split("\\").join("/"));
const layerOf = (file: string): string => (file === "api.ts" ? "api" : file.includes("/") ? (file.split("/")[0] as string) : "");
const edges = new Map<string, string[]>();
const packages = new Map<string, string[]>();
for (const file of files) {
	const deps: string[] = [];
	const pkgs: string[] = [];
	for (const spec of specifiers(readFileSync(join(LIB, file), "utf8"))) {
		if (!spec.startsWith(".")) {
			pkgs.push(spec);
			continue;
		}
		const target = relative(LIB, resolve(dirname(join(LIB, file)), spec.replace(/\.js$/, ".ts")))
			.split("\\")
			.join("/");
		deps.push(target);
	}
	edges.set(file, deps);
	packages.set(file, pkgs);
}

/** Tarjan's strongly connected components of more than one file (or a file importing itself). */
function cycles(): string[][] {
	let index = 0;
	const idx = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const on = new Set<string>();
	const out: string[][] = [];
	const visit = (v: string): void => {
		idx.set(v, index);
		low.set(v, index);
		index++;
		stack.push(v);
		on.add(v);
		for (const w of edges.get(v) ?? []) {
			if (!edges.has(w)) continue;
			if (!idx.has(w)) {
				visit(w);
				low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
			} else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
		}
		if (low.get(v) === idx.get(v)) {
			const scc: string[] = [];
			for (;;) {
				const w = stack.pop() as string;
				on.delete(w);
				scc.push(w);
				if (w === v) break;
			}
			if (scc.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(scc.sort());
		}
	};
	for (const f of files) if (!idx.has(f)) visit(f);
	return out;
}

describe("the house of lib/", () => {
	it("reads a graph of every source file (the check sees what it checks)", () => {
		assert.ok(files.length > 100, `only ${files.length} files found under ${LIB}`);
		assert.ok(files.includes("core/types.ts") && files.includes("index.ts"));
		const resolved = [...edges.values()].flat();
		assert.ok(resolved.length > 500, `only ${resolved.length} imports read`);
		const missing = resolved.filter((t) => !edges.has(t));
		assert.deepEqual(missing, [], "imports that name no source file");
	});

	it("has no import cycle (and the list of cycles still to break holds only real ones)", () => {
		const found = cycles().map((c) => c.join(" "));
		const known = KNOWN_CYCLES.map((c) => c.join(" "));
		assert.deepEqual(
			found.filter((c) => !known.includes(c)),
			[],
		);
		assert.deepEqual(
			known.filter((c) => !found.includes(c)),
			[],
			"broken cycles to remove from KNOWN_CYCLES",
		);
	});

	it("keeps the layer rule: core imports nothing; model and storage import core; ops imports core and storage; host imports all; the CLI never imports host or model", () => {
		const broken: string[] = [];
		for (const [file, deps] of edges) {
			const layer = layerOf(file);
			const may = MAY_IMPORT[layer];
			assert.ok(may !== undefined, `${file} is in no known layer: add its folder to the layer rule`);
			for (const dep of deps) {
				const to = layerOf(dep);
				if (to !== layer && !may.includes(to)) broken.push(`${file} -> ${dep}`);
			}
			const pure = PURE_PACKAGES[layer];
			if (pure !== undefined) for (const p of packages.get(file) ?? []) if (!pure.includes(p)) broken.push(`${file} -> package ${p}`);
		}
		assert.deepEqual(broken, []);
	});

	it("keeps the MCP SDK off pi's load path and off every other CLI command (only `state-flow mcp` loads it)", () => {
		const reach = (from: string, follow: (file: string, dep: string) => boolean): Set<string> => {
			const seen = new Set<string>([from]);
			const todo = [from];
			for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
				for (const dep of edges.get(f) ?? []) {
					if (seen.has(dep) || !follow(f, dep)) continue;
					seen.add(dep);
					todo.push(dep);
				}
			}
			return seen;
		};
		const sdk = (file: string) => (packages.get(file) ?? []).filter((p) => p.startsWith("@modelcontextprotocol/"));
		const fromPi = [...reach("index.ts", () => true)];
		assert.ok(fromPi.length > 50, "pi's load path was read");
		assert.deepEqual(
			fromPi.filter((f) => sdk(f).length > 0 || f.startsWith("mcp/")),
			[],
		);
		// The CLI reaches lib/mcp through the `mcp` verb's dynamic import only.
		const fromCli = [...reach("cli/main.ts", (f, dep) => !(f === "cli/mcp.ts" && dep.startsWith("mcp/")))];
		assert.deepEqual(
			fromCli.filter((f) => sdk(f).length > 0 || f.startsWith("mcp/")),
			[],
		);
		const verb = readFileSync(join(LIB, "cli/mcp.ts"), "utf8");
		assert.match(verb, /await import\("\.\.\/mcp\/serve\.js"\)/, "the verb imports the server dynamically");
		assert.doesNotMatch(verb, /^\s*import\b[^;(]*from\s*"\.\.\/mcp\//m, "and never statically");
		assert.ok(
			files.filter((f) => f.startsWith("mcp/")).some((f) => sdk(f).length > 0),
			"lib/mcp uses the SDK (the check looks at the right names)",
		);
	});

	it("keeps every file at most 400 lines", () => {
		const long = files.map((f) => ({ f, lines: readFileSync(join(LIB, f), "utf8").split("\n").length - 1 })).filter(({ lines }) => lines > MAX_LINES);
		assert.deepEqual(
			long.filter(({ f }) => LONG_FILES[f] === undefined).map(({ f, lines }) => `${f}: ${lines}`),
			[],
		);
		assert.deepEqual(
			Object.keys(LONG_FILES).filter((f) => !long.some((l) => l.f === f)),
			[],
			"files back under the limit to remove from LONG_FILES",
		);
	});
});
