/**
 * Whether git tracks a folder, read from the index file (`lib/storage/project/git-index.ts`), checked
 * against real git's own list (`git ls-files`, in any spelling a case-insensitive file system
 * takes for `.pi/state-flow`, or above it) over random trees, in every index format git
 * writes (2, 3 with an intent-to-add entry, 4 with its compressed paths), split and not, SHA-1
 * and SHA-256; and what is not an index to read is `unknown`, never `no`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, chownSync, linkSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { MAX_SCAN, foldsCase, tracksUnder } from "../../lib/storage/project/git-index.js";
import { git } from "../helpers/git-repo.js";
import { tempDir } from "../helpers/temp-dir.js";

const STORE = ".pi/state-flow";

/** Paths near the store's in git's byte order, before it, beside it and after it, none of them in it. */
const besideArb = fc.constantFrom(
	".a",
	".github/ci.yml",
	".pi-x/f",
	".pi.x",
	".pi/a",
	".pi/skills/s/SKILL.md",
	".pi/state-flo",
	".pi/state-flow-x/f",
	".pi/state-flow.bak/f",
	".pi/state-flowx",
	".pi/t",
	".pj/f",
	".Pz/f",
	".p",
	".q/f",
	".yarn/cache/x.zip",
	"-dash",
	"README.md",
	"src/a.ts",
	`.p${"i".repeat(200)}/long`,
);

/** Paths that are the store's, in any spelling a case-insensitive file system takes for it, or above it. */
const storeArb = fc.constantFrom(
	".pi/state-flow/log.jsonl",
	".pi/state-flow/checkpoint.json",
	".pi/state-flow/sub/f",
	".PI/state-flow/log.jsonl",
	".Pi/State-Flow/x",
	".pi/ſtate-flow/x",
	".pi/state-ﬂow/x",
	".pi",
	".pi/state-flow",
);

function fresh(t: { after(fn: () => void): void }, objectFormat: "sha1" | "sha256"): string {
	const dir = join(realpathSync(tempDir(t, "state-flow-index-")), "r");
	mkdirSync(dir);
	git(dir, "init", "-q", `--object-format=${objectFormat}`);
	return dir;
}

/**
 * Real git's list of what it tracks, read as the file system would check it out (with `foldCase`,
 * as a case-insensitive one, macOS's default): a path in `.pi/state-flow`, that path itself, or a
 * path above it.
 */
function gitSays(dir: string, foldCase: boolean): "yes" | "no" {
	const fold = (p: string) => (foldCase ? p.toUpperCase().toLowerCase() : p);
	const listed = execFileSync("git", ["-c", "core.quotePath=false", "ls-files", "--sparse"], { cwd: dir, encoding: "utf8" }).split("\n").filter(Boolean);
	const covers = (p: string) => {
		const f = fold(p).replace(/\/$/, "");
		return f === STORE || f.startsWith(`${STORE}/`) || STORE.startsWith(`${f}/`);
	};
	return listed.some(covers) ? "yes" : "no";
}

