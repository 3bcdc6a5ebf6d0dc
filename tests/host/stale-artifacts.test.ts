/**
 * Real SDK: source-change hints (docs/spec.md §9, issue 6). When a tracked file artifact of a wanted
 * owner changes on disk, the next `read_state` / `patch_state` result says so once per run;
 * what the run's head already showed is not repeated, unchanged files give no hint, and one
 * call (and the head) checks a bounded number of artifacts, continuing over later checks.
 */
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { STALE_CHECKS_PER_CALL } from "../../lib/surface/stale-window.js";
import { MAX_STALE_HINTS } from "../../lib/model/results.js";
import { type Flow, withFlow, userTexts } from "./fixture.js";

const HINT = /^Source changed: /m;

function text(flow: Flow, id: string): string {
	const r = flow.results()[id];
	assert.ok(r, `no result for ${id}`);
	assert.equal(r.isError, false, r.text);
	return r.text;
}

function hintLines(flow: Flow, id: string): string[] {
	return text(flow, id)
		.split("\n")
		.filter((l) => HINT.test(l));
}

function write(flow: Flow, rel: string, content: string): void {
	const abs = join(flow.harness.cwd, rel);
	mkdirSync(join(abs, ".."), { recursive: true });
	writeFileSync(abs, content);
}

/** The head the model saw on the request `back` places from the end. */
function headAt(flow: Flow, back: number): string {
	const c = flow.seen.at(-back);
	assert.ok(c, `no request ${back} from the end`);
	return userTexts(c).find((t) => t.includes("<state_flow_head>")) ?? "";
}

/** One window of files plus 8 more (`f/000.txt` …), written with content "a", and their artifact entries. */
function manyFiles(flow: Flow): { keys: string[]; artifacts: Record<string, { kind: string }> } {
	const keys = Array.from({ length: STALE_CHECKS_PER_CALL + 8 }, (_, i) => `f/${String(i).padStart(3, "0")}.txt`);
	for (const k of keys) write(flow, k, "a");
	return { keys, artifacts: Object.fromEntries(keys.map((k) => [k, { kind: "file" }])) };
}

const read = (id: string) => ({ calls: [{ id, name: "read_state", args: { path: "cwd.tactics" } }] });

