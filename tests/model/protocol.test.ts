/**
 * The protocol block: every variant names both tools and teaches its own grammar with
 * examples that the real engine accepts. The default texts are hash-guarded so that any
 * edit is deliberate (the failure prints the new hash to paste after review).
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { newHistory } from "../../lib/core/history.js";
import { evaluate } from "../../lib/core/query.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { OWNERS } from "../../lib/core/types.js";
import type { Owner, OwnerHistory } from "../../lib/core/types.js";
import { toCanonicalLocator, toCanonicalPatch } from "../../lib/model/interface.js";
import { PROTOCOL_CLOSE, PROTOCOL_OPEN, renderProtocol } from "../../lib/model/protocol.js";

/** All 7 non-empty selections. */
const SELECTIONS: Owner[][] = [1, 2, 3, 4, 5, 6, 7].map((bits) => OWNERS.filter((_, i) => bits & (1 << i)));
const VARIANTS = [
	{ mode: "active", bootstrap: false },
	{ mode: "active", bootstrap: true },
	{ mode: "passive", bootstrap: false },
] as const;

const sha = (s: string): string => createHash("sha256").update(s).digest("hex");
const meta = (id: string) => ({ id, at: "2026-01-01T00:00:00.000Z", by: { kind: "system", reason: "test" } as const });

/** Locators the text shows in backticks (tool names excluded). */
function backtickLocators(text: string): string[] {
	return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).filter((s) => s !== "read_state" && s !== "patch_state");
}

