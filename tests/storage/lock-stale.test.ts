/**
 * The staleness rules of the lock, judged directly on lock and holder files: a holder of
 * another live process is never stale, one of an earlier boot always is (its boot id or its
 * start before boot), other hosts by age; and how a holder is described to the user.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { linkSync, utimesSync, writeFileSync } from "node:fs";
import { uptime } from "node:os";
import { join } from "node:path";
import { BOOT, HOST, PID_NS, holderRecord } from "../../lib/storage/file/lock-holder.js";
import type { LockHolder } from "../../lib/storage/file/lock-holder.js";
import {
	BREAK_STALE_MS,
	EMPTY_STALE_MS,
	FOREIGN_STALE_MS,
	ageMs,
	deadHolderFile,
	describeHolder,
	isStale,
	isStaleBreak,
	lockAgeMs,
	pidAlive,
} from "../../lib/storage/file/lock-stale.js";
import { tempDir } from "../helpers/temp-dir.js";

/** The pid of a process that has already exited (pids are not reused this quickly): one for the whole file. */
const DEAD = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString());

/** A real other process of this host, alive until the test ends. */
function livePid(t: { after(fn: () => void): void }): number {
	const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
	t.after(() => void child.kill("SIGKILL"));
	assert.ok(child.pid !== undefined, "the child process started");
	return child.pid;
}

/** A holder record of another process on this host (same host, pid namespace and boot unless overridden). */
function otherProcess(pid: number, over: Partial<LockHolder> = {}): LockHolder {
	return { ...holderRecord(), pid, token: `${pid}-0a1b2c-1`, ...over };
}

/** Write `holder` as the lock file at `dir/name` (a plain O_EXCL-style file, one link) and return its path. */
function lockFile(dir: string, holder: LockHolder | string, name = "lock"): string {
	const path = join(dir, name);
	writeFileSync(path, typeof holder === "string" ? holder : JSON.stringify(holder));
	return path;
}

function setAge(path: string, ms: number): void {
	const at = (Date.now() - ms) / 1000;
	utimesSync(path, at, at);
}

/** A moment since boot (ms since the epoch) that lies `ms` after this machine booted. */
function afterBoot(ms: number): number {
	return Date.now() - uptime() * 1000 + ms;
}

describe("pidAlive", () => {
	it("is true for a running process and this one, false for one that has exited", (t) => {
		assert.equal(pidAlive(process.pid), true);
		assert.equal(pidAlive(livePid(t)), true);
		assert.equal(pidAlive(DEAD), false);
	});

	it("is true for a process of another user, which may not be signalled (EPERM): it can still release its lock", (t) => {
		const seteuid = process.seteuid;
		if (process.geteuid?.() !== 0 || seteuid === undefined) {
			// Not root: pid 1 belongs to root (or, in a user's own namespace, to this user: then it only checks less).
			assert.equal(pidAlive(1), true);
			return;
		}
		// Root may signal every process: a holder of user 65533 is judged with `nobody`'s effective
		// uid, in this process (a child as `nobody` could not read a checkout in a private folder).
		const other = spawn("sleep", ["60"], { uid: 65533, gid: 65533, stdio: "ignore" });
		t.after(() => other.kill("SIGKILL"));
		const pid = other.pid as number;
		seteuid(65534);
		let alive: boolean;
		let refused: unknown;
		try {
			try {
				process.kill(pid, 0);
			} catch (e) {
				refused = e;
			}
			alive = pidAlive(pid);
		} finally {
			seteuid(0);
		}
		assert.equal((refused as NodeJS.ErrnoException | undefined)?.code, "EPERM", "the check really met EPERM");
		assert.equal(alive, true);
	});
});

