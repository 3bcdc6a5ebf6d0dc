/**
 * Damage only this machine can know of: a file store that comes back without transitions a
 * writer here committed — its log cut exactly at a record boundary (every record left is
 * whole and valid), its folder replaced by an older copy or by another history — is refused
 * by a fresh process (a new `Stores`, the CLI), through this machine's seen marks in the
 * agent directory. A removed folder stays a deliberate fresh start; `doctor --accept-store`
 * is the explicit way on. Marks never follow a link and never fail a commit.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError } from "../../lib/core/errors.js";
import { storePaths } from "../../lib/storage/project/paths.js";
import { seenMarksOf } from "../../lib/storage/file/seen.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "../cli/run.js";
import { makeSentinel, snapshot } from "./hostile.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("m", "2026-12-01T00:00:00.000Z", by);

interface World {
	base: string;
	agent: string;
	proj: string;
	root: string;
	log: string;
}

/** A project and an agent directory (pi always has one) with `count` CWD transitions committed here. */
async function world(t: { after(fn: () => void): void }, count: number, prefix = "w"): Promise<World & { bytes: Buffer; starts: number[] }> {
	const base = tempDir(t, "state-flow-seen-");
	const agent = join(base, "agent");
	const proj = join(base, "proj");
	mkdirSync(agent);
	mkdirSync(proj);
	const stores = open({ agent, proj });
	for (let i = 0; i < count; i++) await stores.commit({ cwd: { tactics: { [`k${i}`]: i } } }, meta(`${prefix}${i}`));
	const root = stores.identity().cwdRoot;
	const log = join(root, "log.jsonl");
	const bytes = readFileSync(log);
	const starts = [0];
	for (let i = 0; i < bytes.length - 1; i++) if (bytes[i] === 10) starts.push(i + 1);
	return { base, agent, proj, root, log, bytes, starts };
}

const open = (w: Pick<World, "agent" | "proj">) => openStoresAt({ agentDir: w.agent, cwd: w.proj });
const cli = (w: World, args: string[]) => runCli(args, { cwd: w.proj, env: { PI_CODING_AGENT_DIR: w.agent } });

/** Refused as damage: names the log, what went missing, and both ways on. */
function missing(w: World, what: RegExp) {
	return (e: unknown) => {
		assert.ok(isStateError(e), `expected a StateError, got ${String(e)}`);
		assert.equal(e.code, "corrupt", e.message);
		assert.ok(e.message.includes(`\`${w.log}\``), e.message);
		assert.match(e.message, what);
		assert.match(e.message, /state-flow doctor --accept-store cwd/);
		return true;
	};
}

