/**
 * A reference is a reference (issue 16), end to end over real files: for arbitrary keys
 * (slashes, dots, brackets, quotes, spaces, unicode, `__proto__`), a reference written in
 * the documented spelling round-trips through write, reload, read and head, and deleting its
 * intent cascades to exactly its target; any other spelling is refused (nothing written) or
 * resolves to the same target, never stored as plain data.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { StateError } from "../../lib/core/errors.js";
import { formatLocator, tryParseLocator } from "../../lib/core/locator.js";
import { modelJson } from "../../lib/core/printable.js";
import { isRef } from "../../lib/core/refs.js";
import { evaluate } from "../../lib/core/query.js";
import type { Json, JsonObject, Owner } from "../../lib/core/types.js";
import { renderHead } from "../../lib/model/head.js";
import { patchResult } from "../../lib/model/results.js";
import { presentValue, toCanonicalLocator, toCanonicalPatch } from "../../lib/model/interface.js";
import { tempDir } from "../helpers/temp-dir.js";

const SPECIAL = [
	"tactics",
	"lazy",
	"plans/api-v2.md",
	"plan.md",
	"a.b.c",
	"x[0]",
	'["q"]',
	'say "hi"',
	"two words",
	"naïve/ü",
	"日本.md",
	"__proto__",
	"constructor",
	"$ref",
	"a]b",
	"\\",
	"",
	"t1",
	"-x",
	"9",
];
const key = fc.oneof(fc.constantFrom(...SPECIAL), fc.string({ maxLength: 8 }), fc.string({ unit: "grapheme", maxLength: 4 }));
const SIBLING = "untouched sibling";

/** Own-data object with one member (a generated `__proto__` stays a key). */
function one(k: string, v: Json): JsonObject {
	const o: JsonObject = {};
	Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
	return o;
}

/** The patch as the model sends it: flat planes, or wrapped in the owner for a scoped session. */
function modelPatch(wanted: readonly Owner[], planes: JsonObject): JsonObject {
	return wanted.length === 1 ? planes : { cwd: planes };
}

