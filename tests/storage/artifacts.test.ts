/**
 * The artifact compiler against real files in temp folders: file fingerprints and stale
 * hints, keys kept exactly, territory refusals, the per-artifact report, Session artifacts,
 * the merge-patch diff law, and commits through the real `Stores.commit`.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { isStateError } from "../../lib/core/errors.js";
import type { Json, JsonObject } from "../../lib/core/types.js";
import { MAX_HASHED_FILE_BYTES, createArtifactCompiler } from "../../lib/storage/artifacts/compiler.js";
import { checkoutMark } from "../../lib/storage/artifacts/files.js";
import { staleArtifacts } from "../../lib/storage/artifacts/stale.js";
import { refused, setup, skill, tree } from "../skills/artifact-fixture.js";

describe("file artifacts", () => {
	it("records a size and mtime fingerprint and reports the file stale once it changes", (t) => {
		const s = setup(t);
		writeFileSync(join(s.cwd, "main.ts"), "export {};\n");
		s.commit({ cwd: { artifacts: { "main.ts": { kind: "file", note: "entry point" } } } });
		const st = statSync(join(s.cwd, "main.ts"));
		assert.deepEqual(s.art("cwd", "main.ts"), {
			kind: "file",
			note: "entry point",
			fingerprint: { size: st.size, mtimeMs: st.mtimeMs },
			sourceHash: createHash("sha256").update("export {};\n").digest("hex"),
			checkout: checkoutMark(s.roots.cwd),
		});
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), []);
		writeFileSync(join(s.cwd, "main.ts"), "export const x = 1;\n");
		const stale = staleArtifacts("cwd", s.histories.cwd.state, s.roots);
		assert.equal(stale.length, 1);
		assert.equal(stale[0]?.key, "main.ts");
		assert.match(stale[0]?.note ?? "", /changed/);
		s.commit({ cwd: { artifacts: { "main.ts": { kind: "file" } } } });
		assert.deepEqual(staleArtifacts("cwd", s.histories.cwd.state, s.roots), [], "patching again acknowledges the change");
	});

	it("judges a file by its bytes when only its mtime moved (another checkout or machine, a git checkout), up to 4 MiB", (t) => {
		const s = setup(t);
		const small = join(s.cwd, "small.txt");
		const large = join(s.cwd, "large.bin");
		writeFileSync(small, "same bytes");
		writeFileSync(large, Buffer.alloc(MAX_HASHED_FILE_BYTES + 1, 7));
		s.commit({ cwd: { artifacts: { "small.txt": { kind: "file" }, "large.bin": { kind: "file" } } } });
		assert.equal(typeof s.art("cwd", "small.txt")?.sourceHash, "string");
		assert.equal(s.art("cwd", "large.bin")?.sourceHash, undefined, "a large file keeps its fingerprint alone");
		for (const f of [small, large]) utimesSync(f, new Date(1_000_000), new Date(1_000_000));
		assert.deepEqual(
			staleArtifacts("cwd", s.histories.cwd.state, s.roots).map((x) => x.key),
			["large.bin"],
			"the same bytes under another mtime are no change; an unhashed file is judged by its fingerprint",
		);
		writeFileSync(small, "SAME BYTES");
		assert.match(staleArtifacts("cwd", s.histories.cwd.state, s.roots).find((x) => x.key === "small.txt")?.note ?? "", /changed/);
	});

	it("never reads a link or a FIFO put where a tracked file was for its hash (a pulled repository is untrusted): the fingerprint judges it", (t) => {
		const s = setup(t);
		writeFileSync(join(s.cwd, "linked.txt"), "same");
		writeFileSync(join(s.cwd, "piped.txt"), "");
		s.commit({ cwd: { artifacts: { "linked.txt": { kind: "file" }, "piped.txt": { kind: "file" } } } });
		assert.equal(typeof s.art("cwd", "linked.txt")?.sourceHash, "string");
		// A link inside the project to a file with the very bytes recorded, and a FIFO of size 0 like the empty file.
		writeFileSync(join(s.cwd, "other.txt"), "same");
		utimesSync(join(s.cwd, "other.txt"), new Date(1_000_000), new Date(1_000_000));
		rmSync(join(s.cwd, "linked.txt"));
		symlinkSync("other.txt", join(s.cwd, "linked.txt"));
		rmSync(join(s.cwd, "piped.txt"));
		execFileSync("mkfifo", [join(s.cwd, "piped.txt")]);
		const notes = Object.fromEntries(staleArtifacts("cwd", s.histories.cwd.state, s.roots).map((x) => [x.key, x.note]));
		assert.match(notes["linked.txt"] ?? "", /changed/, "a link is not read through for the hash");
		assert.match(notes["piped.txt"] ?? "", /changed/, "a FIFO is neither waited on nor taken for the empty file");
		assert.equal(readFileSync(join(s.cwd, "other.txt"), "utf8"), "same");
	});

	it("reports a file that disappears and one that appears after being planned", (t) => {
		const s = setup(t);
		writeFileSync(join(s.cwd, "a.txt"), "a");
		s.commit({ cwd: { artifacts: { "a.txt": { kind: "file" }, "later.txt": { kind: "file" } } } });
		assert.deepEqual(s.art("cwd", "later.txt")?.fingerprint, { missing: true });
		writeFileSync(join(s.cwd, "later.txt"), "now");
		const a = join(s.cwd, "a.txt");
		writeFileSync(a, "b");
		utimesSync(a, new Date(1_000_000), new Date(1_000_000));
		const notes = Object.fromEntries(staleArtifacts("cwd", s.histories.cwd.state, s.roots).map((x) => [x.key, x.note]));
		assert.match(notes["a.txt"] ?? "", /changed/);
		assert.match(notes["later.txt"] ?? "", /exists now/);
		s.commit({ cwd: { artifacts: { "later.txt": { kind: "file" } } } });
		assert.deepEqual(s.art("cwd", "later.txt")?.fingerprint, { size: 3, mtimeMs: statSync(join(s.cwd, "later.txt")).mtimeMs });
	});

	it("keeps keys exactly as written, including an absolute key inside the root and `__proto__`", (t) => {
		const s = setup(t);
		const abs = join(s.cwd, "src", "x.ts");
		mkdirSync(join(s.cwd, "src"));
		writeFileSync(abs, "x");
		writeFileSync(join(s.cwd, "__proto__"), "p");
		s.commit({ cwd: { artifacts: JSON.parse(`{${JSON.stringify(abs)}: {"kind":"file"}, "./src/x.ts": {"kind":"file"}, "__proto__": {"kind":"file"}}`) } });
		assert.deepEqual(Object.keys(s.histories.cwd.state.artifacts).sort(), ["./src/x.ts", "__proto__", abs].sort());
		assert.equal(Object.getPrototypeOf(s.histories.cwd.state.artifacts), Object.prototype);
		assert.equal(({} as Record<string, unknown>).kind, undefined, "no prototype pollution");
	});

	it("refuses keys that escape the owner's root through `..`, an absolute path or a symbolic link", (t) => {
		const s = setup(t);
		writeFileSync(join(s.base, "outside.txt"), "o");
		symlinkSync(s.base, join(s.cwd, "up"));
		for (const key of ["../outside.txt", "src/../../outside.txt", join(s.base, "outside.txt"), "up/outside.txt", ".", ""]) {
			refused(() => s.compile({ cwd: { artifacts: { [key]: { kind: "file" } } } }, s.histories), /outside|artifact key/);
		}
		refused(() => s.compile({ global: { artifacts: { "../proj/x": { kind: "file" } } } }, s.histories), /outside the agent directory/);
		refused(() => s.compile({ session: { artifacts: { "../agent/x": { kind: "file" } } } }, s.histories), /outside the checkout's root/);
	});

	it("refuses values that are not an object with `kind` file or skill", (t) => {
		const s = setup(t);
		for (const v of ["notes", 3, [], { note: "x" }, { kind: "folder" }] as Json[]) {
			refused(() => s.compile({ cwd: { artifacts: { "a.txt": v } } }, s.histories), /`kind` "file" or "skill"/);
		}
	});
});

describe("the artifact report", () => {
	it("says per artifact what happened, for `details.artifacts`", (t) => {
		const s = setup(t);
		mkdirSync(join(s.cwd, "vendor/lint"), { recursive: true });
		writeFileSync(join(s.cwd, "vendor/lint/SKILL.md"), "---\nname: lint\ndescription: Lint.\n---\n");
		mkdirSync(join(s.agentDir, "skills/mine"), { recursive: true });
		writeFileSync(join(s.agentDir, "skills/mine/SKILL.md"), "---\nname: mine\ndescription: Mine.\n---\n");
		const key = ".pi/skills/alpha/SKILL.md";
		const first = s.commit({
			global: { artifacts: { "skills/mine/SKILL.md": { kind: "skill" } } },
			cwd: { artifacts: { "a.txt": { kind: "file" }, [key]: skill("alpha"), "vendor/lint/SKILL.md": { kind: "skill" } } },
			session: { artifacts: { ".pi/skills/beta/SKILL.md": skill("beta") } },
		});
		assert.deepEqual(first.artifacts, [
			{ owner: "global", key: "skills/mine/SKILL.md", action: "tracked in place", compiledTo: "skills/mine/SKILL.md" },
			{ owner: "cwd", key: "a.txt", action: "recorded" },
			{ owner: "cwd", key, action: "compiled", compiledTo: key },
			{ owner: "cwd", key: "vendor/lint/SKILL.md", action: "acquired", compiledTo: ".pi/skills/lint/SKILL.md" },
			{ owner: "session", key: ".pi/skills/beta/SKILL.md", action: "kept in session" },
		]);
		const second = s.commit({ cwd: { artifacts: { [key]: null, "a.txt": null, "never.txt": null } } });
		assert.deepEqual(second.artifacts, [
			{ owner: "cwd", key, action: "removed with its compiled Skill" },
			{ owner: "cwd", key: "a.txt", action: "removed" },
		]);
	});
});

describe("Session artifacts", () => {
	it("stay in the session: Skills are validated but never written, files fingerprint relative to cwd", (t) => {
		const s = setup(t);
		writeFileSync(join(s.cwd, "notes.md"), "n");
		const before = tree(s.base);
		s.commit({ session: { artifacts: { ".pi/skills/scratch/SKILL.md": skill("scratch"), "notes.md": { kind: "file" } } } });
		assert.deepEqual(tree(s.base), before);
		assert.equal(s.art("session", ".pi/skills/scratch/SKILL.md")?.compiledTo, undefined);
		assert.deepEqual(s.art("session", "notes.md")?.fingerprint, { size: 1, mtimeMs: statSync(join(s.cwd, "notes.md")).mtimeMs });
		refused(() => s.compile({ session: { artifacts: { ".pi/skills/x/SKILL.md": skill("Bad") } } }, s.histories), /lowercase/);
	});
});

describe("through the real Stores.commit", () => {
	const by = { kind: "command", command: "test" } as const;
	const at = "2026-11-30T10:00:00.000Z";

	it("stores the compiled artifact durably and a reopened store sees the compiler's fields", async (t) => {
		const s = setup(t);
		const stores = openStoresAt({ agentDir: s.agentDir, cwd: s.cwd });
		const prepare = createArtifactCompiler(s.roots, { parseFrontmatter });
		const key = ".pi/skills/release-notes/SKILL.md";
		const r = await stores.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } }, { by, at, id: "t1", prepare });
		assert.equal(r.noop, false);
		const reopened = await openStoresAt({ agentDir: s.agentDir, cwd: s.cwd }).load("cwd");
		assert.equal((reopened.state.artifacts[key] as JsonObject).compiledTo, key);
		assert.equal(existsSync(join(s.cwd, key)), true);
		await stores.commit({ cwd: { artifacts: { [key]: null } } }, { by, at, id: "t2", prepare });
		assert.equal(existsSync(join(s.cwd, key)), false);
	});

	it("re-patching an unchanged Skill whose compiled file was deleted by hand restores the file without a transition", async (t) => {
		const s = setup(t);
		const stores = openStoresAt({ agentDir: s.agentDir, cwd: s.cwd });
		const prepare = createArtifactCompiler(s.roots, { parseFrontmatter });
		const key = ".pi/skills/release-notes/SKILL.md";
		await stores.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } }, { by, at, id: "t1", prepare });
		const bytes = readFileSync(join(s.cwd, key));
		rmSync(join(s.cwd, ".pi/skills/release-notes"), { recursive: true });
		const r = await stores.commit({ cwd: { artifacts: { [key]: skill("release-notes") } } }, { by, at, id: "t2", prepare });
		assert.equal(r.noop, true, "the state did not change");
		assert.equal((await stores.load("cwd")).seq, 1);
		assert.deepEqual(readFileSync(join(s.cwd, key)), bytes);
	});

	it("an invalid Skill leaves the store and the disk unchanged, and the corrected retry commits", async (t) => {
		const s = setup(t);
		const stores = openStoresAt({ agentDir: s.agentDir, cwd: s.cwd });
		const prepare = createArtifactCompiler(s.roots, { parseFrontmatter });
		await stores.commit({ cwd: { tactics: { t: "x" } } }, { by, at, id: "t0", prepare });
		const before = tree(s.base);
		const key = ".pi/skills/release-notes/SKILL.md";
		await assert.rejects(
			stores.commit({ cwd: { tactics: { u: "y" }, artifacts: { [key]: { ...skill("release-notes"), description: "" } } } }, { by, at, id: "t1", prepare }),
			(e: unknown) => isStateError(e) && e.code === "artifact",
		);
		assert.deepEqual(tree(s.base), before);
		await stores.commit({ cwd: { tactics: { u: "y" }, artifacts: { [key]: skill("release-notes") } } }, { by, at, id: "t2", prepare });
		assert.equal(existsSync(join(s.cwd, key)), true);
		assert.equal((await stores.load("cwd")).seq, 2);
	});
});
