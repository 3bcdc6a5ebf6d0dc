/**
 * Credentials are not stored (issue 24): every class the issue names is refused, naming the
 * field and saying where to keep the secret instead, from every writer — the model through the
 * real pi SDK, another extension's root, `state-flow import` and `set`, `/state set`, undo —
 * while ordinary text (hashes, ids, data, prose about passwords) passes, and the user's
 * `allowSecrets` lets a false positive through.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { performance } from "node:perf_hooks";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import type { ExtensionFactory } from "@mariozechner/pi-coding-agent";
import { type RootClient, registerRoot } from "../../lib/api.js";
import { isStateError } from "../../lib/core/errors.js";
import { TODO_SPEC } from "../../examples/todo/index.js";
import { configPath, validateConfig } from "../../lib/storage/placement/config.js";
import { findCredentials, refuseCredentials } from "../../lib/storage/credentials/check.js";
import { runCli, unwrapped } from "../cli/run.js";
import { flowDirs, withFlow } from "../host/fixture.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { credentialSamples, ordinarySamples } from "./credential-samples.js";

const BY = { kind: "system", reason: "test" } as const;
const AT = "2026-12-01T10:00:00.000Z";
const ADVICE = /keep a reference to where the secret lives instead \(e\.g\. "the env var AWS_SECRET_ACCESS_KEY", "1Password item Prod DB"\)/;
/** A refusal read as one line (it is printed as lines of at most 68 characters). */
const flat = (text: string) => text.replace(/\s*\n\s*/g, " ");

function writeConfig(agentDir: string, config: Record<string, unknown>): void {
	mkdirSync(join(agentDir, "state-flow"), { recursive: true });
	writeFileSync(configPath(agentDir), JSON.stringify(config));
}

