/**
 * A repository is untrusted input: each case plants what a downloaded `.git/` may hold and
 * asserts "cannot say" (undefined), for the reason named, settled within a deadline (a hang
 * fails the test). The first case shows why git is not run at all: a promisor remote makes
 * git's own ancestry check run `core.sshCommand`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { deflateSync } from "node:zlib";
import { type AncestryOptions, isAncestor } from "../../lib/storage/project/git-ancestry.js";
import { type Spec, commitText, git, gitIsAncestor, insertDelta, makeRepo, objectId, scratchRepoDir, within, writePack } from "../helpers/git-objects.js";

const BASE = 1_700_000_000;
const CHAIN: Spec[] = Array.from({ length: 6 }, (_, i) => ({ parents: i === 0 ? [] : [i - 1], date: BASE + 100 * i }));
const made: string[] = [];
after(() => {
	for (const d of made) rmSync(d, { recursive: true, force: true });
});

function repo(storage: "loose" | "pack" = "pack", specs = CHAIN): { dir: string; ids: string[] } {
	const r = makeRepo(specs, storage);
	made.push(r.dir);
	return r;
}

/** Ask, within a deadline, and return the answer with the reasons given. */
async function ask(dir: string, a: string, b: string, opts: AncestryOptions = {}): Promise<{ answer: boolean | undefined; why: string }> {
	const why: string[] = [];
	const answer = await within(10_000, `isAncestor in ${dir}`, isAncestor(dir, a, b, { ...opts, why: (w) => why.push(w) }));
	return { answer, why: why.join("; ") };
}

function loosePath(dir: string, id: string): string {
	return join(dir, "objects", id.slice(0, 2), id.slice(2));
}

function packFiles(dir: string): { idx: string; pack: string } {
	const names = execFileSync("ls", [join(dir, "objects", "pack")], { encoding: "utf8" }).split("\n");
	const idx = names.find((n) => n.endsWith(".idx")) as string;
	return { idx: join(dir, "objects", "pack", idx), pack: join(dir, "objects", "pack", idx.replace(/\.idx$/, ".pack")) };
}

test("a promisor remote makes git run core.sshCommand; the object reader runs nothing and cannot say", async () => {
	const { dir, ids } = repo("loose");
	const sentinel = join(dir, "SENTINEL");
	rmSync(loosePath(dir, ids[2] as string));
	git(dir, ["config", "core.repositoryformatversion", "1"]);
	git(dir, ["config", "extensions.partialClone", "origin"]);
	git(dir, ["config", "remote.origin.url", "ssh://example.invalid/x"]);
	git(dir, ["config", "remote.origin.promisor", "true"]);
	git(dir, ["config", "core.sshCommand", `touch '${sentinel}'; false`]);
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined);
	assert.match(why, new RegExp(`commit ${ids[2]} is not in this git dir`));
	assert.equal(existsSync(sentinel), false, "nothing ran");
	gitIsAncestor(dir, ids[0] as string, ids[5] as string);
	assert.equal(existsSync(sentinel), true, "git itself ran the repository's command (the reason this reader exists)");
});

test("a loose object that is a symbolic link is refused, even to a good copy of itself", async () => {
	const { dir, ids } = repo("loose");
	const path = loosePath(dir, ids[3] as string);
	renameSync(path, join(dir, "elsewhere"));
	symlinkSync(join(dir, "elsewhere"), path);
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined);
	assert.match(why, /is a symbolic link/);
});

test("a folder of the object store that is a symbolic link is refused (objects/pack)", async () => {
	const { dir, ids } = repo("pack");
	const packDir = join(dir, "objects", "pack");
	renameSync(packDir, join(dir, "real-pack"));
	symlinkSync(join(dir, "real-pack"), packDir);
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined);
	assert.match(why, /pack: it is a symbolic link/);
});

test("a FIFO as a loose object, a pack index or a pack is refused without blocking", async () => {
	const cases: [string, (dir: string, ids: string[]) => string][] = [
		["loose", (dir, ids) => loosePath(dir, ids[4] as string)],
		["pack", (dir) => packFiles(dir).idx],
		["pack", (dir) => packFiles(dir).pack],
	];
	for (const [storage, where] of cases) {
		const { dir, ids } = repo(storage as "loose" | "pack");
		const path = where(dir, ids);
		rmSync(path);
		execFileSync("mkfifo", [path]);
		const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
		assert.equal(answer, undefined, path);
		assert.match(why, /: it is a FIFO/, path);
	}
});

