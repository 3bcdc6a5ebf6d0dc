/**
 * The credential check skips secretlint's preset for text no rule of it could match
 * (`presetMayMatch`, a cost cut for issue 24's ≤ 5 % budget). The gate must never hide a
 * finding: wherever the preset itself reports something, the gate lets the text through to it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { presetMayMatch } from "../../lib/storage/credentials/check.js";
import { credentialSamples, ordinarySamples } from "./credential-samples.js";

const CONFIG = {
	rules: [
		{
			id: "@secretlint/secretlint-rule-preset-recommend",
			rule: recommended,
			rules: [{ id: "@secretlint/secretlint-rule-aws", options: { enableIDScanRule: true } }],
		},
	],
};

/** What the whole preset reports for a text, with no gate in front of it. */
async function presetFinds(content: string): Promise<number> {
	const r = await lintSource({
		source: { content, filePath: "state.txt", ext: ".txt", contentType: "text" },
		options: { config: CONFIG, noPhysicFilePath: true, maskSecrets: true },
	});
	return r.messages.length;
}

/** Short forms the preset accepts without a 16-character run (each rule's shortest match). */
const SHORT_FORMS = [
	"xoxb-1-a",
	"xapp-1-a-b",
	"SG.a.b",
	"//r/:_authToken=abc",
	"ghs_1_a.b.c",
	"https://u:p@h.io",
	"postgres://a:b@h",
	"-----BEGIN RSA PRIVATE KEY-----",
];

describe("the credential check's gate in front of secretlint's preset", () => {
	it("lets every text the preset flags through: the issue's samples and each rule's shortest forms", async () => {
		let flagged = 0;
		for (const [name, text] of [...Object.entries(credentialSamples()), ...SHORT_FORMS.map((t) => [t, t] as const)]) {
			if ((await presetFinds(text)) === 0) continue;
			flagged++;
			assert.ok(presetMayMatch(text), `the gate passes ${name}`);
		}
		assert.ok(flagged >= 15, `the preset flagged ${flagged} samples (the check is about them)`);
	});

	it("never hides a finding for samples inside arbitrary text (fast-check)", async () => {
		const samples = [...Object.values(credentialSamples()), ...SHORT_FORMS];
		// Texts the preset flagged: the law is about them, so most cases must be.
		let flagged = 0;
		await assertProperty(
			fc.asyncProperty(fc.string({ maxLength: 20 }), fc.constantFrom(...samples), fc.string({ maxLength: 20 }), async (before, sample, after) => {
				const text = `${before}${sample}${after}`;
				if ((await presetFinds(text)) === 0) return;
				flagged++;
				assert.ok(presetMayMatch(text), JSON.stringify(text));
			}),
			{ numRuns: 150 },
		);
		assert.ok(flagged >= 25, `the preset flagged only ${flagged} of 150 texts`);
	});

	it("spares ordinary prose the preset (the gate is not always open)", () => {
		assert.equal(presetMayMatch("the password field is required"), false);
		assert.equal(presetMayMatch("write the parser, then the tests"), false);
		assert.equal(presetMayMatch(ordinarySamples()["the word password"] as string), false);
	});
});
