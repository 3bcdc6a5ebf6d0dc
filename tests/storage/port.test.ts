/**
 * The owner-store port's contract (tests/helpers/port-contract.ts) on the two local
 * implementations: the file store (Global, CWD) and the Session store over pi's real
 * SessionManager; PostgreSQL runs the same contract in tests/pg/owner-store.test.ts. The local
 * multi-owner commit undoes the stage's side effects when nothing was committed.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import type { OwnerHistory } from "../../lib/core/types.js";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { LocalBackend } from "../../lib/storage/file/local-backend.js";
import { SessionStore } from "../../lib/storage/session/store.js";
import { portContract, recordFor } from "../helpers/port-contract.js";
import { hostSessionLog } from "../helpers/session-log.js";
import { isStateError } from "../../lib/core/errors.js";
import { tempDir } from "../helpers/temp-dir.js";

portContract({
	name: "file store (cwd)",
	dir: tempDir,
	open(dir) {
		const root = join(dir, "proj", ".pi", "state-flow");
		const make = () => new FileOwnerStore({ owner: "cwd", root, retention: 20, gitignore: true });
		return { store: make(), reader: make, bytes: () => readFileSync(join(root, "log.jsonl"), "utf8") };
	},
});

portContract({
	name: "Session store (pi SessionManager)",
	dir: tempDir,
	open(dir) {
		const sm = SessionManager.create(join(dir, "proj"), join(dir, "sessions"));
		const make = () => new SessionStore(hostSessionLog(sm), 20);
		return { store: make(), reader: make, bytes: () => JSON.stringify(sm.getBranch().filter((e) => e.type === "custom")) };
	},
});

describe("local multi-owner commit", () => {
	it("undoes the stage's side effects (abandon) when the write fails before the commit point, and commits nothing", async (t) => {
		const dir = tempDir(t);
		const root = join(dir, "agent", "state-flow", "global");
		const global = new FileOwnerStore({ owner: "global", root, retention: 20, gitignore: false });
		const cwd = new FileOwnerStore({ owner: "cwd", root: join(dir, "proj", ".pi", "state-flow"), retention: 20, gitignore: true });
		const local = new LocalBackend({
			files: { global, cwd },
			journalDir: join(dir, "agent", "state-flow", "journal"),
			retention: 20,
			lockTimeoutMs: 2_000,
			session: () => undefined,
		});
		let abandoned = 0;
		// Two durable owners go through a journal first; a journal file that cannot be written (its
		// name leads into a folder that does not exist) fails before the commit point.
		await assert.rejects(
			local.commitTogether([cwd, global], ([c, g]: readonly OwnerHistory[]) => ({
				records: [recordFor(cwd, c as OwnerHistory, { tactics: { x: 1 } }, "no/such"), recordFor(global, g as OwnerHistory, { tactics: { x: 1 } }, "no/such")],
				value: undefined,
				abandon: () => abandoned++,
			})),
			// The journal's own write failure, nothing else.
			(e: unknown) => isStateError(e) && e.code === "io" && /Cannot write `[^`]*\/journal\/no\/such\.json` \(ENOENT\)/.test(e.message),
		);
		assert.equal(abandoned, 1);
		assert.deepEqual([(await global.load()).seq, (await cwd.load()).seq], [0, 0]);
		const value = await local.commitTogether([cwd, global], ([c, g]: readonly OwnerHistory[]) => ({
			records: [recordFor(cwd, c as OwnerHistory, { tactics: { both: 1 } }, "both"), recordFor(global, g as OwnerHistory, { tactics: { both: 1 } }, "both")],
			value: "done",
			abandon: () => abandoned++,
		}));
		assert.equal(value, "done");
		assert.equal(abandoned, 1, "a committed stage is never abandoned");
		assert.deepEqual([(await global.load()).seq, (await cwd.load()).seq], [1, 1]);
	});
});
