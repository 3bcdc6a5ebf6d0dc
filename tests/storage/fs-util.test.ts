/**
 * The file primitives every store stands on (storage/fs-util.ts), on real files: what each
 * refuses and with which words (links, folders, FIFOs, sockets, a file where a folder belongs),
 * what it creates (modes, only the missing folders, never a temp file left behind), and that it
 * closes what it opens. The store-level containment cases are in containment.test.ts.
 * (Written against the survivors of the mutation run on fs-util.ts, docs/decisions.md.)
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, constants, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { isStateError } from "../../lib/core/errors.js";
import {
	DIR_MODE,
	FILE_MODE,
	atomicWrite,
	createOnce,
	ensureDirIn,
	errnoOf,
	fsyncDir,
	ioFail,
	isRealDir,
	kindOf,
	lstatOrUndefined,
	openFile,
	ownedByMe,
	readFrom,
	readRegular,
	removeFile,
} from "../../lib/storage/fs-util.js";
import { tempDir } from "../helpers/temp-dir.js";

/** A refusal of `code` whose message holds `words`. */
function refusal(code: string, words: string) {
	return (e: unknown) => {
		assert.ok(isStateError(e), `a StateError, got ${String(e)}`);
		assert.equal(e.code, code);
		assert.ok(e.message.includes(words), `"${words}" in: ${e.message}`);
		return true;
	};
}
const unsafe = (path: string, found: string, expected: string) => refusal("corrupt", `\`${path}\` is ${found} where State Flow keeps ${expected}.`);

/** This process's open file descriptors (Linux). */
const openFds = () => readdirSync("/proc/self/fd").length;

function fifo(path: string): string {
	execFileSync("mkfifo", [path]);
	return path;
}

async function withSocket(path: string, body: () => void): Promise<void> {
	const server = createServer();
	await new Promise<void>((done) => server.listen(path, done));
	try {
		body();
	} finally {
		await new Promise<void>((done) => server.close(() => done()));
	}
}

describe("errors and kinds in words", () => {
	it("errnoOf: the code of an OS error, undefined for anything else", () => {
		assert.equal(errnoOf(Object.assign(new Error("x"), { code: "ENOENT" })), "ENOENT");
		assert.equal(errnoOf(undefined), undefined);
		assert.equal(errnoOf(new Error("plain")), undefined);
	});

	it("kindOf names each kind of entry", async (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "x");
		symlinkSync("f", join(dir, "l"));
		assert.equal(kindOf(undefined), "nothing");
		assert.equal(kindOf(lstatSync(dir)), "a folder");
		assert.equal(kindOf(lstatSync(join(dir, "f"))), "a regular file");
		assert.equal(kindOf(lstatSync(join(dir, "l"))), "a symbolic link");
		assert.equal(kindOf(lstatSync(fifo(join(dir, "p")))), "a FIFO (named pipe)");
		assert.equal(kindOf(lstatSync("/dev/null")), "a device");
		await withSocket(join(dir, "s"), () => assert.equal(kindOf(lstatSync(join(dir, "s"))), "a socket"));
	});

	it("ownedByMe: my uid only; anyone where the platform has no uids", () => {
		const me = process.getuid?.() as number;
		assert.equal(ownedByMe({ uid: me }), true);
		assert.equal(ownedByMe({ uid: me + 1 }), false);
		const getuid = process.getuid;
		try {
			// Windows has no process.getuid: there nothing can be told apart by owner.
			(process as { getuid?: () => number }).getuid = undefined;
			assert.equal(ownedByMe({ uid: me + 1 }), true);
		} finally {
			process.getuid = getuid;
		}
	});

	it("ioFail says what could not be done to which file, as an io error with the OS code and no field path", () => {
		const e = Object.assign(new Error("denied"), { code: "EACCES" });
		assert.throws(
			() => ioFail("/x/y", "read", e),
			(err: unknown) => {
				refusal("io", "Cannot read `/x/y` (EACCES). Check permissions and free disk space; nothing was changed.")(err);
				assert.deepEqual((err as { path: unknown }).path, []);
				return true;
			},
		);
		assert.throws(() => ioFail("/x/y", "write", "odd"), refusal("io", "Cannot write `/x/y` (odd)."));
	});

	it("ioFail on ENOTDIR names what sits where a folder belongs on the way, or falls back to the OS error", (t) => {
		const dir = tempDir(t);
		const enotdir = Object.assign(new Error("not a dir"), { code: "ENOTDIR" });
		writeFileSync(join(dir, "file"), "x");
		assert.throws(() => ioFail(join(dir, "file", "a", "b"), "read", enotdir), unsafe(join(dir, "file"), "a regular file", "a folder"));
		symlinkSync("missing", join(dir, "dangling"));
		assert.throws(() => ioFail(join(dir, "dangling", "a"), "read", enotdir), unsafe(join(dir, "dangling"), "a symbolic link that leads nowhere", "a folder"));
		symlinkSync("file", join(dir, "tofile"));
		assert.throws(() => ioFail(join(dir, "tofile", "a"), "read", enotdir), unsafe(join(dir, "tofile"), "a symbolic link to a regular file", "a folder"));
		// A link to a folder on the way is a folder; the first missing entry ends the search.
		mkdirSync(join(dir, "real"));
		writeFileSync(join(dir, "real", "f"), "x");
		symlinkSync("real", join(dir, "tofolder"));
		assert.throws(() => ioFail(join(dir, "tofolder", "f", "a"), "read", enotdir), unsafe(join(dir, "tofolder", "f"), "a regular file", "a folder"));
		assert.throws(() => ioFail(join(dir, "none", "file", "a"), "read", enotdir), refusal("io", `Cannot read \`${join(dir, "none", "file", "a")}\` (ENOTDIR)`));
	});
});

