/**
 * A throwaway pi installation for the terminal tests: an agent folder with `models.json`
 * pointing at the scripted server, `settings.json` installing this package the way a user's
 * `pi install ./path` does, and a project folder. pi runs offline (no version check, no
 * telemetry); HOME is the temp folder so nothing of the real user's pi is read or written.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** This package's root (the folder with package.json), from dist/tests/terminal. */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export interface PiHome {
	root: string;
	home: string;
	agentDir: string;
	cwd: string;
	env: Record<string, string>;
	/** pi's arguments selecting the scripted model. */
	modelArgs: string[];
}

export function makePiHome(baseUrl: string): PiHome {
	const root = mkdtempSync(join(tmpdir(), "state-flow-e2e-"));
	const home = join(root, "home");
	const agentDir = join(home, ".pi", "agent");
	const cwd = join(root, "project");
	mkdirSync(agentDir, { recursive: true });
	mkdirSync(cwd, { recursive: true });
	writeFileSync(
		join(agentDir, "models.json"),
		JSON.stringify({
			providers: {
				scripted: {
					baseUrl,
					api: "openai-completions",
					apiKey: "not-a-key",
					compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
					models: [
						{
							id: "scripted-1",
							name: "Scripted",
							reasoning: false,
							input: ["text"],
							contextWindow: 128000,
							maxTokens: 4096,
							cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
						},
					],
				},
			},
		}),
	);
	writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ packages: [PACKAGE_ROOT], enableInstallTelemetry: false, quietStartup: false }));
	const env = {
		HOME: home,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		TERM: "xterm-256color",
		LANG: "C.UTF-8",
		PATH: process.env.PATH ?? "/usr/bin:/bin",
		...(process.env.TZ ? { TZ: process.env.TZ } : {}),
	};
	return { root, home, agentDir, cwd, env, modelArgs: ["--provider", "scripted", "--model", "scripted-1"] };
}
