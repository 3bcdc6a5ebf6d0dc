/**
 * `isAncestor` against git's own `merge-base --is-ancestor`, over random histories (merges,
 * octopus merges, several roots) stored every way git stores them: loose, packed, packed with
 * deltas (`gc --aggressive`), with REF_DELTA bases, half loose and half packed, with a
 * commit-graph; SHA-1 and SHA-256.
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { test } from "node:test";
import fc from "fast-check";
import { isAncestor } from "../../lib/storage/project/git-ancestry.js";
import { assertProperty } from "../helpers/seed.js";
import {
	type Format,
	type Spec,
	type Storage,
	commitText,
	git,
	gitIsAncestor,
	makeRepo,
	objectId,
	scratchRepoDir,
	writeLoose,
} from "../helpers/git-objects.js";

const STORAGES: Storage[] = ["loose", "pack", "aggressive", "refdelta", "graph", "mixed"];
const BASE = 1_700_000_000;

/** A random history: each commit's parents are distinct earlier commits (mostly one; some merges, octopus merges and roots). */
function history(maxLen: number, skew: fc.Arbitrary<number>): fc.Arbitrary<Spec[]> {
	const commit = fc.record({ kind: fc.nat(99), picks: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }), skew });
	return fc.array(commit, { minLength: 1, maxLength: maxLen }).map((raw) => {
		const specs: Spec[] = [];
		raw.forEach((r, i) => {
			const want = i === 0 || r.kind < 8 ? 0 : r.kind < 75 ? 1 : r.kind < 95 ? 2 : 3;
			const parents = [...new Set(r.picks.slice(0, want).map((p) => (i - 1 - (p % Math.min(i, 6))) as number))];
			const from = parents.length === 0 ? BASE : Math.max(...parents.map((p) => (specs[p] as Spec).date));
			specs.push({ parents, date: from + r.skew });
		});
		return specs;
	});
}

const pairs = fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 6, maxLength: 12 });

