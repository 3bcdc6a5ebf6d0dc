/**
 * `state-flow doctor` and `$ref` objects an older build stored without checking them: each one a
 * write would refuse is listed with the refusal's words (the spelling to send), a real reference
 * is not, the exit code stays healthy (the data is not damaged), and the line goes once fixed.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseArgs } from "../../lib/cli/verbs.js";
import { runDoctor } from "../../lib/cli/doctor/index.js";
import { projectDirs } from "../helpers/temp-dir.js";
import { unwrapped } from "./run.js";

const by = { kind: "system", reason: "test" } as const;

describe("state-flow doctor and stored `$ref` objects that are not references", () => {
	it("lists each with the spelling to send, leaves real references alone, and is quiet once they are fixed", async (t) => {
		const { cwd, agentDir } = projectDirs(t, "state-flow-doctor-refs-");
		const stores = openStoresAt({ agentDir, cwd });
		await stores.commit({ cwd: { lazy: { "plans/a.md": "the plan" }, tactics: { a: "step" } } }, { by, id: "one", at: "2026-12-01T00:00:00.000Z" });
		// As a build before references were checked could store them: an exact delta skips the checks.
		await stores.commit(
			{
				cwd: {
					intents: {
						good: { steps: [{ $ref: "cwd.tactics.a" }] },
						unquoted: { plan: { $ref: "lazy.plans/a.md" } },
						crowded: { steps: [{ $ref: "cwd.tactics.a", note: "first" }] },
					},
				},
			},
			{ by, id: "old", at: "2026-12-01T00:00:01.000Z", exact: true },
		);
		const doctor = () => runDoctor(parseArgs(["doctor", "--agent-dir", agentDir, "--cwd", cwd]));
		const first = await doctor();
		assert.equal(first.code, 0, first.stdout);
		const notes = first.stdout.split("\n").filter((l) => l.includes("is not a reference"));
		assert.equal(notes.length, 2, first.stdout);
		assert.match(
			notes[0] as string,
			/^cwd: a stored `\$ref` object is not a reference .*: `cwd\.intents\.unquoted\.plan\.\$ref` is `lazy\.plans\/a\.md`, which is not a locator: .* write \{"\$ref":"cwd\.lazy\[\\"plans\/a\.md\\"\]"\}\.$/,
		);
		assert.match(notes[1] as string, /^cwd: .*`cwd\.intents\.crowded\.steps\[0\]` has `\$ref` beside other members \(`note`\)/);
		assert.doesNotMatch(unwrapped(first.stdout), /intents\.good/);

		await stores.commit(
			{ cwd: { intents: { unquoted: { plan: { $ref: 'cwd.lazy["plans/a.md"]' } }, crowded: { steps: [{ $ref: "cwd.tactics.a" }] } } } },
			{ by, id: "fix", at: "2026-12-01T00:00:02.000Z" },
		);
		const second = await doctor();
		assert.equal(second.code, 0, second.stdout);
		assert.doesNotMatch(unwrapped(second.stdout), /is not a reference/);
	});
});