describe("isStale on this host", () => {
	it("a holder of another live process is not stale, however old its lock file: it can still release", (t) => {
		const h = otherProcess(livePid(t));
		const path = lockFile(tempDir(t), h);
		assert.equal(isStale(path, h), false);
		setAge(path, 10 * FOREIGN_STALE_MS);
		assert.equal(isStale(path, h), false);
	});

	it("a holder whose process has exited is stale at once", (t) => {
		const h = otherProcess(DEAD);
		assert.equal(isStale(lockFile(tempDir(t), h), h), true);
	});

	it("a holder of another boot (its boot id differs) is stale even while a process with its pid runs", (t) => {
		assert.ok(BOOT !== undefined, "this machine has a boot id");
		const h = otherProcess(livePid(t), { boot: "00000000-0000-4000-8000-000000000000" });
		assert.equal(isStale(lockFile(tempDir(t), h), h), true);
	});

	it("a record without a boot id (written where none is known) is judged by its pid alone", (t) => {
		const dir = tempDir(t);
		const { boot: _, ...live } = otherProcess(livePid(t));
		assert.equal(isStale(lockFile(dir, live, "live"), live), false);
		const { boot: __, ...dead } = otherProcess(DEAD);
		assert.equal(isStale(lockFile(dir, dead, "dead"), dead), true);
	});

	it("a holder taken before this boot is stale; one taken after it, or within the clock slack before it, is not", (t) => {
		const dir = tempDir(t);
		const pid = livePid(t);
		for (const [startedAt, stale, what] of [
			[afterBoot(-2 * FOREIGN_STALE_MS), true, "two slack periods before boot"],
			[afterBoot(-FOREIGN_STALE_MS / 2), false, "half a slack period before boot"],
			[afterBoot(FOREIGN_STALE_MS / 2), false, "half a slack period after boot"],
			[afterBoot(2 * FOREIGN_STALE_MS), false, "two slack periods after boot"],
		] as const) {
			const { boot: _, ...h } = otherProcess(pid, { startedAt });
			assert.equal(isStale(lockFile(dir, h), h), stale, what);
		}
	});

	it("this process's own holder is not stale; one with its pid and another token (an earlier process) is", (t) => {
		const dir = tempDir(t);
		const own = holderRecord();
		assert.equal(isStale(lockFile(dir, own), own), false);
		const earlier = { ...own, token: `${process.pid}-earlier-1` };
		assert.equal(isStale(lockFile(dir, earlier), earlier), true);
	});

	it("an unreadable lock file is stale only once it has been left unchanged past EMPTY_STALE_MS", (t) => {
		const path = lockFile(tempDir(t), "");
		assert.equal(isStale(path, "unreadable"), false);
		setAge(path, EMPTY_STALE_MS + 1000);
		assert.equal(isStale(path, "unreadable"), true);
	});
});

describe("isStale for another host", () => {
	const foreign = (startedAt: number): LockHolder => ({ pid: DEAD, host: "elsewhere.example", startedAt, token: "f-1" });

	it("is judged by the time the lock was taken, never by its pid", (t) => {
		const dir = tempDir(t);
		assert.equal(isStale(lockFile(dir, foreign(Date.now())), foreign(Date.now())), false);
		const old = foreign(Date.now() - FOREIGN_STALE_MS - 1000);
		assert.equal(isStale(lockFile(dir, old), old), true);
	});

	it("a linked holder file counts from when it was linked (its ctime), not from when its record was written", (t) => {
		const dir = tempDir(t);
		const written = foreign(Date.now() - 2 * FOREIGN_STALE_MS);
		const holderFile = lockFile(dir, written, "holder");
		linkSync(holderFile, join(dir, "lock"));
		assert.ok(lockAgeMs(join(dir, "lock"), written) < FOREIGN_STALE_MS);
		assert.equal(isStale(join(dir, "lock"), written), false);
		assert.ok(lockAgeMs(lockFile(dir, written, "plain"), written) >= 2 * FOREIGN_STALE_MS, "a plain lock file counts from startedAt");
	});

	it("a lock that is gone has age 0 and is not stale", (t) => {
		const gone = join(tempDir(t), "gone");
		assert.equal(ageMs(gone), 0);
		assert.equal(lockAgeMs(gone, foreign(0)), 0);
		assert.equal(isStale(gone, foreign(0)), false);
	});
});

