/**
 * The database stopped (`pg_ctl stop -m immediate`: SIGQUIT to the postmaster) under a running
 * pi session process and started again: calls touching the shared CWD owner fail with a clear
 * `unavailable` error that never holds the password, the Global file owner and the Session keep
 * working, nothing is queued, and after the restart the next call succeeds in the same pi
 * process. The head and `/state` during the outage say which owner is unavailable and where
 * each one lives. A wrong password is refused the same way and shown nowhere. Always an embedded server (a system PostgreSQL cannot be stopped by a test).
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Owner } from "../../lib/core/types.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { storePaths } from "../../lib/storage/project/paths.js";
import { serverForFile, startEmbeddedPostgres } from "../helpers/pg-server.js";
import { type Machine, PROJECT, type Pi, type ToolOutcome, headOf, machine, ok, startPi } from "./fleet.js";

const server = serverForFile(startEmbeddedPostgres);

const OWNERS: Owner[] = ["global", "cwd", "session"];

/** The URL as State Flow may show it: no password. */
function shownUrl(): RegExp {
	const u = new URL(server.url);
	return new RegExp(`postgres://${u.username}@${u.hostname.replace(/\./g, "\\.")}:${u.port}/postgres`);
}

/** A tool result that must be the clear `unavailable` refusal of the shared CWD owner. */
function unavailable(results: Record<string, ToolOutcome>, id: string): void {
	const r = results[id];
	assert.ok(r !== undefined, `no result for ${id}`);
	assert.equal(r.isError, true, `${id} should fail while the server is down: ${r.text}`);
	assert.match(r.text, /`cwd` owner \(project `acme\/api`\) unavailable/, id);
	assert.match(r.text, shownUrl(), `${id} names the server without its password`);
	assert.match(r.text, /cannot be reached/, id);
	assert.match(r.text, /Nothing was written/, id);
}

function parsed(text: string): Record<string, unknown> {
	return JSON.parse(text.split("\n")[0] as string) as Record<string, unknown>;
}

