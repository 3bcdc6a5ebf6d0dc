/**
 * Damaged stores under a running pi session (real SDK, faux model): a CWD record changed in
 * place or a CWD log cut short makes that owner's tools answer with an error naming the store
 * and `state-flow doctor`, writes nothing more to it, and leaves the Session owner working.
 * The same damage through the storage API and the CLI is in damaged-store.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { flowDirs, userTexts, withFlow } from "../host/fixture.js";
import { HEAD_OPEN } from "../../lib/model/head.js";
import type { Captured } from "../helpers/pi-harness.js";

describe("damaged stores through a live pi session", () => {
	it("a CWD record changed in place: tools answer with an error naming the store and doctor; Session keeps working", async (t) => {
		const { cwd: proj, agentDir: agent } = flowDirs(t, "state-flow-damage-pi-");
		await withFlow({ cwd: proj, agentDir: agent }, async (flow) => {
			await flow.prompt("one", [{ calls: [{ id: "w1", name: "patch_state", args: { cwd: { tactics: { a: "first value" } } } }] }, { text: "ok" }]);
			assert.equal(flow.results().w1?.isError, false, flow.results().w1?.text);
			const log = join(proj, ".pi", "state-flow", "log.jsonl");
			utimesSync(log, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
			writeFileSync(log, readFileSync(log, "utf8").replace("first value", "FIRST VALUE"));
			await flow.prompt("two", [
				{
					calls: [
						{ id: "w2", name: "patch_state", args: { cwd: { tactics: { b: 1 } } } },
						{ id: "r2", name: "read_state", args: { path: "cwd.tactics.a" } },
						{ id: "s2", name: "patch_state", args: { session: { tactics: { s: 1 } } } },
					],
				},
				{ text: "ok" },
			]);
			const r = flow.results();
			for (const id of ["w2", "r2"]) {
				assert.equal(r[id]?.isError, true, `${id}: ${r[id]?.text}`);
				assert.ok(r[id]?.text.includes(log), `${id} must name the store: ${r[id]?.text}`);
				assert.match(r[id]?.text ?? "", /state-flow doctor/);
			}
			assert.equal(r.s2?.isError, false, r.s2?.text);
			assert.ok(!readFileSync(log, "utf8").includes('"b":1'), "nothing more was written to the damaged store");
			// The head of that prompt still shows the other owners, and names the damaged one and what to do.
			const head = userTexts(flow.seen.at(-1) as Captured).find((x) => x.startsWith(HEAD_OPEN)) ?? "";
			assert.match(
				head,
				/^# cwd damaged, not shown \(calls on it are refused until it is repaired; the user runs `state-flow doctor`\): State store file `[^`]*log\.jsonl` is damaged/m,
			);
			assert.match(head, /^# session seq 0 \(empty\)$/m, "the other owner is still in the head (frozen at the prompt, before s2)");
			assert.doesNotMatch(head, /FIRST VALUE|first value/);
		});
	});
});

describe("a truncated store through a live pi session", () => {
	it("a CWD log cut short under a running session: its tools refuse and name doctor; nothing more is written", async (t) => {
		const { cwd: proj, agentDir: agent } = flowDirs(t, "state-flow-truncate-pi-");
		const { truncateSync, statSync } = await import("node:fs");
		await withFlow({ cwd: proj, agentDir: agent }, async (flow) => {
			await flow.prompt("one", [{ calls: [{ id: "w1", name: "patch_state", args: { cwd: { tactics: { a: 1, b: 2 } } } }] }, { text: "ok" }]);
			await flow.prompt("two", [{ calls: [{ id: "w2", name: "patch_state", args: { cwd: { tactics: { c: 3 } } } }] }, { text: "ok" }]);
			const log = join(proj, ".pi", "state-flow", "log.jsonl");
			const size = statSync(log).size;
			truncateSync(log, size - 25);
			await flow.prompt("three", [
				{
					calls: [
						{ id: "w3", name: "patch_state", args: { cwd: { tactics: { d: 4 } } } },
						{ id: "s3", name: "patch_state", args: { session: { tactics: { s: 1 } } } },
					],
				},
				{ text: "ok" },
			]);
			const r = flow.results();
			assert.equal(r.w3?.isError, true, r.w3?.text);
			assert.ok(r.w3?.text.includes(log), r.w3?.text);
			assert.match(r.w3?.text ?? "", /shorter than|state-flow doctor/);
			assert.equal(r.s3?.isError, false, r.s3?.text);
			assert.equal(statSync(log).size, size - 25, "nothing was cut or appended");
		});
	});
});
