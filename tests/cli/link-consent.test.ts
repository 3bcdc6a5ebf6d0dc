/**
 * A link through the repository needs the user's yes for it on this machine (issue 33), with the
 * real `state-flow` binary, real git, a real `tar` archive and the real PostgreSQL test server:
 * an archive of a linked checkout (its `.git/`, consent file included) claims the link and stays
 * local until `state-flow link` runs there; the yes is honoured only where the common dir's
 * identity AND its nonce match the record (an inode reused by another folder, a planted or
 * linked nonce file, a FIFO, is no yes); a link an older build made gains its yes when linked
 * again; unlink forgets every yes for the repository.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { validateConfig } from "../../lib/storage/placement/config.js";
import { git } from "../helpers/git-repo.js";
import { linkSetup } from "./link-fixture.js";
import { unwrapped } from "./run.js";

const CONSENT = "state-flow-consent";

/** A repository whose origin is the team's, linked here by `state-flow link`, its memory holding TEAM-PLAN. */
function linked(t: { after(fn: () => void): void }) {
	const s = linkSetup(t);
	git(s.dir, "remote", "add", "origin", "git@github.com:acme/api.git");
	const link = s.run(s.dir, "link", "acme/api");
	assert.equal(link.code, 0, link.stderr);
	assert.equal(s.run(s.dir, "set", "cwd.intents.plan", '"TEAM-PLAN"').code, 0);
	const show = (cwd: string) => s.run(cwd, "show", "cwd").stdout;
	const writeConfig = (config: object) => writeFileSync(s.file, `${JSON.stringify(config)}\n`);
	return { ...s, show, writeConfig };
}

