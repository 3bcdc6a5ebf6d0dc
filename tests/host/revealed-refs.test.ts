/**
 * Real SDK: stored `$ref` data that a later patch turns into a reference by deleting its
 * siblings is stored owner-qualified, is presented relative, and owns its target.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { bytesUnder, withFlow } from "./fixture.js";

describe("a reference revealed by deleting siblings", () => {
	it("is anchored to the owner and cascades with its intent", async () => {
		await withFlow({}, async (flow) => {
			await flow.command("/state owners cwd");
			await flow.prompt("plan", [
				{ calls: [{ id: "p1", name: "patch_state", args: { intents: { ship: { owns: { $ref: "lazy.plan", note: "draft" } } }, lazy: { plan: "body" } } }] },
				{ calls: [{ id: "p2", name: "patch_state", args: { intents: { ship: { owns: { note: null } } } } }] },
				{ calls: [{ id: "r1", name: "read_state", args: { path: "intents.ship" } }] },
				{ calls: [{ id: "p3", name: "patch_state", args: { intents: { ship: null } } }] },
				{ text: "done" },
			]);
			const { p1, p2, r1, p3 } = flow.results();
			assert.ok(p1 && p2 && r1 && p3);
			for (const r of [p1, p2, r1, p3]) assert.equal(r.isError, false, r.text);
			assert.deepEqual(JSON.parse(r1.text.split("\n").at(-1) as string), { owns: { $ref: "lazy.plan" } });
			assert.deepEqual(p3.details.cascades, [{ owner: "cwd", intent: "ship", targets: ["cwd.lazy.plan"] }]);
			assert.match(bytesUnder(join(flow.harness.cwd, ".pi", "state-flow")), /"\$ref":"cwd\.lazy\.plan"/);
		});
	});
});
