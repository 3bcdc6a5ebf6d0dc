/**
 * Storing what looks like a credential anyway, for one command (issue 33): `/state set …
 * --allow-secret` and `state-flow set|import … --allow-secret` store it; without the flag they
 * refuse, naming the config file's full path (where `allowSecrets` keeps such a string for good)
 * in lines that fit 80 columns as the CLI prints them. The model cannot pass the override: the
 * tools' declarations do not have it, and a call that sends it is refused.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configPath } from "../../lib/storage/placement/config.js";
import { runCli, unwrapped } from "../cli/run.js";
import { flowDirs, withFlow } from "../host/fixture.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { corpusPositives } from "./credential-corpus.js";

describe("--allow-secret: the user's one-command override", () => {
	const samples = corpusPositives();

	it("state-flow set and import refuse in lines of at most 80 columns, naming the config's full path; with --allow-secret they store", async (t) => {
		const { cwd, agentDir } = projectDirs(t, "state-flow-allow-cli-");
		const run = (args: string[], input?: string) => runCli([...args, "--agent-dir", agentDir], { cwd, ...(input !== undefined ? { input } : {}) });
		const jwt = samples.JWT as string;
		const refused = run(["set", "cwd.tactics.session", JSON.stringify(jwt)]);
		assert.equal(refused.code, 1, refused.stdout);
		const lines = refused.stderr.trimEnd().split("\n");
		assert.match(lines[0] as string, /^state-flow: `cwd\.tactics\.session` holds what looks like a JSON Web Token;$/);
		for (const l of lines.slice(0, -1)) assert.ok(l.length <= 80, `${l.length} columns: ${l}`);
		assert.equal(lines.at(-1), configPath(agentDir), "the config file's full path, on a line of its own");
		assert.match(unwrapped(refused.stderr), /--allow-secret/);
		assert.ok(!refused.stderr.includes(jwt), "the token is not printed");
		assert.equal((await openStoresAt({ agentDir, cwd }).load("cwd")).seq, 0);

		const stored = run(["set", "cwd.tactics.session", JSON.stringify(jwt), "--allow-secret"]);
		assert.equal(stored.code, 0, stored.stderr);
		assert.equal((await openStoresAt({ agentDir, cwd }).load("cwd")).state.tactics.session, jwt);

		const key = samples["Stripe live secret key"] as string;
		const state = { intents: {}, strategy: {}, tactics: { session: jwt, billing: `use ${key}` }, artifacts: {}, lazy: {} };
		const importRefused = run(["import", "-", "--owner", "cwd"], JSON.stringify(state));
		assert.equal(importRefused.code, 1, importRefused.stdout);
		assert.match(unwrapped(importRefused.stderr), /`cwd\.tactics\.billing` holds what looks like a Stripe key/);
		const imported = run(["import", "-", "--owner", "cwd", "--allow-secret"], JSON.stringify(state));
		assert.equal(imported.code, 0, imported.stderr);
		assert.equal((await openStoresAt({ agentDir, cwd }).load("cwd")).state.tactics.billing, `use ${key}`);
		// Only set, edit and import take it.
		const del = run(["delete", "cwd.tactics.billing", "--allow-secret"]);
		assert.equal(del.code, 2);
		assert.match(unwrapped(del.stderr), /`delete` does not take `--allow-secret`/);
	});

	it("/state set … --allow-secret stores, through the real pi SDK; without it, refused; the model cannot pass it", async (t) => {
		const d = flowDirs(t, "state-flow-allow-pi-");
		const token = samples["Hugging Face token"] as string;
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir }, async (flow) => {
			const refused = (await flow.command(`/state set cwd.tactics.hf ${JSON.stringify(token)}`)).join("\n");
			assert.match(refused, /`cwd\.tactics\.hf` holds what looks like a Hugging Face token/);
			assert.ok(refused.includes(configPath(d.agentDir)), refused);
			const stored = (await flow.command(`/state set cwd.tactics.hf ${JSON.stringify(token)} --allow-secret`)).join("\n");
			assert.match(stored, /Done as transition/, stored);
			// Before the locator works too, and a JSON value keeps its spaces.
			const again = (await flow.command(`/state set --allow-secret cwd.tactics.hf2 ${JSON.stringify(`a b ${token}`)}`)).join("\n");
			assert.match(again, /Done as transition/, again);

			// A call that sends the override is refused, and the declarations the model was given have no such parameter.
			await flow.prompt("store it", [
				{ calls: [{ id: "w", name: "patch_state", args: { cwd: { tactics: { hf3: token } }, allowSecret: true } }] },
				{ text: "ok" },
			]);
			assert.equal(flow.results().w?.isError, true);
			const tools = flow.seen[0]?.tools ?? [];
			assert.deepEqual(
				tools
					.map((x) => x.name)
					.filter((n) => n.endsWith("_state"))
					.sort(),
				["patch_state", "read_state"],
			);
			for (const tool of tools) assert.ok(!/allow.?secret/i.test(JSON.stringify(tool)), tool.name);
		});
		const state = (await openStoresAt({ agentDir: d.agentDir, cwd: d.cwd }).load("cwd")).state;
		assert.equal(state.tactics.hf, token);
		assert.equal(state.tactics.hf2, `a b ${token}`);
		assert.equal(state.tactics.hf3, undefined);
	});
});
