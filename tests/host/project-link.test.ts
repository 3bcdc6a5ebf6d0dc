/**
 * A repository linked on this machine, through the real pi SDK and the real PostgreSQL test
 * server (issues 25, 33): a pi session in a subfolder of another clone of it claims the link and
 * asks first, naming the clone's own files that a link stops reading; on yes it is linked
 * (`/state` names the link) and `/state` says loudly that those files are not read, instead of
 * reading either silently.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { closeDatabases } from "../../lib/storage/pg/placed.js";
import { configPath } from "../../lib/storage/placement/config.js";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { storeInRoot } from "../../lib/storage/project/project.js";
import { git, repo } from "../helpers/git-repo.js";
import { type TestDatabase, testDatabase } from "../helpers/pg-server.js";
import { piOn } from "./shared-fixture.js";

let server: TestDatabase;
before(async () => {
	server = await testDatabase();
});
after(async () => {
	await closeDatabases();
	await server.stop();
});

describe("a linked repository in pi", () => {
	it("another clone's subfolder asks first, naming its own files holding state; on yes it is linked and /state names them loudly", async (t) => {
		const { base, dir } = repo(t);
		const second = join(base, "second");
		git(base, "clone", "-q", dir, second);
		git(second, "remote", "set-url", "origin", "git@github.com:acme/api.git");
		const local = new FileOwnerStore({ owner: "cwd", root: storeInRoot(second), retention: 20, gitignore: true });
		const by = { kind: "system", reason: "before the link" } as const;
		const entry = {
			id: "l1",
			seq: 1,
			at: "2026-01-01T00:00:00.000Z",
			by,
			patch: { tactics: { local: 1 } },
			undo: { tactics: { local: null } },
			cascades: [],
			owners: ["cwd"],
		};
		await local.commit(entry as Parameters<FileOwnerStore["commit"]>[0], 0);
		const agentDir = join(base, "agent");
		mkdirSync(join(agentDir, "state-flow"), { recursive: true });
		const config = { database: server.url, databaseSchema: server.schema(), repoLinks: { "github.com/acme/api": "acme/api" } };
		writeFileSync(configPath(agentDir), `${JSON.stringify(config)}\n`);
		const pi = await piOn(t, { agentDir, cwd: join(second, "src") }, true);
		await pi.prompt("hi", [{ text: "ok" }]);
		assert.equal(pi.asked.length, 1);
		assert.match(pi.asked[0] as string, /Its local store \S*second\/\.pi\/state-flow holds 1 transition\(s\): it is NOT read while linked/);
		await pi.command("/state");
		const out = pi.output("status");
		assert.match(out, /^project .*second \(link acme\/api\)$/m);
		const words = out.replace(/\n\s*/g, " ");
		assert.match(
			words,
			/warning: this checkout is linked to project `acme\/api`, whose memory is read, but its local files in \S*second\/\.pi\/state-flow hold state of their own that is NOT read/,
		);
	});
});
