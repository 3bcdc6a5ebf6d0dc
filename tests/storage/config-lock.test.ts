/**
 * Config changes from several processes at once (a `/state link` in pi while `state-flow link`
 * runs in another terminal): each read-modify-write happens under the config's lock, so every
 * link lands and every other key survives.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { configPath, setLink } from "../../lib/storage/placement/config.js";
import { tempDir } from "../helpers/temp-dir.js";

const CHILD = fileURLToPath(new URL(`children/config-link-child${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url));

function run(args: string[]): Promise<void> {
	return new Promise((resolve, reject) => {
		// A hung child is killed after two minutes and named, never a hung test.
		const p = spawn(process.execPath, [...process.execArgv, CHILD, ...args], { stdio: ["ignore", "ignore", "pipe"], timeout: 120_000, killSignal: "SIGKILL" });
		let err = "";
		p.stderr.on("data", (d: Buffer) => (err += d.toString()));
		p.on("close", (code, signal) => (code === 0 ? resolve() : reject(new Error(`link child ${args.join(" ")} exited ${code ?? signal}: ${err}`))));
	});
}

describe("config changes from several processes", () => {
	it("4 processes × 15 links at once: every link is recorded, every other key kept", async (t) => {
		const agentDir = tempDir(t);
		mkdirSync(join(agentDir, "state-flow"));
		writeFileSync(configPath(agentDir), JSON.stringify({ mode: "passive", custom: { keep: [1, 2] }, links: { "/kept": "team/kept" } }));
		await Promise.all(["a", "b", "c", "d"].map((tag) => run([agentDir, tag, "15"])));
		const written = JSON.parse(readFileSync(configPath(agentDir), "utf8")) as { mode: string; custom: unknown; links: Record<string, string> };
		assert.equal(written.mode, "passive");
		assert.deepEqual(written.custom, { keep: [1, 2] });
		assert.equal(Object.keys(written.links).length, 61);
		for (const tag of ["a", "b", "c", "d"]) for (let i = 0; i < 15; i++) assert.equal(written.links[`/checkouts/${tag}-${i}`], `team/${tag}-${i}`);
		assert.equal(written.links["/kept"], "team/kept");
	});

	it("unlinking removes only that checkout's link", async (t) => {
		const agentDir = tempDir(t);
		await setLink(agentDir, "/one", "team/one");
		await setLink(agentDir, "/two", "team/two");
		await setLink(agentDir, "/one", undefined);
		assert.deepEqual(JSON.parse(readFileSync(configPath(agentDir), "utf8")).links, { "/two": "team/two" });
	});
});
