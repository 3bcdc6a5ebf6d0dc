/**
 * A repository linked on this machine, through the real pi SDK and the real PostgreSQL test
 * server (issue 25): a pi session in a subfolder of another clone of it is linked (`/state`
 * names the link) and, when that clone's own files hold state, `/state` says loudly that they
 * are not read, instead of reading either silently.
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
import { startFlow } from "./fixture.js";

let server: TestDatabase;
before(async () => {
	server = await testDatabase();
});
after(async () => {
	await closeDatabases();
	await server.stop();
});

describe("a linked repository in pi", () => {
	it("another clone's subfolder is linked, and its own files holding state are named loudly in /state", async (t) => {
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
		const flow = await startFlow({ cwd: join(second, "src"), agentDir });
		t.after(() => flow.dispose());
		const out = (await flow.command("/state")).join("\n");
		assert.match(out, /^project .*second \(link acme\/api\)$/m);
		const words = out.replace(/\n\s*/g, " ");
		assert.match(
			words,
			/warning: this checkout is linked to project `acme\/api`, whose memory is read, but its local files in \S*second\/\.pi\/state-flow hold state of their own that is NOT read/,
		);
	});
});
