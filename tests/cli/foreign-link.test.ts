/**
 * A path link (`links[<folder>]`) outlives the checkout that was linked there. A folder at that
 * path that belongs to another user (made later in `/tmp` on a shared machine) is not handed
 * the project: the link is not followed, `show` says why, linking there is refused, and
 * `unlink` there drops it.
 */
import assert from "node:assert/strict";
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { foreignLinkLine, linkOf, placementFor } from "../../lib/storage/placement/placement.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import { runCli, unwrapped } from "./run.js";

/** A folder of another user: made and given away as root; elsewhere a system folder owned by root stands in. */
function foreignFolder(base: string): string {
	if (process.getuid?.() !== 0) return "/usr";
	const dir = join(base, "theirs");
	mkdirSync(dir);
	chownSync(dir, 54_321, 54_321);
	return realOrSelf(dir);
}

describe("a path link to a folder that is not the user's", () => {
	it("is not followed, is named by `show`, cannot be made, and `unlink` there drops it", (t) => {
		const base = realOrSelf(mkdtempSync(join(tmpdir(), "sf-foreign-link-")));
		t.after(() => rmSync(base, { recursive: true, force: true }));
		const mine = join(base, "mine");
		mkdirSync(mine);
		const theirs = foreignFolder(base);
		const config = { links: { [mine]: "acme/mine", [theirs]: "acme/api" }, database: "postgres://u@127.0.0.1:1/x" };

		assert.deepEqual(linkOf(config, mine), { project: "acme/mine", path: mine }, "the user's own folder follows its link");
		assert.equal(linkOf(config, theirs), undefined, "another user's folder is not handed the project");
		assert.equal(placementFor(config, theirs, {}).project, undefined);
		assert.equal(foreignLinkLine(config, mine), undefined);
		assert.match(
			foreignLinkLine(config, theirs) ?? "",
			/linked to project `acme\/api` in your config, but the folder .* belongs to another user, so the link is not followed/,
		);

		const agent = join(base, "agent");
		mkdirSync(join(agent, "state-flow"), { recursive: true });
		const file = join(agent, "state-flow", "config.json");
		writeFileSync(file, `${JSON.stringify({ links: config.links })}\n`);
		const show = runCli(["show", "cwd", "--agent-dir", agent], { cwd: theirs });
		assert.equal(show.code, 0, show.stderr);
		assert.match(unwrapped(show.stdout).replace(/\s+/g, " "), /belongs to another user, so the link is not followed .*run `state-flow unlink` here/);
		assert.match(unwrapped(show.stdout), /^project .* \(this folder, not in git\)$/m, "the CWD owner is the folder's own files");
		assert.doesNotMatch(unwrapped(show.stdout), /\(link acme\/api\)|postgres/, "not the project's");

		// Linking there is refused: the link would never be followed.
		const link = runCli(["link", "acme/other", "--agent-dir", agent], { cwd: theirs });
		assert.notEqual(link.code, 0);
		assert.match(
			unwrapped(link.stderr),
			/Cannot link: the folder .* belongs to another user, and State Flow follows a link only in a folder of yours .*Nothing was changed\./,
		);
		assert.deepEqual((JSON.parse(readFileSync(file, "utf8")) as { links: Record<string, string> }).links, config.links);

		const unlink = runCli(["unlink", "--agent-dir", agent], { cwd: theirs });
		assert.equal(unlink.code, 0, unlink.stderr);
		assert.deepEqual((JSON.parse(readFileSync(file, "utf8")) as { links: Record<string, string> }).links, { [mine]: "acme/mine" });
	});
});
