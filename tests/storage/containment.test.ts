/**
 * Containment is by path segment, never by name prefix: a sibling folder whose name starts with
 * the root's name (`/w/app-old` beside `/w/app`) is outside the root — for `inside` itself, for a
 * store folder a link leads there (CWD and Global), and for artifact keys (by `..`, by an
 * absolute path, through a link). Issue 34: dropping the separator from `inside` went unnoticed.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { isStateError } from "../../lib/core/errors.js";
import { territoryOf } from "../../lib/storage/artifacts/files.js";
import { inside } from "../../lib/storage/fs-util.js";
import { makeSentinel, snapshot } from "../security/hostile.js";
import { refused, setup } from "../skills/artifact-fixture.js";
import { commitMeta } from "../helpers/meta.js";
import { tempDir } from "../helpers/temp-dir.js";

const meta = commitMeta("c", "2026-12-01T00:00:00.000Z");

describe("inside", () => {
	it("is true for the root and below it, false for a sibling whose name starts with the root's", () => {
		assert.equal(inside("/a/b", "/a/b"), true);
		assert.equal(inside("/a/b/c", "/a/b"), true);
		assert.equal(inside("/a/b/c", "/a/b/"), true, "a root given with its trailing separator");
		assert.equal(inside("/a/bc", "/a/b"), false);
		assert.equal(inside("/a/bc", "/a/b/"), false);
		assert.equal(inside("/a/b-old/c", "/a/b"), false);
		assert.equal(inside("/a", "/a/b"), false);
	});
});

describe("a store folder that a link leads into a sibling named like its root", () => {
	/** Where the link leads must be refused and left byte-identical; the owner's other stores go on. */
	async function refusedInto(t: { after(fn: () => void): void }, plant: (w: { app: string; agent: string; base: string }) => string): Promise<void> {
		const base = tempDir(t, "state-flow-prefix-");
		const w = { base, app: join(base, "app"), agent: join(base, "agent") };
		mkdirSync(w.app);
		mkdirSync(w.agent);
		const sibling = plant(w);
		const before = snapshot(sibling);
		const stores = openStoresAt({ agentDir: w.agent, cwd: w.app, lockTimeoutMs: 3_000 });
		const owner = sibling.includes("agent-old") ? "global" : "cwd";
		for (const attempt of [() => stores.load(owner), () => stores.commit({ [owner]: { tactics: { a: 1 } } }, meta())]) {
			await assert.rejects(attempt(), (e: unknown) => {
				assert.ok(isStateError(e) && e.code === "corrupt", String(e));
				assert.match(e.message, /leads to `[^`]*-old[^`]*`, outside `/);
				return true;
			});
		}
		assert.deepEqual(snapshot(sibling), before, "nothing was written where the link leads");
	}

	it("CWD: <checkout>/.pi links to <checkout>-old/.pi", async (t) => {
		await refusedInto(t, (w) => {
			const sibling = makeSentinel(join(w.base, "app-old"));
			mkdirSync(join(sibling, ".pi"));
			symlinkSync(join(sibling, ".pi"), join(w.app, ".pi"));
			return sibling;
		});
	});

	it("Global: <agentDir>/state-flow links to <agentDir>-old/state-flow", async (t) => {
		await refusedInto(t, (w) => {
			const sibling = makeSentinel(join(w.base, "agent-old"));
			mkdirSync(join(sibling, "state-flow"));
			symlinkSync(join(sibling, "state-flow"), join(w.agent, "state-flow"));
			return sibling;
		});
	});
});

describe("an artifact key in a sibling named like its owner's root", () => {
	it("is refused by `..`, by its absolute path and through a link, for CWD, Session and Global", (t) => {
		const s = setup(t);
		for (const dir of ["proj-old", "agent-old"]) {
			mkdirSync(join(s.base, dir));
			writeFileSync(join(s.base, dir, "notes.md"), "n");
		}
		symlinkSync(join(s.base, "proj-old", "notes.md"), join(s.cwd, "linked.md"));
		symlinkSync(join(s.base, "agent-old", "notes.md"), join(s.agentDir, "linked.md"));
		const cases: Array<["cwd" | "session" | "global", string, RegExp]> = [
			["cwd", "../proj-old/notes.md", /is outside the checkout's root/],
			["cwd", join(s.base, "proj-old", "notes.md"), /is outside the checkout's root/],
			["cwd", "linked.md", /leads outside the checkout's root through a symbolic link/],
			["session", "../proj-old/notes.md", /is outside the checkout's root/],
			["global", "../agent-old/notes.md", /is outside the agent directory/],
			["global", join(s.base, "agent-old", "notes.md"), /is outside the agent directory/],
			["global", "linked.md", /leads outside the agent directory through a symbolic link/],
		];
		for (const [owner, key, why] of cases) refused(() => s.compile({ [owner]: { artifacts: { [key]: { kind: "file" } } } }, s.histories), why);
		assert.equal(territoryOf(join(s.base, "proj-old", "notes.md"), s.roots), undefined);
		assert.equal(territoryOf(join(s.base, "agent-old", "notes.md"), s.roots), undefined);
	});
});