describe("seen marks: what a fresh process cannot know by itself", () => {
	it("property: a log cut at any record boundary short of its end is refused by a fresh process; the whole log is not", async (t) => {
		const w = await world(t, 6);
		await assertProperty(
			fc.asyncProperty(fc.integer({ min: 0, max: w.starts.length }), async (k) => {
				const end = k === w.starts.length ? w.bytes.length : (w.starts[k] as number);
				writeFileSync(w.log, w.bytes.subarray(0, end));
				try {
					if (k === w.starts.length) assert.equal((await open(w).load("cwd")).seq, 6);
					else
						await assert.rejects(
							open(w).load("cwd"),
							missing(w, new RegExp(`ends at seq ${k}, but a writer on this machine committed seq 6 \\(transition \`w5\`\\)`)),
						);
				} finally {
					writeFileSync(w.log, w.bytes);
				}
			}),
			{ numRuns: 20 },
		);
	});

	it("the CLI refuses the cut store, doctor calls it DAMAGED and changes nothing; --accept-store goes on from it", async (t) => {
		const w = await world(t, 4);
		const cut = w.bytes.subarray(0, w.starts[3]);
		writeFileSync(w.log, cut);
		const show = cli(w, ["show", "cwd"]);
		assert.equal(show.code, 1, show.stdout);
		assert.match(unwrapped(show.stderr), /ends at seq 3, but a writer on this machine committed seq 4/);
		const doctor = cli(w, ["doctor"]);
		assert.equal(doctor.code, 1, doctor.stdout);
		assert.match(unwrapped(doctor.stdout), /cwd: DAMAGED: .*committed seq 4.*--accept-store cwd/);
		const dry = cli(w, ["doctor", "--accept-store", "cwd", "--dry-run"]);
		assert.match(unwrapped(dry.stdout), /would forget that a writer on this machine committed seq 4/);
		assert.equal(cli(w, ["doctor"]).code, 1, "a dry run accepts nothing");
		assert.deepEqual(readFileSync(w.log), cut, "doctor never changes the store");

		const accept = cli(w, ["doctor", "--accept-store", "cwd"]);
		assert.equal(accept.code, 0, accept.stdout + accept.stderr);
		assert.match(unwrapped(accept.stdout), /forgot that a writer on this machine committed seq 4 .*transitions it lacks stay lost/);
		assert.deepEqual(readFileSync(w.log), cut, "accepting changes nothing in the store");
		const stores = open(w);
		assert.equal((await stores.load("cwd")).seq, 3);
		await stores.commit({ cwd: { tactics: { after: 1 } } }, meta());
		// The next write is marked again: cutting it off is refused like before.
		writeFileSync(w.log, cut);
		await assert.rejects(open(w).load("cwd"), missing(w, /ends at seq 3, but a writer on this machine committed seq 4/));
		assert.match(unwrapped(cli(w, ["doctor", "--accept-store", "global"]).stdout), /global: this machine has no record of transitions committed to/);

		// A pi process that goes on writing while doctor forgets its mark writes a new mark, not the removed file.
		assert.equal(cli(w, ["doctor", "--accept-store", "cwd"]).code, 0);
		const live = open(w);
		await live.commit({ cwd: { tactics: { live: 1 } } }, meta());
		assert.equal(cli(w, ["doctor", "--accept-store", "cwd"]).code, 0);
		await live.commit({ cwd: { tactics: { live: 2 } } }, meta("live-2"));
		const whole = readFileSync(w.log);
		writeFileSync(w.log, whole.subarray(0, whole.lastIndexOf(10, whole.length - 2) + 1));
		await assert.rejects(open(w).load("cwd"), missing(w, /ends at seq 4, but a writer on this machine committed seq 5 \(transition `live-2`\)/));
	});

	it("doctor --cut-torn into a committed record leaves a store older than this machine's writes: said, and accepted only when asked", async (t) => {
		const w = await world(t, 3);
		const last = w.starts[2] as number;
		writeFileSync(w.log, w.bytes.subarray(0, last + 10));
		const cut = cli(w, ["doctor", "--cut-torn", "cwd"]);
		assert.equal(cut.code, 1, cut.stdout);
		assert.match(unwrapped(cut.stdout), /cutting them as asked/);
		assert.match(unwrapped(cut.stdout), /cwd: DAMAGED: .*ends at seq 2, but a writer on this machine committed seq 3.*--accept-store cwd/);
		assert.deepEqual(readFileSync(w.log), w.bytes.subarray(0, last), "every complete record stays");
		assert.equal(cli(w, ["doctor", "--accept-store", "cwd"]).code, 0);
		assert.equal((await open(w).load("cwd")).seq, 2);
	});

	it("a folder replaced by an older copy, or by another history as long, is refused", async (t) => {
		const w = await world(t, 2);
		cpSync(w.root, join(w.base, "backup"), { recursive: true });
		const stores = open(w);
		await stores.commit({ cwd: { tactics: { c: 3 } } }, meta("third"));
		await stores.commit({ cwd: { tactics: { c: 4 } } }, meta("fourth"));
		rmSync(w.root, { recursive: true });
		cpSync(join(w.base, "backup"), w.root, { recursive: true });
		await assert.rejects(open(w).load("cwd"), missing(w, /ends at seq 2, but a writer on this machine committed seq 4 \(transition `fourth`\)/));
		await assert.rejects(open(w).commit({ cwd: { tactics: { over: 1 } } }, meta()), missing(w, /committed seq 4/));

		// Another project's history of the same length in its place.
		const other = await world(t, 4, "other");
		rmSync(w.root, { recursive: true });
		cpSync(other.root, w.root, { recursive: true });
		await assert.rejects(open(w).load("cwd"), missing(w, /seq 4 holds transition `other3`, but a writer on this machine committed `fourth` there/));
	});

	it("a mark read half-written (it leads the log once, then reads as it is) is no evidence; a mark that stays ahead is", async (t) => {
		const w = await world(t, 3);
		const reader = open(w);
		const store = (reader as unknown as { shared: { cwd: { seen: { read(root: string): unknown } } } }).shared.cwd;
		const real = store.seen.read.bind(store.seen);
		let reads = 0;
		// The first read catches a writer's in-place update of the mark half-done: a seq no writer committed.
		store.seen.read = (root: string) => (reads++ === 0 ? { seq: 9, id: "w8" } : real(root));
		assert.equal((await reader.load("cwd")).seq, 3, "read as it is: the mark read again says seq 3");
		assert.ok(reads >= 2, "the mark was read again before anything was called damage");
		// A mark that reads ahead every time is evidence: the store lost what a writer here committed.
		const fresh = open(w);
		const stale = (fresh as unknown as { shared: { cwd: { seen: { read(root: string): unknown } } } }).shared.cwd;
		stale.seen.read = () => ({ seq: 9, id: "w8" });
		await assert.rejects(fresh.load("cwd"), missing(w, /committed seq 9 \(transition `w8`\)/));
	});

	it("a removed folder is a fresh start; a folder whose log is gone is not", async (t) => {
		const w = await world(t, 3);
		rmSync(join(w.root, "log.jsonl"));
		await assert.rejects(open(w).load("cwd"), missing(w, /it is missing, but a writer on this machine committed seq 3/));
		rmSync(w.root, { recursive: true });
		assert.equal((await open(w).load("cwd")).seq, 0);
		await open(w).commit({ cwd: { tactics: { fresh: 1 } } }, meta());
		assert.equal((await open(w).load("cwd")).seq, 1, "the new history is this machine's from its first write");
		// Removed under a process that had read it (`git clean -X` mid-session): its next write starts afresh too.
		const live = open(w);
		await live.load("cwd");
		rmSync(w.root, { recursive: true });
		await live.commit({ cwd: { tactics: { again: 1 } } }, meta());
		assert.equal((await open(w).load("cwd")).seq, 1);
	});

	it("marks never follow a link, and one that cannot be read or written never fails a read or a commit", async (t) => {
		const w = await world(t, 2);
		const sentinel = makeSentinel(join(w.base, "outside"));
		const before = snapshot(sentinel);
		const paths = storePaths(w.agent, w.proj);
		const mark = seenMarksOf(paths).fileOf(paths.cwdRoot);

		// Garbage where the mark was: said nothing, and the next commit writes a good mark again.
		writeFileSync(mark, "\u0000 not a mark {{{");
		assert.equal((await open(w).load("cwd")).seq, 2);
		await open(w).commit({ cwd: { tactics: { c: 3 } } }, meta());
		writeFileSync(w.log, readFileSync(w.log).subarray(0, w.bytes.length));
		await assert.rejects(open(w).load("cwd"), missing(w, /committed seq 3/));
		writeFileSync(w.log, w.bytes);

		// The mark a link to a file outside: not read through, not written through.
		rmSync(mark);
		symlinkSync(join(sentinel, "secret.txt"), mark);
		assert.equal((await open(w).load("cwd")).seq, 2);
		await open(w).commit({ cwd: { tactics: { c: 3 } } }, meta());

		// The marks folder a link to a folder outside: nothing is written there; commits go on.
		rmSync(paths.seenDir, { recursive: true });
		symlinkSync(join(sentinel, "dir-state-flow"), paths.seenDir);
		await open(w).commit({ cwd: { tactics: { c: 4 } } }, meta());
		assert.equal((await open(w).load("cwd")).seq, 4);
		assert.deepEqual(snapshot(sentinel), before, "nothing outside was touched");
		// A mark planted in the folder the link leads to is neither read (no damage called) nor removed.
		const planted = join(sentinel, "dir-state-flow", basename(mark));
		writeFileSync(planted, `${JSON.stringify({ root: paths.cwdRoot, seq: 99, id: "planted" })}\n`);
		assert.equal((await open(w).load("cwd")).seq, 4);
		assert.equal(seenMarksOf(paths).clear(paths.cwdRoot), false, "nothing is removed through the link");
		assert.equal(existsSync(planted), true);
		assert.equal(existsSync(join(sentinel, "dir-state-flow", "keep.txt")), true);
	});
});
