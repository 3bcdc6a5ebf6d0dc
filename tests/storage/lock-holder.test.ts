/**
 * Holder records and holder files of the lock, on real files: what a record names, which
 * records are this process's, reading a lock file without trusting it (links, FIFOs, half
 * records), creating a holder file exclusively, the holders folder, token names that cannot
 * leave it, and the sweep of dead holder files.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import {
	BOOT,
	HOST,
	PID_NS,
	TOKEN_PREFIX,
	createHolderFile,
	ensureHoldersDir,
	holderFileOf,
	holderRecord,
	holdersDir,
	local,
	mine,
	readHolder,
	sweep,
	unlinkQuiet,
} from "../../lib/storage/file/lock-holder.js";
import type { LockHolder } from "../../lib/storage/file/lock-holder.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("holder records", () => {
	it("name this process, host, pid namespace and boot, with a fresh token of this process each time", () => {
		assert.equal(HOST, hostname());
		assert.match(PID_NS ?? "", /^pid:\[\d+\]$/, "Linux names the pid namespace");
		assert.match(BOOT ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "Linux names the boot");
		const before = Date.now();
		const a = holderRecord();
		const b = holderRecord();
		assert.deepEqual(a, { pid: process.pid, host: HOST, startedAt: a.startedAt, token: a.token, ns: PID_NS, boot: BOOT });
		assert.ok(a.startedAt >= before && a.startedAt <= Date.now());
		assert.notEqual(a.token, b.token);
		for (const r of [a, b]) assert.match(r.token, new RegExp(`^${process.pid}-[0-9a-f]{12}-\\d+$`));
		assert.ok(a.token.startsWith(`${TOKEN_PREFIX}-`));
		assert.equal(holderRecord("given").token, "given");
	});

	it("local: same host and pid namespace, or a record without a namespace; not another host or namespace", () => {
		const r = holderRecord();
		assert.equal(local(r), true);
		const { ns: _, ...noNs } = r;
		assert.equal(local(noNs), true, "a record without ns counts as ours");
		assert.equal(local({ ...r, ns: "pid:[1]" }), false);
		assert.equal(local({ ...r, host: "elsewhere.example" }), false);
		assert.equal(local({ ...noNs, host: "elsewhere.example" }), false);
	});

	it("mine: only a record of this very process (host, namespace, pid and a token it made)", () => {
		const r = holderRecord();
		assert.equal(mine(r), true);
		assert.equal(mine({ ...r, token: `${process.pid}-earlier-1` }), false, "an earlier process with our pid");
		assert.equal(mine({ ...r, token: `${TOKEN_PREFIX}0-1` }), false, "the prefix must end at the dash");
		assert.equal(mine({ ...r, pid: process.pid + 1 }), false);
		assert.equal(mine({ ...r, host: "elsewhere.example" }), false);
		assert.equal(mine({ ...r, ns: "pid:[1]" }), false);
		assert.equal(mine("missing"), false);
		assert.equal(mine("unreadable"), false);
	});
});

describe("readHolder", () => {
	const full: LockHolder = { pid: 12, host: "h", startedAt: 34, token: "t-1" };

	it("reads a complete record; missing when nothing is there", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "lock"), JSON.stringify(full));
		assert.deepEqual(readHolder(join(dir, "lock")), full);
		assert.equal(readHolder(join(dir, "none")), "missing");
	});

	it("a record missing a member or with one of the wrong type, empty, half-written or not an object is unreadable", (t) => {
		const dir = tempDir(t);
		const cases: Record<string, unknown>[] = [];
		for (const key of ["pid", "host", "startedAt", "token"] as const) {
			const { [key]: _, ...without } = full;
			cases.push(without, { ...full, [key]: key === "host" || key === "token" ? 1 : "1" });
		}
		const texts = [...cases.map((c) => JSON.stringify(c)), "", '{"pid":12,"ho', "null", "[]", '"text"'];
		texts.forEach((text, i) => {
			writeFileSync(join(dir, `l${i}`), text);
			assert.equal(readHolder(join(dir, `l${i}`)), "unreadable", text);
		});
	});

	it("never follows a link and never blocks on a FIFO: both are unreadable", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "target"), JSON.stringify(full));
		symlinkSync(join(dir, "target"), join(dir, "link"));
		assert.equal(readHolder(join(dir, "link")), "unreadable");
		execFileSync("mkfifo", [join(dir, "fifo")]);
		assert.equal(readHolder(join(dir, "fifo")), "unreadable");
	});
});

describe("holder files", () => {
	it("createHolderFile writes the record to a new file and names its inode; false when anything is there, even a dangling link", (t) => {
		const dir = tempDir(t);
		const r = holderRecord();
		const made = createHolderFile(join(dir, "h"), r);
		assert.ok(made);
		const st = statSync(join(dir, "h"));
		assert.deepEqual(made, { ino: st.ino, dev: st.dev });
		assert.equal(st.mode & 0o777, 0o600, "private to its user");
		assert.deepEqual(JSON.parse(readFileSync(join(dir, "h"), "utf8")), r);
		assert.equal(createHolderFile(join(dir, "h"), holderRecord()), false);
		assert.deepEqual(JSON.parse(readFileSync(join(dir, "h"), "utf8")), r, "the existing file is untouched");
		symlinkSync(join(dir, "nowhere"), join(dir, "link"));
		assert.equal(createHolderFile(join(dir, "link"), r), false);
		assert.equal(existsSync(join(dir, "nowhere")), false, "nothing is created through the link");
		assert.throws(
			() => createHolderFile(join(dir, "no-folder", "h"), r),
			(e: unknown) => (e as NodeJS.ErrnoException).code === "ENOENT",
		);
	});

	it("ensureHoldersDir makes `<lock>.holders` once; refuses a file or a link in its place and a missing store folder", (t) => {
		const dir = tempDir(t);
		const lock = join(dir, "lock");
		assert.equal(holdersDir(lock), `${lock}.holders`);
		assert.equal(ensureHoldersDir(lock), true);
		assert.ok(lstatSync(`${lock}.holders`).isDirectory());
		assert.equal(lstatSync(`${lock}.holders`).mode & 0o777, 0o700, "private to its user");
		assert.equal(ensureHoldersDir(lock), true, "an existing folder is used");
		writeFileSync(join(dir, "file.holders"), "x");
		assert.equal(ensureHoldersDir(join(dir, "file")), false);
		mkdirSync(join(dir, "real"));
		symlinkSync(join(dir, "real"), join(dir, "linked.holders"));
		assert.equal(ensureHoldersDir(join(dir, "linked")), false, "a link to a folder is not followed");
		assert.equal(ensureHoldersDir(join(dir, "gone", "lock")), false);
		assert.equal(existsSync(join(dir, "gone")), false, "the store folder is not re-created");
	});

	it("holderFileOf names a file inside the holders folder only for token-shaped names", () => {
		assert.equal(holderFileOf("/s/lock", "123-abc_def-7"), "/s/lock.holders/123-abc_def-7");
		assert.equal(holderFileOf("/s/lock", "x"), "/s/lock.holders/x");
		for (const token of ["", "../victim", "a/../../b", "a/b", "a.b", "a b", "a\nb", "ok-1\n"]) {
			assert.equal(holderFileOf("/s/lock", token), undefined, JSON.stringify(token));
		}
	});

	it("unlinkQuiet removes a file and is silent when it is gone", (t) => {
		const file = join(tempDir(t), "f");
		writeFileSync(file, "x");
		unlinkQuiet(file);
		assert.equal(existsSync(file), false);
		unlinkQuiet(file);
	});

	it("sweep removes the files judged dead (a link itself, never its target), leaves the rest and folders, and reads each record", (t) => {
		const dir = tempDir(t);
		const holders = join(dir, "lock.holders");
		mkdirSync(holders);
		const outside = join(dir, "outside");
		writeFileSync(outside, JSON.stringify(holderRecord()));
		writeFileSync(join(holders, "dead"), JSON.stringify({ ...holderRecord("dead"), pid: 1 }));
		writeFileSync(join(holders, "live"), JSON.stringify(holderRecord("live")));
		writeFileSync(join(holders, "empty"), "");
		symlinkSync(outside, join(holders, "link"));
		mkdirSync(join(holders, "folder"));
		const seen: Record<string, string> = {};
		sweep(holders, (file, h) => {
			const name = file.slice(holders.length + 1);
			assert.equal(file, join(holders, name));
			seen[name] = h === "unreadable" ? h : h.token;
			return name !== "live";
		});
		assert.deepEqual(seen, { dead: "dead", live: "live", empty: "unreadable", link: "unreadable" });
		assert.deepEqual(readdirSync(holders).sort(), ["folder", "live"]);
		assert.ok(existsSync(outside), "the link's target is left alone");
		sweep(join(dir, "none"), () => assert.fail("nothing to judge in a missing folder"));
	});
});
