/**
 * Atomic lock creation: the lock is a hard link of the process's holder file, so it is
 * complete the moment it exists; holder files of dead processes do not pile up; where
 * `link()` cannot be used the O_EXCL path still works.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, renameSync, readFileSync, readdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { acquireLock, acquireLockUnlessMine, readLockHolder } from "../../lib/storage/file/lock.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild } from "./children/spawn.js";

function deadPid(): number {
	const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
	return Number(r.stdout.toString());
}

function holderFiles(path: string): string[] {
	return existsSync(`${path}.holders`) ? readdirSync(`${path}.holders`) : [];
}

describe("lock by link()", () => {
	it("links a complete holder record as the lock (never an empty lock file) and keeps the holder file for the next acquisition", async (t) => {
		const path = join(tempDir(t), "lock");
		const l = await acquireLock(path, 1000);
		const [name] = holderFiles(path);
		assert.ok(name, "a holder file exists beside the lock");
		const holderFile = join(`${path}.holders`, name);
		const lock = statSync(path);
		assert.equal(lock.nlink, 2, "the lock is a hard link of the holder file");
		assert.equal(lock.ino, statSync(holderFile).ino);
		const record = JSON.parse(readFileSync(path, "utf8"));
		assert.equal(record.pid, process.pid);
		assert.equal(record.token, name);
		assert.equal(typeof record.boot, "string", "the record names this machine's boot");
		l.release();
		assert.equal(existsSync(path), false);
		assert.equal(statSync(holderFile).nlink, 1);
		const again = await acquireLockUnlessMine(path, 1000);
		assert.ok(again);
		assert.deepEqual(holderFiles(path), [name], "one holder file per process and lock");
		again.release();
	});

	it("release leaves alone a lock that is no longer its holder's inode", async (t) => {
		const path = join(tempDir(t), "lock");
		const l = await acquireLock(path, 1000);
		// Someone judged us dead and a new holder (here: a plain file) took the lock.
		const other = JSON.stringify({ pid: 1, host: "elsewhere.example", startedAt: Date.now(), token: "other" });
		unlinkSync(path);
		writeFileSync(path, other);
		l.release();
		assert.equal(readFileSync(path, "utf8"), other);
	});

	it("releases a lock linked from its holder file after that file was replaced by a copy (a store folder restored from a backup)", async (t) => {
		const path = join(tempDir(t), "lock");
		(await acquireLock(path, 1000)).release();
		const [name] = holderFiles(path);
		const holderFile = join(`${path}.holders`, name as string);
		copyFileSync(holderFile, `${holderFile}.copy`);
		renameSync(`${holderFile}.copy`, holderFile);
		const l = await acquireLock(path, 1000);
		l.release();
		assert.equal(existsSync(path), false, "the lock is released, not left behind");
	});

	it("a holder that exits normally leaves no holder file; one killed while holding is broken and its holder file removed", async (t) => {
		const path = join(tempDir(t), "lock");
		const clean = runChild("lock-child", [path, "release"]);
		assert.equal((await clean.done).code, 0);
		assert.deepEqual(holderFiles(path), []);
		assert.equal(existsSync(path), false);

		const killed = runChild("lock-child", [path, "hold"]);
		t.after(() => void killed.proc.kill("SIGKILL"));
		await killed.ready;
		const token = JSON.parse(readFileSync(path, "utf8")).token;
		assert.deepEqual(holderFiles(path), [token]);
		// Alive, it is waited for and never broken, however short the wait.
		assert.equal(readLockHolder(path)?.stale, false);
		await assert.rejects(acquireLock(path, 50), (e: unknown) => isStateError(e) && e.code === "busy" && e.message.includes(`pid ${killed.proc.pid} `));
		assert.equal(JSON.parse(readFileSync(path, "utf8")).token, token);
		killed.proc.kill("SIGKILL");
		await killed.done;
		const l = await acquireLock(path, 2000);
		assert.notEqual(JSON.parse(readFileSync(path, "utf8")).token, token);
		assert.equal(holderFiles(path).includes(token), false, "the dead holder's file is removed with its lock");
		l.release();
	});

	it("removes holder files of dead processes when it first uses a lock, and leaves other hosts' alone", async (t) => {
		const path = join(tempDir(t), "lock");
		mkdirSync(`${path}.holders`);
		const dead = `${deadPid()}-abc-1`;
		const foreign = "1-def-1";
		writeFileSync(join(`${path}.holders`, dead), JSON.stringify({ pid: Number(dead.split("-")[0]), host: hostname(), startedAt: Date.now(), token: dead }));
		writeFileSync(join(`${path}.holders`, foreign), JSON.stringify({ pid: 1, host: "elsewhere.example", startedAt: Date.now(), token: foreign }));
		const l = await acquireLock(path, 1000);
		const left = holderFiles(path);
		assert.equal(left.includes(dead), false);
		assert.equal(left.includes(foreign), true);
		assert.equal(left.length, 2);
		l.release();
	});

	it("falls back to O_EXCL create-and-write where no holder file can be linked", async (t) => {
		const path = join(tempDir(t), "lock");
		writeFileSync(`${path}.holders`, "not a folder");
		const l = await acquireLock(path, 1000);
		assert.equal(statSync(path).nlink, 1);
		assert.equal(JSON.parse(readFileSync(path, "utf8")).pid, process.pid);
		l.release();
		assert.equal(existsSync(path), false);
	});
});
