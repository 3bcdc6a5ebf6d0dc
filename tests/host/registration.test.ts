/**
 * Real SDK: `patch_state` is re-registered only when the shape changes (flat ↔ scoped), the new
 * declaration reaches the model from the next run, Off withdraws both tools and every
 * injection without touching data, and the active tool set always follows the mode, whatever
 * another extension or the host restored.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { OWNERS, PLANES } from "../../lib/core/types.js";
import { agentDirWithConfig, bytesUnder, type Flow, withFlow, userTexts } from "./fixture.js";

function patchProps(flow: Flow, request: number): string[] {
	const tool = flow.seen[request]?.tools.find((t) => t.name === "patch_state");
	assert.ok(tool, `request ${request} declares patch_state`);
	return Object.keys((tool.parameters as { properties: Record<string, unknown> }).properties);
}

function toolNames(flow: Flow, request: number): string[] {
	return (flow.seen[request]?.tools ?? []).map((t) => t.name).sort();
}

describe("registration", () => {
	it("does not re-register for mode-only or same-arity owner changes", async () => {
		await withFlow({}, async (flow) => {
			assert.deepEqual(flow.registrations, { read_state: 1, patch_state: 1 });
			await flow.prompt("one", [{ text: "ok" }]);
			for (const cmd of ["/state passive", "/state owners global,cwd", "/state owners global,cwd,session", "/state active", "/state owners cwd,session"]) {
				await flow.command(cmd);
				await flow.prompt("again", [{ text: "ok" }]);
			}
			assert.deepEqual(flow.registrations, { read_state: 1, patch_state: 1 });
			for (let i = 0; i < flow.seen.length; i++) assert.deepEqual(patchProps(flow, i), [...OWNERS]);
		});
	});

	it("re-registers on a shape change, effective from the next run, and back", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("switch while streaming", [{ text: "thinking", before: () => flow.command("/state owners cwd").then(() => undefined) }]);
			// The command ran during the run: that run kept the scoped declaration.
			assert.deepEqual(patchProps(flow, 0), [...OWNERS]);
			assert.equal(flow.registrations.patch_state, 1);
			await flow.prompt("next", [{ text: "ok" }]);
			assert.deepEqual(patchProps(flow, 1), [...PLANES]);
			assert.equal(flow.registrations.patch_state, 2);
			await flow.command("/state owners session");
			await flow.prompt("same arity", [{ text: "ok" }]);
			assert.equal(flow.registrations.patch_state, 2);
			await flow.command("/state owners cwd,session");
			await flow.prompt("back", [{ text: "ok" }]);
			assert.deepEqual(patchProps(flow, 3), [...OWNERS]);
			assert.equal(flow.registrations.patch_state, 3);
			// Each registration got its own schema object: the flat and scoped declarations differ.
			assert.notDeepEqual(
				flow.seen[1]?.tools.find((t) => t.name === "patch_state")?.parameters,
				flow.seen[3]?.tools.find((t) => t.name === "patch_state")?.parameters,
			);
		});
	});
});

describe("off", () => {
	it("withdraws both tools, the protocol and the head, keeps data, and comes back on", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("write", [{ calls: [{ id: "w1", name: "patch_state", args: { cwd: { tactics: { keep: "me" } } } }] }, { text: "ok" }]);
			const before = bytesUnder(join(flow.harness.cwd, ".pi", "state-flow"));
			assert.match(before, /keep/);
			await flow.command("/state off");
			assert.deepEqual(
				flow.harness.session.getActiveToolNames().filter((n) => n.endsWith("_state")),
				[],
			);
			await flow.prompt("quiet", [{ text: "ok" }]);
			const off = flow.seen.length - 1;
			assert.deepEqual(toolNames(flow, off), []);
			assert.doesNotMatch(flow.seen[off]?.systemPrompt ?? "", /state_flow_protocol/);
			assert.ok(userTexts(flow.seen[off] as NonNullable<Flow["seen"][number]>).every((t) => !t.includes("state_flow_head")));
			assert.equal(bytesUnder(join(flow.harness.cwd, ".pi", "state-flow")), before);

			await flow.command("/state active");
			await flow.prompt("back", [{ calls: [{ id: "r1", name: "read_state", args: { path: "cwd.tactics.keep" } }] }, { text: "ok" }]);
			const on = flow.seen.length - 2;
			assert.deepEqual(toolNames(flow, on), ["patch_state", "read_state"]);
			assert.match(flow.seen[on]?.systemPrompt ?? "", /state_flow_protocol/);
			assert.equal(flow.results().r1?.text, '"me"');
		});
	});

	it("declares both tools in Active and neither in Off, whatever was restored at session start", async (t) => {
		// Another extension stands in for pi 1.6, which re-applies the tool set recorded in the
		// session file on resume: it flips our tools at session start, after State Flow's handler.
		const restoring = (names: string[]) => (pi: ExtensionAPI) => {
			pi.on("session_start", () => pi.setActiveTools([...pi.getActiveTools().filter((n) => !n.endsWith("_state")), ...names]));
		};
		await withFlow({ extraFactories: [restoring([])] }, async (dropped) => {
			await dropped.prompt("which tools", [{ text: "ok" }]);
			assert.deepEqual(toolNames(dropped, 0), ["patch_state", "read_state"]);
			await dropped.command("/state off");
			await dropped.command("/state active");
			await dropped.prompt("again", [{ text: "ok" }]);
			assert.deepEqual(toolNames(dropped, 1), ["patch_state", "read_state"]);
		});
		const agentDir = agentDirWithConfig(t, JSON.stringify({ mode: "off" }));
		await withFlow({ agentDir, extraFactories: [restoring(["read_state", "patch_state"])] }, async (added) => {
			await added.prompt("which tools", [{ text: "ok" }]);
			assert.deepEqual(toolNames(added, 0), []);
		});
	});
});

describe("off from the config file", () => {
	it("starts with both tools withdrawn and brings them back with /state active", async (t) => {
		const agentDir = agentDirWithConfig(t, JSON.stringify({ mode: "off" }));
		await withFlow({ agentDir }, async (flow) => {
			await flow.prompt("quiet", [{ text: "ok" }]);
			assert.deepEqual(toolNames(flow, 0), []);
			await flow.command("/state active");
			await flow.prompt("loud", [{ text: "ok" }]);
			assert.deepEqual(toolNames(flow, 1), ["patch_state", "read_state"]);
		});
	});
});
