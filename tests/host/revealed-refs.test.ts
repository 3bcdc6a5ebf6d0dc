/**
 * Real SDK: a `$ref` object with other members is refused naming the field and nothing is
 * written (it would be stored as data, owning nothing); the merge-patch form that deletes the
 * siblings is a reference: stored owner-qualified, presented relative, owning its target.
 * (Data stored that way by older builds and revealed later: tests/core/stage.test.ts.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { bytesUnder, withFlow } from "./fixture.js";

describe("a `$ref` beside other members", () => {
	it("is refused; the reference alone is anchored to the owner and cascades with its intent", async () => {
		await withFlow({}, async (flow) => {
			await flow.command("/state owners cwd");
			await flow.prompt("plan", [
				{ calls: [{ id: "p0", name: "patch_state", args: { intents: { ship: { owns: { $ref: "lazy.plan", note: "draft" } } }, lazy: { plan: "body" } } }] },
				{ calls: [{ id: "p1", name: "patch_state", args: { intents: { ship: { owns: { note: "draft" } } }, lazy: { plan: "body" } } }] },
				{ calls: [{ id: "p2", name: "patch_state", args: { intents: { ship: { owns: { $ref: "lazy.plan", note: null } } } } }] },
				{ calls: [{ id: "r1", name: "read_state", args: { path: "intents.ship" } }] },
				{ calls: [{ id: "p3", name: "patch_state", args: { intents: { ship: null } } }] },
				{ text: "done" },
			]);
			const { p0, p1, p2, r1, p3 } = flow.results();
			assert.ok(p0 && p1 && p2 && r1 && p3);
			assert.equal(p0.isError, true);
			assert.match(p0.text, /`intents\.ship\.owns` has `\$ref` beside other members \(`note`\)/);
			for (const r of [p1, p2, r1, p3]) assert.equal(r.isError, false, r.text);
			// p0 wrote nothing: p1 still creates both entries.
			assert.deepEqual([...(p1.details.changed as string[])].sort(), ["/cwd/intents/ship", "/cwd/lazy/plan"]);
			assert.deepEqual(JSON.parse(r1.text.split("\n").at(-1) as string), { owns: { $ref: "lazy.plan" } });
			assert.deepEqual(p3.details.cascades, [{ owner: "cwd", intent: "ship", targets: ["cwd.lazy.plan"] }]);
			assert.match(bytesUnder(join(flow.harness.cwd, ".pi", "state-flow")), /"\$ref":"cwd\.lazy\.plan"/);
		});
	});
});
