/**
 * Selection, config file and admission bookkeeping as plain functions: precedence, owner list
 * parsing, config validation and atomic preserving writes, stale-call judgement, completions.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError } from "../../lib/core/errors.js";
import { OWNERS, type Owner } from "../../lib/core/types.js";
import { Admission, describeChanges, type Identity } from "../../lib/host/session/admission.js";
import { completeStateArgs } from "../../lib/host/commands/index.js";
import {
	allOwnerSelections,
	resolveSelection,
	SELECTION_ENTRY,
	selectionFromBranch,
	selectionFromFlags,
	shapeOf,
	startChoice,
} from "../../lib/host/session/selection.js";
import { configPath, parseOwners, readConfig, updateConfig } from "../../lib/storage/placement/config.js";
import { tempDir } from "../helpers/temp-dir.js";

const ownerArb = fc.uniqueArray(fc.constantFrom(...OWNERS), { minLength: 1, maxLength: 3 });

describe("owner lists", () => {
	it("parse to the canonical order whatever the input order or separator", () => {
		assertProperty(
			fc.property(ownerArb, fc.constantFrom(",", "+", " ", ", "), (owners, sep) => {
				const parsed = parseOwners(owners.join(sep));
				assert.deepEqual(
					parsed,
					OWNERS.filter((o) => owners.includes(o)),
				);
				assert.deepEqual(parseOwners(parsed.join(",")), parsed);
			}),
		);
	});

	it("refuse unknown, repeated and empty owners naming the offending entry", () => {
		assert.throws(
			() => parseOwners("cwd,projects"),
			(e) => isStateError(e) && e.code === "invalid_input" && /^unknown owner "projects" — owners are global, cwd, session\.$/.test(e.message),
		);
		assert.throws(
			() => parseOwners("cwd,cwd"),
			(e) => isStateError(e) && /owner `cwd` is named twice/.test(e.message),
		);
		assert.throws(
			() => parseOwners(" , "),
			(e) => isStateError(e) && /empty/.test(e.message),
		);
		assert.throws(
			() => parseOwners("cwd,sesion"),
			(e) => isStateError(e) && /^unknown owner "sesion" — owners are global, cwd, session\. Did you mean `session`\?$/.test(e.message),
		);
		// A config file's array is named by its index: that is where the user looks in the file.
		assert.throws(
			() => parseOwners(["cwd", "bogus"]),
			(e) => isStateError(e) && /`owners\[1\]` is "bogus"/.test(e.message),
		);
	});

	it("give flat shape for one owner and scoped for two or three; all seven selections exist", () => {
		const all = allOwnerSelections();
		assert.equal(all.length, 7);
		assert.equal(new Set(all.map((o) => o.join())).size, 7);
		for (const owners of all) assert.equal(shapeOf(owners), owners.length === 1 ? "flat" : "scoped");
	});
});

describe("selection precedence", () => {
	it("defaults to active with cwd and session", () => {
		assert.deepEqual(resolveSelection(), { mode: "active", owners: ["cwd", "session"] });
	});

	it("lets each later layer win field by field (config < flags < session choice)", () => {
		const config = { mode: "passive" as const, owners: ["global"] as Owner[] };
		const flags = { owners: ["cwd"] as Owner[] };
		assert.deepEqual(resolveSelection(config, flags), { mode: "passive", owners: ["cwd"] });
		assert.deepEqual(resolveSelection(config, flags, { mode: "off", owners: ["session"] }), { mode: "off", owners: ["session"] });
	});

	it("reports bad flags instead of throwing and keeps the rest", () => {
		const { layer, problems } = selectionFromFlags("loud", "cwd");
		assert.deepEqual(layer, { owners: ["cwd"] });
		assert.equal(problems.length, 1);
		assert.match(problems[0] as string, /--state-mode "loud"/);
	});

	it("restores the latest valid selection entry of the branch and skips damaged ones", () => {
		const branch = [
			{ type: "custom", customType: SELECTION_ENTRY, data: { mode: "passive", owners: ["global"] } },
			{ type: "message" },
			{ type: "custom", customType: SELECTION_ENTRY, data: { mode: "off", owners: ["cwd", "session"] } },
			{ type: "custom", customType: SELECTION_ENTRY, data: { mode: "loud", owners: ["cwd"] } },
		];
		assert.deepEqual(selectionFromBranch(branch), { mode: "off", owners: ["cwd", "session"], byRun: false });
		assert.equal(selectionFromBranch([{ type: "message" }]), undefined);
	});
});

describe("one grammar per conversation (issue 26)", () => {
	const modeArb = fc.constantFrom("active" as const, "passive" as const, "off" as const);
	it("law: a session start keeps the stored choice, flags win field by field, and an override is named only when one changed it", () => {
		assertProperty(
			fc.property(
				modeArb,
				ownerArb,
				fc.option(modeArb, { nil: undefined }),
				fc.option(ownerArb, { nil: undefined }),
				fc.boolean(),
				(mode, owners, fMode, fOwners, byRun) => {
					const stored = { mode, owners: OWNERS.filter((o) => owners.includes(o)), byRun };
					const flags = { ...(fMode ? { mode: fMode } : {}), ...(fOwners ? { owners: OWNERS.filter((o) => fOwners.includes(o)) } : {}) };
					const { choice, overridden } = startChoice(stored, flags);
					assert.ok(choice);
					assert.equal(choice.mode, fMode ?? mode);
					assert.deepEqual(choice.owners, flags.owners ?? stored.owners);
					assert.equal(choice.byRun, byRun);
					const changed = choice.mode !== mode || choice.owners.join() !== stored.owners.join();
					assert.deepEqual(overridden, changed ? { mode, owners: stored.owners } : undefined);
				},
			),
		);
		assert.deepEqual(startChoice(undefined, { owners: ["cwd"] }), { choice: undefined });
	});

	it("reads whether a run or /state recorded the stored choice", () => {
		const entry = (data: unknown) => ({ type: "custom", customType: SELECTION_ENTRY, data });
		assert.equal(selectionFromBranch([entry({ mode: "active", owners: ["cwd"], by: "run" })])?.byRun, true);
		assert.equal(selectionFromBranch([entry({ mode: "active", owners: ["cwd"] })])?.byRun, false);
	});
});

describe("config file", () => {
	it("is absent by default and reading it creates nothing", (t) => {
		const dir = tempDir(t);
		assert.deepEqual(readConfig(dir), { config: {}, problems: [] });
		assert.deepEqual(readdirSync(dir), []);
	});

	it("keeps valid fields and reports each invalid one", (t) => {
		const dir = tempDir(t);
		mkdirSync(join(dir, "state-flow"));
		writeFileSync(
			configPath(dir),
			JSON.stringify({ mode: "passive", owners: ["cwd", "nope"], retention: 5000, headBudget: 4096, reconcile: "yes", maxStateBytes: 100 }),
		);
		const { config, problems } = readConfig(dir);
		assert.deepEqual(config, { mode: "passive", headBudget: 4096 });
		assert.equal(problems.length, 4);
		assert.ok(problems.some((p) => p.includes("`maxStateBytes`")));
		assert.ok(problems.some((p) => p.includes("`retention`")));
		assert.ok(problems.some((p) => p.includes("`reconcile`")));
		assert.ok(problems.some((p) => p.includes("owners[1]")));
	});

	it("reports unparseable JSON and uses defaults", (t) => {
		const dir = tempDir(t);
		mkdirSync(join(dir, "state-flow"));
		writeFileSync(configPath(dir), "{ mode: passive");
		const { config, problems } = readConfig(dir);
		assert.deepEqual(config, {});
		assert.match(problems[0] as string, /not valid JSON/);
	});

	it("updates atomically, preserving other keys, and leaves no temp files", async (t) => {
		const dir = tempDir(t);
		mkdirSync(join(dir, "state-flow"));
		writeFileSync(configPath(dir), JSON.stringify({ retention: 7, custom: { keep: true } }));
		await updateConfig(dir, { mode: "off" });
		await updateConfig(dir, { owners: ["global", "session"] });
		assert.deepEqual(JSON.parse(readFileSync(configPath(dir), "utf8")), { retention: 7, custom: { keep: true }, mode: "off", owners: ["global", "session"] });
		// Beside the file only its lock's holder folder (the lock itself is released).
		assert.deepEqual(readdirSync(join(dir, "state-flow")).sort(), ["config.json", "config.json.lock.holders"]);
	});

	it("creates the Global config folder 0700 and the file 0600, like every Global store file", async (t) => {
		const dir = tempDir(t);
		await updateConfig(dir, { mode: "passive" });
		assert.equal(statSync(join(dir, "state-flow")).mode & 0o777, 0o700);
		assert.equal(statSync(configPath(dir)).mode & 0o777, 0o600);
	});

	it("never overwrites a file it cannot parse", async (t) => {
		const dir = tempDir(t);
		mkdirSync(join(dir, "state-flow"));
		writeFileSync(configPath(dir), "not json");
		await assert.rejects(updateConfig(dir, { mode: "off" }), (e) => isStateError(e) && /left untouched/.test(e.message));
		assert.equal(readFileSync(configPath(dir), "utf8"), "not json");
	});
});

describe("admission", () => {
	const id: Identity = { sessionId: "s1", cwd: "/p", globalRoot: "/a/state-flow/global", cwdRoot: "/p/.pi/state-flow" };
	const now = { mode: "active" as const, wanted: ["cwd", "session"] as Owner[], identity: id };

	it("admits a call bound to a request captured in the current epoch", () => {
		const a = new Admission();
		a.capture({ identity: id, wanted: ["cwd", "session"], mode: "active" });
		a.bind(["call-1"]);
		assert.deepEqual(a.admit("patch_state", "call-1", now).wanted, ["cwd", "session"]);
	});

	it("refuses unknown calls, calls from an older epoch and calls after an identity change", () => {
		const a = new Admission();
		a.capture({ identity: id, wanted: ["cwd", "session"], mode: "active" });
		a.bind(["call-1", "call-2"]);
		const stale = (re: RegExp) => (e: unknown) =>
			isStateError(e) && e.code === "stale_call" && re.test(e.message) && /Nothing was written/.test(e.message) && /read_state/.test(e.message);
		assert.throws(() => a.admit("patch_state", "call-x", now), stale(/not issued/));
		assert.throws(() => a.admit("patch_state", "call-1", { ...now, identity: { ...id, sessionId: "s2" } }), stale(/session changed/));
		assert.throws(() => a.admit("patch_state", "call-1", { ...now, wanted: ["cwd"] }), stale(/cwd\+session to cwd/));
		a.bump();
		assert.throws(() => a.admit("patch_state", "call-2", now), stale(/changed and changed back/));
	});

	it("law: in the same epoch, a call is admitted exactly when describeChanges finds no difference", () => {
		const identityArb = fc.record({
			sessionId: fc.constantFrom("s1", "s2"),
			cwd: fc.constantFrom("/p", "/q"),
			globalRoot: fc.constantFrom("/a/state-flow/global", "/b/state-flow/global"),
			cwdRoot: fc.constantFrom("/p/.pi/state-flow", "/q/.pi/state-flow"),
		});
		const selArb = fc.record({ mode: fc.constantFrom("active" as const, "passive" as const), wanted: ownerArb, identity: identityArb });
		assertProperty(
			fc.property(selArb, selArb, (issued, present) => {
				const a = new Admission();
				const receipt = a.capture(issued);
				a.bind(["call"]);
				const changes = describeChanges(receipt, present);
				let admitted = true;
				try {
					a.admit("read_state", "call", present);
				} catch (e) {
					assert.ok(isStateError(e) && e.code === "stale_call");
					for (const c of changes) assert.ok(e.message.includes(c), `the refusal names "${c}"`);
					admitted = false;
				}
				assert.equal(admitted, changes.length === 0);
			}),
		);
	});

	it("binds tool calls to the capture of the request that issued them, not a later one", () => {
		const a = new Admission();
		a.capture({ identity: id, wanted: ["cwd"], mode: "active" });
		a.bind(["early"]);
		a.bump();
		a.capture({ identity: id, wanted: ["cwd", "session"], mode: "active" });
		a.bind(["late"]);
		assert.deepEqual(a.receipt("early")?.wanted, ["cwd"]);
		assert.throws(
			() => a.admit("patch_state", "early", { ...now, wanted: ["cwd"] }),
			(e) => isStateError(e) && e.code === "stale_call",
		);
		assert.deepEqual(a.admit("patch_state", "late", now).wanted, ["cwd", "session"]);
	});
});

describe("/state completions", () => {
	it("complete subcommands, owner lists and defaults", () => {
		assert.deepEqual(
			completeStateArgs("pa")?.map((i) => i.value),
			["passive"],
		);
		assert.equal(completeStateArgs("owners ")?.length, 7);
		assert.deepEqual(
			completeStateArgs("owners cwd,s")?.map((i) => i.value),
			["owners cwd,session"],
		);
		assert.deepEqual(
			completeStateArgs("show g")?.map((i) => i.value),
			["show global"],
		);
		assert.deepEqual(
			completeStateArgs("default o")?.map((i) => i.value),
			["default off", "default owners "],
		);
		assert.equal(completeStateArgs("default owners ")?.length, 7);
		assert.equal(completeStateArgs("zzz"), null);
	});
});