describe("which folders git tracks, from its index", () => {
	it("agrees with `git ls-files` in every index format, split or not, SHA-1 and SHA-256", async (t) => {
		await assertProperty(
			fc.asyncProperty(
				fc.uniqueArray(besideArb, { minLength: 0, maxLength: 10 }),
				fc.option(storeArb),
				fc.constantFrom(2, 3, 4),
				fc.boolean(),
				fc.constantFrom("sha1" as const, "sha256" as const),
				fc.boolean(),
				async (beside, store, version, split, format, foldCase) => {
					const dir = fresh(t, format);
					const paths = store === null ? beside : [...beside, store];
					// A file and a folder of one name cannot both exist: the later one is left out.
					const kept = paths.filter((p, i) => !paths.slice(0, i).some((q) => p.startsWith(`${q}/`) || q.startsWith(`${p}/`)));
					for (const p of kept) {
						mkdirSync(join(dir, p, ".."), { recursive: true });
						writeFileSync(join(dir, p), p);
					}
					if (kept.length > 0) git(dir, "add", "-f", "--", ...kept);
					// Format 3 is written only when an entry needs its extended flags (intent to add).
					writeFileSync(join(dir, "zz-intent"), "i");
					if (version === 3) git(dir, "add", "-N", "zz-intent");
					git(dir, "update-index", `--index-version=${version}`);
					if (split) git(dir, "update-index", "--split-index");
					const said = tracksUnder(join(dir, ".git"), STORE, join(dir, ".git"), foldCase);
					assert.equal(said, gitSays(dir, foldCase), `${JSON.stringify(kept)} v${version} split=${split} ${format} fold=${foldCase}`);
					rmSync(join(dir, ".."), { recursive: true, force: true });
				},
			),
			{ numRuns: 100 },
		);
	});

	it("each index git writes is read anew: the verdict follows `git rm --cached` and `git add -f`", (t) => {
		const dir = fresh(t, "sha1");
		mkdirSync(join(dir, ".pi", "state-flow"), { recursive: true });
		writeFileSync(join(dir, ".pi", "state-flow", "log.jsonl"), "{}\n");
		git(dir, "add", "-f", ".pi/state-flow");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "yes");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "yes");
		git(dir, "rm", "-r", "-q", "--cached", ".pi/state-flow");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "no");
		git(dir, "add", "-f", ".pi/state-flow");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "yes");
	});

	it("a split index is read through the shared index its `link` names, however many stale ones lie beside it", (t) => {
		const dir = fresh(t, "sha1");
		git(dir, "config", "core.splitIndex", "true");
		git(dir, "config", "splitIndex.maxPercentChange", "0");
		git(dir, "config", "splitIndex.sharedIndexExpire", "never");
		for (let i = 0; i < 15; i++) {
			writeFileSync(join(dir, `f${i}`), `${i}`);
			git(dir, "add", `f${i}`);
		}
		mkdirSync(join(dir, ".pi", "state-flow"), { recursive: true });
		writeFileSync(join(dir, ".pi", "state-flow", "log.jsonl"), "{}\n");
		git(dir, "add", "-f", ".pi/state-flow");
		const shared = readdirSync(join(dir, ".git")).filter((f) => f.startsWith("sharedindex."));
		assert.ok(shared.length > 8, `${shared.length} shared index files`);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "yes");
		git(dir, "rm", "-r", "-q", "--cached", ".pi/state-flow");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "no");
	});

	it("an index too long to be a split index's own part, beside a stale shared index, is read as the whole index it is", (t) => {
		const dir = fresh(t, "sha1");
		const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: dir, input: "x" }).toString().trim();
		// Paths sorting after `.pi/`, more of them than is read of an index.
		const n = Math.ceil(MAX_SCAN / 64) + 1000;
		const lines = Array.from({ length: n }, (_, i) => `100644 ${blob} 0\tz/${String(i).padStart(7, "0")}\n`).join("");
		execFileSync("git", ["update-index", "--index-info"], { cwd: dir, input: lines });
		git(dir, "update-index", "--split-index");
		git(dir, "update-index", "--no-split-index");
		assert.ok(
			readdirSync(join(dir, ".git")).some((f) => f.startsWith("sharedindex.")),
			"git left the shared index behind",
		);
		assert.ok(statSync(join(dir, ".git", "index")).size > MAX_SCAN);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "no");
		execFileSync("git", ["update-index", "--add", "--cacheinfo", `100644,${blob},.pi/state-flow/log.jsonl`], { cwd: dir });
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "yes");
	});

	it("folds case only where the file system does: `foldsCase` tells", (t) => {
		const dir = fresh(t, "sha1");
		mkdirSync(join(dir, ".pi", "state-flow"), { recursive: true });
		// This machine's file system (Linux) keeps `.PI` and `.pi` apart.
		assert.equal(foldsCase(join(dir, ".pi", "state-flow")), false);
		mkdirSync(join(dir, ".PI", "state-flow"), { recursive: true });
		writeFileSync(join(dir, ".PI", "state-flow", "readme"), "r");
		git(dir, "add", "-f", ".PI");
		assert.equal(tracksUnder(join(dir, ".git"), STORE, join(dir, ".git"), false), "no");
		assert.equal(tracksUnder(join(dir, ".git"), STORE, join(dir, ".git"), true), "yes");
		// Where the upper-case spelling is the same file, it folds (a hard link stands in for such a file system).
		writeFileSync(join(dir, "probe"), "p");
		linkSync(join(dir, "probe"), join(dir, "PROBE"));
		assert.equal(foldsCase(join(dir, "probe")), true);
	});

	it("a repository with no index yet tracks nothing", (t) => {
		const dir = fresh(t, "sha1");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "no");
	});

	it("a sparse index's folder entry above the store cannot tell: `unknown`", (t) => {
		const dir = fresh(t, "sha1");
		for (const p of [".pi/state-flow/log.jsonl", "src/a.ts"]) {
			mkdirSync(join(dir, p, ".."), { recursive: true });
			writeFileSync(join(dir, p), p);
		}
		git(dir, "add", "-f", ".");
		git(dir, "commit", "-q", "-m", "c");
		git(dir, "sparse-checkout", "init", "--cone", "--sparse-index");
		git(dir, "sparse-checkout", "set", "src");
		assert.match(execFileSync("git", ["ls-files", "--sparse"], { cwd: dir, encoding: "utf8" }), /^\.pi\/$/m);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
	});

	it("reads the object format from a config of any size, a variable on its section's line too", (t) => {
		const dir = fresh(t, "sha256");
		mkdirSync(join(dir, ".pi", "state-flow"), { recursive: true });
		writeFileSync(join(dir, ".pi", "state-flow", "log.jsonl"), "{}\n");
		git(dir, "add", "-f", ".pi/state-flow");
		const config = join(dir, ".git", "config");
		const branches = Array.from({ length: 1500 }, (_, i) => `[branch "b${i}"]\n\tremote = origin\n\tmerge = refs/heads/b${i}\n`).join("");
		appendFileSync(config, branches);
		assert.ok(statSync(config).size > 64 * 1024);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "yes");
		const text = readFileSync(config, "utf8").replace(/\[extensions\]\s*\n\s*objectformat = sha256/i, "[extensions] objectFormat = sha256");
		assert.match(text, /^\[extensions\] objectFormat = sha256$/m);
		writeFileSync(config, text);
		assert.equal(git(dir, "rev-parse", "--show-object-format"), "sha256");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "yes");
	});

	it("an index that is garbage, a link or a FIFO is `unknown`", (t) => {
		const dir = fresh(t, "sha1");
		const index = join(dir, ".git", "index");
		writeFileSync(index, "DIRC\0\0\0\x02\0\0\0\x05not entries at all");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
		writeFileSync(index, "PK\x03\x04");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
		rmSync(index);
		symlinkSync("/etc/hostname", index);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
		rmSync(index);
		execFileSync("mkfifo", [index]);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
	});

	it("an index or config of another user's is `unknown` (the rule of every git file, `git-files.ts`)", (t) => {
		const dir = fresh(t, "sha1");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "no");
		// Only root can give a file away (the suite runs as root in CI, as the other ownership tests do).
		if (process.getuid?.() !== 0) return;
		writeFileSync(join(dir, "a.txt"), "a\n");
		git(dir, "add", "a.txt");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "no");
		chownSync(join(dir, ".git", "index"), 4242, 4242);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
		chownSync(join(dir, ".git", "index"), 0, 0);
		chownSync(join(dir, ".git", "config"), 4242, 4242);
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
	});

	it("an index whose first MAX_SCAN bytes hold no verdict is `unknown`", (t) => {
		const dir = fresh(t, "sha1");
		const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: dir, input: "x" }).toString().trim();
		// Paths sorting before `.pi/` until the index is longer than what is read of it.
		const n = Math.ceil(MAX_SCAN / 64) + 1000;
		const lines = Array.from({ length: n }, (_, i) => `100644 ${blob} 0\t.a/${String(i).padStart(7, "0")}\n`).join("");
		execFileSync("git", ["update-index", "--index-info"], { cwd: dir, input: lines });
		writeFileSync(join(dir, "f"), "f");
		assert.equal(tracksUnder(join(dir, ".git"), STORE), "unknown");
		assert.equal(tracksUnder(join(dir, ".git"), ".a"), "yes");
	});
});
