/**
 * Real SDK, all 7 owner selections × Active/Passive: a patch → read round trip, the tool
 * declarations the model sees (shape, byte identity across same-arity selections), and where
 * the bytes land (Global folder, CWD folder, Session entries) — and nowhere else.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { OWNERS, type Owner, PLANES } from "../../lib/core/types.js";
import { allOwnerSelections } from "../../lib/host/session/selection.js";
import { bytesUnder, type Flow, withFlow, userTexts } from "./fixture.js";

function declaration(flow: Flow, call: number, name: string): string {
	const tool = flow.seen[call]?.tools.find((t) => t.name === name);
	assert.ok(tool, `request ${call} declares ${name}`);
	return JSON.stringify(tool);
}

function sessionBytes(flow: Flow): string {
	return JSON.stringify(flow.harness.session.sessionManager.getEntries().filter((e) => e.type === "custom"));
}

describe("all selections × active/passive", () => {
	const decls = { flat: new Set<string>(), scoped: new Set<string>(), readParams: new Set<string>() };

	for (const owners of allOwnerSelections()) {
		for (const mode of ["active", "passive"] as const) {
			it(`${mode} ${owners.join("+")}: patch then read round-trips and lands only in the wanted stores`, async () => {
				await withFlow({}, async (flow) => {
					await flow.command(`/state owners ${owners.join(",")}`);
					await flow.command(`/state ${mode}`);
					const flat = owners.length === 1;
					const marker = (o: Owner) => `marker-${o}-${mode}`;
					const patch: Record<string, unknown> = flat
						? { tactics: { k: marker(owners[0] as Owner) } }
						: Object.fromEntries(owners.map((o) => [o, { tactics: { k: marker(o) } }]));
					const read = flat ? { path: "tactics.k" } : { paths: owners.map((o) => `${o}.tactics.k`) };
					await flow.prompt("remember", [
						{ calls: [{ id: "p1", name: "patch_state", args: patch }] },
						{ calls: [{ id: "r1", name: "read_state", args: read }] },
						{ text: "done" },
					]);
					const results = flow.results();
					const p1 = results.p1;
					const r1 = results.r1;
					assert.ok(p1 && r1);
					assert.equal(p1.isError, false, p1.text);
					assert.deepEqual(p1.details.scopes, owners);
					assert.deepEqual(
						p1.details.changed,
						owners.map((o) => `/${o}/tactics/k`),
					);
					assert.equal(p1.details.transitionId, "t-0001");
					assert.match(p1.text, /Committed transition t-0001/);
					if (flat) {
						assert.match(p1.text, /changed: \/tactics\/k/);
						assert.doesNotMatch(p1.text, new RegExp(`/${owners[0]}/`));
					}
					assert.equal(r1.isError, false, r1.text);
					const expected = flat ? marker(owners[0] as Owner) : owners.map(marker);
					assert.deepEqual(JSON.parse(r1.text.split("\n").at(-1) as string), expected);
					assert.deepEqual(
						r1.details.canonical,
						owners.map((o) => `${o}.tactics.k`),
					);

					// What the model saw: protocol in the system prompt, head next to the prompt, the right shape.
					const first = flow.seen[0];
					assert.ok(first);
					assert.match(first.systemPrompt, /<state_flow_protocol>/);
					assert.ok(userTexts(first).some((t) => t.includes("<state_flow_head>")));
					const params = JSON.parse(declaration(flow, 0, "patch_state")).parameters as { properties: Record<string, unknown> };
					assert.deepEqual(Object.keys(params.properties), flat ? [...PLANES] : [...OWNERS]);
					decls[flat ? "flat" : "scoped"].add(declaration(flow, 0, "patch_state"));
					decls.readParams.add(JSON.stringify(JSON.parse(declaration(flow, 0, "read_state")).parameters));

					// Bytes: each marker in its own store only.
					const stores: Record<Owner, string> = {
						global: bytesUnder(join(flow.harness.agentDir, "state-flow", "global")),
						cwd: bytesUnder(join(flow.harness.cwd, ".pi", "state-flow")),
						session: sessionBytes(flow),
					};
					for (const store of OWNERS) {
						for (const o of OWNERS) {
							const present = stores[store].includes(marker(o));
							assert.equal(present, store === o && owners.includes(o), `${marker(o)} in ${store} store`);
						}
					}
				});
			});
		}
	}

	it("declares one flat and one scoped patch_state, byte-identical across same-arity selections, and one read grammar", () => {
		assert.equal(decls.flat.size, 1);
		assert.equal(decls.scoped.size, 1);
		assert.equal(decls.readParams.size, 1);
	});
});

describe("excluded owners", () => {
	it("refuses reads and writes of an owner that is not wanted and keeps references to it inert", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("go", [
				{
					calls: [
						{ id: "w-global", name: "patch_state", args: { global: { tactics: { x: 1 } } } },
						{ id: "r-global", name: "read_state", args: { path: "global.tactics" } },
						{ id: "w-ref", name: "patch_state", args: { cwd: { intents: { i: { uses: { $ref: "global.lazy.notes" } } } } } },
					],
				},
				{ calls: [{ id: "r-ref", name: "read_state", args: { path: "cwd.intents.i" } }] },
				{ text: "ok" },
			]);
			const r = flow.results();
			assert.equal(r["w-global"]?.isError, true);
			assert.match(r["w-global"]?.text ?? "", /global/);
			assert.equal(r["r-global"]?.isError, true);
			assert.match(r["r-global"]?.text ?? "", /global/);
			assert.equal(r["w-ref"]?.isError, false, r["w-ref"]?.text);
			assert.deepEqual(JSON.parse(r["r-ref"]?.text ?? "null"), { uses: { $ref: "global.lazy.notes" } });
			assert.equal(bytesUnder(join(flow.harness.agentDir, "state-flow", "global")), "");
		});
	});
});

describe("read errors in the model's own spelling", () => {
	it("a flat model's failed read names the locator as it wrote it, never the canonical owner prefix", async () => {
		await withFlow({}, async (flow) => {
			await flow.command("/state owners cwd");
			await flow.prompt("go", [
				{ calls: [{ id: "w", name: "patch_state", args: { tactics: { t: "x" } } }] },
				{ calls: [{ id: "r", name: "read_state", args: { path: "tactics.nope" } }] },
				{ text: "ok" },
			]);
			const r = flow.results()["r"];
			assert.equal(r?.isError, true);
			assert.match(r?.text ?? "", /`tactics\.nope`/);
			assert.doesNotMatch(r?.text ?? "", /cwd\./);
		});
	});
});
