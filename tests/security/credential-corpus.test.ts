/**
 * Issue 33's credential classes against the ordinary text that must still store (the corpus in
 * `credential-corpus.ts`): every positive is refused, in a value and as the value of a named
 * member, and names what it looks like; every negative passes, also inside an artifact record
 * with the fingerprints the artifact compiler writes; a property mixes hashes, UUIDs, versions and
 * base64 of plain text under ordinary names and finds nothing.
 */
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import { entropy, GENERIC_ENTROPY } from "../../lib/storage/credentials/patterns.js";
import { findCredentials } from "../../lib/storage/credentials/check.js";
import { corpusNegatives, corpusPositives } from "./credential-corpus.js";
import { assertProperty } from "../helpers/seed.js";

describe("credentials: issue 33's corpus", () => {
	for (const [name, text] of Object.entries(corpusPositives())) {
		it(`refuses ${name}`, async () => {
			const found = await findCredentials({ cwd: { tactics: { note: `before\n${text}\nafter` } } });
			assert.ok(found.length > 0, `${name} was not recognised`);
			assert.deepEqual(found[0]?.path, ["cwd", "tactics", "note"]);
		});
	}

	for (const [name, text] of Object.entries(corpusNegatives())) {
		it(`stores ${name}`, async () => {
			assert.deepEqual(await findCredentials({ cwd: { tactics: { note: text }, lazy: { "notes/x.md": `# notes\n\n${text}\n` } } }), []);
		});
	}

	it("a member named like a secret is read with its value: OPENAI_API_KEY, apiKey, password", async () => {
		const key = corpusPositives()["OpenAI project key (sk-proj-)"] as string;
		const found = await findCredentials({ cwd: { strategy: { env: { OPENAI_API_KEY: key.replace("sk-proj-", "k") } } } });
		assert.deepEqual(
			found.map((f) => [f.path, f.kind]),
			[[["cwd", "strategy", "env", "OPENAI_API_KEY"], "an API key or token"]],
		);
		assert.deepEqual((await findCredentials({ cwd: { lazy: { cfg: { apiKey: "a5F9kQ2mZ7xW3pL8" } } } }))[0]?.kind, "an API key or token");
	});

	it("names the class: a JWT, a bearer token, an AWS secret, a provider's key", async () => {
		const p = corpusPositives();
		const kind = async (name: string) => (await findCredentials({ cwd: { tactics: { x: p[name] as string } } }))[0]?.kind;
		assert.equal(await kind("JWT"), "a JSON Web Token");
		assert.equal(await kind("bearer in prose"), "a bearer token");
		assert.equal(await kind("AWS secret access key in prose"), "an AWS secret access key");
		assert.equal(await kind("Hugging Face token"), "a Hugging Face token");
		assert.equal(await kind("Stripe live secret key"), "a Stripe key");
		assert.equal(await kind("GitLab deploy token"), "a GitLab token");
	});

	it("an artifact record with the compiler's fingerprints and hashes is never refused", async () => {
		const hash = (s: string) => createHash("sha256").update(s).digest("hex");
		const record = {
			kind: "skill",
			note: "the deploy runbook (token rotation, secrets in the vault)",
			sourceHash: hash("source"),
			compiledHash: hash("compiled"),
			compiledTo: ".pi/skills/deploy/SKILL.md",
			compiledFiles: { "SKILL.md": hash("a"), "scripts/rotate-token.sh": hash("b") },
			fingerprint: { size: 1234, mtimeMs: 1_760_000_000_123.5 },
			provenance: { by: "patch_state", at: "2026-12-01T10:00:00.000Z" },
		};
		const patch = {
			cwd: { artifacts: { "skills/deploy/SKILL.md": record, "src/auth/token.ts": { kind: "file", sourceHash: hash("t"), fingerprint: { size: 9 } } } },
		};
		assert.deepEqual(await findCredentials(patch), []);
	});

	it("property: hashes, UUIDs, versions and base64 of plain text under ordinary names are never refused", async () => {
		const name = fc.constantFrom(
			"id",
			"commit",
			"sha",
			"hash",
			"digest",
			"version",
			"checksum",
			"etag",
			"uuid",
			"request_id",
			"content",
			"body",
			"note",
			"revision",
		);
		const value = fc.oneof(
			fc.uuid(),
			fc.stringMatching(/^[0-9a-f]{40}$/),
			fc.stringMatching(/^[0-9a-f]{64}$/),
			fc.tuple(fc.nat(30), fc.nat(30), fc.nat(300)).map(([a, b, c]) => `${a}.${b}.${c}`),
			fc.lorem({ maxCount: 12 }).map((t) => Buffer.from(t).toString("base64")),
			fc.constant(randomUUID()),
		);
		await assertProperty(
			fc.asyncProperty(fc.array(fc.tuple(name, value), { minLength: 1, maxLength: 8 }), async (pairs) => {
				const text = pairs.map(([k, v]) => `${k}: ${v}`).join("\n");
				const patch = { cwd: { tactics: { a: text, ...Object.fromEntries(pairs.map(([k, v], i) => [`${k}${i}`, v])) } } };
				assert.deepEqual(await findCredentials(patch), [], text);
			}),
			{ numRuns: 120 },
		);
	});

	it("the generic rule's entropy threshold tells random keys from words and versions", () => {
		assert.ok(entropy("a5F9kQ2mZ7xW3pL8") >= GENERIC_ENTROPY);
		assert.ok(entropy("1.2.3-beta.4") < GENERIC_ENTROPY);
		assert.ok(entropy("aaaaaaaaaaaa") < 1);
	});
});
