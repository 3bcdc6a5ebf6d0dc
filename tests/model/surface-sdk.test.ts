/**
 * What the model sees, through the real pi SDK (faux provider): the head is frozen for a run,
 * never persisted and only the newest one is sent; all 7 selections × Active/Passive get the
 * right protocol variant, with bootstrap only while every wanted owner is empty.
 */

import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { allOwnerSelections } from "../../lib/host/session/selection.js";
import { HEAD_CLOSE, HEAD_OPEN } from "../../lib/model/head.js";
import { renderProtocol } from "../../lib/model/protocol.js";
import { withFlow, userTexts } from "../host/fixture.js";
import type { Captured } from "../helpers/pi-harness.js";
import { tempDir } from "../helpers/temp-dir.js";

/** Every head block the model saw on one request. */
function heads(c: Captured): string[] {
	const out: string[] = [];
	for (const text of userTexts(c)) {
		for (const m of text.matchAll(new RegExp(`${HEAD_OPEN}[\\s\\S]*?${HEAD_CLOSE}`, "g"))) out.push(m[0]);
	}
	return out;
}

/** The protocol block of one request's system prompt. */
function protocolOf(c: Captured | undefined): string {
	const m = /<state_flow_protocol>[\s\S]*<\/state_flow_protocol>/.exec(c?.systemPrompt ?? "");
	assert.ok(m, "the system prompt carries the protocol block");
	return m[0];
}

