/**
 * The npm package: `npm pack` ships exactly what pi needs (the built extension, the
 * Skills, the manifest, README and docs) and nothing else; the packed files, installed with
 * the real `pi install` into a temporary agent folder, load in a real session with both
 * tools, the `/state` command and both Skills. Needs a build (`npm test` builds first).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { registerFauxProvider } from "@mariozechner/pi-ai";
import { AuthStorage, createAgentSession, DefaultResourceLoader, ModelRegistry, SessionManager, SettingsManager } from "@mariozechner/pi-coding-agent";
import { tempDir } from "../helpers/temp-dir.js";

function packageRoot(): string {
	for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
		if (existsSync(join(dir, "package.json"))) return dir;
		if (dirname(dir) === dir) throw new Error("package.json not found above this test file");
	}
}
const ROOT = packageRoot();
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** The files `npm pack` would publish (scripts skipped: the test runs after the build). */
function packedFiles(): string[] {
	assert.ok(existsSync(join(ROOT, "dist/lib/index.js")), "dist/lib is missing: run `npm run build` first");
	const out = execFileSync(NPM, ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
	const [info] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
	return (info?.files ?? []).map((f) => f.path).sort();
}

describe("the npm package", () => {
	it("contains the built extension, both Skills, the manifest, README and docs, and nothing else", () => {
		const files = packedFiles();
		for (const needed of ["package.json", "README.md", "dist/lib/index.js", "skills/state-flow-guide/SKILL.md", "skills/state-flow-memory/SKILL.md"]) {
			assert.ok(files.includes(needed), `${needed} is not packed`);
		}
		const allowed =
			/^(package\.json|README\.md|LICENSE(\.md)?|extensions\/state-flow\/index\.js|dist\/lib\/.+\.(js|d\.ts|js\.map|d\.ts\.map)|skills\/[a-z0-9-]+\/SKILL\.md|docs\/.+\.md)$/;
		assert.deepEqual(
			files.filter((f) => !allowed.test(f)),
			[],
		);
		assert.deepEqual(
			files.filter((f) => /^(tests|dist\/tests|scripts|dist\/scripts|lib|\.ci)\//.test(f)),
			[],
		);
		// `dist/` is never cleaned by tsc: a module whose source was deleted must not ship.
		const orphans = files.filter(
			(f) => f.startsWith("dist/lib/") && f.endsWith(".js") && !existsSync(join(ROOT, f.slice("dist/".length).replace(/\.js$/, ".ts"))),
		);
		assert.deepEqual(orphans, [], "built files without a source in lib/: rebuild from a clean dist/");
		const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { pi: { extensions: string[]; skills: string[] } };
		for (const entry of manifest.pi.extensions) assert.ok(files.includes(relative(".", entry)), `pi.extensions entry ${entry} is not packed`);
		// pi's startup list names an extension after its entry's folder: State Flow, not `lib`.
		assert.deepEqual(
			manifest.pi.extensions.map((e) => basename(dirname(e))),
			["state-flow"],
		);
	});

	it("exports the typed extension API as `pi-state-flow/api` (docs/extension-api.md)", async () => {
		const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, { types: string; default: string }> };
		const api = manifest.exports["./api"];
		assert.ok(api !== undefined && existsSync(join(ROOT, api.default)) && existsSync(join(ROOT, api.types)));
		// A package import of itself resolves through `exports`, as another extension's import does.
		// A variable specifier: the type checker must not need a built dist/ to compile this test.
		const specifier = "pi-state-flow/api";
		const mod = (await import(specifier)) as typeof import("../../lib/api.js");
		assert.equal(typeof mod.registerRoot, "function");
		assert.deepEqual([mod.READY_CHANNEL, mod.DISCOVER_CHANNEL], ["state-flow:ready", "state-flow:discover"]);
	});

	it("installs with the real `pi install` and loads both tools, `/state` and both Skills in a session", async (t) => {
		const base = tempDir(t, "state-flow-pkg-");
		const agentDir = join(base, "agent");
		const cwd = join(base, "project");
		mkdirSync(agentDir);
		mkdirSync(cwd);
		// Unpack exactly what npm would publish; dependencies come from this checkout, as `npm install` would provide them.
		execFileSync(NPM, ["pack", "--ignore-scripts", "--pack-destination", base], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
		const tarball = readdirTarball(base);
		execFileSync("tar", ["-xzf", tarball, "-C", base]);
		const pkg = join(base, "package");
		symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"), "dir");
		const pi = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
		execFileSync(process.execPath, [pi, "install", pkg], {
			cwd,
			env: { ...process.env, PI_CODING_AGENT_DIR: agentDir },
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
		});
		const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")) as { packages: string[] };
		assert.equal(settings.packages.length, 1);

		const faux = registerFauxProvider({ provider: "faux" });
		t.after(() => faux.unregister());
		const settingsManager = SettingsManager.create(cwd, agentDir);
		const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, noContextFiles: true });
		await resourceLoader.reload();
		const ext = resourceLoader.getExtensions();
		assert.deepEqual(ext.errors, []);
		assert.deepEqual(
			ext.extensions.map((e) => e.sourceInfo.origin),
			["package"],
		);
		assert.ok(ext.extensions[0]?.commands.has("state"), "the /state command is not registered");
		const skills = resourceLoader.getSkills();
		assert.deepEqual(skills.skills.map((s) => s.name).sort(), ["state-flow-guide", "state-flow-memory"]);
		assert.deepEqual(skills.diagnostics, []);
		const authStorage = AuthStorage.inMemory();
		authStorage.setRuntimeApiKey("faux", "dummy");
		const { session } = await createAgentSession({
			cwd,
			agentDir,
			model: faux.getModel(),
			thinkingLevel: "off",
			authStorage,
			modelRegistry: ModelRegistry.inMemory(authStorage),
			settingsManager,
			resourceLoader,
			sessionManager: SessionManager.inMemory(cwd),
		});
		t.after(() => session.dispose());
		const errors: string[] = [];
		await session.bindExtensions({ onError: (e) => errors.push(`${e.event}: ${e.error}`) });
		assert.deepEqual(errors, []);
		const active = session.getActiveToolNames();
		assert.ok(active.includes("read_state") && active.includes("patch_state"), `active tools: ${active.join(", ")}`);
		assert.ok(active.includes("read"), "pi's own tools stay active");
		assert.match(session.systemPrompt, /<name>state-flow-guide<\/name>/);
		assert.match(session.systemPrompt, /<name>state-flow-memory<\/name>/);
	});
});

/** The one tarball `npm pack` wrote into `dir`. */
function readdirTarball(dir: string): string {
	const found = readdirSync(dir).filter((f) => f.endsWith(".tgz"));
	assert.equal(found.length, 1);
	return join(dir, found[0] as string);
}
