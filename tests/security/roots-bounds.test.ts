/**
 * A co-installed extension is not trusted to be small or fast (issue 24), in a real pi session:
 * root names that every JavaScript object already has are refused; the number of roots and the
 * bytes they add to every request are bounded; a schema pattern cannot stall a commit (RE2,
 * linear time: `^(a+)+$` on 49 characters answers at once) and one RE2 cannot run is refused at
 * registration, naming it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ExtensionFactory } from "@mariozechner/pi-coding-agent";
import { type RootSpec, type RootStatus, registerRoot } from "../../lib/api.js";
import { MAX_ROOTS, MAX_ROOTS_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH } from "../../lib/host/roots/spec.js";
import { withFlow } from "../host/fixture.js";

const spec = (name: string, schema: Record<string, unknown> = { type: "object" }): RootSpec => ({
	name,
	extension: `ext-${name}`,
	description: `root ${name}`,
	owners: ["cwd"],
	schema: schema as RootSpec["schema"],
});

/** Register each spec from one extension factory; their statuses by name. */
function registering(specs: RootSpec[], statuses: Record<string, RootStatus>): ExtensionFactory {
	return (pi) => {
		for (const s of specs) registerRoot(pi, s, { status: (st) => (statuses[s.name] = st) });
	};
}

describe("registered roots from a co-installed extension are bounded", () => {
	it("refuses every name Object.prototype already has; the model's writes keep working", async () => {
		const names = ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf", "isPrototypeOf", "__defineGetter__", "toLocaleString"];
		const statuses: Record<string, RootStatus> = {};
		await withFlow({ extraFactories: [registering([...names.map((n) => spec(n)), spec("notes")], statuses)] }, async (flow) => {
			for (const n of names) {
				assert.equal(statuses[n]?.state, "refused", n);
				assert.match(statuses[n]?.message ?? "", new RegExp(`root name \`${n}\` is a member every JavaScript object has \\(Object\\.prototype\\)`));
			}
			assert.equal(statuses.notes?.state, "active");
			await flow.prompt("write", [{ calls: [{ id: "w", name: "patch_state", args: { cwd: { tactics: { t: "x" }, notes: { a: 1 } } } }] }, { text: "ok" }]);
			assert.equal(flow.results().w?.isError, false, flow.results().w?.text);
			const description = flow.seen[0]?.tools.find((t) => t.name === "patch_state")?.description ?? "";
			for (const n of names) assert.ok(!description.includes(`Root ${n} `), `${n} is not declared`);
		});
	});

	it(`bounds the roots: at most ${MAX_ROOTS}, a schema of at most ${MAX_SCHEMA_BYTES} B and ${MAX_SCHEMA_DEPTH} levels, ${MAX_ROOTS_BYTES} B in all`, async () => {
		const statuses: Record<string, RootStatus> = {};
		const many = Array.from({ length: MAX_ROOTS + 1 }, (_, i) => spec(`r${i}`));
		await withFlow({ extraFactories: [registering(many, statuses)] }, async (flow) => {
			assert.equal(statuses[`r${MAX_ROOTS - 1}`]?.state, "active");
			assert.equal(statuses[`r${MAX_ROOTS}`]?.state, "refused");
			assert.match(statuses[`r${MAX_ROOTS}`]?.message ?? "", new RegExp(`${MAX_ROOTS} roots are registered already`));
			// The model can still write: a flat or scoped patch is not lost in pi's validator.
			await flow.prompt("write", [{ calls: [{ id: "w", name: "patch_state", args: { cwd: { r0: { a: 1 } } } }] }, { text: "ok" }]);
			assert.equal(flow.results().w?.isError, false, flow.results().w?.text);
		});
		const big = { type: "object", description: "d".repeat(MAX_SCHEMA_BYTES) };
		let deep: Record<string, unknown> = { type: "object" };
		for (let i = 0; i < MAX_SCHEMA_DEPTH + 2; i++) deep = { type: "object", properties: { a: deep } };
		// Each under the per-schema bound, together over the total.
		const chunk = (n: number) => ({ type: "object", description: "c".repeat(MAX_SCHEMA_BYTES - 100), $comment: String(n) });
		const filling = Array.from({ length: Math.ceil(MAX_ROOTS_BYTES / (MAX_SCHEMA_BYTES - 50)) + 1 }, (_, i) => spec(`f${i}`, chunk(i)));
		const sizes: Record<string, RootStatus> = {};
		await withFlow({ extraFactories: [registering([spec("big", big), spec("deep", deep), ...filling], sizes)] }, async (flow) => {
			assert.match(sizes.big?.message ?? "", new RegExp(`\`schema\` is \\d+ B as JSON; at most ${MAX_SCHEMA_BYTES} B`));
			assert.match(sizes.deep?.message ?? "", new RegExp(`nests deeper than ${MAX_SCHEMA_DEPTH} levels`));
			assert.equal(sizes.f0?.state, "active");
			const last = filling.at(-1)?.name as string;
			assert.equal(sizes[last]?.state, "refused");
			assert.match(sizes[last]?.message ?? "", new RegExp(`at most ${MAX_ROOTS_BYTES} B for all roots together`));
			await flow.prompt("hi", [{ text: "ok" }]);
			const tool = flow.seen[0]?.tools.find((t) => t.name === "patch_state");
			const declared = Buffer.byteLength(JSON.stringify(tool), "utf8");
			assert.ok(declared < 3 * MAX_ROOTS_BYTES, `the declaration stays bounded: ${declared} B`);
		});
	});

	it("a catastrophic pattern cannot stall a commit (RE2); a pattern RE2 cannot run is refused at registration", async () => {
		const statuses: Record<string, RootStatus> = {};
		const redos = spec("redos", { type: "object", additionalProperties: { type: "string", pattern: "^(a+)+$" }, propertyNames: { pattern: "^(k|(b+)+)$" } });
		const named = spec("named", { type: "object", patternProperties: { "^(?<w>x)+$": { type: "number" } } });
		const lookahead = spec("look", { type: "object", additionalProperties: { type: "string", pattern: "^(?=a)a$" } });
		const backref = spec("backref", { type: "object", patternProperties: { "(a)\\1": { type: "string" } } });
		await withFlow({ extraFactories: [registering([redos, named, lookahead, backref], statuses)] }, async (flow) => {
			assert.equal(statuses.redos?.state, "active");
			assert.equal(statuses.named?.state, "active");
			assert.equal(statuses.look?.state, "refused");
			assert.match(statuses.look?.message ?? "", /pattern "\^\(\?=a\)a\$" cannot be used: State Flow runs schema patterns in linear time \(RE2 syntax/);
			assert.match(statuses.backref?.message ?? "", /pattern "\(a\)\\\\1" cannot be used/);
			const evil = `${"a".repeat(48)}b`;
			const started = Date.now();
			await flow.prompt("write", [
				{ calls: [{ id: "v", name: "patch_state", args: { cwd: { redos: { k: evil } } } }] },
				{ calls: [{ id: "n", name: "patch_state", args: { cwd: { redos: { [`${"b".repeat(48)}c`]: "a" } } } }] },
				{ calls: [{ id: "ok", name: "patch_state", args: { cwd: { redos: { k: "aaaa" }, named: { xx: 1 } } } }] },
				{ text: "done" },
			]);
			const r = flow.results();
			assert.equal(r.v?.isError, true);
			assert.match(r.v?.text ?? "", /`cwd\.redos\.k` must match pattern "\^\(a\+\)\+\$"/);
			assert.equal(r.n?.isError, true);
			assert.match(r.n?.text ?? "", /must match pattern "\^\(k\|\(b\+\)\+\)\$"/);
			assert.equal(r.ok?.isError, false, r.ok?.text);
			// Backtracking would take years on 49 characters; a generous bound for a loaded machine.
			assert.ok(Date.now() - started < 60_000, "answered");
		});
	});
});
