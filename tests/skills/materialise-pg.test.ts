/**
 * Compiled Skills of a CWD owner in PostgreSQL (a real server): two machines, each with its
 * own agent folder and a checkout at its own path linked to one project, run real pi
 * sessions; a Skill compiled on one is written in the other's checkout at its session start,
 * and one compiled while the other's session runs is written and listed at its next prompt.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { KEY, commitOn, count, deployNotes, machines, open, releaseNotes, wrote } from "./materialise-fixture.js";

const server = serverForFile(testDatabase);

describe("compiled Skills of a CWD owner in PostgreSQL", () => {
	it("appear in the other machine's checkout at session start and, when compiled meanwhile, at its next prompt", async (t) => {
		const schema = server.schema();
		const { a, b } = machines(t, (m) => ({ owners: ["cwd"], database: server.url, databaseSchema: schema, links: { [realOrSelf(m.cwd)]: "acme/api" } }));
		await commitOn(a, { [KEY]: releaseNotes });
		const s = await open(b);
		try {
			const file = join(b.cwd, KEY);
			assert.deepEqual(readFileSync(file), readFileSync(join(a.cwd, KEY)));
			assert.deepEqual(s.skills(), [["release-notes", file]]);
			await s.prompt();
			await commitOn(a, { ".pi/skills/deploy-notes/SKILL.md": deployNotes });
			const seen = await s.prompt();
			const deploy = join(b.cwd, ".pi/skills/deploy-notes/SKILL.md");
			assert.deepEqual(readFileSync(deploy), readFileSync(join(a.cwd, ".pi/skills/deploy-notes/SKILL.md")));
			assert.equal(count(seen.systemPrompt, `<location>${deploy}</location>`), 1);
			assert.equal(wrote(s.notes).length, 2);
			assert.equal(existsSync(join(b.cwd, ".pi/state-flow")), false, "the CWD owner lives in the database, not in the checkout");
		} finally {
			s.dispose();
		}
	});
});