describe("lstatOrUndefined", () => {
	it("undefined for nothing there and for a path through a file; an io error for a link loop on the way", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "x");
		symlinkSync("loop", join(dir, "loop"));
		assert.equal(lstatOrUndefined(join(dir, "none")), undefined);
		assert.equal(lstatOrUndefined(join(dir, "f", "below")), undefined);
		assert.equal(lstatOrUndefined(join(dir, "f"))?.isFile(), true);
		assert.throws(() => lstatOrUndefined(join(dir, "loop", "x")), refusal("io", `Cannot inspect \`${join(dir, "loop", "x")}\` (ELOOP)`));
	});
});

describe("openFile refuses anything but a regular file, without following or blocking", () => {
	it("nothing there: undefined to read, an io error to create in a missing folder", (t) => {
		const dir = tempDir(t);
		assert.equal(openFile(join(dir, "none"), constants.O_RDONLY), undefined);
		const missing = join(dir, "no", "f");
		assert.throws(() => openFile(missing, constants.O_WRONLY | constants.O_CREAT), refusal("io", `Cannot open for writing \`${missing}\` (ENOENT)`));
		const long = join(dir, "n".repeat(300));
		assert.throws(() => openFile(long, constants.O_RDONLY), refusal("io", `Cannot read \`${long}\` (ENAMETOOLONG)`));
	});

	it("a link, a folder, a FIFO (to read and to write) and a path through a file are refused by name", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "x");
		symlinkSync("f", join(dir, "l"));
		mkdirSync(join(dir, "d"));
		fifo(join(dir, "p"));
		const before = openFds();
		assert.throws(() => openFile(join(dir, "l"), constants.O_RDONLY), unsafe(join(dir, "l"), "a symbolic link", "a regular file"));
		assert.throws(() => openFile(join(dir, "d"), constants.O_WRONLY), unsafe(join(dir, "d"), "a folder", "a regular file"));
		assert.throws(() => openFile(join(dir, "d"), constants.O_RDONLY), unsafe(join(dir, "d"), "a folder", "a regular file"));
		assert.throws(() => openFile(join(dir, "p"), constants.O_RDONLY), unsafe(join(dir, "p"), "a FIFO (named pipe)", "a regular file"));
		assert.throws(() => openFile(join(dir, "p"), constants.O_WRONLY), unsafe(join(dir, "p"), "a FIFO (named pipe)", "a regular file"));
		assert.throws(() => openFile(join(dir, "f", "below"), constants.O_RDONLY), unsafe(join(dir, "f"), "a regular file", "a folder"));
		assert.equal(openFds(), before, "a refused open leaves nothing open");
	});

	it("O_EXCL: a link there is refused by name; a file there is the OS's EEXIST for the caller", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "x");
		symlinkSync("nowhere", join(dir, "l"));
		const excl = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
		assert.throws(() => openFile(join(dir, "l"), excl), unsafe(join(dir, "l"), "a symbolic link", "a regular file"));
		assert.throws(
			() => openFile(join(dir, "f"), excl),
			(e: unknown) => !isStateError(e) && errnoOf(e) === "EEXIST",
		);
		const fd = openFile(join(dir, "new"), excl, 0o640) as number;
		closeSync(fd);
		assert.equal(statSync(join(dir, "new")).mode & 0o777, 0o640);
	});
});

