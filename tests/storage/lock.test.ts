/**
 * The O_EXCL lock: mutual exclusion, bounded waiting with a clear "busy" error, and
 * recovery from holders that died (dead pid on this host, empty lock file left by a crash
 * between create and write, old lock of another host).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, uptime } from "node:os";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import { FOREIGN_STALE_MS, acquireLock, acquireLockUnlessMine, onLockWait, readLockHolder } from "../../lib/storage/file/lock.js";
import { expectSoon } from "../helpers/soon.js";
import { tempDir } from "../helpers/temp-dir.js";

/** The pid of a process that has already exited (pids are not reused this quickly): one for the whole file, each spawn costs a node start. */
const DEAD = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString());

describe("lock", () => {
	it("writes the holder record and removes the file on release", async (t) => {
		const path = join(tempDir(t), "lock");
		const l = await acquireLock(path, 1000);
		const holder = JSON.parse(readFileSync(path, "utf8"));
		assert.equal(holder.pid, process.pid);
		assert.equal(holder.host, hostname());
		assert.equal(typeof holder.token, "string");
		assert.equal(typeof holder.startedAt, "number");
		l.release();
		assert.equal(existsSync(path), false);
		l.release(); // idempotent
	});

	it("makes a second taker wait until the holder releases", async (t) => {
		const path = join(tempDir(t), "lock");
		const first = await acquireLock(path, 1000);
		const held = JSON.parse(readFileSync(path, "utf8")).token as string;
		const order: string[] = [];
		// The event, not a timer: the second taker reports that it found the lock held and waits.
		const waiting = expectSoon("the second taker never waited for the held lock");
		t.after(onLockWait((p) => p === path && waiting.arrive()));
		let secondWaited: boolean | undefined;
		const second = acquireLock(path, 5000).then((l) => {
			order.push("second");
			secondWaited = l.waited;
			l.release();
		});
		await Promise.race([waiting.arrived, second.then(() => assert.fail("the second taker got the lock while the first held it"))]);
		assert.equal(order.length, 0, "the second taker is still waiting");
		assert.equal(JSON.parse(readFileSync(path, "utf8")).token, held, "the lock file still names the first holder");
		order.push("first-release");
		first.release();
		await second;
		assert.deepEqual(order, ["first-release", "second"]);
		assert.equal(first.waited, false, "the first taker found the lock free");
		assert.equal(secondWaited, true, "the second taker is told it waited");
	});

	it("onLockWait is told once per taker that finds the lock held, until it is stopped", async (t) => {
		const path = join(tempDir(t), "lock");
		const held = await acquireLock(path, 1000);
		const told: string[] = [];
		const stop = onLockWait((p) => told.push(p));
		t.after(stop);
		await assert.rejects(acquireLock(path, 50));
		assert.deepEqual(told, [path]);
		stop();
		await assert.rejects(acquireLock(path, 50));
		assert.deepEqual(told, [path], "a stopped listener is not told");
		held.release();
	});

	it("serialises many concurrent takers: never two holders at once", async (t) => {
		const path = join(tempDir(t), "lock");
		let inside = 0;
		let maxInside = 0;
		await Promise.all(
			Array.from({ length: 20 }, async () => {
				const l = await acquireLock(path, 5000);
				inside++;
				maxInside = Math.max(maxInside, inside);
				// Yield a whole event-loop turn while holding: every other taker runs meanwhile.
				await new Promise((r) => setImmediate(r));
				inside--;
				l.release();
			}),
		);
		assert.equal(maxInside, 1);
	});

	it("refuses with busy naming the lock file when a live holder keeps it past the timeout", async (t) => {
		const path = join(tempDir(t), "lock");
		const l = await acquireLock(path, 1000);
		await assert.rejects(
			acquireLock(path, 50),
			(e: unknown) => isStateError(e) && e.code === "busy" && e.message.includes(`\`${path}\``) && e.message.includes(`pid ${process.pid}`),
		);
		l.release();
	});

	it("breaks the lock of a holder whose pid is dead on this host", async (t) => {
		const path = join(tempDir(t), "lock");
		writeFileSync(path, JSON.stringify({ pid: DEAD, host: hostname(), startedAt: Date.now(), token: "dead" }));
		const l = await acquireLock(path, 1000);
		assert.notEqual(JSON.parse(readFileSync(path, "utf8")).token, "dead");
		l.release();
		assert.equal(existsSync(`${path}.break`), false);
	});

	it("breaks an empty lock file (crash between create and write) only once it is old", async (t) => {
		const path = join(tempDir(t), "lock");
		writeFileSync(path, "");
		await assert.rejects(acquireLock(path, 50), (e: unknown) => isStateError(e) && e.code === "busy");
		const old = (Date.now() - 10_000) / 1000;
		utimesSync(path, old, old);
		const l = await acquireLock(path, 1000);
		l.release();
	});

	it("waits for a fresh lock of another host and breaks it only after FOREIGN_STALE_MS", async (t) => {
		const path = join(tempDir(t), "lock");
		writeFileSync(path, JSON.stringify({ pid: 1, host: "elsewhere.example", startedAt: Date.now(), token: "foreign" }));
		await assert.rejects(acquireLock(path, 50), (e: unknown) => isStateError(e) && e.code === "busy" && e.message.includes("elsewhere.example"));
		writeFileSync(path, JSON.stringify({ pid: 1, host: "elsewhere.example", startedAt: Date.now() - FOREIGN_STALE_MS - 1000, token: "foreign" }));
		const l = await acquireLock(path, 1000);
		l.release();
	});

	it("breaks a break-lock left by a breaker that died", async (t) => {
		const path = join(tempDir(t), "lock");
		const dead = DEAD;
		writeFileSync(path, JSON.stringify({ pid: dead, host: hostname(), startedAt: Date.now(), token: "dead" }));
		writeFileSync(`${path}.break`, JSON.stringify({ pid: dead, host: hostname(), startedAt: Date.now(), token: "dead-breaker" }));
		const l = await acquireLock(path, 1000);
		l.release();
		assert.equal(existsSync(`${path}.break`), false);
	});

	it("roll-forward acquisition steps aside when this process already holds the lock", async (t) => {
		const path = join(tempDir(t), "lock");
		const l = await acquireLock(path, 1000);
		assert.equal(await acquireLockUnlessMine(path, 1000), undefined);
		l.release();
		const s = await acquireLockUnlessMine(path, 1000);
		assert.ok(s);
		s.release();
	});

	it("breaks a lock carrying this process's pid but another process's token (a restarted container reuses the pid)", async (t) => {
		const path = join(tempDir(t), "lock");
		writeFileSync(path, JSON.stringify({ pid: process.pid, host: hostname(), startedAt: Date.now(), token: `${process.pid}-earlier-1` }));
		const l = await acquireLock(path, 500);
		assert.notEqual(JSON.parse(readFileSync(path, "utf8")).token, `${process.pid}-earlier-1`);
		l.release();
		writeFileSync(path, JSON.stringify({ pid: process.pid, host: hostname(), startedAt: Date.now(), token: `${process.pid}-earlier-2` }));
		const s = await acquireLockUnlessMine(path, 500);
		assert.ok(s, "roll-forward acquisition must not step aside for a dead earlier process with our pid");
		s.release();
	});

	it("breaks a lock taken before this machine booted even when its pid is alive again", async (t) => {
		const path = join(tempDir(t), "lock");
		const beforeBoot = Date.now() - uptime() * 1000 - 2 * FOREIGN_STALE_MS;
		writeFileSync(path, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: beforeBoot, token: "before-boot" }));
		const l = await acquireLock(path, 500);
		l.release();
	});

	it("breaks a lock taken in another boot (its boot id differs) even when its pid is alive again", async (t) => {
		const path = join(tempDir(t), "lock");
		const boot = "00000000-0000-4000-8000-000000000000";
		writeFileSync(path, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: Date.now(), token: "other-boot", boot }));
		assert.equal(readLockHolder(path)?.stale, true);
		const l = await acquireLock(path, 500);
		assert.notEqual(JSON.parse(readFileSync(path, "utf8")).token, "other-boot");
		l.release();
	});

	it("readLockHolder reports who holds a lock and whether it is stale, without changing anything", async (t) => {
		const path = join(tempDir(t), "lock");
		assert.equal(readLockHolder(path), undefined);
		const l = await acquireLock(path, 1000);
		const live = readLockHolder(path);
		assert.equal(live?.holder?.pid, process.pid);
		assert.equal(live?.stale, false);
		assert.match(live?.who ?? "", new RegExp(`pid ${process.pid} on `));
		l.release();
		writeFileSync(path, JSON.stringify({ pid: DEAD, host: hostname(), startedAt: Date.now(), token: "dead" }));
		assert.equal(readLockHolder(path)?.stale, true);
		writeFileSync(path, "");
		assert.deepEqual(readLockHolder(path), {
			who: "an unknown process (the lock file holds no readable holder record; it is treated as abandoned 2 s after its last change)",
			stale: false,
		});
		assert.ok(existsSync(path), "reading a lock never removes it");
	});

	it("treats a holder in another pid namespace with this hostname (a container sharing the host's name) as foreign: waits, never judges its pid here", async (t) => {
		const path = join(tempDir(t), "lock");
		for (const pid of [process.pid, DEAD]) {
			writeFileSync(path, JSON.stringify({ pid, host: hostname(), startedAt: Date.now(), token: "other-container", ns: "pid:[1]" }));
			await assert.rejects(acquireLock(path, 50), (e: unknown) => isStateError(e) && e.code === "busy");
			assert.equal(JSON.parse(readFileSync(path, "utf8")).token, "other-container", "a live lock of another container is never broken");
		}
		writeFileSync(path, JSON.stringify({ pid: DEAD, host: hostname(), startedAt: Date.now() - FOREIGN_STALE_MS - 1000, token: "old", ns: "pid:[1]" }));
		const l = await acquireLock(path, 1000);
		l.release();
	});
});