test("a truncated pack index, and a pack index padded past its size, are refused", async () => {
	for (const change of [-100, +4]) {
		const { dir, ids } = repo("pack");
		const { idx } = packFiles(dir);
		const bytes = readFileSync(idx);
		rmSync(idx);
		writeFileSync(idx, change < 0 ? bytes.subarray(0, bytes.length + change) : Buffer.concat([bytes, Buffer.alloc(change)]));
		const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
		assert.equal(answer, undefined);
		assert.match(why, /has the wrong size/);
	}
});

test("a pack index offset past the pack's end is refused", async () => {
	const { dir, ids } = repo("pack");
	const { idx, pack } = packFiles(dir);
	const bytes = Buffer.from(readFileSync(idx));
	const n = bytes.readUInt32BE(8 + 255 * 4);
	for (let i = 0; i < n; i++) bytes.writeUInt32BE(statSync(pack).size + 1000, 8 + 1024 + n * 24 + i * 4);
	rmSync(idx);
	writeFileSync(idx, bytes);
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined);
	assert.match(why, /offset past its end/);
});

test("a pack cut before an object, or inside it, is refused", async () => {
	for (const [cut, reason] of [
		[0, /offset past its end/],
		[8, /corrupt zlib data \(Z_BUF_ERROR\)/],
	] as [number, RegExp][]) {
		const { dir, ids } = repo("pack");
		const { idx, pack } = packFiles(dir);
		const offsets = new Map(
			git(dir, ["show-index"], readFileSync(idx))
				.trim()
				.split("\n")
				.map((l) => [l.split(" ")[1] as string, Number(l.split(" ")[0])]),
		);
		// The pack keeps `cut` bytes of the newest commit's entry, then room for its trailer.
		truncateSync(pack, (offsets.get(ids[5] as string) as number) + cut + 20);
		const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
		assert.equal(answer, undefined);
		assert.match(why, reason);
	}
});

test("a REF_DELTA cycle is refused; a delta chain deeper than the bound is refused, and read when within it", async () => {
	const dir = scratchRepoDir("cycle");
	made.push(dir);
	git(dir, ["init", "-q", "--bare"]);
	const [x, y] = ["1".repeat(40), "2".repeat(40)];
	writePack(dir, [
		{ kind: "ref", base: y, delta: insertDelta(10, Buffer.from("x")), id: x },
		{ kind: "ref", base: x, delta: insertDelta(10, Buffer.from("y")), id: y },
	]);
	const cycle = await ask(dir, x, x);
	assert.equal(cycle.answer, undefined);
	assert.match(cycle.why, /cycle/);

	// A chain of 300 OFS deltas, each a whole commit of its own, on one base commit.
	const chainDir = scratchRepoDir("chain");
	made.push(chainDir);
	git(chainDir, ["init", "-q", "--bare"]);
	const tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
	const texts = Array.from({ length: 301 }, (_, i) => commitText(tree, [], BASE + i, `link ${i}`));
	const ids = texts.map((t) => objectId("commit", t));
	writePack(chainDir, [
		{ kind: "commit", data: texts[0] as Buffer, id: ids[0] as string },
		...texts.slice(1).map((t, i) => ({ kind: "ofs" as const, base: i, delta: insertDelta((texts[i] as Buffer).length, t), id: ids[i + 1] as string })),
	]);
	assert.equal((await ask(chainDir, ids[200] as string, ids[200] as string)).answer, true, "200 deltas deep is read");
	const deep = await ask(chainDir, ids[300] as string, ids[300] as string);
	assert.equal(deep.answer, undefined);
	assert.match(deep.why, /deeper than 256/);
	assert.equal((await ask(chainDir, ids[300] as string, ids[300] as string, { maxDeltaDepth: 400 })).answer, true, "the bound is what stopped it");
});

test("a zlib bomb (a loose 'commit' inflating to 100 MB) stops at the object bound", async () => {
	const { dir, ids } = repo("loose");
	const big = 100 * 1024 * 1024;
	const bomb = Buffer.concat([Buffer.from(`commit ${big}\0`), Buffer.alloc(big)]);
	const path = loosePath(dir, ids[5] as string);
	rmSync(path);
	writeFileSync(path, deflateSync(bomb, { level: 9 }));
	assert.ok(statSync(path).size < 200 * 1024, "the bomb is small on disk");
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined);
	assert.match(why, /inflates past 1048608 bytes/);
});

test("a packed object declaring 100 MB is refused before it is inflated", async () => {
	const dir = scratchRepoDir("big");
	made.push(dir);
	git(dir, ["init", "-q", "--bare"]);
	const id = "3".repeat(40);
	writePack(dir, [{ kind: "blob", data: Buffer.alloc(100 * 1024 * 1024), id }]);
	const { answer, why } = await ask(dir, id, id);
	assert.equal(answer, undefined);
	assert.match(why, /an object of 104857600 bytes in a pack/);
});

