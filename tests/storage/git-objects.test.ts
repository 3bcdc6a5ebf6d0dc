/**
 * The object store below `isAncestor`: git's delta format as a law (a delta made by git's
 * own rules rebuilds its target; any bytes at all either rebuild within the bound or stop with
 * `Stop`), a REF_DELTA whose base lives in another pack, and reads of a large pack that touch
 * only the blocks the answer needs.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { rmSync, statSync } from "node:fs";
import { test } from "node:test";
import fc from "fast-check";
import { isAncestor } from "../../lib/storage/project/git-ancestry.js";
import { Budget, DEFAULT_BOUNDS, Stop } from "../../lib/storage/project/git-object-files.js";
import { ObjectStore, applyDelta } from "../../lib/storage/project/git-objects.js";
import { commitText, git, insertDelta, makeRepo, objectId, scratchRepoDir, writePack } from "../helpers/git-objects.js";
import { assertProperty } from "../helpers/seed.js";

/** A delta from `base` to `target` of copies (of the shared prefix) and inserts, as git writes them. */
function gitDelta(base: Buffer, target: Buffer): Buffer {
	const varint = (n: number): number[] => {
		const out: number[] = [];
		do {
			out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
			n = Math.floor(n / 128);
		} while (n > 0);
		return out;
	};
	const out = [...varint(base.length), ...varint(target.length)];
	let same = 0;
	while (same < base.length && same < target.length && base[same] === target[same]) same++;
	for (let at = 0; at < same; at += 0x10000) {
		const len = Math.min(0x10000, same - at);
		// Copy: offset in 4 bytes, size in 3 (0x10000 is written as size 0).
		out.push(0x80 | 0x0f | 0x70, at & 0xff, (at >> 8) & 0xff, (at >> 16) & 0xff, (at >> 24) & 0xff, len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff);
	}
	for (let i = same; i < target.length; i += 127) {
		const part = target.subarray(i, Math.min(i + 127, target.length));
		out.push(part.length, ...part);
	}
	return Buffer.from(out);
}

test("a delta rebuilds its target from its base", () => {
	assertProperty(
		fc.property(fc.uint8Array({ maxLength: 3000 }), fc.uint8Array({ maxLength: 3000 }), fc.nat(3000), (b, t, keep) => {
			const base = Buffer.from(b);
			const target = Buffer.concat([base.subarray(0, keep), Buffer.from(t)]);
			assert.deepEqual(applyDelta(base, gitDelta(base, target), 1 << 20), target);
			assert.deepEqual(applyDelta(base, insertDelta(base.length, target), 1 << 20), target);
		}),
	);
});

test("any bytes as a delta rebuild within the bound or stop, never anything else", () => {
	assertProperty(
		fc.property(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ maxLength: 200 }), (b, d) => {
			const base = Buffer.from(b);
			try {
				assert.ok(applyDelta(base, Buffer.from(d), 100).length <= 100);
			} catch (e) {
				assert.ok(e instanceof Stop, String(e));
			}
		}),
		{ numRuns: 2000 },
	);
});

test("a REF_DELTA whose base is in another pack is resolved; the result is checked against its name", async () => {
	const dir = scratchRepoDir("refpacks");
	try {
		git(dir, ["init", "-q", "--bare"]);
		const tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
		const a = commitText(tree, [], 1_700_000_000, "base");
		const b = commitText(tree, [objectId("commit", a)], 1_700_000_100, "child, packed as a delta on its parent");
		const [ia, ib] = [objectId("commit", a), objectId("commit", b)];
		writePack(dir, [{ kind: "commit", data: a, id: ia }]);
		writePack(dir, [{ kind: "ref", base: ia, delta: insertDelta(a.length, b), id: ib }]);
		assert.equal(await isAncestor(dir, ia, ib), true);
		assert.equal(await isAncestor(dir, ib, ia), false);
		const why: string[] = [];
		const wrong = "9".repeat(40);
		writePack(dir, [{ kind: "ref", base: ia, delta: insertDelta(a.length, b), id: wrong }]);
		assert.equal(await isAncestor(dir, wrong, ib, { why: (w) => why.push(w) }), undefined);
		assert.match(why.join(), /does not hash to its name/);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("a pack is read at the needed offsets only: near the tip of a large pack, a small part is read", async () => {
	const specs = Array.from({ length: 400 }, (_, i) => ({ parents: i === 0 ? [] : [i - 1], date: 1_700_000_000 + 60 * i }));
	const { dir, ids } = makeRepo(specs, "pack");
	try {
		// Make the pack large with an incompressible blob, then repack everything into one.
		const blob = git(dir, ["hash-object", "-w", "--stdin"], randomBytes(8 * 1024 * 1024));
		git(dir, ["tag", "big", blob.trim()]);
		git(dir, ["-c", "gc.writeCommitGraph=false", "gc", "-q", "--prune=now"]);
		const pack = git(dir, ["count-objects", "-v"]).match(/size-pack: (\d+)/)?.[1];
		const spent = { commits: 0, bytes: 0 };
		assert.equal(await isAncestor(dir, ids[395] as string, ids[399] as string, { spent }), true);
		assert.ok(spent.bytes < 256 * 1024, `read ${spent.bytes} bytes of a ${pack} KiB pack`);
		assert.ok(Number(pack) * 1024 > 8 * 1024 * 1024);
		assert.equal(spent.commits, 5, "the two asked and the three between");
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("the store answers 'not here' for an absent object and refuses a store of another hash", async () => {
	const { dir, ids } = makeRepo([{ parents: [], date: 1_700_000_000 }], "pack", "sha256");
	try {
		const budget = new Budget({ ...DEFAULT_BOUNDS });
		const store = new ObjectStore(dir, 64, budget);
		assert.equal((await store.read(ids[0] as string))?.type, "commit");
		assert.equal(await store.read("0".repeat(64)), undefined);
		await store.close();
		// Asked with SHA-1 ids, the SHA-256 index does not have the size of a SHA-1 one.
		const sha1 = new ObjectStore(dir, 40, new Budget({ ...DEFAULT_BOUNDS }));
		await assert.rejects(sha1.read("0".repeat(40)), /has the wrong size/);
		await sha1.close();
		assert.ok(statSync(dir).isDirectory());
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
