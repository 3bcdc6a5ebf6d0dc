/**
 * Who made each transition (user, host): `whoAmI` decides it (the config's user, else the OS
 * user; the host name), `Stores` stamps the same who on every owner's record of a transition,
 * and it round-trips through the file stores and pi's session file, sealed by the record's
 * checksum and validated on read as untrusted input. Records without who stay valid.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { isStateError } from "../../lib/core/errors.js";
import type { TransitionRecord, Who } from "../../lib/core/types.js";
import { parseRecordLine, recordLine } from "../../lib/storage/format.js";
import { LOG_FILE } from "../../lib/storage/file/owner-store.js";
import { compactionSlack } from "../../lib/storage/owner-log.js";
import { storePaths } from "../../lib/storage/project/paths.js";
import type { Stores } from "../../lib/storage/stores.js";
import { WHO_MAX_LENGTH, whoAmI } from "../../lib/storage/placement/who.js";
import { hostSessionLog } from "../helpers/session-log.js";
import { tempDir } from "../helpers/temp-dir.js";
import { withAssistant } from "./children/pi-session.js";
import { runChild } from "./children/spawn.js";
import { commitMeta } from "../helpers/meta.js";

const by = { kind: "system", reason: "who-test" } as const;
const meta = commitMeta("w", "2026-12-01T00:00:00.000Z", by);
const alice: Who = { user: "alice", host: "laptop.example.com" };

function storesFor(dir: string, opts: { who?: Who; sm?: SessionManager } = {}): Stores {
	return openStoresAt({
		agentDir: join(dir, "agent"),
		cwd: join(dir, "proj"),
		...(opts.who ? { who: opts.who } : {}),
		...(opts.sm ? { session: hostSessionLog(opts.sm) } : {}),
	});
}

function logOf(dir: string, owner: "global" | "cwd"): string {
	const paths = storePaths(join(dir, "agent"), join(dir, "proj"));
	return join(owner === "global" ? paths.globalRoot : paths.cwdRoot, LOG_FILE);
}

async function rejectsCorrupt(p: Promise<unknown>, pattern: RegExp): Promise<void> {
	await assert.rejects(p, (e: unknown) => isStateError(e) && e.code === "corrupt" && pattern.test(e.message));
}

describe("whoAmI", () => {
	it("is the config's user when given, else the OS user, on this machine's host name", () => {
		assert.deepEqual(whoAmI("bob"), { user: "bob", host: hostname() });
		assert.deepEqual(whoAmI(), { user: userInfo().username, host: hostname() });
		assert.deepEqual(whoAmI(""), whoAmI(), "an empty name is no name");
	});

	it("makes any configured name storable: control and invisible characters dropped, length bounded", () => {
		assert.equal(whoAmI("bo\u001b[31mb\u202e\n").user, "bo[31mb");
		assert.equal(whoAmI("\u0000\u200b ").user, userInfo().username, "nothing left: the OS user");
		assert.equal(Array.from(whoAmI("é".repeat(WHO_MAX_LENGTH + 5)).user).length, WHO_MAX_LENGTH);
		assert.equal(whoAmI("😀".repeat(WHO_MAX_LENGTH + 1)).user, "😀".repeat(WHO_MAX_LENGTH), "cut between characters, never inside one");
	});

	it("law: whatever the config says, the who it gives is read back from a stored record unchanged", () => {
		const record: TransitionRecord = { id: "x", at: "2026-12-01T00:00:00.000Z", seq: 1, by, patch: {}, undo: {}, cascades: [], owners: ["cwd"] };
		assertProperty(
			fc.property(fc.option(fc.string({ unit: "binary", maxLength: 300 }), { nil: undefined }), (user) => {
				const who = whoAmI(user);
				assert.deepEqual(parseRecordLine(recordLine({ ...record, who }), "log", "line 1").who, who);
			}),
		);
	});

	it("falls back to $USER, then `unknown`, where the OS user has no passwd entry (a container's uid)", (t) => {
		// Only root can run a process as a uid without a passwd entry; elsewhere the OS user is asserted.
		if (process.getuid?.() !== 0) {
			assert.equal(whoAmI().user, userInfo().username);
			return;
		}
		// The compiled module and the pure core it imports, where any uid can read them (the
		// checkout may sit in a private folder).
		const dir = tempDir(t);
		chmodSync(dir, 0o755);
		cpSync(fileURLToPath(new URL("../../lib/core/", import.meta.url)), join(dir, "core"), { recursive: true });
		mkdirSync(join(dir, "storage", "placement"), { recursive: true });
		const module = join(dir, "storage", "placement", "who.js");
		copyFileSync(fileURLToPath(new URL("../../lib/storage/placement/who.js", import.meta.url)), module);
		writeFileSync(join(dir, "package.json"), '{"type":"module"}');
		const script = `import { userInfo } from "node:os"; import { whoAmI } from ${JSON.stringify(module)};
			let passwd = true; try { userInfo(); } catch { passwd = false; }
			console.log(JSON.stringify({ passwd, who: whoAmI() }));`;
		const run = (env: NodeJS.ProcessEnv) => {
			const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
				uid: 54_321,
				gid: 54_321,
				env: { PATH: process.env.PATH, ...env },
				encoding: "utf8",
			});
			assert.equal(r.status, 0, r.stderr);
			const out = JSON.parse(r.stdout) as { passwd: boolean; who: Who };
			assert.equal(out.passwd, false, "the child's uid has no passwd entry");
			return out.who;
		};
		assert.deepEqual(run({ USER: "ci-runner" }), { user: "ci-runner", host: hostname() });
		assert.deepEqual(run({}), { user: "unknown", host: hostname() });
	});
});

describe("who in stored records", () => {
	it("stamps the same who on every owner of a transition, read back from the files and pi's session file", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
		withAssistant(sm);
		const s = storesFor(dir, { who: alice, sm });
		const m = meta();
		await s.commit({ global: { intents: { g: 1 } }, cwd: { tactics: { c: 1 } }, session: { lazy: { l: 1 } } }, m);
		for (const owner of ["global", "cwd"] as const)
			assert.match(readFileSync(logOf(dir, owner), "utf8"), /"who":\{"user":"alice","host":"laptop\.example\.com"\}/);
		const reopened = storesFor(dir, { sm: SessionManager.open(sm.getSessionFile() as string, join(dir, "sessions")) });
		for (const owner of ["global", "cwd", "session"] as const) {
			const [record] = (await reopened.load(owner)).tail;
			assert.equal(record?.id, m.id, owner);
			assert.deepEqual(record?.who, alice, `${owner} carries the transition's who`);
		}
	});

	it("keeps records without who (older writers) valid beside new ones, also after a compaction rewrote them", async (t) => {
		const dir = tempDir(t);
		await storesFor(dir).commit({ cwd: { tactics: { a: 1 } } }, meta());
		await storesFor(dir, { who: alice }).commit({ cwd: { tactics: { b: 2 } } }, meta());
		const h = await storesFor(dir).load("cwd");
		assert.deepEqual(
			h.tail.map((r) => r.who),
			[undefined, alice],
		);
		assert.equal(Object.hasOwn(h.tail[0] as object, "who"), false, "no who is invented for an old record");
		// Retention 1: once the log outgrows it by the compaction slack, the log is rewritten with the retained records.
		const narrow = openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), retention: 1, who: { user: "bob", host: "ci" } });
		const before = readFileSync(logOf(dir, "cwd"), "utf8");
		for (let i = 0; i < 1 + compactionSlack(1); i++) await narrow.commit({ cwd: { tactics: { c: i } } }, meta());
		const lines = readFileSync(logOf(dir, "cwd"), "utf8").trimEnd().split("\n");
		assert.ok(!lines.join("\n").startsWith(before.trimEnd()), "the log was rewritten");
		assert.ok(lines.length < 2 + compactionSlack(1), `compacted to ${lines.length} lines`);
		for (const line of lines) assert.deepEqual(parseRecordLine(line, "log", "a line").who, { user: "bob", host: "ci" });
	});

	it("a transition rolled forward from its journal after its writer was killed keeps its who in every owner", async (t) => {
		const dir = tempDir(t);
		const child = runChild("who-child", [join(dir, "agent"), join(dir, "proj")], { STATE_FLOW_FAULT: "after-journal" });
		const end = await child.done;
		assert.equal(end.signal, "SIGKILL", `the writer died at its commit point (${end.stdout}${end.stderr})`);
		// Another process, writing as someone else, completes it from the journal.
		const s = storesFor(dir, { who: { user: "bob", host: "ci" } });
		for (const owner of ["global", "cwd"] as const) {
			const [record] = (await s.load(owner)).tail;
			assert.equal(record?.id, "crash-1", owner);
			assert.deepEqual(record?.who, { user: "alice", host: "laptop" }, `${owner} keeps the writer's who`);
		}
	});

	it("refuses a log whose who was changed after it was written (integrity check), and writes nothing", async (t) => {
		const dir = tempDir(t);
		await storesFor(dir, { who: alice }).commit({ cwd: { tactics: { a: 1 } } }, meta());
		const log = logOf(dir, "cwd");
		const forged = readFileSync(log, "utf8").replace('"user":"alice"', '"user":"mallo"');
		assert.match(forged, /"user":"mallo"/);
		writeFileSync(log, forged);
		const s = storesFor(dir, { who: alice });
		await rejectsCorrupt(s.load("cwd"), /integrity check/);
		await rejectsCorrupt(s.commit({ cwd: { tactics: { b: 2 } } }, meta()), /integrity check/);
		assert.equal(readFileSync(log, "utf8"), forged, "nothing was appended");
	});

	it("refuses a sealed record whose who is not a plain name (a forged checksum does not make it valid)", async (t) => {
		const dir = tempDir(t);
		await storesFor(dir, { who: alice }).commit({ cwd: { tactics: { a: 1 } } }, meta());
		const log = logOf(dir, "cwd");
		const record = parseRecordLine(readFileSync(log, "utf8").trimEnd(), log, "line 1");
		const cases: Array<[unknown, RegExp]> = [
			[{ user: "a\u001b[2Jb", host: "h" }, /`\/who\/user` holds a control or invisible character/],
			[{ user: "alice", host: "x".repeat(WHO_MAX_LENGTH + 1) }, /`\/who\/host` must NOT have more than 256 characters/],
			[{ user: "alice" }, /`\/who` must have required property 'host'/],
			["alice@laptop", /`\/who` must be object/],
		];
		for (const [who, message] of cases) {
			// `recordLine` seals without validating: a checksum anyone can recompute.
			writeFileSync(log, `${recordLine({ ...record, who } as TransitionRecord)}\n`);
			await rejectsCorrupt(storesFor(dir).load("cwd"), message);
		}
	});

	it("refuses a Session entry whose who was changed in the session file (integrity check)", async (t) => {
		const dir = tempDir(t);
		const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
		withAssistant(sm);
		await storesFor(dir, { who: alice, sm }).commit({ session: { tactics: { a: 1 } } }, meta());
		const file = sm.getSessionFile() as string;
		const text = readFileSync(file, "utf8");
		assert.match(text, /"host":"laptop\.example\.com"/);
		writeFileSync(file, text.replace('"host":"laptop.example.com"', '"host":"server.example.com"'));
		const reopened = storesFor(dir, { sm: SessionManager.open(file, join(dir, "sessions")) });
		await rejectsCorrupt(reopened.load("session"), /integrity check/);
	});
});