describe("a reference is a reference, for arbitrary keys", () => {
	for (const wanted of [["cwd"], ["cwd", "session"]] as Owner[][]) {
		it(`documented spelling round-trips and cascades; other spellings are refused or the same target (${wanted.join("+")})`, async (t) => {
			const base = tempDir(t, "state-flow-refs-");
			let run = 0;
			let refusedOther = 0;
			await assertProperty(
				fc.asyncProperty(key, key, fc.constantFrom("tactics" as const, "lazy" as const), async (target, intent, plane) => {
					fc.pre(target !== SIBLING);
					const dir = join(base, `r${run++}`);
					mkdirSync(join(dir, "agent"), { recursive: true });
					mkdirSync(join(dir, "proj"));
					const open = () => openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj") });
					let stores = open();
					let n = 0;
					const commit = async (input: JsonObject) => {
						// The patches write the CWD owner only (these stores have no Session).
						const cwd = (await stores.load("cwd")).state;
						const patch = toCanonicalPatch(input, wanted, (o) => (o === "cwd" ? cwd : undefined));
						return stores.commit(patch, { id: `t${++n}`, at: "2026-12-01T00:00:00.000Z", by: { kind: "system", reason: "property" } });
					};
					// The documented spelling: the locator of the key, relative in flat form, owner-qualified in scoped.
					const documented = formatLocator({ kind: "state", scope: wanted.length === 1 ? null : "cwd", offset: 0, plane, path: [target] });
					const written = await commit(
						modelPatch(wanted, {
							[plane]: { ...one(target, "the body"), [SIBLING]: "stays" },
							intents: one(intent, { goal: "g", owns: [{ $ref: documented }] }),
						}),
					);
					assert.equal(written.noop, false);
					assert.deepEqual(written.report.danglingRefs, []);

					// Reload from disk, then read the intent and the target through the reference's own text.
					stores = open();
					// No pi session is attached here: the scoped case writes and reads cwd only.
					const histories = { cwd: await stores.load("cwd") };
					const stored = (histories.cwd.state.intents[intent] as JsonObject)["owns"] as Json[];
					assert.ok(isRef(stored[0]), "stored as a reference");
					const intentLoc = formatLocator({ kind: "state", scope: wanted.length === 1 ? null : "cwd", offset: 0, plane: "intents", path: [intent] });
					const [read, body] = evaluate({ wanted, histories }, [toCanonicalLocator(intentLoc, wanted), toCanonicalLocator(documented, wanted)]);
					assert.deepEqual(presentValue(read?.value as Json, wanted), { goal: "g", owns: [{ $ref: documented }] });
					assert.equal(body?.value, "the body");
					const head = renderHead({ mode: "active", wanted, histories, budget: 64 * 1024 });
					// The head spells every `<` as `\u003c` (its tag cannot be written from inside).
					assert.ok(head.includes(modelJson(JSON.stringify({ $ref: documented }))), `head shows ${documented}`);

					// Any other spelling: refused with nothing written, or the same target; never data.
					const others = [`${plane}.${target}`, `cwd.${documented.replace(/^cwd\./, "")}`, `${plane}[${JSON.stringify(target)}]`, target];
					for (const other of others) {
						// The same text as the documented spelling, or a bare key that is itself a locator (`tactics`: the whole plane).
						if (other === documented || (other === target && tryParseLocator(other, wanted.length === 1 ? "flat" : "scoped") !== undefined)) continue;
						const seq = (await stores.load("cwd")).seq;
						try {
							await commit(modelPatch(wanted, { intents: one("other spelling", { owns: [{ $ref: other }] }) }));
						} catch (e) {
							assert.ok(e instanceof StateError && e.code === "invalid_input", String(e));
							assert.equal((await stores.load("cwd")).seq, seq, "a refused spelling writes nothing");
							refusedOther++;
							continue;
						}
						const ref = (((await stores.load("cwd")).state.intents["other spelling"] as JsonObject)["owns"] as Json[])[0];
						assert.ok(isRef(ref), `${other} is stored as a reference`);
						const loc = tryParseLocator(ref.$ref, "canonical");
						assert.ok(
							loc?.kind === "state" && loc.scope === "cwd" && loc.plane === plane && loc.path[0] === target,
							`${other} resolves to ${documented}, stored as ${ref.$ref}`,
						);
						await commit(modelPatch(wanted, { intents: { "other spelling": null } }));
						assert.ok(Object.hasOwn((await stores.load("cwd")).state[plane], target), "the target stays while the first intent owns it");
					}

					// Deleting the intent cascades to exactly its target.
					const del = await commit(modelPatch(wanted, { intents: one(intent, null) }));
					assert.deepEqual(del.report.cascades, [
						{ owner: "cwd", intent, targets: [formatLocator({ kind: "state", scope: "cwd", offset: 0, plane, path: [target] })] },
					]);
					assert.deepEqual((await stores.load("cwd")).state[plane], { [SIBLING]: "stays" });
				}),
				{ numRuns: 40 },
			);
			assert.ok(refusedOther > 10, `only ${refusedOther} other spellings were refused`);
		});
	}
});

function refusal(fn: () => unknown): StateError {
	try {
		fn();
	} catch (e) {
		assert.ok(e instanceof StateError, String(e));
		return e;
	}
	return assert.fail("expected a refusal");
}