describe("credentials: the pattern set", () => {
	const samples = credentialSamples();
	for (const [name, text] of Object.entries(samples)) {
		it(`refuses ${name}, naming the field`, async () => {
			const found = await findCredentials({ cwd: { lazy: { "deploy.md": `notes\n${text}\nmore` } } });
			assert.ok(found.length > 0, `${name} was not recognised`);
			assert.deepEqual(found[0]?.path, ["cwd", "lazy", "deploy.md"]);
		});
	}

	for (const [name, text] of Object.entries(ordinarySamples())) {
		it(`lets ${name} through`, async () => {
			assert.deepEqual(await findCredentials({ cwd: { tactics: { next: text }, lazy: { [text.slice(0, 200)]: { text } } } }), []);
		});
	}

	it("property: hex digests, UUIDs and prose about passwords never look like credentials", async () => {
		await assertProperty(
			fc.asyncProperty(
				fc.array(
					fc.oneof(
						fc.uuid(),
						fc.stringMatching(/^[0-9a-f]{40}$/),
						fc.stringMatching(/^[0-9a-f]{64}$/),
						fc.constantFrom("password", "the password is in the env var DB_PASSWORD", "secret: see 1Password", "rotate the token"),
					),
					{ minLength: 1, maxLength: 8 },
				),
				async (texts) => {
					assert.deepEqual(await findCredentials({ cwd: { tactics: Object.fromEntries(texts.map((t, i) => [`k${i}`, t])) } }), []);
				},
			),
			{ numRuns: 60 },
		);
	});

	it("reads a key and its value together, and a credential in a key is named by its object, never printed", async () => {
		const token = samples["GitHub classic token"] as string;
		await assert.rejects(refuseCredentials({ cwd: { lazy: { db: { host: "db.internal", password: "Zx9!kLq2w" } } } }), (e) => {
			assert.ok(isStateError(e));
			assert.equal(e.code, "credential");
			assert.deepEqual(e.path, ["cwd", "lazy", "db", "password"]);
			assert.match(flat(e.message), /^`cwd\.lazy\.db\.password` holds what looks like a password; nothing was written\./);
			assert.match(flat(e.message), ADVICE);
			assert.match(flat(e.message), /once with --allow-secret .*, or for good by listing it under `allowSecrets` in State Flow's config\.json$/);
			return true;
		});
		await assert.rejects(refuseCredentials({ cwd: { tactics: { [token]: { note: "x" } } } }), (e) => {
			assert.ok(isStateError(e));
			assert.deepEqual(e.path, ["cwd", "tactics"]);
			assert.match(e.message, /^a key of `cwd\.tactics` holds what looks like a GitHub token/);
			assert.ok(!e.message.includes(token), "the token is not repeated");
			return true;
		});
		// A list's items are read with the key that holds them.
		assert.deepEqual((await findCredentials({ cwd: { intents: { db: { env: ["DEBUG=1", token] } } } }))[0]?.path, ["cwd", "intents", "db", "env", 1]);
	});

	it("leaves no performance marks behind (secretlint's profiler is off: a pi session commits for hours)", async () => {
		const before = performance.getEntriesByType("mark").length;
		for (let i = 0; i < 20; i++) await findCredentials({ cwd: { tactics: { [`k${i}`]: `value ${i}` } } });
		assert.equal(performance.getEntriesByType("mark").length, before);
	});

	it("a field saying secretlint-disable switches nothing off", async () => {
		const token = samples["GitLab token"] as string;
		const patch = { cwd: { tactics: { a: "// secretlint-disable", b: `x ${token} // secretlint-disable-line` } } };
		assert.deepEqual(
			(await findCredentials(patch)).map((f) => f.path),
			[["cwd", "tactics", "b"]],
		);
	});

	it("allowSecrets lets an exact string or a pattern through, and nothing else", async () => {
		const a = samples["Slack bot token"] as string;
		const b = samples["GitHub classic token"] as string;
		const patch = { cwd: { tactics: { one: `hook ${a}`, two: `token ${b}` } } };
		assert.deepEqual(
			(await findCredentials(patch, [a])).map((f) => f.path),
			[["cwd", "tactics", "two"]],
		);
		assert.deepEqual(await findCredentials(patch, [a, "/ghp_[A-Za-z0-9]{36}/"]), []);
		// An allowed string elsewhere in the field does not cover another credential.
		assert.equal((await findCredentials({ cwd: { tactics: { one: `${a} ${b}` } } }, [a])).length, 1);
	});

	it("the config's allowSecrets keeps valid entries and names the bad ones without echoing them", () => {
		const token = samples["GitLab token"] as string;
		const { config, problems } = validateConfig({ allowSecrets: [token, "/ghp_[a-z]+/i", `/(${token}/`, 7, ""] });
		assert.deepEqual(config.allowSecrets, [token, "/ghp_[a-z]+/i"]);
		assert.equal(problems.length, 3);
		assert.match(problems[0] ?? "", /`allowSecrets\[2\]` is not a valid pattern/);
		assert.match(problems[1] ?? "", /`allowSecrets\[3\]` must be a non-empty string/);
		assert.ok(!problems.join("\n").includes(token), "an entry is never echoed");
		assert.match(validateConfig({ allowSecrets: "x" }).problems[0] ?? "", /`allowSecrets` must be an array/);
	});
});

describe("credentials: every writer", () => {
	const samples = credentialSamples();

	it("patch_state through the real pi SDK is refused naming the field; nothing is written; allowSecrets lets it through", async (t) => {
		const d = flowDirs(t, "state-flow-cred-");
		const token = samples["Anthropic key"] as string;
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir }, async (flow) => {
			await flow.prompt("remember the key", [
				{ calls: [{ id: "w", name: "patch_state", args: { cwd: { tactics: { ok: "fine" }, lazy: { "api.md": `key: ${token}` } } } }] },
				{ text: "done" },
			]);
			const r = flow.results();
			assert.equal(r.w?.isError, true);
			assert.match(flat(r.w?.text ?? ""), /`cwd\.lazy\["api\.md"\]` holds what looks like an Anthropic API key; nothing was written\./);
			assert.match(flat(r.w?.text ?? ""), ADVICE);
			// The full path of the config file where `allowSecrets` goes, on a line of its own.
			assert.match(r.w?.text ?? "", new RegExp(`\n${configPath(d.agentDir).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
			assert.ok(!(r.w?.text ?? "").includes(token), "the key is not echoed");
		});
		// Not even the harmless half of the patch was written.
		assert.equal((await openStoresAt({ agentDir: d.agentDir, cwd: d.cwd }).load("cwd")).seq, 0);
		writeConfig(d.agentDir, { allowSecrets: [token] });
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir }, async (flow) => {
			await flow.prompt("it is a test fixture", [
				{ calls: [{ id: "w", name: "patch_state", args: { cwd: { lazy: { "api.md": `key: ${token}` } } } }] },
				{ text: "ok" },
			]);
			assert.equal(flow.results().w?.isError, false, flow.results().w?.text);
		});
	});

	it("another extension's root write is refused the same way", async (t) => {
		const d = flowDirs(t, "state-flow-cred-root-");
		let client: RootClient | undefined;
		const grab: ExtensionFactory = (pi) => {
			client = registerRoot(pi, TODO_SPEC, { change: () => {} });
		};
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, extraFactories: [grab] }, async () => {
			await assert.rejects(
				client?.write("cwd", { a: { text: `deploy with ${samples["GitHub fine-grained token"]}` } }) as Promise<unknown>,
				/`cwd\.todos\.a\.text` holds what looks like a GitHub token/,
			);
			assert.deepEqual(await client?.read("cwd"), {});
		});
	});

	it("/state set is refused; nothing is written", async (t) => {
		const d = flowDirs(t, "state-flow-cred-set-");
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir }, async (flow) => {
			const said = (await flow.command(`/state set cwd.tactics.aws ${JSON.stringify(samples["AWS secret in an env assignment"])}`)).join("\n");
			assert.match(said, /`cwd\.tactics\.aws` holds what looks like an AWS (?:secret )?access key/);
		});
		assert.equal((await openStoresAt({ agentDir: d.agentDir, cwd: d.cwd }).load("cwd")).seq, 0);
	});

	it("state-flow import and set are refused with exit 1, nothing written; allowSecrets lets set through", async (t) => {
		const { cwd, agentDir } = projectDirs(t, "state-flow-cred-cli-");
		const run = (args: string[], input?: string) => runCli([...args, "--agent-dir", agentDir], { cwd, ...(input !== undefined ? { input } : {}) });
		const key = samples["RSA private key block"] as string;
		const state = { intents: {}, strategy: {}, tactics: { next: "deploy" }, artifacts: {}, lazy: { id_rsa: key } };
		const imported = run(["import", "-", "--owner", "cwd"], JSON.stringify(state));
		assert.equal(imported.code, 1, imported.stdout);
		assert.match(flat(imported.stderr), /`cwd\.lazy\.id_rsa` holds what looks like a private key; nothing was written\./);
		assert.ok(!imported.stderr.includes(key.split("\n")[1] as string), "the key is not printed");
		const pw = samples["password= assignment"] as string;
		const set = run(["set", "cwd.tactics.db", JSON.stringify(pw)]);
		assert.equal(set.code, 1, set.stdout);
		assert.match(unwrapped(set.stderr), /`cwd\.tactics\.db` holds what looks like a password/);
		assert.equal((await openStoresAt({ agentDir, cwd }).load("cwd")).seq, 0);
		// Refused before any lock: the store's folder (where its lock lives) was never even created.
		assert.equal(existsSync(join(cwd, ".pi", "state-flow")), false);
		writeConfig(agentDir, { allowSecrets: [pw] });
		const allowed = run(["set", "cwd.tactics.db", JSON.stringify(pw)]);
		assert.equal(allowed.code, 0, allowed.stderr);
		assert.equal((await openStoresAt({ agentDir, cwd }).load("cwd")).state.tactics.db, pw);
	});

	it("undo and restore: bringing back a credential written before this check is refused; undoing its write (deleting it) is not", async (t) => {
		const { cwd, agentDir } = projectDirs(t, "state-flow-cred-undo-");
		const token = samples["OpenAI key"] as string;
		// Written as an older build would have: the store holds the key (here through the allow list).
		const old = openStoresAt({ agentDir, cwd, allowSecrets: [token] });
		await old.commit({ cwd: { tactics: { ai: `key ${token}` } } }, { by: BY, id: "aaaa0001-0000", at: AT });
		await old.commit({ cwd: { tactics: { ai: null } } }, { by: BY, id: "aaaa0002-0000", at: AT });
		const run = (args: string[]) => runCli([...args, "--yes", "--agent-dir", agentDir], { cwd });
		const back = run(["undo", "aaaa0002-0000"]);
		assert.equal(back.code, 1, back.stdout);
		assert.match(unwrapped(back.stderr), /`cwd\.tactics\.ai` holds what looks like an OpenAI API key/);
		const restored = run(["restore", "aaaa0001-0000"]);
		assert.equal(restored.code, 1, restored.stdout);
		assert.match(unwrapped(restored.stderr), /`cwd\.tactics\.ai` holds what looks like an OpenAI API key/);
		const stores = openStoresAt({ agentDir, cwd });
		assert.equal((await stores.load("cwd")).seq, 2);
		// Undoing the write itself only deletes: a patch that writes no string holds no credential.
		await old.commit({ cwd: { tactics: { ai: `key ${token}` } } }, { by: BY, id: "aaaa0003-0000", at: AT });
		const gone = run(["undo", "aaaa0003-0000"]);
		assert.equal(gone.code, 0, gone.stderr);
		assert.equal((await stores.load("cwd")).state.tactics.ai, undefined);
	});
});
