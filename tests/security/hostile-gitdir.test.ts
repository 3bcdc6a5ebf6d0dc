/**
 * A `.git` file in a downloaded folder may name any git dir of the user's (issue 33, part 2):
 * another repository's separate git dir, a bare repository with worktrees, a submodule's
 * `.git/modules/<name>`, or a folder above the checkout (`gitdir: ..`). Through the real pi SDK
 * and the real `state-flow` binary, the hostile folder never reads that repository's memory
 * (absent from the head and from `read_state` search), never writes its log, and nothing is
 * made or changed outside the hostile folder: its writes land in its own `.pi/state-flow`, and
 * `/state` and `show` say the `.git` is not followed. projectOf's rules on each layout:
 * tests/storage/project-pointers.test.ts.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { FileOwnerStore } from "../../lib/storage/file/owner-store.js";
import { projectOf, storeInRoot } from "../../lib/storage/project/project.js";
import { runCli, unwrapped } from "../cli/run.js";
import { git } from "../helpers/git-repo.js";
import { tempDir } from "../helpers/temp-dir.js";
import { headOf, startFlow } from "../host/fixture.js";
import { snapshot } from "./hostile.js";

const by = { kind: "system", reason: "victim" } as const;
const SECRET = "SECRET-VICTIM-MEMORY";

/** A repository with one commit at `dir`. */
function commitIn(dir: string): void {
	writeFileSync(join(dir, "a.txt"), "a\n");
	git(dir, "add", ".");
	git(dir, "commit", "-q", "-m", "first");
}

/** The victim's memory, written through the real stores from its own checkout; returns where it landed. */
async function remember(base: string, checkout: string): Promise<string> {
	const stores = openStoresAt({ agentDir: join(base, "agent"), cwd: checkout });
	await stores.commit({ cwd: { strategy: { rule: `${SECRET}: the victim's rule` } } }, { by, id: "v1", at: "2026-01-01T00:00:00.000Z" });
	await stores.close();
	return projectOf(checkout).store;
}

/** Each attack: builds a victim holding memory and the hostile folder whose `.git` names the victim's git dir. */
const ATTACKS: Record<string, (base: string) => Promise<{ hostile: string; victimStore: string }>> = {
	"another repository's separate git dir": async (base) => {
		const checkout = join(base, "victim");
		const gitDir = join(base, "victim-gitdir");
		git(base, "init", "-q", "-b", "main", `--separate-git-dir=${gitDir}`, checkout);
		commitIn(checkout);
		git(base, `--git-dir=${gitDir}`, "config", "core.worktree", checkout);
		const victimStore = await remember(base, checkout);
		assert.equal(victimStore, join(gitDir, "state-flow"));
		return { hostile: planted(base, gitDir), victimStore };
	},
	"a bare repository with worktrees": async (base) => {
		const src = join(base, "src-repo");
		mkdirSync(src);
		git(src, "init", "-q", "-b", "main");
		commitIn(src);
		git(base, "clone", "-q", "--bare", src, "bare.git");
		git(join(base, "bare.git"), "worktree", "add", "-q", join(base, "w1"), "main");
		const victimStore = await remember(base, join(base, "w1"));
		assert.equal(victimStore, join(base, "bare.git", "state-flow"));
		return { hostile: planted(base, join(base, "bare.git")), victimStore };
	},
	"a submodule's .git/modules/<name>": async (base) => {
		const lib = join(base, "lib");
		const sup = join(base, "super");
		mkdirSync(lib);
		mkdirSync(sup);
		git(lib, "init", "-q", "-b", "main");
		commitIn(lib);
		git(sup, "init", "-q", "-b", "main");
		commitIn(sup);
		git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib");
		const victimStore = await remember(base, join(sup, "vendor", "lib"));
		assert.equal(victimStore, join(sup, ".git", "modules", "vendor", "lib", "state-flow"));
		return { hostile: planted(base, join(sup, ".git", "modules", "vendor", "lib")), victimStore };
	},
	"gitdir: .. (the folder above)": async (base) => {
		// What an older build made there when it followed it: `<parent>/state-flow/`.
		const parent = join(base, "downloads");
		const victimStore = join(parent, "state-flow");
		const store = new FileOwnerStore({ owner: "cwd", root: victimStore, retention: 20, gitignore: false });
		const patch = { strategy: { rule: `${SECRET}: planted above` } };
		await store.commit({ id: "v1", seq: 1, at: "2026-01-01T00:00:00.000Z", by, patch, undo: { strategy: { rule: null } }, cascades: [], owners: ["cwd"] }, 0);
		return { hostile: planted(parent, ".."), victimStore };
	},
	"gitdir: ../.. (two folders above)": async (base) => {
		const hostile = planted(join(base, "deep"), "../..");
		return { hostile, victimStore: join(base, "state-flow") };
	},
};

