/**
 * A `read_state` result is bounded (issue 24), in a real pi session: a batch returns at most
 * `READ_BATCH_BYTES` of values (the first always whole); each value left out is a marker naming
 * its size and the locator to read alone, and reading it alone returns it whole.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { READ_BATCH_BYTES } from "../../lib/model/results.js";
import { withFlow } from "../host/fixture.js";

const body = (c: string) => c.repeat(200_000);

describe("read_state results are bounded", () => {
	it("a batch of large bodies and their past versions returns what fits and names the rest; each reads whole alone", async () => {
		await withFlow({}, async (flow) => {
			await flow.prompt("write", [
				{ calls: [{ id: "w1", name: "patch_state", args: { cwd: { lazy: { a: body("a"), b: body("b") } } } }] },
				{ calls: [{ id: "w2", name: "patch_state", args: { cwd: { lazy: { a: body("A") } } } }] },
				{ calls: [{ id: "r", name: "read_state", args: { paths: ["cwd.lazy.a", "cwd[1].lazy.a", "cwd.lazy.b", "cwd.tactics"] } }] },
				{ calls: [{ id: "one", name: "read_state", args: { path: "cwd[1].lazy.a" } }] },
				{ calls: [{ id: "small", name: "read_state", args: { paths: ["cwd.tactics", "cwd.intents"] } }] },
				{ text: "ok" },
			]);
			const r = flow.results();
			assert.equal(r.w1?.isError, false, r.w1?.text);
			assert.equal(r.r?.isError, false, r.r?.text);
			const text = r.r?.text ?? "";
			assert.ok(Buffer.byteLength(text) <= READ_BATCH_BYTES + 4096, `bounded: ${Buffer.byteLength(text)} B`);
			const [header, json] = text.split("\n");
			assert.equal(header, "4 values in request order: cwd.lazy.a, cwd[1].lazy.a, cwd.lazy.b, cwd.tactics");
			const values = JSON.parse(json as string) as unknown[];
			assert.equal(values[0], body("A"), "the first value comes whole");
			assert.deepEqual(values[1], { "…": "left out: 195.3 KB, over the 256.0 KB a batch returns; read_state cwd[1].lazy.a alone" });
			assert.deepEqual(values[2], { "…": "left out: 195.3 KB, over the 256.0 KB a batch returns; read_state cwd.lazy.b alone" });
			assert.deepEqual(values[3], {}, "a small value after them still fits");
			assert.equal(JSON.parse(r.one?.text ?? "null"), body("a"), "read alone, it comes whole");
			assert.equal(r.small?.text, "2 values in request order: cwd.tactics, cwd.intents\n[{},{}]");
		});
	});
});