describe("deadHolderFile (the sweep of holder files)", () => {
	it("an unreadable holder file is removed only once older than FOREIGN_STALE_MS", (t) => {
		const path = lockFile(tempDir(t), "{half");
		assert.equal(deadHolderFile(path, "unreadable"), false);
		setAge(path, EMPTY_STALE_MS + 1000);
		assert.equal(deadHolderFile(path, "unreadable"), false, "older than an empty lock's limit is not enough");
		setAge(path, FOREIGN_STALE_MS + 1000);
		assert.equal(deadHolderFile(path, "unreadable"), true);
	});

	it("holder files of live processes stay, of dead ones go; other hosts' stay whatever their age", (t) => {
		const dir = tempDir(t);
		const own = holderRecord();
		assert.equal(deadHolderFile(lockFile(dir, own, "own"), own), false);
		const live = otherProcess(livePid(t));
		assert.equal(deadHolderFile(lockFile(dir, live, "live"), live), false);
		const dead = otherProcess(DEAD);
		assert.equal(deadHolderFile(lockFile(dir, dead, "dead"), dead), true);
		const foreign: LockHolder = { pid: 1, host: "elsewhere.example", startedAt: 0, token: "f-1" };
		const path = lockFile(dir, foreign, "foreign");
		setAge(path, 10 * FOREIGN_STALE_MS);
		assert.equal(deadHolderFile(path, foreign), false);
	});
});

describe("isStaleBreak", () => {
	it("a break lock of a dead breaker on this host is stale at once; a live one's only once old", (t) => {
		const dir = tempDir(t);
		const dead = otherProcess(DEAD);
		assert.equal(isStaleBreak(lockFile(dir, dead, "dead.break"), dead), true);
		const live = otherProcess(livePid(t));
		const path = lockFile(dir, live, "live.break");
		assert.equal(isStaleBreak(path, live), false);
		setAge(path, BREAK_STALE_MS + 1000);
		assert.equal(isStaleBreak(path, live), true);
	});

	it("a break lock of another host, or unreadable, is judged by age alone, never by a pid of this host", (t) => {
		const dir = tempDir(t);
		const foreign: LockHolder = { pid: DEAD, host: "elsewhere.example", startedAt: Date.now(), token: "f-1" };
		const path = lockFile(dir, foreign, "foreign.break");
		assert.equal(isStaleBreak(path, foreign), false);
		const unreadable = lockFile(dir, "", "empty.break");
		assert.equal(isStaleBreak(unreadable, "unreadable"), false);
		setAge(unreadable, BREAK_STALE_MS + 1000);
		assert.equal(isStaleBreak(unreadable, "unreadable"), true);
	});
});

describe("describeHolder", () => {
	it("names a holder of this host by pid and host only", (t) => {
		const h = otherProcess(livePid(t));
		assert.equal(describeHolder(lockFile(tempDir(t), h), h), `pid ${h.pid} on ${HOST}`);
	});

	it("names another host, and another pid namespace of this host name, with when it is given up", (t) => {
		const dir = tempDir(t);
		const foreign: LockHolder = { pid: 7, host: "elsewhere.example", startedAt: Date.now(), token: "f-1" };
		assert.equal(describeHolder(lockFile(dir, foreign), foreign), "pid 7 on elsewhere.example (another host: treated as abandoned 60 s after it was taken)");
		const container: LockHolder = { pid: 7, host: HOST, ns: `${PID_NS ?? "pid:[0]"}-other`, startedAt: Date.now(), token: "c-1" };
		assert.equal(
			describeHolder(lockFile(dir, container), container),
			`pid 7 on ${HOST} (another host or pid namespace: treated as abandoned 60 s after it was taken)`,
		);
	});

	it("says how far in the future a holder's time lies once it is more than a quarter of FOREIGN_STALE_MS ahead", (t) => {
		const dir = tempDir(t);
		const ahead = (ms: number): string => {
			const h: LockHolder = { pid: 7, host: "elsewhere.example", startedAt: Date.now() + ms, token: "f-1" };
			return describeHolder(lockFile(dir, h), h);
		};
		assert.doesNotMatch(ahead(FOREIGN_STALE_MS / 8), /future/, "a small skew is not named");
		const text = ahead(2 * FOREIGN_STALE_MS);
		const secs = Number(/its time lies (\d+) s in the future \(clock skew between hosts\)\)$/.exec(text)?.[1]);
		assert.ok(secs >= (2 * FOREIGN_STALE_MS) / 1000 - 1 && secs <= (2 * FOREIGN_STALE_MS) / 1000, `${text} names the skew in seconds`);
	});
});
