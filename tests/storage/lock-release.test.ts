/**
 * Releasing a lock, on both ways of taking it (a linked holder file, and the O_EXCL file where
 * no holder file can be made): a second release never removes a later holder's lock, release
 * never throws for what replaced the lock and leaves it there; and the roll-forward taker
 * gives up with busy on a lock another process keeps.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { FOREIGN_STALE_MS, acquireLock, acquireLockUnlessMine } from "../../lib/storage/file/lock.js";
import { tempDir } from "../helpers/temp-dir.js";

const tokenAt = (path: string): string => JSON.parse(readFileSync(path, "utf8")).token;

/** A lock path in a fresh folder; `excl` blocks the holders folder with a file, so the lock is an O_EXCL file. */
function lockPath(t: { after(fn: () => void): void }, excl: boolean): string {
	const path = join(tempDir(t), "lock");
	if (excl) writeFileSync(`${path}.holders`, "not a folder");
	return path;
}

for (const [way, excl, nlink] of [
	["linked", false, 2],
	["O_EXCL", true, 1],
] as const) {
	describe(`release of a ${way} lock`, () => {
		it("a second release leaves the lock of the holder that took it since", async (t) => {
			const path = lockPath(t, excl);
			const first = await acquireLock(path, 1000);
			first.release();
			const second = await acquireLock(path, 1000);
			assert.equal(statSync(path).nlink, nlink);
			first.release();
			assert.equal(tokenAt(path), second.token, "the later holder still holds the lock");
			await assert.rejects(acquireLock(path, 50), (e: unknown) => isStateError(e) && e.code === "busy");
			second.release();
			assert.equal(existsSync(path), false);
		});

		it("never throws when the lock is gone or a folder took its place, and leaves that folder", async (t) => {
			const path = lockPath(t, excl);
			const gone = await acquireLock(path, 1000);
			unlinkSync(path);
			gone.release();
			assert.equal(existsSync(path), false);
			const replaced = await acquireLock(path, 1000);
			unlinkSync(path);
			mkdirSync(path);
			replaced.release();
			assert.ok(statSync(path).isDirectory(), "what replaced the lock is left alone");
		});
	});
}

describe("release of a linked lock", () => {
	it("removes the lock even when its holder file was removed meanwhile (the lock is still our inode)", async (t) => {
		const path = lockPath(t, false);
		const l = await acquireLock(path, 1000);
		for (const name of readdirSync(`${path}.holders`)) unlinkSync(join(`${path}.holders`, name));
		assert.equal(statSync(path).nlink, 1);
		l.release();
		assert.equal(existsSync(path), false);
	});
});

describe("release of an O_EXCL lock held past FOREIGN_STALE_MS / 2", () => {
	// Another host may judge a lock abandoned after FOREIGN_STALE_MS: after half of it, release
	// re-reads the lock and removes only its own. The clock is moved forward, not waited for.
	it("removes its own lock, and leaves the lock of a holder that took it over meanwhile", async (t) => {
		const path = lockPath(t, true);
		const real = Date.now;
		let ahead = 0;
		t.mock.method(Date, "now", () => real.call(Date) + ahead);
		const own = await acquireLock(path, 1000);
		ahead = FOREIGN_STALE_MS / 2 + 1000;
		own.release();
		assert.equal(existsSync(path), false, "its own lock is removed");

		const taken = await acquireLock(path, 1000);
		ahead += FOREIGN_STALE_MS / 2 + 1000;
		const other = JSON.stringify({ pid: 7, host: "elsewhere.example", startedAt: Date.now(), token: "took-over" });
		unlinkSync(path);
		writeFileSync(path, other);
		taken.release();
		assert.equal(readFileSync(path, "utf8"), other, "the other holder's lock is left alone");
	});
});

describe("O_EXCL lock", () => {
	it("is exclusive too: a second taker waits and gives up with busy while it is held", async (t) => {
		const path = lockPath(t, true);
		const l = await acquireLock(path, 1000);
		await assert.rejects(acquireLock(path, 50), (e: unknown) => isStateError(e) && e.code === "busy" && e.message.includes(`pid ${process.pid} `));
		assert.equal(tokenAt(path), l.token);
		l.release();
	});
});

describe("roll-forward taker", () => {
	it("gives up with busy, naming the holder, when another live process keeps the lock past the timeout", async (t) => {
		const path = lockPath(t, false);
		writeFileSync(path, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: Date.now(), token: "parent" }));
		await assert.rejects(
			acquireLockUnlessMine(path, 50),
			(e: unknown) => isStateError(e) && e.code === "busy" && e.message.includes(`pid ${process.ppid} `) && e.message.includes("within 50 ms"),
		);
		assert.equal(tokenAt(path), "parent");
	});
});
