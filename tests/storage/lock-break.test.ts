/**
 * Breaking an abandoned lock, on real files: the break is serialised through `<lock>.break`
 * (a live breaker is waited for, an odd one refused), it leaves crash evidence for the next
 * holder, it never deletes outside the holders folder whatever token the lock names; and
 * what a lock whose holder file vanished, or whose folder is missing, does.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
	existsSync,
	linkSync,
	lstatSync,
	mkdirSync,
	readFileSync,
	readdirSync,
	rmSync,
	statSync,
	symlinkSync,
	unlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { acquireLock, crashEvidence, crashMarkerPath, readLockHolder } from "../../lib/storage/file/lock.js";
import { tempDir } from "../helpers/temp-dir.js";

/** The pid of a process that has already exited (pids are not reused this quickly): one for the whole file. */
const DEAD = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString());

function deadLock(path: string, token = "dead"): void {
	writeFileSync(path, JSON.stringify({ pid: DEAD, host: hostname(), startedAt: Date.now(), token }));
}

const tokenAt = (path: string): string => JSON.parse(readFileSync(path, "utf8")).token;

describe("breaking an abandoned lock", () => {
	it("leaves crash evidence naming the dead holder, and tells only the next holder that it recovers a crash", async (t) => {
		const path = join(tempDir(t), "lock");
		assert.equal(crashEvidence(path, 0), false, "no lock was ever broken here");
		deadLock(path);
		const before = Date.now();
		const l = await acquireLock(path, 1000);
		assert.equal(l.recoveredCrash, true);
		assert.equal(crashMarkerPath(path), `${path}.broken`);
		assert.equal(tokenAt(crashMarkerPath(path)), "dead", "the marker records the holder that died");
		assert.equal(crashEvidence(path, before - 1000), true, "a crash after the bytes in question");
		assert.equal(crashEvidence(path, Date.now() + 60_000), false, "bytes written after the crash are not its leftovers");
		const marked = statSync(crashMarkerPath(path)).mtimeMs;
		assert.equal(crashEvidence(path, marked), true, "bytes of the very moment of the marker count");
		assert.equal(crashEvidence(path, marked + 1), false);
		l.release();
		const next = await acquireLock(path, 1000);
		assert.equal(next.recoveredCrash, false, "only the first holder after the break recovers");
		next.release();
		// A later break replaces the marker: its time is that of the later crash.
		const hourAgo = (Date.now() - 3_600_000) / 1000;
		utimesSync(crashMarkerPath(path), hourAgo, hourAgo);
		deadLock(path, "dead-again");
		const since = Date.now() - 1000;
		const again = await acquireLock(path, 1000);
		assert.equal(crashEvidence(path, since), true);
		assert.equal(tokenAt(crashMarkerPath(path)), "dead-again");
		again.release();
	});

	it("an empty lock file left long ago is broken too, the marker then naming the breaker", async (t) => {
		const path = join(tempDir(t), "lock");
		writeFileSync(path, "");
		const old = (Date.now() - 10_000) / 1000;
		utimesSync(path, old, old);
		const l = await acquireLock(path, 1000);
		assert.equal(l.recoveredCrash, true);
		assert.equal(JSON.parse(readFileSync(crashMarkerPath(path), "utf8")).pid, process.pid);
		l.release();
	});

	it("a crash marker path holding a folder or a link is left alone and is no evidence", async (t) => {
		const dir = tempDir(t);
		const path = join(dir, "lock");
		mkdirSync(crashMarkerPath(path));
		deadLock(path);
		const l = await acquireLock(path, 1000);
		assert.ok(statSync(crashMarkerPath(path)).isDirectory());
		assert.equal(crashEvidence(path, 0), false);
		l.release();
		const other = join(dir, "other");
		symlinkSync(join(dir, "nowhere"), crashMarkerPath(other));
		deadLock(other);
		(await acquireLock(other, 1000)).release();
		assert.ok(lstatSync(crashMarkerPath(other)).isSymbolicLink(), "the link is not replaced");
		assert.equal(existsSync(join(dir, "nowhere")), false, "nothing is written through it");
		assert.equal(crashEvidence(other, 0), false);
	});

	it("waits while another live process holds the break lock, and breaks once it is gone", async (t) => {
		const path = join(tempDir(t), "lock");
		deadLock(path);
		writeFileSync(`${path}.break`, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: Date.now(), token: "breaker" }));
		await assert.rejects(acquireLock(path, 100), (e: unknown) => isStateError(e) && e.code === "busy" && e.message.includes("not released within 100 ms"));
		assert.equal(tokenAt(path), "dead", "the lock is left to the breaker");
		assert.equal(tokenAt(`${path}.break`), "breaker", "a live breaker's break lock is left alone");
		unlinkSync(`${path}.break`);
		const l = await acquireLock(path, 1000);
		assert.notEqual(tokenAt(path), "dead");
		assert.equal(existsSync(`${path}.break`), false, "the breaker removes its break lock");
		l.release();
	});

	it("refuses, naming it, when the break lock path is a folder: the abandoned lock is left as it is", async (t) => {
		const path = join(tempDir(t), "lock");
		deadLock(path);
		mkdirSync(`${path}.break`);
		await assert.rejects(
			acquireLock(path, 200),
			(e: unknown) =>
				isStateError(e) &&
				e.code === "busy" &&
				e.message.startsWith(`Cannot break the abandoned lock \`${path}\`: the lock path \`${path}.break\` is a folder`),
		);
		assert.equal(tokenAt(path), "dead");
	});

	it("removes the dead holder's holder file with its lock, also where this process swept the holders folder before", async (t) => {
		const path = join(tempDir(t), "lock");
		(await acquireLock(path, 1000)).release();
		const token = `${DEAD}-0a1b2c-1`;
		const file = join(`${path}.holders`, token);
		writeFileSync(file, JSON.stringify({ pid: DEAD, host: hostname(), startedAt: Date.now(), token }));
		linkSync(file, path);
		const l = await acquireLock(path, 1000);
		assert.notEqual(tokenAt(path), token);
		assert.equal(existsSync(file), false);
		l.release();
	});

	it("never deletes outside the holders folder, whatever token the dead holder's lock names", async (t) => {
		const dir = tempDir(t);
		const path = join(dir, "lock");
		writeFileSync(join(dir, "victim"), "keep");
		// A folder inside the holders folder makes `x/../../victim` resolve to the victim.
		mkdirSync(join(`${path}.holders`, "x"), { recursive: true });
		for (const token of ["../victim", "x/../../victim"]) {
			deadLock(path, token);
			const l = await acquireLock(path, 1000);
			l.release();
		}
		assert.equal(readFileSync(join(dir, "victim"), "utf8"), "keep");
	});
});