describe("odd lock paths", () => {
	for (const [what, make, pattern] of [
		["a folder", (p: string) => mkdirSync(p), /is a folder[\s\S]*rm -r/],
		["a dangling link", (p: string) => symlinkSync(join(p, "..", "nowhere"), p), /is a symbolic link[\s\S]*rm '/],
		[
			"a link to a file",
			(p: string) => {
				writeFileSync(`${p}.target`, "x");
				symlinkSync(`${p}.target`, p);
			},
			/is a symbolic link/,
		],
	] as const) {
		it(`a lock path that is ${what} is refused at once with what it is and how to clear it, never waited on`, async (t) => {
			const path = join(tempDir(t), "lock");
			make(path);
			// Refused by the first attempt, not a busy error after a wait: a short timeout then fails fast.
			const refused = (e: unknown) =>
				isStateError(e) &&
				e.code === "busy" &&
				e.message.startsWith("The state store cannot be locked: ") &&
				pattern.test(e.message) &&
				e.message.includes(path);
			await assert.rejects(acquireLock(path, 200), refused);
			await assert.rejects(acquireLockUnlessMine(path, 200), refused);
			assert.match(readLockHolder(path)?.odd ?? "", pattern);
			assert.equal(readLockHolder(path)?.stale, false, "an odd lock path is never broken: it is cleared by hand");
		});
	}

	it("a holder of another host whose time lies in the future is named as such, with when it is given up", (t) => {
		const path = join(tempDir(t), "lock");
		writeFileSync(path, JSON.stringify({ pid: 4242, host: "build-server-7", startedAt: Date.now() + 3_600_000, token: "future-1" }));
		const status = readLockHolder(path);
		assert.equal(status?.stale, false);
		assert.match(
			status?.who ?? "",
			/pid 4242 on build-server-7 \(another host.*abandoned 60 s after it was taken; its time lies \d+ s in the future \(clock skew/,
		);
	});
});