describe("protocol block", () => {
	it("is one delimited block that names both tools and all five planes, for every variant", () => {
		for (const wanted of SELECTIONS) {
			for (const v of VARIANTS) {
				const text = renderProtocol({ mode: v.mode, wanted, bootstrap: v.bootstrap });
				assert.ok(text.startsWith(`${PROTOCOL_OPEN}\n`) && text.endsWith(`\n${PROTOCOL_CLOSE}`));
				assert.equal(text.split(PROTOCOL_OPEN).length, 2);
				for (const word of ["read_state", "patch_state", "intents", "strategy", "tactics", "artifacts", "lazy", "projection"]) {
					assert.ok(text.includes(word), `${wanted.join("+")} ${v.mode}: names ${word}`);
				}
			}
		}
	});

	it("teaches Active writing habits, Passive restraint and the bootstrap start only where they apply", () => {
		for (const wanted of SELECTIONS) {
			const active = renderProtocol({ mode: "active", wanted, bootstrap: false });
			const boot = renderProtocol({ mode: "active", wanted, bootstrap: true });
			const passive = renderProtocol({ mode: "passive", wanted, bootstrap: true });
			for (const t of [active, boot]) {
				assert.match(t, /record it as an intent/);
				assert.match(t, /Keep tactics honest/);
				assert.match(t, /When an intent is done/);
			}
			assert.doesNotMatch(active, /The state is empty/);
			assert.match(boot, /The state is empty\. Start now/);
			assert.match(passive, /write only when the user explicitly asks/);
			assert.doesNotMatch(passive, /The state is empty|record it as an intent/);
		}
	});

	it("writes flat examples relative and scoped examples qualified with a wanted owner", () => {
		for (const wanted of SELECTIONS) {
			const text = renderProtocol({ mode: "active", wanted, bootstrap: true });
			const excluded = OWNERS.filter((o) => !wanted.includes(o));
			for (const loc of backtickLocators(text)) {
				if (wanted.length === 1) assert.doesNotMatch(loc, /^(global|cwd|session)\b/, `flat locator ${loc}`);
				else if (!loc.startsWith("effective.")) assert.ok(wanted.some((o) => loc.startsWith(o)), `scoped locator ${loc} names a wanted owner`);
				for (const o of excluded) assert.ok(!loc.startsWith(o), `${loc} avoids excluded ${o}`);
			}
		}
	});

	it("gives a bootstrap patch and read locators that the real engine accepts, in every selection", () => {
		for (const wanted of SELECTIONS) {
			const text = renderProtocol({ mode: "active", wanted, bootstrap: true });
			const histories: Partial<Record<Owner, OwnerHistory>> = {};
			for (const o of wanted) histories[o] = newHistory(o, 20);
			const example = /e\.g\. patch_state (\{.*\})$/m.exec(text)?.[1];
			assert.ok(example !== undefined, "bootstrap text carries a patch example");
			const staged = stage(histories, toCanonicalPatch(JSON.parse(example), wanted), meta("t1"));
			assert.deepEqual(staged.report.danglingRefs, []);
			commitStaged(histories, staged);
			// A body and a second transition for every owner, so that `[1]`, `patches[0]` and lazy reads resolve.
			const more: Record<string, unknown> = {};
			for (const o of wanted) more[o] = { lazy: { "notes/plan.md": "the plan" }, tactics: { t2: "next" } };
			commitStaged(histories, stage(histories, more, meta("t2")));
			for (const loc of backtickLocators(text)) {
				if (/^\{/.test(loc)) continue;
				const [result] = evaluate({ wanted, histories }, [toCanonicalLocator(loc, wanted)]);
				assert.notEqual(result?.value, undefined, `${wanted.join("+")}: ${loc} resolves`);
			}
		}
	});

	it("is deterministic and independent of the order the owners are listed in", () => {
		const a = renderProtocol({ mode: "active", wanted: ["session", "global", "cwd"], bootstrap: false });
		const b = renderProtocol({ mode: "active", wanted: ["global", "cwd", "session"], bootstrap: false });
		assert.equal(a, b);
	});

	it("stays under 1,900 bytes in every variant (target 2,500)", () => {
		for (const wanted of SELECTIONS) {
			for (const v of VARIANTS) {
				const bytes = Buffer.byteLength(renderProtocol({ mode: v.mode, wanted, bootstrap: v.bootstrap }));
				assert.ok(bytes <= 1900, `${wanted.join("+")} ${v.mode}${v.bootstrap ? " bootstrap" : ""}: ${bytes} bytes`);
			}
		}
	});

	it("matches the reviewed default texts (update a hash only after reading the new text)", () => {
		const expected: Record<string, string> = {
			"cwd active": "7d0fd0d9e417e763e4cf3e76bfe168228ee8768a1a4c27ad10eaf77a665f7bce",
			"cwd bootstrap": "7efa9bb5e255f34ecd866dc337157780f2d7cd549db569dd1a08ac8b4cda0719",
			"cwd passive": "9e27782ca0b358c374170437fae09a91a2b2be240b8e1bb4cc9777fff71a44ff",
			"cwd+session active": "984e91c138dd82a07cf94bbba8a71327035395c52f4aca0e399d80e8e14e768d",
			"cwd+session bootstrap": "fb67ad48bcf28518a59607651bc48d30af7220f3bc71fbca952c5364ea64e406",
			"cwd+session passive": "e3d64b1ca26ad6aa911cd79c405fa32cab88dfa1f715052c40531496093a7a17",
			"global+cwd+session active": "82142082fe605224f8c94ed58769443cd0020a15048e0887a49f00ad03c7d1a9",
			"global+cwd+session bootstrap": "a8eab6a8b21c582cda7d3ca42fe805ae54eba1e7f7676106ffe374f46558caf4",
			"global+cwd+session passive": "baccccdf9d1ca94f34b1dd9b04c132d52a4c111e5103c4ad0aa48d201e270d49",
		};
		for (const wanted of [["cwd"], ["cwd", "session"], ["global", "cwd", "session"]] as Owner[][]) {
			for (const v of VARIANTS) {
				const name = `${wanted.join("+")} ${v.bootstrap ? "bootstrap" : v.mode}`;
				const actual = sha(renderProtocol({ mode: v.mode, wanted, bootstrap: v.bootstrap }));
				assert.equal(actual, expected[name], `protocol text "${name}" changed; new sha256: ${actual}`);
			}
		}
	});
});