describe("a link through the repository needs the user's yes here", () => {
	it("an archive of a linked checkout, consent file and all, is only linkable; `state-flow link` there links it", (t) => {
		const { base, dir, run, show, written } = linked(t);
		const nonce = readFileSync(join(dir, ".git", CONSENT), "utf8");
		assert.match(nonce, /^[0-9a-f]{64}\n$/);
		assert.equal(lstatSync(join(dir, ".git", CONSENT)).mode & 0o777, 0o600);
		const archive = join(base, "api.tar");
		execFileSync("tar", ["-cf", archive, "-C", base, "proj"]);
		const into = join(base, "downloads");
		mkdirSync(into);
		execFileSync("tar", ["-xf", archive, "-C", into]);
		const copy = join(into, "proj");
		assert.equal(readFileSync(join(copy, ".git", CONSENT), "utf8"), nonce, "the archive carries the nonce");
		const out = show(copy);
		assert.match(out, /^linkable: acme\/api — run `state-flow link acme\/api` here to share; /m);
		assert.doesNotMatch(out, /TEAM-PLAN|\(link /);
		assert.doesNotMatch(unwrapped(run(copy, "export", "cwd").stdout), /TEAM-PLAN/, "no command reads the team's memory there");
		const before = JSON.stringify(written());
		assert.doesNotMatch(show(copy), /\(link /);
		assert.equal(JSON.stringify(written()), before, "showing writes nothing");
		const yes = run(copy, "link", "acme/api");
		assert.equal(yes.code, 0, yes.stderr);
		assert.match(show(copy), /TEAM-PLAN/);
		assert.notEqual(readFileSync(join(copy, ".git", CONSENT), "utf8"), nonce, "its own yes has its own nonce");
		assert.match(show(dir), /TEAM-PLAN/, "the original keeps its yes");
	});

	it("a yes holds only where the common dir's identity and its nonce both match the record", (t) => {
		const { base, dir, show, written, writeConfig } = linked(t);
		const other = join(base, "other");
		git(base, "clone", "-q", dir, other);
		git(other, "remote", "set-url", "origin", "https://github.com/acme/api");
		const config = written();
		const [key, consent] = Object.entries(config.linkConsents ?? {})[0] as [string, { nonce: string }];
		// A folder that reused the consented common dir's inode, stood in for by recording this clone's identity with the original's yes.
		const st = lstatSync(join(other, ".git"), { bigint: true });
		writeConfig({ ...config, linkConsents: { [key]: consent, [`${st.dev}:${st.ino}`]: { ...consent, repo: "github.com/acme/api", project: "acme/api" } } });
		const file = join(other, ".git", CONSENT);
		const linkedIn = () => /\(link acme\/api\)/.test(show(other));
		assert.equal(linkedIn(), false, "no nonce in the common dir: no yes");
		symlinkSync(join(dir, ".git", CONSENT), file);
		assert.equal(linkedIn(), false, "a nonce behind a symbolic link is never read");
		rmSync(file);
		for (const text of [`${consent.nonce.toUpperCase()}\n`, `${consent.nonce}\n\n`, ` ${consent.nonce}`, `${consent.nonce}\n${"x".repeat(200)}`]) {
			writeFileSync(file, text);
			assert.equal(linkedIn(), false, JSON.stringify(text));
		}
		rmSync(file);
		execFileSync("mkfifo", [file]);
		assert.equal(linkedIn(), false, "a FIFO is not read (and does not hang)");
		rmSync(file);
		writeFileSync(file, `${consent.nonce}\n`);
		assert.equal(linkedIn(), true, "identity and nonce both match: the gates above are what is tested");
		// The record must name the repository and project it links to.
		writeConfig({ ...config, linkConsents: { [`${st.dev}:${st.ino}`]: { ...consent, repo: "github.com/acme/api", project: "acme/other" } } });
		assert.equal(linkedIn(), false, "a yes for another project is no yes for this one");
	});

	it("config: a `linkConsents` entry State Flow would not write is ignored with a problem naming it", () => {
		const nonce = "a".repeat(64);
		const read = validateConfig({
			linkConsents: {
				"2049:1234": { nonce, repo: "github.com/acme/api", project: "acme/api" },
				"../x": { nonce, repo: "github.com/acme/api", project: "acme/api" },
				"1:2": { nonce: "short", repo: "github.com/acme/api", project: "acme/api" },
				"1:3": { nonce, repo: "https://tok@github.com/acme/api", project: "acme/api" },
				"1:4": { nonce, repo: "github.com/acme/api", project: "a\u202eb" },
				"1:5": "yes",
			},
		});
		assert.deepEqual(Object.keys(read.config.linkConsents ?? {}), ["2049:1234"]);
		assert.equal(read.problems.length, 5);
		for (const p of read.problems) assert.match(p, /`linkConsents\[.*\]` .*; ignoring it \(that repository asks again\)/);
		assert.match(validateConfig({ linkConsents: [] }).problems[0] as string, /`linkConsents` must be an object/);
	});

	it("a link an older build made gains its yes when linked again, so a move follows; unlink forgets every yes for the repository", (t) => {
		const { base, dir, run, show, written, writeConfig } = linked(t);
		const { linkConsents: _, ...older } = written();
		writeConfig(older);
		assert.match(show(dir), /\(link acme\/api\)/, "its path link still applies");
		const again = run(dir, "link", "acme/api");
		assert.equal(again.code, 0, again.stderr);
		assert.match(unwrapped(again.stdout), /already linked to project `acme\/api`; its repository is recorded now/);
		assert.equal(Object.keys(written().linkConsents ?? {}).length, 1);
		assert.match(unwrapped(run(dir, "link", "acme/api").stdout), /already linked to project `acme\/api`; nothing changed/);
		const moved = join(base, "moved");
		renameSync(dir, moved);
		assert.match(show(moved), /TEAM-PLAN/);
		const clone = join(base, "clone");
		git(base, "clone", "-q", moved, clone);
		git(clone, "remote", "set-url", "origin", "git@github.com:acme/api.git");
		assert.equal(run(clone, "link", "acme/api").code, 0);
		assert.equal(Object.keys(written().linkConsents ?? {}).length, 2);
		const un = run(clone, "unlink");
		assert.equal(un.code, 0, un.stderr);
		assert.deepEqual(written().linkConsents, {}, "every yes for the repository is forgotten");
		assert.deepEqual(written().repoLinks, {});
		assert.doesNotMatch(show(moved), /TEAM-PLAN|linkable/, "the moved checkout is neither linked nor claims a link");
	});
});
