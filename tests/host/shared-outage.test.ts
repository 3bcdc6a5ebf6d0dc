/**
 * A database outage under a running pi session (real SDK, faux model, an embedded PostgreSQL
 * stopped the way `pg_ctl stop -m immediate` stops it, then started again): while it is down
 * the head shows the other owners and one line for the shared one, calls on the other owners
 * work and calls on the shared one are refused as unavailable; after the restart the same
 * session carries on, no restart of pi. Always an embedded server: a system one cannot be stopped.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { updateConfig } from "../../lib/storage/placement/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { serverForFile, startEmbeddedPostgres } from "../helpers/pg-server.js";
import { machine, piOn } from "./shared-fixture.js";

const server = serverForFile(startEmbeddedPostgres);

describe("the database stops and restarts under a running session", () => {
	it("reports the shared owner unavailable while the others keep working, then recovers by itself", async (t) => {
		const a = machine(t, { database: server.url, databaseSchema: "outage_host" });
		await updateConfig(a.agentDir, { links: { [realOrSelf(a.cwd)]: "acme/api" } });
		const pi = await piOn(t, a);
		await pi.prompt("before", [
			{ calls: [{ id: "p1", name: "patch_state", args: { cwd: { intents: { kept: "written before the outage" } } } }] },
			{ text: "ok" },
		]);
		assert.equal(pi.results().p1?.isError, false);
		await server.stopImmediate();
		await pi.prompt("during", [
			{
				calls: [
					{ id: "p2", name: "patch_state", args: { session: { tactics: { t: "during the outage" } } } },
					{ id: "p3", name: "patch_state", args: { cwd: { tactics: { t: "not written" } } } },
				],
			},
			{ text: "ok" },
		]);
		const password = new URL(server.url).password;
		assert.match(
			pi.head(),
			/^# cwd unavailable, not shown \(calls on it are refused until it is back\): PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres cannot be reached/m,
		);
		assert.match(pi.head(), /^# session seq 0 \(empty\)$/m);
		const during = pi.results();
		assert.equal(during.p2?.isError, false);
		assert.equal(during.p3?.isError, true);
		assert.match(during.p3?.text ?? "", /unavailable: .*Nothing was written and nothing is queued/);
		await pi.command("/state");
		assert.match(pi.output("status"), /^ {2}cwd {6}wanted {6}unavailable$/m);
		assert.ok(!JSON.stringify(pi.session.messages).includes(password), "the password is never shown");
		await server.restart();
		await pi.prompt("after", [{ calls: [{ id: "p4", name: "patch_state", args: { cwd: { tactics: { t: "after the restart" } } } }] }, { text: "ok" }]);
		assert.match(pi.head(), /written before the outage/);
		assert.doesNotMatch(pi.head(), /not written/);
		assert.equal(pi.results().p4?.isError, false);
		await pi.prompt("check", [{ text: "ok" }]);
		assert.match(pi.head(), /after the restart/);
		assert.match(pi.head(), /during the outage/);
	});
});