async function agree(specs: Spec[], storage: Storage, format: Format, picked: [number, number][], opts = {}): Promise<void> {
	const { dir, ids } = makeRepo(specs, storage, format);
	try {
		// Every commit against the newest, plus random pairs: both answers occur.
		const n = ids.length;
		const asked: [number, number][] = [...ids.map((_, i): [number, number] => [i, n - 1]), ...picked.map(([a, b]): [number, number] => [a % n, b % n])];
		for (const [a, b] of asked) {
			const why: string[] = [];
			const ours = await isAncestor(dir, ids[a] as string, ids[b] as string, { ...opts, why: (w) => why.push(w) });
			assert.equal(ours, gitIsAncestor(dir, ids[a] as string, ids[b] as string), `${storage} ${format}: is ${a} an ancestor of ${b}? (${why.join("; ")})`);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

test("agrees with git merge-base --is-ancestor on random histories, every storage, SHA-1 and SHA-256", async () => {
	// Committer dates move forward, or back by at most ten minutes a commit (within the day of slack).
	const arb = fc.tuple(history(24, fc.integer({ min: -600, max: 3600 })), fc.constantFrom(...STORAGES), fc.constantFrom<Format>("sha1", "sha256"), pairs);
	await assertProperty(
		fc.asyncProperty(arb, ([specs, storage, format, picked]) => agree(specs, storage, format, picked)),
		{ numRuns: 24 },
	);
});

test("with a commit-graph the answer is exact whatever the committer dates", async () => {
	const arb = fc.tuple(history(20, fc.integer({ min: -30 * 86_400, max: 30 * 86_400 })), fc.constantFrom<Format>("sha1", "sha256"), pairs);
	await assertProperty(
		fc.asyncProperty(arb, ([specs, format, picked]) => agree(specs, "graph", format, picked)),
		{ numRuns: 8 },
	);
});

test("without a commit-graph, true is always git's answer whatever the dates (only pruning by date can miss)", async () => {
	const arb = fc.tuple(history(20, fc.integer({ min: -30 * 86_400, max: 30 * 86_400 })), fc.constantFrom<Storage>("loose", "pack", "aggressive"), pairs);
	await assertProperty(
		fc.asyncProperty(arb, async ([specs, storage, picked]) => {
			const { dir, ids } = makeRepo(specs, storage);
			try {
				for (const [a, b] of picked) {
					const [x, y] = [ids[a % ids.length] as string, ids[b % ids.length] as string];
					const ours = await isAncestor(dir, x, y);
					assert.notEqual(ours, undefined, "every object is here and the history is small: an answer");
					if (ours === true) assert.equal(gitIsAncestor(dir, x, y), true);
				}
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		}),
		{ numRuns: 8 },
	);
});

test("a commit dated more than the slack before its ancestor is pruned without a commit-graph, and found with one", async () => {
	const day = 86_400;
	// 0 (the ancestor) <- 1 (dated two days before it) <- 2.
	const specs: Spec[] = [
		{ parents: [], date: BASE },
		{ parents: [0], date: BASE - 2 * day },
		{ parents: [1], date: BASE + day },
	];
	const { dir, ids } = makeRepo(specs, "pack");
	try {
		const [a, , b] = ids as [string, string, string];
		assert.equal(gitIsAncestor(dir, a, b), true);
		assert.equal(await isAncestor(dir, a, b), false, "pruned by date: the documented limit");
		assert.equal(await isAncestor(dir, a, b, { slackSeconds: 3 * day }), true, "a wider slack reaches it");
		git(dir, ["commit-graph", "write", "--reachable"]);
		assert.equal(await isAncestor(dir, a, b), true, "topological levels do not depend on dates");
		assert.equal(await isAncestor(dir, a, b, { commitGraph: false }), false);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("a history longer than the commit bound is 'cannot say', not 'not merged'", async () => {
	const specs: Spec[] = Array.from({ length: 300 }, (_, i) => ({ parents: i === 0 ? [] : [i - 1], date: BASE + i }));
	const { dir, ids } = makeRepo(specs, "pack");
	try {
		const why: string[] = [];
		assert.equal(await isAncestor(dir, ids[0] as string, ids[299] as string), true);
		assert.equal(await isAncestor(dir, ids[0] as string, ids[299] as string, { maxCommits: 100, why: (w) => why.push(w) }), undefined);
		assert.match(why.join(), /more than 100 commits/);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("ids that are not two commit ids of one hash, objects that are not commits, or bounds that are not numbers are 'cannot say'", async () => {
	const { dir, ids } = makeRepo(
		[
			{ parents: [], date: BASE },
			{ parents: [0], date: BASE + 1 },
		],
		"pack",
	);
	try {
		const [a, b] = ids as [string, string];
		const tree = git(dir, ["rev-parse", `${b}^{tree}`]).trim();
		for (const [x, y] of [
			["HEAD", b],
			[a.toUpperCase(), b],
			[a, `${b}0`],
			[a, "0".repeat(64)],
			[tree, b],
			["0".repeat(40), b],
		] as [string, string][]) {
			assert.equal(await isAncestor(dir, x, y), undefined, `${x} ${y}`);
		}
		assert.equal(await isAncestor(dir, a, b, { slackSeconds: -1 }), undefined, "a negative slack");
		assert.equal(await isAncestor(dir, a, b, { maxCommits: Number.NaN }), undefined, "a bound that is not a number");
		assert.equal(await isAncestor(dir, b, b), true);
		assert.equal(await isAncestor(dir, a, b), true);
		assert.equal(await isAncestor(dir, b, a), false);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test("an ancestor whose committer date cannot be read prunes nothing by date", async () => {
	const dir = scratchRepoDir("nodate");
	try {
		git(dir, ["init", "-q", "--bare"]);
		const tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
		const a = Buffer.from(`tree ${tree}\nauthor T <t@example.com> 1 +0000\ncommitter nobody\n\nno date\n`);
		const ia = objectId("commit", a);
		const b = commitText(tree, [ia], 1000, "dated long before");
		const ib = objectId("commit", b);
		const c = commitText(tree, [ib], 2000, "tip");
		const ic = objectId("commit", c);
		for (const [id, text] of [
			[ia, a],
			[ib, b],
			[ic, c],
		] as [string, Buffer][])
			writeLoose(dir, id, Buffer.concat([Buffer.from(`commit ${text.length}\0`), text]));
		assert.equal(gitIsAncestor(dir, ia, ic), true);
		assert.equal(await isAncestor(dir, ia, ic), true);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