/** The hostile folder as an archive ships it: a `.git` file naming `gitdir`. */
function planted(parent: string, gitdir: string): string {
	const hostile = join(parent, "hostile");
	mkdirSync(hostile, { recursive: true });
	writeFileSync(join(hostile, ".git"), `gitdir: ${gitdir}\n`);
	return hostile;
}

/** Every entry under `base` but the hostile folder and the agent directory. */
function outside(base: string, hostile: string): Record<string, string> {
	return Object.fromEntries(Object.entries(snapshot(base)).filter(([k]) => !join(base, k).startsWith(`${hostile}/`) && !k.startsWith("agent")));
}

function world(t: { after(fn: () => void): void }): string {
	const base = realpathSync(tempDir(t, "state-flow-gitdir-"));
	mkdirSync(join(base, "agent"));
	return base;
}

describe("a `.git` file naming another repository's git dir, through a live pi session", () => {
	for (const [name, attack] of Object.entries(ATTACKS)) {
		it(`${name}: the victim's memory is neither read nor written; nothing outside changes`, async (t) => {
			const base = world(t);
			const { hostile, victimStore } = await attack(base);
			const before = outside(base, hostile);
			const flow = await startFlow({ cwd: hostile, agentDir: join(base, "agent") });
			t.after(() => flow.dispose());
			await flow.prompt("what are the rules?", [
				{ calls: [{ id: "r", name: "read_state", args: { search: "SECRET" } }] },
				{ calls: [{ id: "w", name: "patch_state", args: { cwd: { tactics: { mine: "from the hostile folder" } } } }] },
				{ text: "ok" },
			]);
			assert.doesNotMatch(headOf(flow, 0), new RegExp(SECRET));
			const r = flow.results();
			assert.ok(!r.r?.isError, r.r?.text);
			assert.doesNotMatch(r.r?.text ?? "", new RegExp(SECRET));
			assert.ok(!r.w?.isError, r.w?.text);
			const own = new FileOwnerStore({ owner: "cwd", root: storeInRoot(hostile), retention: 20, gitignore: true }).read();
			assert.deepEqual(own.state.tactics, { mine: "from the hostile folder" }, "the write landed in the hostile folder's own store");
			const words = (await flow.command("/state")).join("\n");
			assert.match(words, /^project \S*hostile \(its \.git is not followed\)$/m);
			assert.deepEqual(outside(base, hostile), before, `nothing outside the hostile folder changed (the victim's store is ${victimStore})`);
		});
	}
});

describe("the same attacks through the state-flow binary", () => {
	for (const [name, attack] of Object.entries(ATTACKS)) {
		it(`${name}: show and set read and write the hostile folder's own store only`, async (t) => {
			const base = world(t);
			const { hostile } = await attack(base);
			const before = outside(base, hostile);
			const env = { PI_CODING_AGENT_DIR: join(base, "agent") };
			const set = runCli(["set", "cwd.tactics.mine", '"from the CLI"'], { cwd: hostile, env });
			assert.equal(set.code, 0, set.stderr);
			const show = runCli(["show", "cwd"], { cwd: hostile, env });
			assert.equal(show.code, 0, show.stderr);
			assert.doesNotMatch(unwrapped(show.stdout), new RegExp(SECRET));
			assert.match(unwrapped(show.stdout), /from the CLI/);
			assert.match(unwrapped(show.stdout), /^project \S*hostile \(its \.git is not followed\)$/m);
			assert.match(unwrapped(show.stdout), /^note: /m);
			assert.deepEqual(outside(base, hostile), before);
		});
	}
});