test("alternates are never followed, even to a repository that holds the objects", async () => {
	const { dir: other, ids } = repo("pack");
	const dir = scratchRepoDir("alt");
	made.push(dir);
	git(dir, ["init", "-q", "--bare"]);
	mkdirSync(join(dir, "objects", "info"), { recursive: true });
	writeFileSync(join(dir, "objects", "info", "alternates"), `${join(other, "objects")}\n`);
	assert.equal(gitIsAncestor(dir, ids[0] as string, ids[5] as string), true, "git reads the other repository's objects");
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined);
	assert.match(why, /not in this git dir/);
});

test("an object that does not hash to its name is refused (two loose commits swapped)", async () => {
	const { dir, ids } = repo("loose");
	const [p, q] = [loosePath(dir, ids[2] as string), loosePath(dir, ids[3] as string)];
	const [bp, bq] = [readFileSync(p), readFileSync(q)];
	rmSync(p);
	rmSync(q);
	writeFileSync(p, bq);
	writeFileSync(q, bp);
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined);
	assert.match(why, /does not hash to its name/);
});

test("garbage as a loose object, and a header that lies about the size, are refused", async () => {
	for (const raw of [Buffer.from("not zlib at all"), deflateSync(Buffer.from("commit 5\0abc"))]) {
		const { dir, ids } = repo("loose");
		const path = loosePath(dir, ids[4] as string);
		rmSync(path);
		writeFileSync(path, raw);
		const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
		assert.equal(answer, undefined);
		assert.match(why, /corrupt zlib data|corrupt loose object header/);
	}
});

test("a shallow clone's missing parents are 'cannot say' where git says 'not an ancestor'", async () => {
	const { dir: full, ids } = repo("pack", [...CHAIN, { parents: [1], date: BASE + 1000 }]);
	git(full, ["tag", "old", ids[1] as string]);
	const dir = scratchRepoDir("shallow");
	made.push(dir);
	execFileSync("git", ["clone", "-q", "--bare", "--depth=2", "--branch=c5", `file://${full}`, dir], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
	git(dir, ["fetch", "-q", "--depth=1", "origin", "refs/tags/old:refs/tags/old"]);
	const [a, b] = [ids[1] as string, ids[5] as string];
	assert.equal(gitIsAncestor(full, a, b), true, "the truth");
	assert.equal(gitIsAncestor(dir, a, b), false, "git, in the shallow clone");
	const { answer, why } = await ask(dir, a, b);
	assert.equal(answer, undefined);
	assert.match(why, new RegExp(`commit ${ids[3]} is not in this git dir`));
	assert.equal((await ask(dir, ids[4] as string, b)).answer, true, "what is here still answers");
});

test("a file or folder owned by another user is refused (git's safe.directory rule, `fs-util.ts` ownedByMe)", async () => {
	const { dir, ids } = repo("loose");
	// Only root can give a file away (the suite runs as root in CI, as the other ownership tests do).
	if (process.getuid?.() !== 0) return;
	chownSync(loosePath(dir, ids[3] as string), 4242, 4242);
	const file = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(file.answer, undefined);
	assert.match(file.why, new RegExp(`${ids[3]?.slice(2)}: it belongs to another user`));
	chownSync(join(dir, "objects"), 4242, 4242);
	const folder = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(folder.answer, undefined);
	assert.match(folder.why, /objects: it belongs to another user/);
});

test("a commit-graph that does not hold is not used; the objects still answer", async () => {
	const { dir, ids } = repo("pack");
	git(dir, ["commit-graph", "write", "--reachable"]);
	const graph = join(dir, "objects", "info", "commit-graph");
	const bytes = readFileSync(graph);
	rmSync(graph);
	writeFileSync(graph, bytes.subarray(0, bytes.length - 40));
	assert.equal((await ask(dir, ids[0] as string, ids[5] as string)).answer, true);
	rmSync(graph);
	execFileSync("mkfifo", [graph]);
	const { answer, why } = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(answer, undefined, "a FIFO where git keeps a file is refused, not waited on");
	assert.match(why, /: it is a FIFO/);
	rmSync(graph);
	const info = join(dir, "objects", "info");
	renameSync(info, join(dir, "info-elsewhere"));
	symlinkSync(join(dir, "info-elsewhere"), info);
	const linked = await ask(dir, ids[0] as string, ids[5] as string);
	assert.equal(linked.answer, undefined, "objects/info as a link to elsewhere");
	assert.match(linked.why, /info: it is a symbolic link/);
});
