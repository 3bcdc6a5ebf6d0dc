/**
 * What a file owner's reader (storage/file/log-reader.ts) makes of its folder beyond the log's
 * own bytes: this machine's seen marks checked on a fresh look (a log cut back, a log missing,
 * a folder removed on purpose), a history that went back under a reader without marks, a
 * checkpoint alone or of format 1, a folder refused or taken over by another, and what it
 * reports of the folder (exists, bytes on disk). The CLI reaches these through doctor, adopt
 * and the seen-mark checks; here they are held at the storage level.
 */
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { openWorld, storeWorld } from "../helpers/store-world.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "test" } as const;
const meta = commitMeta("f", "2026-12-01T00:00:00.000Z", by);

const world = (t: { after(fn: () => void): void }) => storeWorld(t, "state-flow-log-folder-");
type World = ReturnType<typeof world>;
const open = openWorld;
const rootOf = (w: World) => open(w).identity().cwdRoot;
/** A reader of the folder with no seen marks (as doctor's repairs and migrations open one), and the options given. */
const bare = (root: string, more: { retention?: number; refused?: string; supersededBy?: string } = {}) =>
	new FileOwnerStore({ owner: "cwd", root, retention: 20, gitignore: true, ...more });

/** A store of `n` transitions (tactics k1..kn), committed through the stores: this machine's mark is at seq n. */
async function written(w: World, n: number): Promise<{ root: string; log: string; lines: string[] }> {
	const s = open(w);
	for (let i = 1; i <= n; i++) await s.commit({ cwd: { tactics: { [`k${i}`]: i } } }, meta());
	const root = s.identity().cwdRoot;
	const log = join(root, "log.jsonl");
	return { root, log, lines: readFileSync(log, "utf8").split("\n").slice(0, n) };
}
const idOf = (line: string) => (JSON.parse(line) as { id: string }).id;

/** A refusal of kind `code` whose message includes `words`. */
function refusal(code: string, words: string) {
	return (e: unknown) => {
		assert.ok(isStateError(e), `a StateError, got ${String(e)}`);
		assert.equal(e.code, code, e.message);
		assert.ok(e.message.includes(words), e.message);
		return true;
	};
}

describe("this machine's seen marks, checked by a fresh look at the files", () => {
	it("a log cut back to a record boundary is refused by a process that never read it, naming the seq and transition the mark holds", async (t) => {
		const w = world(t);
		const { log, lines } = await written(w, 3);
		writeFileSync(log, `${lines.slice(0, 2).join("\n")}\n`);
		const lost = `\`${log}\` is damaged: it ends at seq 2, but a writer on this machine committed seq 3 (transition \`${idOf(lines[2] as string)}\`) to it`;
		await assert.rejects(open(w).load("cwd"), refusal("corrupt", lost));
	});

	it("a log gone from a folder that is still there is refused as missing; the whole folder removed is a fresh start", async (t) => {
		const w = world(t);
		const { root, log, lines } = await written(w, 2);
		rmSync(log);
		const missing = `\`${log}\` is damaged: it is missing, but a writer on this machine committed seq 2 (transition \`${idOf(lines[1] as string)}\`)`;
		await assert.rejects(open(w).load("cwd"), refusal("corrupt", missing));
		rmSync(root, { recursive: true });
		assert.equal((await open(w).load("cwd")).seq, 0);
	});

	it("a reader that first found no log, then a log that lacks what the mark holds: refused", async (t) => {
		const w = world(t);
		const reader = open(w);
		assert.equal((await reader.load("cwd")).seq, 0);
		const { log, lines } = await written(w, 2);
		writeFileSync(log, `${lines[0]}\n`);
		await assert.rejects(reader.load("cwd"), refusal("corrupt", `\`${log}\` is damaged: it ends at seq 1, but a writer on this machine committed seq 2`));
	});
});

describe("a reader without seen marks", () => {
	it("follows another writer, and refuses a log replaced by an older copy (it went back from what it read)", async (t) => {
		const w = world(t);
		const reader = bare(rootOf(w));
		assert.equal((await reader.load()).seq, 0);
		const { log } = await written(w, 1);
		const older = readFileSync(log);
		await open(w).commit({ cwd: { tactics: { k2: 2 } } }, meta());
		assert.equal((await reader.load()).seq, 2);
		// Renamed over the log: another file, so it is read in full and compared with what was read.
		writeFileSync(`${log}.older`, older);
		renameSync(`${log}.older`, log);
		const back = "is damaged: the store went back from seq 2, which this process read, to seq 1 (acknowledged transitions are missing)";
		await assert.rejects(reader.load(), refusal("corrupt", back));
	});
});

