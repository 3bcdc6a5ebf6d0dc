/**
 * Artifact keys as the model sees them, through the real pi SDK (issue 25): a session started
 * in `src/` of a real repository is shown every CWD artifact key relative to `src/` — in the
 * head, in reads, in search, in references and in a patch's result — and what it writes in that
 * spelling is stored relative to the checkout's root, where a session at the root reads it.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { projectOf } from "../../lib/storage/project/project.js";
import { git, repo } from "../helpers/git-repo.js";
import { headOf, startFlow } from "./fixture.js";

describe("artifact keys relative to the folder pi runs in (real SDK)", () => {
	it("a session in src/ reads and writes keys from src/; a session at the root sees the same entries from the root", async (t) => {
		const { dir } = repo(t);
		const agentDir = join(dir, "..", "agent");
		const atRoot = await startFlow({ cwd: dir, agentDir, flags: { "state-owners": "cwd" } });
		await atRoot.prompt("track", [
			{
				calls: [
					{
						id: "root",
						name: "patch_state",
						args: {
							artifacts: { "src/a.txt": { kind: "file", note: "entry point" } },
							tactics: { read: { step: "read a.txt", uses: { $ref: 'artifacts["src/a.txt"]' } } },
						},
					},
				],
			},
			{ text: "ok" },
		]);
		atRoot.dispose();
		assert.ok(!atRoot.results().root?.isError, atRoot.results().root?.text);

		const flow = await startFlow({ cwd: join(dir, "src"), agentDir, flags: { "state-owners": "cwd" }, idPrefix: "s" });
		t.after(() => flow.dispose());
		await flow.prompt("work", [
			{
				calls: [
					{ id: "read", name: "read_state", args: { path: 'artifacts["a.txt"]' } },
					{ id: "find", name: "read_state", args: { search: "entry point" } },
					{ id: "ref", name: "read_state", args: { path: "tactics.read" } },
					{
						id: "write",
						name: "patch_state",
						args: { artifacts: { "../README.md": { kind: "file" }, "a.txt": { kind: "file", note: "still the entry" } } },
					},
				],
			},
			{ text: "ok" },
		]);
		const head = headOf(flow, 0);
		assert.match(head, /a\.txt/);
		assert.doesNotMatch(head, /src\/a\.txt/, "the head names the file from src/");
		const r = flow.results();
		assert.ok(!r.read?.isError, r.read?.text);
		assert.match(r.read?.text ?? "", /entry point/);
		assert.match(r.find?.text ?? "", /artifacts\["a\.txt"\]/);
		assert.doesNotMatch(r.find?.text ?? "", /src\/a\.txt/);
		assert.match(r.ref?.text ?? "", /"\$ref":\s*"artifacts\[\\"a\.txt\\"\]"/, "a reference to an artifact is spelled from src/ too");
		assert.ok(!r.write?.isError, r.write?.text);
		assert.match(r.write?.text ?? "", /changed: .*\/artifacts\/\.\.~1README\.md/);
		assert.ok(((r.write?.details.changed ?? []) as string[]).includes("/cwd/artifacts/README.md"), "details stay canonical");

		const stored = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual(Object.keys(stored.state.artifacts).sort(), ["README.md", "src/a.txt"]);
		assert.equal((stored.state.artifacts["src/a.txt"] as { note?: string }).note, "still the entry");
		assert.deepEqual((stored.state.tactics.read as { uses?: unknown }).uses, { $ref: 'cwd.artifacts["src/a.txt"]' }, "stored references stay canonical");
	});

	it("a worktree's subfolder spells keys from there, against the shared project store", async (t) => {
		const { base, dir } = repo(t);
		const wt = join(base, "wt2");
		git(dir, "worktree", "add", "-q", "-b", "feat", wt);
		const flow = await startFlow({ cwd: join(wt, "src"), agentDir: join(base, "agent"), flags: { "state-owners": "cwd" } });
		t.after(() => flow.dispose());
		await flow.prompt("track", [{ calls: [{ id: "w", name: "patch_state", args: { artifacts: { "a.txt": { kind: "file" } } } }] }, { text: "ok" }]);
		await flow.prompt("again", [{ text: "ok" }]);
		assert.ok(!flow.results().w?.isError, flow.results().w?.text);
		const stored = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual(Object.keys(stored.state.artifacts), ["src/a.txt"]);
		const head = headOf(flow, flow.seen.length - 1);
		assert.match(head, /a\.txt/);
		assert.doesNotMatch(head, /src\/a\.txt/);
	});

	it("two folders down, the model reads back `../a.txt` as it wrote it; another spelling of a file (written or read), or an empty key, is refused and nothing is stored", async (t) => {
		const { base, dir } = repo(t);
		mkdirSync(join(dir, "src", "deep"), { recursive: true });
		const flow = await startFlow({ cwd: join(dir, "src", "deep"), agentDir: join(base, "agent"), flags: { "state-owners": "cwd" } });
		t.after(() => flow.dispose());
		await flow.prompt("track", [
			{
				calls: [
					{ id: "write", name: "patch_state", args: { artifacts: { "../a.txt": { kind: "file", note: "one" } } } },
					{ id: "read", name: "read_state", args: { path: 'artifacts["../a.txt"]' } },
					{ id: "twice", name: "patch_state", args: { artifacts: { "../a.txt": { kind: "file", note: "kept" }, "./../a.txt": null } } },
					{ id: "empty", name: "patch_state", args: { artifacts: { "": { kind: "file" } } } },
					{ id: "other", name: "read_state", args: { path: 'artifacts["../../src/a.txt"]' } },
				],
			},
			{ text: "ok" },
		]);
		const r = flow.results();
		assert.ok(!r.write?.isError, r.write?.text);
		assert.match(r.write?.text ?? "", /changed: \/artifacts\/\.\.~1a\.txt$/m, "the result names the key as written");
		assert.ok(!r.read?.isError, r.read?.text);
		assert.match(r.read?.text ?? "", /"note":"one"/);
		assert.ok(r.twice?.isError, "two spellings of one file are not merged into one entry");
		assert.match(r.twice?.text ?? "", /`cwd\.artifacts\["\.\/\.\.\/a\.txt"\]` is spelled "\.\.\/a\.txt"/);
		assert.ok(r.empty?.isError, "an empty key is refused as at the root, not stored as the folder pi runs in");
		assert.match(r.empty?.text ?? "", /`cwd\.artifacts\[""\]`/);
		assert.ok(r.other?.isError, "a read under another spelling finds nothing, so it is refused naming the one to use");
		assert.match(r.other?.text ?? "", /`artifacts\["\.\.\/\.\.\/src\/a\.txt"\]` is spelled "\.\.\/a\.txt"/);
		const stored = new FileOwnerStore({ owner: "cwd", root: projectOf(dir).store, retention: 20, gitignore: true }).read();
		assert.deepEqual(Object.keys(stored.state.artifacts), ["src/a.txt"]);
		assert.equal((stored.state.artifacts["src/a.txt"] as { note?: string }).note, "one");
	});

	it("an `effective` read under another spelling of a CWD file is refused naming the one to read; the spelling shown reads it", async (t) => {
		const { base, dir } = repo(t);
		mkdirSync(join(dir, "src", "deep"), { recursive: true });
		const flow = await startFlow({ cwd: join(dir, "src", "deep"), agentDir: join(base, "agent"), flags: { "state-owners": "cwd,session" } });
		t.after(() => flow.dispose());
		await flow.prompt("track", [
			{
				calls: [
					{ id: "write", name: "patch_state", args: { cwd: { artifacts: { "../a.txt": { kind: "file", note: "one" } } } } },
					{ id: "shown", name: "read_state", args: { path: 'effective.artifacts["../a.txt"]' } },
					{ id: "other", name: "read_state", args: { path: 'effective.artifacts["../../src/a.txt"].note' } },
					{ id: "some", name: "read_state", args: { paths: ['effective.artifacts["../a.txt"].note', 'effective.artifacts["../../src/a.txt"]'] } },
					{ id: "missing", name: "read_state", args: { path: 'effective.artifacts["../../src/z.txt"]' } },
				],
			},
			{ text: "ok" },
		]);
		const r = flow.results();
		assert.ok(!r.write?.isError, r.write?.text);
		assert.ok(!r.shown?.isError, r.shown?.text);
		assert.match(r.shown?.text ?? "", /"note":"one"/);
		const words =
			/^`effective\.artifacts\["\.\.\/\.\.\/src\/a\.txt"\](\.note)?` is spelled "\.\.\/a\.txt" from the folder pi runs in \(src\/deep\/ in the checkout\): read that key/;
		assert.ok(r.other?.isError, "the other spelling finds nothing: refused, naming the one shown");
		assert.match(r.other?.text ?? "", words);
		assert.ok(r.some?.isError, "a batch with one such locator is refused as a whole, as a cwd read is");
		assert.match(r.some?.text ?? "", /`effective\.artifacts\["\.\.\/\.\.\/src\/a\.txt"\]` is spelled "\.\.\/a\.txt"/);
		assert.ok(r.missing?.isError);
		assert.match(r.missing?.text ?? "", /does not exist/, "a file with no entry under any spelling is simply not there");
	});
});