describe("reading", () => {
	it("readFrom reads from `start` up to `size`, and stops early at the end of a shorter file", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "0123456789");
		const fd = openSync(join(dir, "f"), "r");
		try {
			assert.equal(readFrom(fd, 0).toString(), "0123456789");
			assert.equal(readFrom(fd, 3).toString(), "3456789");
			assert.equal(readFrom(fd, 2, 5).toString(), "234");
			assert.equal(readFrom(fd, 12).toString(), "");
			// The file shrank since `size` was taken: what is there, no error.
			assert.equal(readFrom(fd, 0, 100).toString(), "0123456789");
			assert.equal(readFrom(fd, 4, 100).toString(), "456789");
		} finally {
			closeSync(fd);
		}
	});

	it("readRegular: the bytes, undefined for nothing, a refusal for a link; it closes the file", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "text");
		symlinkSync("f", join(dir, "l"));
		const before = openFds();
		assert.equal(readRegular(join(dir, "f"))?.toString(), "text");
		assert.equal(readRegular(join(dir, "none")), undefined);
		assert.throws(() => readRegular(join(dir, "l")), unsafe(join(dir, "l"), "a symbolic link", "a regular file"));
		assert.equal(openFds(), before);
	});

	it("fsyncDir syncs a folder, closes it, and refuses a file or a link", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "x");
		symlinkSync(dir, join(dir, "l"));
		const before = openFds();
		fsyncDir(dir);
		assert.equal(openFds(), before);
		assert.throws(
			() => fsyncDir(join(dir, "f")),
			(e: unknown) => errnoOf(e) === "ENOTDIR",
		);
		assert.throws(
			() => fsyncDir(join(dir, "l")),
			(e: unknown) => errnoOf(e) === "ELOOP" || errnoOf(e) === "ENOTDIR",
		);
	});
});

describe("ensureDirIn and isRealDir", () => {
	it("creates only the missing folders, the last with `mode`, the others with `parentMode`, and returns the topmost", (t) => {
		const base = tempDir(t);
		const cwd = process.cwd();
		// Run from an empty folder: anything created relative to the working folder would show there.
		const empty = join(base, "cwd");
		mkdirSync(empty);
		process.chdir(empty);
		try {
			const dir = join(base, "a", "b", "c");
			assert.equal(ensureDirIn(dir, base, "The store folder", 0o750, 0o711), join(base, "a"));
			assert.equal(statSync(dir).mode & 0o777, 0o750);
			assert.equal(statSync(join(base, "a")).mode & 0o777, 0o711);
			assert.equal(statSync(join(base, "a", "b")).mode & 0o777, 0o711);
			assert.equal(ensureDirIn(dir, base, "The store folder"), undefined, "nothing missing: nothing created");
			assert.equal(ensureDirIn(join(dir, "d"), base, "The store folder"), join(dir, "d"));
			assert.equal(statSync(join(dir, "d")).mode & 0o777, DIR_MODE);
			assert.deepEqual(readdirSync(empty), []);
		} finally {
			process.chdir(cwd);
		}
	});

	it("goes through a link to a folder inside the base; refuses a file or a dangling link on the way, creating nothing", (t) => {
		const base = tempDir(t);
		mkdirSync(join(base, "real"));
		symlinkSync("real", join(base, "link"));
		assert.equal(ensureDirIn(join(base, "link", "x"), base, "The store folder"), join(base, "link", "x"));
		assert.equal(statSync(join(base, "real", "x")).isDirectory(), true);
		writeFileSync(join(base, "file"), "x");
		assert.throws(() => ensureDirIn(join(base, "file", "x", "y"), base, "The store folder"), unsafe(join(base, "file"), "a regular file", "a folder"));
		symlinkSync("gone", join(base, "dangling"));
		assert.throws(
			() => ensureDirIn(join(base, "dangling", "x"), base, "The store folder"),
			unsafe(join(base, "dangling"), "a symbolic link that leads nowhere", "a folder"),
		);
		assert.equal(lstatOrUndefined(join(base, "gone")), undefined);
	});

	it("isRealDir: false for nothing, true for a folder, a refusal for a file or a link", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "x");
		symlinkSync(dir, join(dir, "l"));
		assert.equal(isRealDir(join(dir, "none")), false);
		assert.equal(isRealDir(dir), true);
		assert.throws(() => isRealDir(join(dir, "f")), unsafe(join(dir, "f"), "a regular file", "a folder"));
		assert.throws(() => isRealDir(join(dir, "l")), unsafe(join(dir, "l"), "a symbolic link", "a folder"));
	});
});