describe("the link path when its holder file is gone", () => {
	it("takes the lock by O_EXCL when the holder file vanished, then makes a fresh holder file for the next take", async (t) => {
		const path = join(tempDir(t), "lock");
		(await acquireLock(path, 1000)).release();
		const [first] = readdirSync(`${path}.holders`);
		unlinkSync(join(`${path}.holders`, first as string));
		const l = await acquireLock(path, 1000);
		assert.equal(statSync(path).nlink, 1, "an O_EXCL lock file");
		assert.equal(JSON.parse(readFileSync(path, "utf8")).pid, process.pid);
		assert.equal(readLockHolder(path)?.stale, false);
		l.release();
		assert.equal(existsSync(path), false);
		const again = await acquireLock(path, 1000);
		assert.equal(statSync(path).nlink, 2, "linked from a fresh holder file");
		assert.equal(readdirSync(`${path}.holders`).length, 1);
		again.release();
	});

	it("takes the lock by O_EXCL when a file replaced the holders folder", async (t) => {
		const path = join(tempDir(t), "lock");
		(await acquireLock(path, 1000)).release();
		rmSync(`${path}.holders`, { recursive: true });
		writeFileSync(`${path}.holders`, "not a folder");
		for (let i = 0; i < 2; i++) {
			const l = await acquireLock(path, 1000);
			assert.equal(statSync(path).nlink, 1, "an O_EXCL lock file");
			assert.equal(JSON.parse(readFileSync(path, "utf8")).pid, process.pid);
			l.release();
			assert.equal(existsSync(path), false);
		}
		assert.equal(readFileSync(`${path}.holders`, "utf8"), "not a folder", "the file in the way is left as it is");
	});

	it("a lock in a missing folder, or under a file, is refused with an io error naming what is in the way", async (t) => {
		const dir = tempDir(t);
		const missing = join(dir, "gone", "lock");
		await assert.rejects(
			acquireLock(missing, 1000),
			(e: unknown) =>
				isStateError(e) &&
				e.code === "io" &&
				e.message === `Cannot create the lock file \`${missing}\` (ENOENT). Check that its folder is writable.` &&
				e.path.length === 0,
		);
		writeFileSync(join(dir, "file"), "x");
		await assert.rejects(
			acquireLock(join(dir, "file", "lock"), 1000),
			(e: unknown) =>
				isStateError(e) && e.code === "corrupt" && e.message.startsWith(`\`${join(dir, "file")}\` is a regular file where State Flow keeps a folder`),
		);
	});
});
