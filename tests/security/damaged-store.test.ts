/**
 * Damaged stores are reported, never rolled back or reset: truncation at sampled offsets of
 * the last records, in-place byte changes (a property: any single-byte change to a retained
 * record is detected or harmless), checkpoint/log mismatches and records of the wrong shape.
 * Each through the storage API as a live process and through the CLI as a fresh one (through
 * a live pi session: damaged-session.test.ts); also doctor's repairs and stores written by
 * 0.1.0. The damaged owner refuses reads and writes with a message naming the store and
 * `state-flow doctor`; other owners keep working.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError, messageOf } from "../../lib/core/errors.js";
import { sumOf } from "../../lib/storage/format.js";
import type { Stores } from "../../lib/storage/stores.js";
import { at } from "../helpers/at.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli, unwrapped } from "../cli/run.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("d", "2026-12-01T00:00:00.000Z", by);

interface Store {
	dir: string;
	agent: string;
	proj: string;
	log: string;
	checkpoint: string;
	bytes: Buffer;
	/** Start offset of every record line. */
	starts: number[];
}

const open = (s: Pick<Store, "agent" | "proj">) => openStoresAt({ agentDir: s.agent, cwd: s.proj });

async function seeded(t: { after(fn: () => void): void }, count = 5, retention = 20): Promise<Store> {
	const dir = tempDir(t, "state-flow-damage-");
	const agent = join(dir, "agent");
	const proj = join(dir, "proj");
	const stores = openStoresAt({ agentDir: agent, cwd: proj, retention });
	for (let i = 0; i < count; i++) await stores.commit({ cwd: { tactics: { [`k${i}`]: { n: i, text: `value ${i}` } } } }, meta());
	const root = stores.identity().cwdRoot;
	const log = join(root, "log.jsonl");
	const bytes = readFileSync(log);
	const starts = [0];
	for (let i = 0; i < bytes.length - 1; i++) if (bytes[i] === 10) starts.push(i + 1);
	// A store written a while ago: an in-place change later gets a new mtime.
	utimesSync(log, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
	return { dir, agent, proj, log, checkpoint: join(root, "checkpoint.json"), bytes, starts };
}

function isDamage(file: string) {
	return (e: unknown) => {
		assert.ok(isStateError(e), `expected a StateError, got ${String(e)}`);
		assert.equal(e.code, "corrupt", e.message);
		assert.ok(e.message.includes(`\`${file}\``), `the message must name the store file: ${e.message}`);
		assert.match(e.message, /state-flow doctor/);
		return true;
	};
}

/** The damaged owner refuses reads and writes, the file keeps its bytes, and Global keeps working. */
async function refusedAndIsolated(stores: Stores, s: Store): Promise<void> {
	const damaged = readFileSync(s.log);
	await assert.rejects(stores.load("cwd"), isDamage(s.log));
	await assert.rejects(stores.commit({ cwd: { tactics: { after: 1 } } }, meta()), isDamage(s.log));
	assert.deepEqual(readFileSync(s.log), damaged, "nothing was written to the damaged store");
	await stores.commit({ global: { tactics: { still: "works" } } }, meta());
	assert.equal((await stores.load("global")).state.tactics.still, "works");
}

const history = async (stores: Stores) => {
	const h = await stores.load("cwd");
	return { seq: h.seq, state: h.state, ids: h.tail.map((r) => r.id) };
};

describe("damaged stores: truncation", () => {
	it("a live process refuses a log cut at any offset of its last two records (shorter than it read)", async (t) => {
		const s = await seeded(t);
		const from = at(s.starts, -2);
		for (let cut = from; cut < s.bytes.length; cut += 7) {
			const stores = open(s);
			await stores.load("cwd");
			writeFileSync(s.log, s.bytes.subarray(0, cut));
			await refusedAndIsolated(stores, s);
			writeFileSync(s.log, s.bytes);
		}
	});

	it("a fresh process (the CLI) refuses a log cut inside a record, and doctor calls it damaged without cutting it", async (t) => {
		const s = await seeded(t);
		const env = { PI_CODING_AGENT_DIR: s.agent };
		const last = at(s.starts, -1);
		const before = at(s.starts, -2);
		// Offsets inside the last two records (a cut exactly at a line end leaves whole records only: see docs/security.md).
		for (const cut of [before + 1, before + 40, last - 2, last + 1, last + 60, s.bytes.length - 3, s.bytes.length - 2]) {
			writeFileSync(s.log, s.bytes.subarray(0, cut));
			const show = runCli(["show", "cwd"], { cwd: s.proj, env });
			assert.equal(show.code, 1, `cut at ${cut}: show must refuse:\n${show.stdout}`);
			assert.match(unwrapped(show.stderr), /state-flow doctor/);
			assert.ok(show.stderr.includes(s.log), show.stderr);
			const doctor = runCli(["doctor"], { cwd: s.proj, env });
			assert.equal(doctor.code, 1, `cut at ${cut}: doctor must not call it healthy:\n${doctor.stdout}`);
			assert.match(unwrapped(doctor.stdout), /DAMAGED/);
			assert.deepEqual(readFileSync(s.log), s.bytes.subarray(0, cut), "doctor changed nothing without being asked");
		}
	});

	it("a dropped last line end keeps every record: fresh readers see it, the next write completes the line", async (t) => {
		const s = await seeded(t);
		writeFileSync(s.log, s.bytes.subarray(0, s.bytes.length - 1));
		const stores = open(s);
		assert.equal((await stores.load("cwd")).seq, 5);
		await stores.commit({ cwd: { tactics: { after: 1 } } }, meta());
		const text = readFileSync(s.log, "utf8");
		assert.ok(text.startsWith(s.bytes.toString("utf8")), "every earlier byte is kept, the line end restored");
		assert.equal((await open(s).load("cwd")).seq, 6);
	});

	it("doctor --cut-torn cuts only the bytes after the last complete record, when asked", async (t) => {
		const s = await seeded(t);
		const last = at(s.starts, -1);
		writeFileSync(s.log, s.bytes.subarray(0, last + 30));
		const r = runCli(["doctor", "--cut-torn", "cwd"], { cwd: s.proj, env: { PI_CODING_AGENT_DIR: s.agent } });
		assert.equal(r.code, 0, r.stdout + r.stderr);
		assert.deepEqual(readFileSync(s.log), s.bytes.subarray(0, last), "every complete record stays");
		assert.equal((await open(s).load("cwd")).seq, 4);
	});
});

describe("damaged stores: bytes changed in place", () => {
	it("property: any single-byte change to a retained record is detected or harmless (fresh and live processes)", async (t) => {
		const s = await seeded(t, 4);
		const original = await history(open(s));
		const live = open(s);
		await live.load("cwd");
		await assertProperty(
			fc.asyncProperty(fc.nat({ max: s.bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), async (offset, delta) => {
				const changed = Buffer.from(s.bytes);
				changed[offset] = (at(changed, offset) + delta) & 0xff;
				writeFileSync(s.log, changed);
				try {
					for (const stores of [open(s), live]) {
						let seen: Awaited<ReturnType<typeof history>> | undefined;
						try {
							seen = await history(stores);
						} catch (e) {
							isDamage(s.log)(e);
						}
						if (seen !== undefined) assert.deepEqual(seen, original, `byte ${offset} changed by ${delta}: not detected and not harmless`);
					}
				} finally {
					writeFileSync(s.log, s.bytes);
					utimesSync(s.log, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("property: through the CLI, a single-byte change is refused naming the store and doctor, or shows the same state", async (t) => {
		const s = await seeded(t, 3);
		const env = { PI_CODING_AGENT_DIR: s.agent };
		const original = runCli(["show", "cwd"], { cwd: s.proj, env });
		assert.equal(original.code, 0, original.stderr);
		assertProperty(
			fc.property(fc.nat({ max: s.bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (offset, delta) => {
				const changed = Buffer.from(s.bytes);
				changed[offset] = (at(changed, offset) + delta) & 0xff;
				writeFileSync(s.log, changed);
				try {
					const r = runCli(["show", "cwd"], { cwd: s.proj, env });
					if (r.code === 0) assert.equal(r.stdout, original.stdout, `byte ${offset} changed by ${delta}: not detected and not harmless`);
					else {
						assert.equal(r.code, 1, r.stderr);
						assert.ok(r.stderr.includes(s.log) && r.stderr.includes("state-flow doctor"), r.stderr);
					}
				} finally {
					writeFileSync(s.log, s.bytes);
				}
			}),
			{ numRuns: 15 },
		);
	});

	it("a live process notices a record changed in place (same size) and stops writing to that store", async (t) => {
		const s = await seeded(t);
		const stores = open(s);
		await stores.load("cwd");
		const text = s.bytes.toString("utf8").replace('"value 1"', '"VALUE 1"');
		assert.equal(Buffer.byteLength(text), s.bytes.length);
		writeFileSync(s.log, text);
		await refusedAndIsolated(stores, s);
		// The damage stays reported even if the file is put back by hand: the process saw it change.
		writeFileSync(s.log, s.bytes);
		await assert.rejects(stores.load("cwd"), isDamage(s.log));
	});

	it("a live process notices a changed earlier record when another process appends", async (t) => {
		const s = await seeded(t);
		const stores = open(s);
		await stores.load("cwd");
		const lastStart = at(s.starts, -1);
		const changed = Buffer.from(s.bytes);
		changed[lastStart + 10] = at(changed, lastStart + 10) ^ 0x01;
		writeFileSync(s.log, changed);
		// A record appended after it by a writer that did not check.
		writeFileSync(s.log, Buffer.concat([changed, Buffer.from("\n")]));
		await assert.rejects(stores.load("cwd"), isDamage(s.log));
	});
});

describe("damaged stores: checkpoints and shapes", () => {
	async function compacted(t: { after(fn: () => void): void }): Promise<Store> {
		// Retention 2: compaction after 2 + 64 records leaves a checkpoint and two retained records.
		return seeded(t, 70, 2);
	}

	it("a checkpoint whose seq is ahead of the log is refused instead of hiding the log", async (t) => {
		const s = await compacted(t);
		const cp = JSON.parse(readFileSync(s.checkpoint, "utf8")) as Record<string, unknown>;
		const { sum: _sum, ...rest } = cp;
		const ahead = { ...rest, seq: 200 };
		writeFileSync(s.checkpoint, JSON.stringify({ ...ahead, sum: sumOf(ahead) }));
		await assert.rejects(open(s).load("cwd"), isDamage(s.log));
		const doctor = runCli(["doctor"], { cwd: s.proj, env: { PI_CODING_AGENT_DIR: s.agent } });
		assert.equal(doctor.code, 1);
		assert.match(unwrapped(doctor.stdout), /DAMAGED.*behind checkpoint/);
	});

	it("a checkpoint whose bytes changed fails its integrity check", async (t) => {
		const s = await compacted(t);
		const text = readFileSync(s.checkpoint, "utf8").replace('"n":1', '"n":7');
		writeFileSync(s.checkpoint, text);
		await assert.rejects(open(s).load("cwd"), isDamage(s.checkpoint));
	});

	it("a log that does not reach its checkpoint (records missing between them) is refused", async (t) => {
		const s = await compacted(t);
		const lines = readFileSync(s.log, "utf8").split("\n");
		writeFileSync(s.log, `${lines.slice(1).join("\n")}`);
		await assert.rejects(open(s).load("cwd"), isDamage(s.log));
	});

	for (const [what, edit] of [
		["a wrong-typed plane", (r: Record<string, unknown>) => ({ ...r, patch: { tactics: "not an object" } })],
		["an unknown plane", (r: Record<string, unknown>) => ({ ...r, patch: { tacticz: { a: 1 } } })],
		["a patch that is an array", (r: Record<string, unknown>) => ({ ...r, patch: [] })],
		["a non-object undo plane", (r: Record<string, unknown>) => ({ ...r, undo: { intents: null } })],
	] as const) {
		it(`a hand-edited record with ${what} (integrity check recomputed) is refused by its schema, not loaded as nonsense`, async (t) => {
			const s = await seeded(t, 2);
			const lines = readFileSync(s.log, "utf8").split("\n");
			const { sum: _sum, ...rec } = JSON.parse(at(lines, 1)) as Record<string, unknown>;
			const edited = edit(rec);
			lines[1] = JSON.stringify({ ...edited, sum: sumOf(edited) });
			writeFileSync(s.log, lines.join("\n"));
			await assert.rejects(open(s).load("cwd"), (e: unknown) => isDamage(s.log)(e) && /not a transition record/.test(messageOf(e)));
		});
	}
});

describe("damaged stores: doctor", () => {
	it("never reports a damaged store healthy; --move-aside keeps it, named, and the owner starts afresh", async (t) => {
		const s = await seeded(t);
		const changed = Buffer.from(s.bytes);
		changed[at(s.starts, 2) + 5] = 0x21;
		writeFileSync(s.log, changed);
		const env = { PI_CODING_AGENT_DIR: s.agent };
		const root = dirname(s.log);
		const files = () =>
			Object.fromEntries(
				readdirSync(root)
					.filter((f) => !f.startsWith("lock"))
					.map((f) => [f, readFileSync(join(root, f)).toString("hex")]),
			);
		const kept = files();
		const report = runCli(["doctor"], { cwd: s.proj, env });
		assert.equal(report.code, 1);
		assert.match(unwrapped(report.stdout), /DAMAGED[\s\S]*--move-aside cwd/);
		assert.deepEqual(files(), kept, "doctor changed nothing without being asked");
		const moved = runCli(["doctor", "--move-aside", "cwd"], { cwd: s.proj, env });
		const dest = /moved \S+ to (\S+) \(kept/.exec(unwrapped(moved.stdout))?.[1];
		assert.ok(dest, moved.stdout);
		assert.ok(existsSync(dest));
		const aside = Object.fromEntries(
			readdirSync(dest)
				.filter((f) => !f.startsWith("lock"))
				.map((f) => [f, readFileSync(join(dest, f)).toString("hex")]),
		);
		assert.deepEqual(aside, kept, "every byte of the damaged store is kept aside");
		assert.equal(moved.code, 0, moved.stdout);
		await open(s).commit({ cwd: { tactics: { fresh: 1 } } }, meta());
		assert.equal((await open(s).load("cwd")).seq, 1);
	});
});

describe("stores written by 0.1.0", () => {
	it("load as they are and are migrated by the next writer, keeping every retained transition", async (t) => {
		const dir = tempDir(t, "state-flow-legacy-");
		const agent = join(dir, "agent");
		const proj = join(dir, "proj");
		const root = join(proj, ".pi", "state-flow");
		const records = [1, 2, 3].map((seq) => ({
			v: 1,
			id: `old-${seq}`,
			at: "2026-11-01T00:00:00.000Z",
			seq,
			by: { kind: "system", reason: "0.1.0" },
			patch: { tactics: { [`t${seq}`]: seq } },
			undo: { tactics: { [`t${seq}`]: null } },
			cascades: [],
			owners: ["cwd"],
		}));
		// Exactly what 0.1.0 wrote: `{"v":1,...record}` lines, and its checkpoint shape.
		const { mkdirSync } = await import("node:fs");
		mkdirSync(root, { recursive: true });
		writeFileSync(join(root, "log.jsonl"), records.map((r) => `${JSON.stringify(r)}\n`).join(""));
		writeFileSync(
			join(root, "checkpoint.json"),
			JSON.stringify({
				format: "state-flow/checkpoint",
				v: 1,
				owner: "cwd",
				seq: 0,
				state: { intents: {}, strategy: {}, tactics: {}, artifacts: {}, lazy: {} },
			}),
		);
		const stores = openStoresAt({ agentDir: agent, cwd: proj });
		const h = await stores.load("cwd");
		assert.equal(h.seq, 3);
		assert.deepEqual(h.state.tactics, { t1: 1, t2: 2, t3: 3 });
		await stores.commit({ cwd: { tactics: { t4: 4 } } }, meta());
		const lines = readFileSync(join(root, "log.jsonl"), "utf8")
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l) as { v: number; id: string; sum?: string });
		assert.deepEqual(lines.map((l) => l.id).slice(0, 3), ["old-1", "old-2", "old-3"], "every retained transition is kept");
		assert.ok(
			lines.every((l) => l.v === 2 && typeof l.sum === "string"),
			"rewritten in the current format",
		);
		assert.equal((JSON.parse(readFileSync(join(root, "checkpoint.json"), "utf8")) as { v: number }).v, 2);
		const fresh = await openStoresAt({ agentDir: agent, cwd: proj }).load("cwd");
		assert.equal(fresh.seq, 4);
		assert.deepEqual(
			fresh.tail.map((r) => r.id),
			["old-1", "old-2", "old-3", at(lines, 3).id],
		);
	});
});