describe("removing and writing files", () => {
	it("removeFile removes a file or a link (not its target), accepts nothing there, refuses a folder", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "x");
		writeFileSync(join(dir, "target"), "kept");
		symlinkSync("target", join(dir, "l"));
		mkdirSync(join(dir, "d"));
		removeFile(join(dir, "f"));
		removeFile(join(dir, "l"));
		removeFile(join(dir, "none"));
		assert.deepEqual(readdirSync(dir).sort(), ["d", "target"]);
		assert.equal(readFileSync(join(dir, "target"), "utf8"), "kept");
		assert.throws(() => removeFile(join(dir, "d")), unsafe(join(dir, "d"), "a folder", "a regular file"));
	});

	it("atomicWrite replaces a file's bytes with the mode asked for, and leaves no temp file", (t) => {
		const dir = tempDir(t);
		const f = join(dir, "f");
		atomicWrite(f, "one");
		assert.equal(statSync(f).mode & 0o777, FILE_MODE);
		atomicWrite(f, Buffer.from("two"), { mode: 0o640 });
		assert.equal(readFileSync(f, "utf8"), "two");
		// The mode is the new file's (the temp file renamed over it).
		assert.equal(statSync(f).mode & 0o777, 0o640);
		assert.deepEqual(readdirSync(dir), ["f"]);
	});

	it("atomicWrite over a link, a folder or a FIFO refuses, leaves it as it was, and removes its temp file", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "target"), "kept");
		symlinkSync("target", join(dir, "l"));
		mkdirSync(join(dir, "d"));
		fifo(join(dir, "p"));
		assert.throws(() => atomicWrite(join(dir, "l"), "new"), unsafe(join(dir, "l"), "a symbolic link", "a regular file"));
		assert.throws(() => atomicWrite(join(dir, "d"), "new"), unsafe(join(dir, "d"), "a folder", "a regular file"));
		assert.throws(() => atomicWrite(join(dir, "p"), "new"), unsafe(join(dir, "p"), "a FIFO (named pipe)", "a regular file"));
		assert.equal(readlinkSync(join(dir, "l")), "target");
		assert.equal(readFileSync(join(dir, "target"), "utf8"), "kept");
		assert.deepEqual(readdirSync(dir).sort(), ["d", "l", "p", "target"]);
	});

	it("atomicWrite into a missing folder is an io error naming the file", (t) => {
		const f = join(tempDir(t), "no", "f");
		assert.throws(() => atomicWrite(f, "x"), refusal("io", `Cannot write \`${f}\` (ENOENT)`));
	});

	it("atomicWrite killed at its crash point leaves the old bytes in place (a real process, SIGKILL)", (t) => {
		const dir = tempDir(t);
		const f = join(dir, "f");
		writeFileSync(f, "old");
		const url = new URL("../../lib/storage/fs-util.js", import.meta.url).href;
		const script = `import { atomicWrite } from ${JSON.stringify(url)}; atomicWrite(${JSON.stringify(f)}, "new", { midFault: "mid-compaction-log" });`;
		// execArgv carries the loader that runs this file (tsx under the mutation runner).
		const child = spawnSync(process.execPath, [...process.execArgv, "--input-type=module", "-e", script], {
			env: { ...process.env, STATE_FLOW_FAULT: "mid-compaction-log" },
			encoding: "utf8",
			timeout: 20_000,
		});
		assert.equal(child.signal, "SIGKILL", `the child died at the crash point (status ${child.status}, ${child.stderr})`);
		assert.equal(readFileSync(f, "utf8"), "old");
		const left = readdirSync(dir).filter((n) => n !== "f");
		assert.equal(left.length, 1, "the durable temp file a crash leaves");
		assert.equal(readFileSync(join(dir, left[0] as string), "utf8"), "new");
	});

	it("createOnce creates a file with its mode where nothing is, leaves no temp file and closes what it opened", (t) => {
		const dir = tempDir(t);
		const before = openFds();
		assert.equal(createOnce(join(dir, "f"), Buffer.from("one"), 0o640), true);
		assert.equal(readFileSync(join(dir, "f"), "utf8"), "one");
		assert.equal(statSync(join(dir, "f")).mode & 0o777, 0o640);
		assert.equal(createOnce(join(dir, "g"), Buffer.from("two")), true);
		assert.equal(statSync(join(dir, "g")).mode & 0o777, FILE_MODE);
		assert.deepEqual(readdirSync(dir).sort(), ["f", "g"]);
		assert.equal(openFds(), before);
	});

	it("createOnce where anything is (a file, a dangling link) returns false and changes nothing", (t) => {
		const dir = tempDir(t);
		writeFileSync(join(dir, "f"), "old");
		symlinkSync("target", join(dir, "l"));
		assert.equal(createOnce(join(dir, "f"), Buffer.from("new")), false);
		assert.equal(createOnce(join(dir, "l"), Buffer.from("new")), false);
		assert.equal(readFileSync(join(dir, "f"), "utf8"), "old");
		assert.equal(readlinkSync(join(dir, "l")), "target");
		assert.deepEqual(readdirSync(dir).sort(), ["f", "l"], "no temp file left, nothing made through the link");
	});

	it("createOnce into a missing folder is an io error naming the file", (t) => {
		const f = join(tempDir(t), "no", "f");
		assert.throws(() => createOnce(f, Buffer.from("x")), refusal("io", `Cannot write \`${f}\` (ENOENT)`));
	});
});