describe("a checkpoint without its log, and a checkpoint of format 1", () => {
	/** A store of 3 transitions adopted with retention 1: a checkpoint at seq 2 and a log of the third. */
	async function adopted(t: { after(fn: () => void): void }): Promise<{ w: World; root: string; checkpoint: string; log: string }> {
		const from = world(t);
		await written(from, 3);
		const w = world(t);
		const root = rootOf(w);
		await bare(root, { retention: 1 }).adopt(await open(from).load("cwd"));
		return { w, root, checkpoint: join(root, "checkpoint.json"), log: join(root, "log.jsonl") };
	}
	const formatOf = (file: string) => (JSON.parse(readFileSync(file, "utf8")) as { v: number }).v;
	function toFormat1(file: string): void {
		const { sum: _sum, ...rest } = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
		writeFileSync(file, JSON.stringify({ ...rest, v: 1 }));
	}

	it("a checkpoint of format 1 beside a log of today's format is read, and rewritten in today's format by the next writer", async (t) => {
		const { w, checkpoint } = await adopted(t);
		toFormat1(checkpoint);
		assert.deepEqual((await open(w).load("cwd")).state.tactics, { k1: 1, k2: 2, k3: 3 });
		await open(w).commit({ cwd: { tactics: { k4: 4 } } }, meta());
		assert.equal(formatOf(checkpoint), 2);
		assert.deepEqual((await open(w).load("cwd")).state.tactics, { k1: 1, k2: 2, k3: 3, k4: 4 });
	});

	it("a checkpoint alone (its log not written yet) is read as its state; one of format 1 is rewritten by the next writer", async (t) => {
		const { w, checkpoint, log } = await adopted(t);
		rmSync(log);
		toFormat1(checkpoint);
		const h = await open(w).load("cwd");
		assert.deepEqual([h.seq, h.state.tactics], [2, { k1: 1, k2: 2 }]);
		await open(w).commit({ cwd: { tactics: { k9: 9 } } }, meta());
		assert.equal(formatOf(checkpoint), 2);
		const after = await open(w).load("cwd");
		assert.deepEqual([after.seq, after.state.tactics], [3, { k1: 1, k2: 2, k9: 9 }]);
	});
	it("a reader that read a checkpoint alone, then the folder removed and begun again (a deliberate fresh start): reads the new history", async (t) => {
		const { w, root, log } = await adopted(t);
		rmSync(log);
		const reader = bare(root);
		assert.equal((await reader.load()).seq, 2);
		rmSync(root, { recursive: true });
		await open(w).commit({ cwd: { tactics: { anew: 1 } } }, meta());
		const h = await reader.load();
		assert.deepEqual([h.seq, h.state.tactics], [1, { anew: 1 }]);
	});
});

describe("a folder refused or taken over", () => {
	it("a refused folder is refused on every read with its reason", async (t) => {
		const w = world(t);
		await written(w, 1);
		const why = "State Flow does not read `elsewhere`: a test says so";
		await assert.rejects(bare(rootOf(w), { refused: why }).load(), refusal("unavailable", `${why}.`));
	});

	it("a folder taken over once its successor exists as a folder (a file there is not one), also for a reader that read it", async (t) => {
		const w = world(t);
		const { root } = await written(w, 1);
		const next = join(w.base, "next-home");
		const reader = bare(root, { supersededBy: next });
		assert.equal((await reader.load()).seq, 1);
		writeFileSync(next, "");
		assert.equal((await reader.load()).seq, 1);
		rmSync(next);
		mkdirSync(next);
		const moved = `The CWD store folder \`${root}\` is no longer where this project's memory is kept: it moved to \`${next}\` after this process started, and nothing was written here.`;
		await assert.rejects(reader.load(), refusal("unavailable", moved));
	});
});

describe("what a reader reports of its folder", () => {
	it("exists and diskBytes: nothing before the first write; then the log's and checkpoint's bytes; knownToExist keeps what it saw", async (t) => {
		const from = world(t);
		await written(from, 3);
		const w = world(t);
		const root = rootOf(w);
		const store = bare(root, { retention: 1 });
		assert.deepEqual([store.exists(), store.knownToExist(), store.diskBytes()], [false, false, 0]);
		await bare(root, { retention: 1 }).adopt(await open(from).load("cwd"));
		const log = join(root, "log.jsonl");
		const checkpoint = join(root, "checkpoint.json");
		// A store that has not read the folder yet looks at it.
		assert.deepEqual([store.exists(), store.knownToExist()], [true, true]);
		assert.equal(store.diskBytes(), statSync(log).size + statSync(checkpoint).size);
		await store.load();
		rmSync(log);
		assert.deepEqual([store.exists(), store.knownToExist(), store.diskBytes()], [false, true, statSync(checkpoint).size]);
	});
});
