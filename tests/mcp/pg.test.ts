/**
 * A team's memory over MCP: two checkouts on two "machines" (agent directories with their own
 * config) linked to one project in a real PostgreSQL (started by the test), each served by its
 * own `state-flow mcp` to its own client. What one writes the other reads; concurrent writes
 * all land; the precondition holds across machines; no output carries the database password.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setup, sharedServer } from "../cli/shared-fixture.js";
import { call, ok, stdioServer } from "./fixture.js";

const server = sharedServer();

describe("state-flow mcp on a linked project in PostgreSQL", () => {
	it("serves one project to two clients on two machines", async (t) => {
		// Few transitions kept (the default is 200), so an early seq is folded by the end.
		const a = setup(t, undefined, { retention: 20 });
		const b = setup(t, a.schema, { retention: 20 });
		for (const e of [a, b]) {
			const linked = e.run(["link", "acme/api"]);
			assert.equal(linked.code, 0, linked.stderr);
		}
		const env = { STATE_FLOW_DATABASE_URL: server.url };
		const one = await stdioServer({ cwd: a.cwd, agentDir: a.agent, env });
		const two = await stdioServer({ cwd: b.cwd, agentDir: b.agent, env });
		try {
			const w = await ok(one.client, "patch_state", { tactics: { shared: "from machine A" } });
			assert.deepEqual(w.structured?.seen, { cwd: 1 });
			const r = await ok(two.client, "read_state", { path: "tactics.shared" });
			assert.match(r.text, /from machine A/);
			const early = r.structured?.seen as Record<string, number>;

			await Promise.all(
				[one, two].map(async (s, m) => {
					for (let i = 0; i < 10; i++) await ok(s.client, "patch_state", { tactics: { [`m${m}w${i}`]: i } });
				}),
			);
			const listed = await ok(two.client, "read_state", { path: "tactics", projection: "keys" });
			const keys = JSON.parse(listed.text.split("\n")[0] as string) as string[];
			assert.equal(keys.length, 21, keys.join(","));
			const seen = listed.structured?.seen as Record<string, number>;
			assert.deepEqual(seen, { cwd: 21 });

			await ok(one.client, "patch_state", { tactics: { shared: "changed on A" } });
			const refused = await call(two.client, "patch_state", { seen, tactics: { shared: "B's stale overwrite" } });
			assert.equal(refused.isError, true);
			assert.match(refused.text, /tactics\.shared: "changed on A"/);
			// A seq older than the retained history (this config keeps few transitions): refused, never guessed.
			const folded = await call(two.client, "patch_state", { seen: early, tactics: { other: 1 } });
			assert.equal(folded.isError, true);
			assert.match(folded.text, /which keys changed is not known any more/);
			assert.match((await ok(one.client, "state_head")).text, /changed on A/);
			const password = decodeURIComponent(new URL(server.url).password);
			for (const s of [one, two]) assert.ok(!s.stderr().includes(password), "no output carries the password");
		} finally {
			await one.close();
			await two.close();
		}
	});
});