describe("model surface through the SDK", () => {
	it("keeps the head byte-identical within a run after writes, sends only the newest, and never persists it", async (t) => {
		const cwd = tempDir(t, "state-flow-cwd-");
		const sessionDir = tempDir(t, "state-flow-sessions-");
		await withFlow({ cwd, sessionManager: SessionManager.create(cwd, sessionDir) }, async (flow) => {
			await flow.prompt("plan the login fix", [
				{ calls: [{ id: "p1", name: "patch_state", args: { cwd: { tactics: { t1: "reproduce" } } } }] },
				{ calls: [{ id: "p2", name: "patch_state", args: { session: { intents: { login: { goal: "fix login" } } } } }] },
				{ text: "recorded" },
			]);
			const firstRun = flow.seen.slice();
			assert.equal(firstRun.length, 3);
			const h0 = heads(firstRun[0] as Captured);
			assert.equal(h0.length, 1, "one head per request");
			for (const c of firstRun) assert.deepEqual(heads(c), h0, `request ${c.call} sees the frozen head`);
			assert.equal(flow.results().p2?.isError, false);
			assert.ok(!(h0[0] as string).includes("reproduce"), "writes of the run are not in its head");

			await flow.prompt("next", [{ text: "ok" }]);
			const second = flow.seen.at(-1) as Captured;
			const h1 = heads(second);
			assert.equal(h1.length, 1, "only the newest head is sent");
			assert.notEqual(h1[0], h0[0]);
			assert.match(h1[0] as string, /cwd\.tactics: \{"t1":"reproduce"\}/);
			assert.match(h1[0] as string, /session\.intents: \{"login":\{"goal":"fix login"\}\}/);

			const file = flow.harness.session.sessionManager.getSessionFile();
			assert.ok(file !== undefined && file.startsWith(sessionDir));
			const persisted = readFileSync(file, "utf8");
			assert.ok(persisted.includes("plan the login fix"), "the session file holds the conversation");
			assert.ok(!persisted.includes(HEAD_OPEN), "no head in the session file");
			assert.ok(!persisted.includes("<state_flow_protocol>"), "no protocol in the session file");
		});
	});

	for (const wanted of allOwnerSelections()) {
		for (const mode of ["active", "passive"] as const) {
			it(`${mode} ${wanted.join("+")}: picks its protocol variant, bootstrap only while the wanted owners are empty`, async () => {
				await withFlow({}, async (flow) => {
					await flow.command(`/state owners ${wanted.join(",")}`);
					await flow.command(`/state ${mode}`);
					const flat = wanted.length === 1;
					const patch = flat ? { tactics: { t1: "first" } } : { [wanted[0] as string]: { tactics: { t1: "first" } } };
					await flow.prompt("start", [{ calls: [{ id: "p1", name: "patch_state", args: patch }] }, { text: "done" }]);
					assert.equal(flow.results().p1?.isError, false, flow.results().p1?.text);
					assert.equal(protocolOf(flow.seen[0]), renderProtocol({ mode, wanted, bootstrap: mode === "active" }));
					assert.equal(protocolOf(flow.seen[1]), protocolOf(flow.seen[0]), "the system prompt is stable within a run");
					await flow.prompt("again", [{ text: "ok" }]);
					assert.equal(protocolOf(flow.seen.at(-1)), renderProtocol({ mode, wanted, bootstrap: false }));
				});
			});
		}
	}

	it("stays in bootstrap while only an excluded owner has state", async () => {
		await withFlow({}, async (flow) => {
			await flow.command("/state owners global");
			await flow.prompt("remember globally", [{ calls: [{ id: "g1", name: "patch_state", args: { strategy: { style: "terse" } } }] }, { text: "done" }]);
			assert.equal(flow.results().g1?.isError, false, flow.results().g1?.text);
			await flow.command("/state owners cwd,session");
			await flow.prompt("project work", [{ text: "ok" }]);
			const last = flow.seen.at(-1) as Captured;
			assert.equal(protocolOf(last), renderProtocol({ mode: "active", wanted: ["cwd", "session"], bootstrap: true }));
			assert.ok(!(heads(last)[0] as string).includes("terse"), "the excluded owner's state is not shown");
		});
	});

	it("never reports the run's own writes as another process's, even when retention folds them at once", async (t) => {
		const agentDir = tempDir(t, "state-flow-agent-");
		mkdirSync(join(agentDir, "state-flow"));
		writeFileSync(join(agentDir, "state-flow", "config.json"), JSON.stringify({ retention: 0 }));
		await withFlow({ agentDir }, async (flow) => {
			const other = openStoresAt({ agentDir, cwd: flow.harness.cwd, retention: 0 });
			await flow.prompt("work", [
				{ calls: [{ id: "p1", name: "patch_state", args: { cwd: { tactics: { a: 1 } } } }] },
				{ calls: [{ id: "p2", name: "patch_state", args: { cwd: { tactics: { b: 2 } } } }] },
				{
					calls: [{ id: "r1", name: "read_state", args: { path: "cwd.tactics" } }],
					before: async () => {
						await other.commit({ cwd: { tactics: { c: 3 } } }, { id: "other-1", at: "2026-11-30T09:30:00.000Z", by: { kind: "command", command: "test" } });
					},
				},
				{ text: "done" },
			]);
			const { p1, p2, r1 } = flow.results();
			assert.equal(p1?.isError, false, p1?.text);
			assert.doesNotMatch(p1?.text ?? "", /another process/);
			assert.doesNotMatch(p2?.text ?? "", /another process/);
			assert.match(r1?.text ?? "", /Note: cwd was changed by another process since this run's head \(1 transition, now seq 3; 1 no longer retained\)\./);
		});
	});

	it("tells the model in tool results which shared paths another writer changed since the head", async () => {
		await withFlow({}, async (flow) => {
			// A second, independent writer on the same files, as another pi process would be.
			const other = openStoresAt({ agentDir: flow.harness.agentDir, cwd: flow.harness.cwd });
			await flow.prompt("work", [
				{ calls: [{ id: "p1", name: "patch_state", args: { cwd: { tactics: { mine: "step" } } } }] },
				{
					calls: [{ id: "r1", name: "read_state", args: { path: "cwd.tactics" } }],
					before: async () => {
						await other.commit(
							{ cwd: { tactics: { theirs: { body: "x" } } } },
							{ id: "other-1", at: "2026-11-30T09:30:00.000Z", by: { kind: "command", command: "test" } },
						);
					},
				},
				{ text: "done" },
			]);
			const { p1, r1 } = flow.results();
			assert.ok(p1 && r1);
			assert.doesNotMatch(p1.text, /another process/, "own writes are acknowledged, not noticed");
			assert.match(r1.text, /Note: cwd was changed by another process since this run's head \(1 transition, now seq 2\): cwd\.tactics\.theirs\.body\./);
			assert.deepEqual(heads(flow.seen[2] as Captured), heads(flow.seen[0] as Captured), "the head stays frozen");
		});
	});
});