describe("the database stopped and restarted under a running pi session", () => {
	it("mid-run: calls on the shared owner fail as unavailable, Global and Session keep working, and after the restart the same run's next call succeeds", async (t) => {
		const m = machine(t, server.url, `outage_${process.pid}_run`, { owners: OWNERS });
		const password = new URL(server.url).password;
		assert.ok(password.length > 0, "the test server has a password");
		const { pi } = await startPi(t, m, { tag: "o" });
		const patch = (id: string, args: Record<string, unknown>) => ({ calls: [{ id, name: "patch_state", args }] });
		const read = (id: string, path: string) => ({ calls: [{ id, name: "read_state", args: { path } }] });
		const running = pi.begin("work through an outage", [
			patch("up", { cwd: { tactics: { before: 1 } } }),
			{ pause: "stop", ...patch("cwd-down", { cwd: { tactics: { during: 1 } } }) },
			read("cwd-read-down", "cwd.tactics"),
			patch("session-down", { session: { tactics: { during: 1 } } }),
			read("session-read-down", "session.tactics"),
			patch("global-down", { global: { tactics: { during: 1 } } }),
			// A transition that also needs the unreachable owner writes nothing anywhere.
			patch("both-down", { global: { tactics: { both: 1 } }, cwd: { tactics: { both: 1 } } }),
			read("global-read-down", "global.tactics"),
			{ pause: "restart", ...read("cwd-read-up", "cwd.tactics") },
			patch("cwd-up", { cwd: { tactics: { after: 1 } } }),
			{ text: "done" },
		]);
		await pi.pausedAt("stop");
		await server.stopImmediate();
		try {
			pi.resume("stop");
			await pi.pausedAt("restart");
		} finally {
			// Up again whatever happened: the other tests use the same server.
			await server.restart();
		}
		pi.resume("restart");
		const { results } = await running;

		ok(results, "up");
		unavailable(results, "cwd-down");
		unavailable(results, "cwd-read-down");
		unavailable(results, "both-down");
		ok(results, "session-down");
		ok(results, "global-down");
		// Back up: the same pi process reconnects by itself; nothing of the outage was queued.
		assert.deepEqual(parsed(ok(results, "cwd-read-up")), { before: 1 });
		ok(results, "cwd-up");
		await pi.exit();
		assert.ok(!pi.output.includes(password), "the password appears nowhere in what pi showed or logged");

		const stores = openStoresAt({ agentDir: m.agentDir, cwd: m.cwd, placement: placementFor(m.config, m.cwd, {}) });
		const h = await stores.load("cwd");
		assert.deepEqual(h.state.tactics, { before: 1, after: 1 });
		assert.equal(h.seq, 2);
		assert.deepEqual((await stores.load("global")).state.tactics, { during: 1 }, "the refused transition left nothing in Global");
		// Reading the owners that are up works during the outage too.
		assert.deepEqual(parsed(ok(results, "session-read-down")), { during: 1 });
		assert.deepEqual(parsed(ok(results, "global-read-down")), { during: 1 });
	});

	/** A session on a machine with something in every owner, then the server stopped; restarted after `fn`. */
	async function duringOutage(t: { after(fn: () => void | Promise<void>): void }, name: string, fn: (pi: Pi, m: Machine) => Promise<void>): Promise<Pi> {
		const m = machine(t, server.url, `outage_${process.pid}_${name}`, { owners: OWNERS });
		const { pi } = await startPi(t, m, { tag: name });
		const wrote = await pi.prompt("remember", [
			{
				calls: [
					{
						id: "w",
						name: "patch_state",
						args: {
							global: { intents: { tabs: { goal: "global-intent-tabs" } } },
							cwd: { intents: { ship: { goal: "cwd-intent-ship" } } },
							session: { intents: { fix: { goal: "session-intent-fix" } } },
						},
					},
				],
			},
			{ text: "ok" },
		]);
		ok(wrote.results, "w");
		await server.stopImmediate();
		try {
			await fn(pi, m);
		} finally {
			await server.restart();
		}
		return pi;
	}

	it("between prompts: the head shows the owners that can be read and says the shared one is unavailable; after the restart it is whole again", async (t) => {
		const pi = await duringOutage(t, "head", async (pi) => {
			const down = await pi.prompt("what do we know?", [{ text: "some of it" }]);
			const head = headOf(down.requests[0]);
			assert.match(head, /global-intent-tabs/, "Global is still in the head");
			assert.match(head, /session-intent-fix/, "Session is still in the head");
			assert.doesNotMatch(head, /cwd-intent-ship/);
			assert.match(head, /cwd[^\n]*unavailable/, "the head says the shared owner is unavailable");
		});
		const up = await pi.prompt("and now?", [{ text: "all of it" }]);
		const head = headOf(up.requests[0]);
		for (const v of ["global-intent-tabs", "cwd-intent-ship", "session-intent-fix"]) assert.match(head, new RegExp(v));
		await pi.exit();
		assert.ok(!pi.output.includes(new URL(server.url).password), "the password appears nowhere in what pi showed or logged");
	});

	it("between prompts: /state says where each owner lives (postgres and the URL without its password, the project id) and that the shared one is unavailable", async (t) => {
		const pi = await duringOutage(t, "status", async (pi, m) => {
			const shown = (await pi.command("/state")).join("\n");
			for (const o of OWNERS) assert.match(shown, new RegExp(o, "i"));
			assert.ok(shown.includes(storePaths(m.agentDir, m.cwd).globalRoot), "/state names the Global owner's folder");
			assert.match(shown, /postgres/);
			assert.match(shown, shownUrl(), "/state names the server without its password");
			assert.match(shown, new RegExp(PROJECT.replace("/", "\\/")), "/state names the project id");
			assert.match(shown, /unavailable/, "/state says the shared owner is unavailable");
		});
		await pi.exit();
		assert.ok(!pi.output.includes(new URL(server.url).password), "the password appears nowhere in what pi showed or logged");
	});
});

describe("wrong credentials under a running pi session", () => {
	it("a wrong password in the config: calls on the shared owner say the credentials were refused, the password shows nowhere, the other owners work", async (t) => {
		const wrong = new URL(server.url);
		wrong.password = "wrong-pw-7f3a9c";
		const m = machine(t, wrong.toString(), `outage_${process.pid}_auth`, { owners: OWNERS });
		const { pi } = await startPi(t, m, { tag: "auth" });
		const { results } = await pi.prompt("try", [
			{ calls: [{ id: "cwd", name: "patch_state", args: { cwd: { tactics: { x: 1 } } } }] },
			{ calls: [{ id: "session", name: "patch_state", args: { session: { tactics: { x: 1 } } } }] },
			{ calls: [{ id: "global", name: "patch_state", args: { global: { tactics: { x: 1 } } } }] },
			{ text: "ok" },
		]);
		const r = results.cwd;
		assert.equal(r?.isError, true, r?.text);
		assert.match(r?.text ?? "", /`cwd` owner \(project `acme\/api`\) unavailable: PostgreSQL at \S+ refused the credentials/);
		ok(results, "session");
		ok(results, "global");
		await pi.command("/state");
		await pi.exit();
		assert.ok(!pi.output.includes("wrong-pw-7f3a9c"), "the password appears nowhere in tool results, notices, /state or logs");
	});
});
