/**
 * Team-safe undo on a real PostgreSQL server: Alice's pi and Bob's stores share project
 * `acme/api`. Alice's `/state undo` of Bob's transition says whose it is and asks (pi's confirm
 * dialog); a no writes nothing, a yes reverts it; without a UI it is refused until `--yes`.
 * Her own transitions are undone without a question.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { updateConfig } from "../../lib/storage/placement/config.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import type { Stores } from "../../lib/storage/stores.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { machine, piOn, type T } from "./shared-fixture.js";

const server = serverForFile(testDatabase);

/** Alice's machine (config `user: alice`) linked to acme/api, and Bob's stores on the same project, signed bob@desk. */
async function team(t: T) {
	const schema = server.schema();
	const alice = machine(t, { database: server.url, databaseSchema: schema, user: "alice" });
	await updateConfig(alice.agentDir, { links: { [realOrSelf(alice.cwd)]: "acme/api" } });
	const b = machine(t, {});
	const config = { database: server.url, databaseSchema: schema, links: { [realOrSelf(b.cwd)]: "acme/api" } };
	const bob = openStoresAt({ agentDir: b.agentDir, cwd: b.cwd, placement: placementFor(config, b.cwd, {}), who: { user: "bob", host: "desk" } });
	return { alice, bob };
}

let n = 0;
const bobWrites = (bob: Stores) =>
	bob.commit(
		{ cwd: { tactics: { bob: "his step" } } },
		{ id: `bob-${++n}`, at: "2026-11-30T09:30:00.000Z", by: { kind: "command", command: "state-flow import" } },
	);

async function aliceWrites(pi: Awaited<ReturnType<typeof piOn>>): Promise<void> {
	await pi.prompt("mine", [{ calls: [{ id: "c1", name: "patch_state", args: { cwd: { tactics: { mine: "her step" } } } }] }, { text: "ok" }]);
}

describe("undo in a team", () => {
	it("asks before reverting Bob's transition, naming him; a no writes nothing", async (t) => {
		const { alice, bob } = await team(t);
		const no = await piOn(t, alice, false);
		await aliceWrites(no);
		await bobWrites(bob);
		const refused = (await no.command("/state undo")).join("\n");
		assert.equal(no.asked.length, 1);
		const question = no.asked[0] as string;
		assert.match(question, /^State Flow: undo someone else's change\?/);
		assert.match(question, /It reverts:\n {2}cwd #2 bob-\d \S+ state-flow import bob@desk set tactics\.bob/);
		assert.match(question, /This undo reverts changes made by bob@desk\. Go ahead\?/);
		assert.match(refused, /undo cancelled; nothing was written/);
		assert.deepEqual((await bob.load("cwd")).state.tactics, { mine: "her step", bob: "his step" }, "a no wrote nothing");
	});

	it("a yes reverts Bob's transition; next in the walk back is her own, undone without a question", async (t) => {
		const { alice, bob } = await team(t);
		const yes = await piOn(t, alice, true);
		await aliceWrites(yes);
		await bobWrites(bob);
		const done = (await yes.command("/state undo")).join("\n");
		assert.equal(yes.asked.length, 1);
		assert.match(done, /Reverted bob-\d \(cwd\) as transition t-0002\./);
		assert.deepEqual((await bob.load("cwd")).state.tactics, { mine: "her step" });
		// Next in the walk back is her own transition: no question.
		const own = (await yes.command("/state undo")).join("\n");
		assert.equal(yes.asked.length, 1, "her own transition is undone without asking");
		assert.match(own, /Reverted t-0001 \(cwd\) as transition t-0003\./);
		assert.deepEqual((await bob.load("cwd")).state.tactics, {});
	});

	it("without an interactive UI, reverting Bob's transition is refused with --yes to go ahead; --yes reverts it", async (t) => {
		const { alice, bob } = await team(t);
		const pi = await piOn(t, alice);
		// `/state` says who she is to her teammates, and where that name comes from.
		await pi.command("/state");
		assert.match(pi.output("status"), /^you are: alice@\S+ \(config `user`\)$/m);
		await bobWrites(bob);
		const refused = (await pi.command("/state undo")).join("\n");
		assert.match(refused, /^This undo reverts changes made by bob@desk\.\nNothing was written; add --yes to go ahead\.$/m);
		assert.deepEqual((await bob.load("cwd")).state.tactics, { bob: "his step" });
		const done = (await pi.command("/state undo --yes")).join("\n");
		assert.match(done, /Reverted bob-\d \(cwd\)/);
		assert.deepEqual((await bob.load("cwd")).state.tactics, {});
		// Bob sees who undid it, and what.
		const last = (await bob.load("cwd")).tail.at(-1);
		assert.deepEqual(last?.by, { kind: "command", command: "/state undo cwd", reverts: { op: "undo", target: `bob-${n}` } });
		assert.equal(last?.who?.user, "alice");
	});
});