describe("reference refusals speak the model's spelling", () => {
	const issue = { lazy: { "plans/api-v2.md": "the plan" }, intents: { m: { goal: "migrate", owns: [{ $ref: "lazy.plans/api-v2.md" }] } } };

	it("flat: names the field and shows the quoted segment form, relative", () => {
		const e = refusal(() => toCanonicalPatch(issue, ["cwd"]));
		assert.equal(e.code, "invalid_input");
		assert.deepEqual(e.path, ["intents", "m", "owns", 0, "$ref"]);
		assert.equal(
			e.message,
			'`intents.m.owns[0].$ref` is `lazy.plans/api-v2.md`, which is not a locator: a key that is not a plain name (letters, digits, _ $ -) is quoted; write {"$ref":"lazy[\\"plans/api-v2.md\\"]"}',
		);
		// The spelling it shows is accepted and stored canonical.
		const fixed = toCanonicalPatch({ ...issue, intents: { m: { goal: "migrate", owns: [{ $ref: 'lazy["plans/api-v2.md"]' }] } } }, ["cwd"]);
		assert.deepEqual((fixed.cwd?.intents?.["m"] as JsonObject | undefined)?.["owns"], [{ $ref: 'cwd.lazy["plans/api-v2.md"]' }]);
	});

	it("scoped: the same rule, owner-qualified", () => {
		const e = refusal(() => toCanonicalPatch({ cwd: { intents: { m: { owns: [{ $ref: "cwd.lazy.plans/api-v2.md" }] } } } }, ["cwd", "session"]));
		assert.match(
			e.message,
			/^`cwd\.intents\.m\.owns\[0\]\.\$ref` is `cwd\.lazy\.plans\/api-v2\.md`, which is not a locator: .* write \{"\$ref":"cwd\.lazy\[\\"plans\/api-v2\.md\\"\]"\}$/,
		);
	});

	it("a dotted spelling of an existing key is refused with its quoted form, using the current state", () => {
		const state = { intents: {}, strategy: {}, tactics: {}, artifacts: {}, lazy: { "plan.md": "x" } };
		const e = refusal(() => toCanonicalPatch({ intents: { m: { $ref: "lazy.plan.md" } } }, ["cwd"], () => state));
		assert.equal(
			e.message,
			'`intents.m.$ref` is `lazy.plan.md`, which names the key `plan` (missing), not the existing key `plan.md`; quote keys that are not plain names: write {"$ref":"lazy[\\"plan.md\\"]"}',
		);
		// A bare key held by exactly one plane is pointed to that plane.
		const bare = refusal(() => toCanonicalPatch({ intents: { m: { $ref: "plan.md" } } }, ["cwd"], () => state));
		assert.match(bare.message, /write \{"\$ref":"lazy\[\\"plan\.md\\"\]"\}$/);
	});

	it("an entry named `$ref` is an entry: its value is stored as written, in flat and scoped form", () => {
		assert.deepEqual(toCanonicalPatch({ intents: { $ref: "tactics.a" } }, ["cwd"]), { cwd: { intents: { $ref: "tactics.a" } } });
		assert.deepEqual(toCanonicalPatch({ cwd: { intents: { $ref: "tactics.a" } } }, ["cwd", "session"]), { cwd: { intents: { $ref: "tactics.a" } } });
	});

	it("other members beside `$ref` are refused, never kept as data", () => {
		const e = refusal(() => toCanonicalPatch({ intents: { m: { owns: [{ $ref: "tactics.a", why: "first" }] } } }, ["cwd"]));
		assert.equal(
			e.message,
			'`intents.m.owns[0]` has `$ref` beside other members (`why`): a reference is {"$ref":"<locator>"} alone in its object; put it under its own key (e.g. {"ref":{"$ref":"tactics.a"}}) or rename `$ref`',
		);
	});
});

describe("dropping a dangling reference", () => {
	it("the patch result names the one patch that drops them, in the model's form", () => {
		const report = {
			scopes: ["cwd" as const],
			changed: ["/cwd/tactics/a"],
			missingDeletions: [],
			cascades: [],
			danglingRefs: [{ owner: "cwd" as const, intent: "m", ref: "cwd.tactics.a", drop: { owns: [{ $ref: 'cwd.lazy["n.md"]' }] } }],
		};
		const flat = patchResult({ transitionId: "t-1", report, wanted: ["cwd"] }).content[0]?.text ?? "";
		assert.match(flat, /^dangling refs \(target is gone; update or drop the ref\): intents\.m -> tactics\.a$/m);
		assert.match(flat, /^to drop them: patch_state \{"intents":\{"m":\{"owns":\[\{"\$ref":"lazy\[\\"n\.md\\"\]"\}\]\}\}\}$/m);
		const scoped = patchResult({ transitionId: "t-1", report, wanted: ["cwd", "session"] }).content[0]?.text ?? "";
		assert.match(scoped, /^to drop them: patch_state \{"cwd":\{"intents":\{"m":\{"owns":\[\{"\$ref":"cwd\.lazy\[\\"n\.md\\"\]"\}\]\}\}\}\}$/m);
	});
});