describe("source-change hints in tool results (issue 6)", () => {
	it("name a changed file artifact once in the run, and never an unchanged one", async () => {
		await withFlow({}, async (flow) => {
			write(flow, "src/a.ts", "0123456789");
			write(flow, "src/b.ts", "unchanged");
			await flow.prompt("track them", [
				{ calls: [{ id: "rec", name: "patch_state", args: { cwd: { artifacts: { "src/a.ts": { kind: "file" }, "src/b.ts": { kind: "file" } } } } }] },
				read("r0"),
				{ ...read("r1"), before: () => write(flow, "src/a.ts", "0123456789ab") },
				read("r2"),
				{ calls: [{ id: "p1", name: "patch_state", args: { cwd: { tactics: { next: "look at a.ts" } } } }] },
				{ text: "ok" },
			]);
			assert.deepEqual(hintLines(flow, "rec"), [], "a freshly recorded artifact is not stale");
			assert.deepEqual(hintLines(flow, "r0"), [], "nothing changed yet");
			assert.deepEqual(hintLines(flow, "r1"), ['Source changed: cwd.artifacts["src/a.ts"]: file changed since it was recorded (size 10 → 12).']);
			assert.deepEqual(hintLines(flow, "r2"), [], "the same change is not repeated in the run");
			assert.deepEqual(hintLines(flow, "p1"), []);
			assert.deepEqual(flow.results().r1?.details.notices, hintLines(flow, "r1"));
			// The result still starts with the value the model asked for.
			assert.equal(text(flow, "r1").split("\n")[0], "{}");

			// A further change of the same file is new information: hinted again, in a patch result too.
			await flow.prompt("more", [
				{ ...read("r3"), before: () => write(flow, "src/a.ts", "0123456789abcdef") },
				{ calls: [{ id: "p2", name: "patch_state", args: { cwd: { tactics: { again: true } } } }], before: () => write(flow, "src/a.ts", "x") },
				{ text: "ok" },
			]);
			const head = headAt(flow, 3);
			assert.match(head, /stale artifact: cwd\.artifacts\["src\/a\.ts"\]: file changed since it was recorded \(size 10 → 12\)/);
			assert.deepEqual(hintLines(flow, "r3"), ['Source changed: cwd.artifacts["src/a.ts"]: file changed since it was recorded (size 10 → 16).']);
			assert.deepEqual(hintLines(flow, "p2"), ['Source changed: cwd.artifacts["src/a.ts"]: file changed since it was recorded (size 10 → 1).']);
			assert.doesNotMatch(text(flow, "r3"), /src\/b\.ts/);
		});
	});

	it("do not repeat what the run's head already shows, and use flat locators for a sole owner", async () => {
		await withFlow({}, async (flow) => {
			await flow.command("/state owners cwd");
			write(flow, "notes.md", "v1");
			await flow.prompt("track", [{ calls: [{ id: "rec", name: "patch_state", args: { artifacts: { "notes.md": { kind: "file" } } } }] }, { text: "ok" }]);
			write(flow, "notes.md", "version 2");
			await flow.prompt("next", [{ calls: [{ id: "r", name: "read_state", args: { path: "tactics" } }] }, { text: "ok" }]);
			const head = headAt(flow, 2);
			assert.match(head, /stale artifact: artifacts\["notes\.md"\]: file changed since it was recorded \(size 2 → 9\)/);
			assert.deepEqual(hintLines(flow, "r"), [], "the head already said it");

			// Deleting the file is a new finding; a sole owner's locator is relative.
			await flow.prompt("again", [
				{ calls: [{ id: "r2", name: "read_state", args: { path: "tactics" } }], before: () => rmSync(join(flow.harness.cwd, "notes.md")) },
				{ text: "ok" },
			]);
			assert.deepEqual(hintLines(flow, "r2"), ['Source changed: artifacts["notes.md"]: file is gone since it was recorded.']);
		});
	});

	it(`check at most ${STALE_CHECKS_PER_CALL} artifacts per call, name ${MAX_STALE_HINTS}, and reach the rest on later calls`, async () => {
		await withFlow({}, async (flow) => {
			const { keys, artifacts } = manyFiles(flow);
			const total = keys.length;
			// Enough calls to name everything even when the walk revisits already named files.
			const calls = 2 * Math.ceil(total / MAX_STALE_HINTS);
			const reads = Array.from({ length: calls }, (_, i) => read(`r${i + 1}`));
			await flow.prompt("track many", [
				{ calls: [{ id: "rec", name: "patch_state", args: { cwd: { artifacts } } }] },
				{ ...read("r1"), before: () => keys.forEach((k) => write(flow, k, "bb")) },
				...reads.slice(1),
				{ text: "ok" },
			]);
			const named: string[] = [];
			const namedLine = /^Source changed: cwd\.artifacts\["(f\/\d{3}\.txt)"\]: file changed since it was recorded \(size 1 → 2\)\.$/;
			const moreLine = /^Source changed: (\d+) more tracked artifacts changed on disk\.$/;
			for (let i = 1; i <= calls; i++) {
				const lines = hintLines(flow, `r${i}`);
				const names = lines.map((l) => namedLine.exec(l)?.[1]).filter((n): n is string => n !== undefined);
				const more = lines.map((l) => moreLine.exec(l)?.[1]).filter((n): n is string => n !== undefined);
				assert.equal(names.length + more.length, lines.length, `r${i}: every line is a named hint or the count of the rest`);
				assert.ok(names.length <= MAX_STALE_HINTS);
				const seen = names.length + Number(more[0] ?? 0);
				assert.ok(seen <= STALE_CHECKS_PER_CALL, `r${i} looked at ${seen} artifacts`);
				// All files changed, so the first call finds exactly one window's worth.
				if (i === 1) assert.equal(seen, STALE_CHECKS_PER_CALL);
				named.push(...names);
			}
			assert.deepEqual([...named].sort(), keys, "every changed artifact is named exactly once over the run");
			assert.deepEqual(hintLines(flow, `r${calls}`), [], "nothing is left to say");
		});
	});

	it(`the head checks at most ${STALE_CHECKS_PER_CALL} artifacts, says how many it skipped, and later heads reach the rest`, async () => {
		await withFlow({}, async (flow) => {
			const { keys, artifacts } = manyFiles(flow);
			await flow.prompt("track many", [{ calls: [{ id: "rec", name: "patch_state", args: { cwd: { artifacts } } }] }, { text: "ok" }]);
			// Only the last file changes: a head that always started at the first file would never see it.
			const last = keys.at(-1) as string;
			write(flow, last, "bb");
			const flagged: boolean[] = [];
			for (const p of ["one", "two"]) {
				await flow.prompt(p, [{ text: "ok" }]);
				const head = headAt(flow, 1);
				assert.match(head, /^! 8 tracked artifacts not checked for source changes here \(tool results check them\)$/m);
				flagged.push(head.includes(`! stale artifact: cwd.artifacts["${last}"]: file changed since it was recorded (size 1 → 2)`));
			}
			assert.ok(flagged.includes(true), "two consecutive heads check every artifact");

			// All changed: one head counts exactly one window of stale artifacts (8 named, the rest counted).
			for (const k of keys) write(flow, k, "cc");
			await flow.prompt("three", [{ text: "ok" }]);
			const head = headAt(flow, 1);
			assert.equal(head.match(/^! stale artifact: /gm)?.length, 8);
			assert.match(head, new RegExp(`^! ${STALE_CHECKS_PER_CALL - 8} more stale artifacts$`, "m"));
		});
	});
});
