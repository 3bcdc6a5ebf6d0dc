/**
 * The credential check runs only the rules of secretlint's preset a text may match
 * (`presetRulesFor`: each rule's hints, `PRESET_RULES` in patterns.ts; issue 37's cost cut). The
 * gate must never hide a finding: for any text, the rules it keeps report exactly what the whole
 * preset reports.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { lintSource } from "@secretlint/core";
import { creator as recommended, rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";
import { createRequire } from "node:module";
import { presetRulesFor, ungatedRules } from "../../lib/storage/credentials/check.js";
import { GATED_PRESET_RULES, PRESET_RULES_VERSION } from "../../lib/storage/credentials/patterns.js";
import { credentialSamples, ordinarySamples } from "./credential-samples.js";

type Config = Parameters<typeof lintSource>[0]["options"]["config"];
const PREFIX = "@secretlint/secretlint-rule-";

/** The preset as published, every rule with its default options (as the check registers them). */
const WHOLE: Config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };

function only(ids: readonly string[]): Config {
	return { rules: presetRules.filter((r) => ids.includes(r.meta.id.slice(PREFIX.length))).map((rule) => ({ id: rule.meta.id, rule })) };
}

/** What `config` reports for a text: rule and range of each message, in order. */
async function reports(content: string, config: Config): Promise<string[]> {
	const r = await lintSource({
		source: { content, filePath: "state.txt", ext: ".txt", contentType: "text" },
		options: { config, noPhysicFilePath: true, maskSecrets: true },
	});
	return r.messages.map((m) => `${m.ruleId}@${m.range[0]}-${m.range[1]}`).sort();
}

/** Short forms the preset accepts (each rule's shortest match). */
const SHORT_FORMS = [
	"xoxb-1-a",
	"xapp-1-a-b",
	"SG.a.b",
	"//r/:_authToken=abc",
	"ghs_1_a.b.c",
	"https://u:p@h.io",
	"postgres://a:b@h",
	"MongoDB+srv://a:b@h",
	"HTTPS://HOOKS.SLACK.COM/services/T1/B2/c3",
	"aws_Secret_Access_Key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzzzzzzz'",
	"-----BEGIN RSA PRIVATE KEY-----",
];

describe("the credential check's gate in front of secretlint's preset", () => {
	it("was read from the installed preset and names its every rule; another version runs every rule", () => {
		const installed = (createRequire(import.meta.url)("@secretlint/secretlint-rule-preset-recommend/package.json") as { version: string }).version;
		assert.equal(installed, PRESET_RULES_VERSION, "the preset changed: read each rule's patterns again, update PRESET_RULES and its version");
		const ids = presetRules.map((r) => r.meta.id.slice(PREFIX.length));
		assert.deepEqual([...GATED_PRESET_RULES].sort(), [...ids].sort());
		assert.deepEqual(ungatedRules(installed), []);
		assert.deepEqual(ungatedRules("99.0.0").sort(), [...ids].sort());
	});

	it("reports what the whole preset reports: the issue's samples and each rule's shortest forms", async () => {
		let flagged = 0;
		for (const [name, text] of [...Object.entries(credentialSamples()), ...SHORT_FORMS.map((t) => [t, t] as const)]) {
			const whole = await reports(text, WHOLE);
			if (whole.length > 0) flagged++;
			assert.deepEqual(await reports(text, only(presetRulesFor(text))), whole, name);
		}
		assert.ok(flagged >= 18, `the preset flagged ${flagged} samples (the check is about them)`);
	});

	it("never hides a finding for samples inside arbitrary text (fast-check)", async () => {
		const samples = [...Object.values(credentialSamples()), ...SHORT_FORMS];
		// Texts the preset flagged: the law is about them, so most cases must be.
		let flagged = 0;
		await assertProperty(
			fc.asyncProperty(fc.string({ maxLength: 20 }), fc.constantFrom(...samples), fc.string({ maxLength: 20 }), async (before, sample, after) => {
				const text = `${before}${sample}${after}`;
				const whole = await reports(text, WHOLE);
				if (whole.length > 0) flagged++;
				assert.deepEqual(await reports(text, only(presetRulesFor(text))), whole, JSON.stringify(text));
			}),
			{ numRuns: 150 },
		);
		assert.ok(flagged >= 25, `the preset flagged only ${flagged} of 150 texts`);
	});

	it("spares ordinary text the preset's rules: prose, paths and long identifiers open none", () => {
		for (const text of [
			"the password field is required",
			"write the parser, then the tests",
			ordinarySamples()["the word password"] as string,
			"move the reader into lib/storage/project/git-files.ts and test it against a FIFO",
			`v1000123-${"x".repeat(170)}`,
			"commit 3f9a1c0b7e5d4a2f8c6b1e0d9a7f5c3b1e0d9a7f",
		]) {
			assert.deepEqual(presetRulesFor(text), [], text);
		}
		// A hint opens its own rule only.
		assert.deepEqual(presetRulesFor("see https://example.com/a@b"), ["basicauth"]);
		assert.deepEqual(presetRulesFor("the AWS secret is in the vault"), ["aws"]);
	});
});
