/**
 * Real SDK admission (docs/spec.md §7): a call issued before a selection change, an Off/On round trip
 * or a session switch — each made while the model's answer is streaming — is refused with
 * nothing written; a cancelled call writes nothing; a fresh call afterwards succeeds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { acquireLock, onLockWait } from "../../lib/storage/file/lock.js";
import { bytesUnder, type Flow, withFlow } from "./fixture.js";
import { within } from "../helpers/soon.js";

const write = (id: string, value: string) => ({ id, name: "patch_state", args: { cwd: { tactics: { step: value } } } });

function cwdBytes(flow: Flow): string {
	return bytesUnder(join(flow.harness.cwd, ".pi", "state-flow"));
}

function assertStale(flow: Flow, id: string, why: RegExp): void {
	const r = flow.results()[id];
	assert.ok(r, `result of ${id}`);
	assert.equal(r.isError, true);
	assert.match(r.text, /Stale `patch_state` call refused/);
	assert.match(r.text, why);
	assert.match(r.text, /Nothing was written/);
	assert.match(r.text, /read_state/);
}

describe("stale calls", () => {
	it("refuses a call issued before a mode change made while streaming; a fresh call in the same run succeeds", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("go", [
				{ calls: [write("old", "stale")], before: async () => void (await flow.command("/state passive")) },
				{ calls: [write("fresh", "fresh")] },
				{ text: "ok" },
			]);
			assertStale(flow, "old", /mode changed from active to passive/);
			assert.match(
				flow.results().old?.text ?? "",
				/Now: passive, owners cwd\+session \(scoped locators and patch keys, e\.g\. `cwd\.tactics`; write only what the user explicitly asked for\)\./,
			);
			assert.equal(flow.results().fresh?.isError, false, flow.results().fresh?.text);
			assert.doesNotMatch(cwdBytes(flow), /stale/);
			assert.match(cwdBytes(flow), /fresh/);
		});
	});

	it("refuses a call issued before an owner change and never rebinds it; the next run succeeds with the new grammar", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("go", [{ calls: [write("old", "stale")], before: async () => void (await flow.command("/state owners cwd")) }, { text: "ok" }]);
			assertStale(flow, "old", /wanted owners changed from cwd\+session to cwd/);
			// Inside the running turn the model still has the scoped declaration: it is told so, not to retry writes.
			assert.match(
				flow.results().old?.text ?? "",
				/Now: active, owners cwd \(flat locators and patch keys, e\.g\. `tactics`\)\. `read_state` works at once; the matching `patch_state` declaration arrives with the next user prompt/,
			);
			assert.equal(cwdBytes(flow), "");
			await flow.prompt("again", [{ calls: [{ id: "flat", name: "patch_state", args: { tactics: { step: "flat" } } }] }, { text: "ok" }]);
			assert.equal(flow.results().flat?.isError, false, flow.results().flat?.text);
			assert.match(cwdBytes(flow), /flat/);
		});
	});

	it("never rebinds a flat call to the new sole owner after a same-arity change cwd → global", async () => {
		await withFlow({}, async (flow) => {
			await flow.command("/state owners cwd");
			await flow.prompt("go", [
				{
					calls: [{ id: "old", name: "patch_state", args: { tactics: { step: "meant-for-cwd" } } }],
					before: async () => void (await flow.command("/state owners global")),
				},
				{ text: "ok" },
			]);
			assertStale(flow, "old", /wanted owners changed from cwd to global/);
			assert.match(
				flow.results().old?.text ?? "",
				/Now: active, owners global \(flat locators and patch keys, e\.g\. `tactics`\)\. Re-read what you need with `read_state` and retry\./,
			);
			assert.equal(flow.registrations.patch_state, 2, "same arity: registered at load and for the flat shape only");
			assert.equal(cwdBytes(flow), "");
			assert.equal(bytesUnder(join(flow.harness.agentDir, "state-flow")), "");
		});
	});

	it("checks again right before commit: a change made while the call waits for the store lock refuses it", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("first", [{ calls: [write("first", "kept")] }, { text: "ok" }]);
			const before = cwdBytes(flow);
			const lockPath = join(flow.harness.cwd, ".pi", "state-flow", "lock");
			const lock = await acquireLock(lockPath, 5_000);
			// Admission passes at once; the commit then waits for the lock, and only then does the user switch to passive.
			let waited = false;
			const released = new Promise<void>((resolve, reject) => {
				const stop = onLockWait((path) => {
					if (path !== lockPath) return;
					stop();
					waited = true;
					flow
						.command("/state passive")
						.then(() => lock.release())
						.then(resolve, reject);
				});
			});
			await flow.prompt("go", [{ calls: [write("late", "late")] }, { text: "ok" }]);
			assert.ok(waited, "the commit waited for the lock, so the mode changed between admission and the commit");
			await within(released, "/state passive and the lock's release");
			assertStale(flow, "late", /mode changed from active to passive/);
			assert.equal(cwdBytes(flow), before);
		});
	});

	it("refuses every later call of the run once the user switched Off: the tools are withdrawn", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("go", [
				{ calls: [write("old", "stale")], before: async () => void (await flow.command("/state off")) },
				{ calls: [write("after", "after-off"), { id: "read", name: "read_state", args: { path: "cwd.tactics" } }] },
				{ text: "ok" },
			]);
			assertStale(flow, "old", /mode changed from active to off/);
			for (const id of ["after", "read"]) {
				const r = flow.results()[id];
				assert.equal(r?.isError, true, `${id}: ${r?.text}`);
				assert.match(r?.text ?? "", /State Flow is off/);
				assert.match(r?.text ?? "", /Nothing was written/);
			}
			assert.equal(cwdBytes(flow), "");
		});
	});

	it("refuses a call when Off and back On happened in between", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("go", [
				{
					calls: [write("old", "stale")],
					before: async () => {
						await flow.command("/state off");
						await flow.command("/state active");
					},
				},
				{ calls: [write("fresh", "fresh")] },
				{ text: "ok" },
			]);
			assertStale(flow, "old", /changed and changed back/);
			assert.equal(flow.results().fresh?.isError, false);
			assert.doesNotMatch(cwdBytes(flow), /stale/);
		});
	});

	it("refuses a call when the session switched while it was in flight", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("go", [
				{ calls: [write("old", "stale")], before: () => void flow.harness.session.sessionManager.newSession() },
				{ calls: [write("fresh", "fresh")] },
				{ text: "ok" },
			]);
			assertStale(flow, "old", /session changed/);
			assert.equal(flow.results().fresh?.isError, false, flow.results().fresh?.text);
			assert.doesNotMatch(cwdBytes(flow), /stale/);
		});
	});

	it("writes nothing when the call is cancelled before it commits", async () => {
		// Abort the run from the tool_call event, i.e. after admission input is known, before execute.
		const aborter = (pi: ExtensionAPI) => {
			pi.on("tool_call", (event, ctx) => {
				if (event.toolCallId === "cancel") ctx.abort();
			});
		};
		await withFlow({ extraFactories: [aborter] }, async (flow) => {
			await flow.prompt("go", [{ calls: [write("cancel", "cancelled")] }, { text: "ok" }]);
			const r = flow.results().cancel;
			assert.equal(r?.isError, true);
			assert.match(r?.text ?? "", /cancelled|abort/i);
			assert.equal(cwdBytes(flow), "");
		});
	});
});
