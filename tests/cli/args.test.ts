/**
 * The CLI's pure parts in-process: argument parsing and usage errors, help for every command,
 * pi-compatible agent-directory resolution, and import planning (the diff itself, `mergeDiff`,
 * is tested as a law in tests/core/merge.test.ts). `--version` and `help [command]` also through
 * the real binary.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { getAgentDir } from "@mariozechner/pi-coding-agent";
import { defaultAgentDir, UsageError } from "../../lib/cli/args.js";
import { COMMANDS, parseArgs } from "../../lib/cli/verbs.js";
import { main } from "../../lib/cli/main.js";
import { importPatch, parseImport } from "../../lib/cli/transfer.js";
import { isStateError } from "../../lib/core/errors.js";
import { runCli } from "./run.js";
import type { OwnerState } from "../../lib/core/types.js";

const usage = (argv: string[]) => {
	try {
		parseArgs(argv, {}, "/w");
	} catch (e) {
		assert.ok(e instanceof UsageError, String(e));
		return e.message;
	}
	assert.fail(`expected a usage error for ${argv.join(" ")}`);
};

describe("parseArgs", () => {
	it("reads the command, owner, options in any order and resolves paths against the cwd", () => {
		const p = parseArgs(["--agent-dir", "ag", "show", "cwd", "--cwd=proj", "--full"], {}, "/w");
		assert.equal(p.command, "show");
		assert.deepEqual(p.positionals, ["cwd"]);
		assert.equal(p.agentDir, "/w/ag");
		assert.equal(p.cwd, "/w/proj");
		assert.equal(p.full, true);
		const i = parseArgs(["import", "-", "--owner", "global"], {}, "/w");
		assert.deepEqual([i.command, i.positionals, i.owner], ["import", ["-"], "global"]);
	});

	it("refuses unknown commands and options, misplaced options, missing values and extra arguments", () => {
		assert.match(usage(["frob"]), /unknown command `frob`/);
		assert.match(usage(["show", "--bogus"]), /unknown option `--bogus`/);
		assert.match(usage(["--full", "doctor"]), /`doctor` does not take `--full`/);
		assert.match(usage(["export", "--cwd"]), /`--cwd` needs a value/);
		assert.match(usage(["export", "--cwd", "--full"]), /`--cwd` needs a value/);
		assert.match(usage(["show", "--full", "--full"]), /`--full` is given twice/);
		assert.match(usage(["show", "--full=1"]), /`--full` takes no value/);
		assert.match(usage(["import"]), /`import` needs a file/);
		assert.match(usage(["history", "cwd", "x"]), /unexpected argument `x`/);
		assert.match(usage(["doctor", "x"]), /unexpected argument `x`/);
	});

	it("reads link, unlink and migrate: one project id, or --global for migrate, never both", () => {
		const l = parseArgs(["link", "acme/api", "--cwd", "co", "--force"], {}, "/w");
		assert.deepEqual([l.command, l.positionals, l.cwd, l.force], ["link", ["acme/api"], "/w/co", true]);
		assert.deepEqual(parseArgs(["migrate", "--global"], {}, "/w").global, true);
		assert.deepEqual(parseArgs(["migrate", "acme/api"], {}, "/w").positionals, ["acme/api"]);
		assert.deepEqual(parseArgs(["link"], {}, "/w").positionals, [], "without an id, link offers the repository's suggestion");
		assert.match(usage(["link", "a", "b"]), /unexpected argument `b`/);
		assert.match(usage(["unlink", "a"]), /unexpected argument `a`/);
		assert.match(usage(["migrate"]), /`migrate` needs a project id \(or `--global`\)/);
		assert.match(usage(["migrate", "acme/api", "--global"]), /`migrate --global` takes no project id/);
		assert.match(usage(["unlink", "--force"]), /`unlink` does not take `--force`/);
		assert.match(usage(["link", "x", "--global"]), /`link` does not take `--global`/);
		// The way back names no project: the link (or shareGlobal) does.
		const back = parseArgs(["migrate", "--to-files"], {}, "/w");
		assert.deepEqual([back.toFiles, back.global, back.positionals], [true, false, []]);
		assert.deepEqual([parseArgs(["migrate", "--global", "--to-files"], {}, "/w").global, parseArgs(["migrate", "--to-files"], {}, "/w").toFiles], [true, true]);
		assert.match(usage(["migrate", "acme/api", "--to-files"]), /`migrate --to-files` takes no project id/);
		assert.match(usage(["link", "x", "--to-files"]), /`link` does not take `--to-files`/);
	});

	it("takes `--owner` as the owner of show, history and export too (the spelling import uses), but only once", () => {
		for (const cmd of ["show", "history", "export"]) {
			assert.deepEqual(parseArgs([cmd, "--owner", "cwd"], {}, "/w").positionals, ["cwd"], cmd);
		}
		assert.match(usage(["export", "global", "--owner", "cwd"]), /give the owner once/);
		assert.match(usage(["doctor", "--owner", "cwd"]), /`doctor` does not take `--owner`/);
	});

	it("accepts --help anywhere, even with otherwise incomplete arguments", () => {
		assert.equal(parseArgs(["import", "--help"], {}, "/w").help, true);
		assert.equal(parseArgs(["-h"], {}, "/w").command, undefined);
	});

	it("reads `help [command]` as `[command] --help`, refusing an unknown command or a second argument", () => {
		for (const [argv, command] of [
			[["help"], undefined],
			[["help", "import"], "import"],
			[["--cwd", "x", "help", "doctor"], "doctor"],
		] as const) {
			const p = parseArgs(argv, {}, "/w");
			assert.deepEqual([p.help, p.command], [true, command], argv.join(" "));
		}
		assert.match(usage(["help", "frob"]), /^unknown command `frob`\. `state-flow help` lists the commands\.$/);
		// A typo gets the nearest command or option (issue 27).
		assert.equal(usage(["histroy"]), "unknown command `histroy`. Did you mean `history`?");
		assert.equal(usage(["show", "--ful"]), "unknown option `--ful`. Did you mean `--full`?");
		assert.equal(usage(["undo", "--yse"]), "unknown option `--yse`. Did you mean `--yes`?");
		assert.match(usage(["help", "show", "cwd"]), /`help` takes one command; unexpected argument `cwd`/);
		// After a command, `help` is an ordinary argument.
		assert.match(usage(["doctor", "help"]), /unexpected argument `help`/);
	});

	it("accepts --version anywhere, even with otherwise incomplete arguments", () => {
		for (const argv of [["--version"], ["import", "--version"], ["--version", "show", "cwd"]])
			assert.equal(parseArgs(argv, {}, "/w").version, true, argv.join(" "));
		assert.equal(parseArgs(["show"], {}, "/w").version, false);
	});
});

/** The version in the package.json above this test file (source or compiled). */
function ownVersion(): string {
	for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
		const file = join(dir, "package.json");
		if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
	}
	return assert.fail("package.json not found above this test file");
}

describe("the real binary: --version and help", () => {
	const cwd = mkdtempSync(join(tmpdir(), "state-flow-cli-"));
	after(() => rmSync(cwd, { recursive: true, force: true }));

	it("--version prints the package version with exit 0, wherever it is run from", () => {
		const r = runCli(["--version"], { cwd });
		assert.deepEqual([r.code, r.stdout, r.stderr], [0, `${ownVersion()}\n`, ""]);
		assert.match(r.stdout, /^\d+\.\d+\.\d+/);
	});

	it("`help` and `help <command>` print the same text as --help, exit 0; a bad one exits 2", () => {
		assert.deepEqual(runCli(["help"], { cwd }), runCli(["--help"], { cwd }));
		for (const cmd of COMMANDS) {
			const r = runCli(["help", cmd], { cwd });
			assert.equal(r.code, 0, cmd);
			assert.equal(r.stdout, runCli([cmd, "--help"], { cwd }).stdout, cmd);
			assert.match(r.stdout, new RegExp(`^Usage: state-flow ${cmd}`));
		}
		const bad = runCli(["help", "frob"], { cwd });
		assert.equal(bad.code, 2);
		assert.match(bad.stderr, /^state-flow: unknown command `frob`/);
		assert.equal(bad.stdout, "");
		assert.match(runCli(["help"], { cwd }).stdout, /\n {2}help \[command\] +show this help/);
	});

	it("fits every help line and usage error in 80 columns; a usage error shows one usage, not the whole help (issue 27)", async () => {
		for (const cmd of [undefined, ...COMMANDS]) {
			const r = await main(cmd === undefined ? ["--help"] : [cmd, "--help"]);
			for (const line of r.stdout.split("\n")) assert.ok(line.length <= 80, `${cmd ?? "state-flow"}: ${line}`);
			// Whole phrases: a wrapped row never leaves one word alone on a line (`adopt`'s "or" did).
			for (const line of r.stdout.split("\n")) assert.doesNotMatch(line, /^\s+\S+$/, `${cmd ?? "state-flow"}: a word alone`);
		}
		const typo = await main(["show", "--ful"]);
		assert.equal(typo.code, 2);
		assert.equal(
			typo.stderr,
			"state-flow: unknown option `--ful`. Did you mean `--full`?\nUsage: state-flow show [global|cwd] [--full]\nRun `state-flow help show` for more.\n",
		);
	});
});

describe("main (in-process)", () => {
	it("prints each command's own help with exit 0", async () => {
		for (const cmd of COMMANDS) {
			const r = await main([cmd, "--help"]);
			assert.equal(r.code, 0);
			assert.match(r.stdout, new RegExp(`^Usage: state-flow ${cmd}`));
		}
		const top = await main([]);
		assert.equal(top.code, 0);
		for (const cmd of COMMANDS) assert.match(top.stdout, new RegExp(`\\n  ${cmd} `));
	});

	it("refuses a --cwd that is not a folder with exit 1 instead of creating it", async () => {
		const missing = join(tmpdir(), `state-flow-missing-${process.pid}-${Date.now()}`);
		for (const cmd of [["show"], ["doctor"], ["import", "-", "--owner", "cwd"]]) {
			const r = await main([...cmd, "--cwd", missing, "--agent-dir", missing], () => "{}");
			assert.equal(r.code, 1, cmd.join(" "));
			assert.match(r.stderr, /`--cwd` .* is not a folder/);
		}
		assert.equal(existsSync(missing), false);
	});

	it("maps usage errors to exit 2 with the command's usage on stderr", async () => {
		const r = await main(["show", "session"]);
		assert.equal(r.code, 2);
		assert.match(r.stderr, /^state-flow: Session state lives in pi's session file/);
		assert.match(r.stderr, /Usage: state-flow show/);
	});
});

describe("defaultAgentDir", () => {
	it("matches pi's getAgentDir for unset, absolute and ~ values of PI_CODING_AGENT_DIR", () => {
		const saved = process.env.PI_CODING_AGENT_DIR;
		try {
			for (const value of [undefined, "/tmp/x/agent", "~", "~/custom/agent", "relative/dir", "~user/x"]) {
				if (value === undefined) delete process.env.PI_CODING_AGENT_DIR;
				else process.env.PI_CODING_AGENT_DIR = value;
				assert.equal(defaultAgentDir(process.env), getAgentDir(), String(value));
			}
		} finally {
			if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
			else process.env.PI_CODING_AGENT_DIR = saved;
		}
	});
});

describe("parseImport and importPatch", () => {
	const state = (over: Partial<OwnerState> = {}): OwnerState => ({ intents: {}, strategy: {}, tactics: {}, artifacts: {}, lazy: {}, ...over });

	it("plans one canonical patch over every owner that changes and omits unchanged owners", () => {
		const targets = parseImport(
			{ format: "state-flow/export", v: 1, owners: { cwd: { state: state({ tactics: { a: 1 } }) }, global: { state: state() } } },
			undefined,
		);
		const patch = importPatch({ cwd: state({ tactics: { old: 1 } }), global: state() }, targets);
		assert.deepEqual(patch, { cwd: { tactics: { old: null, a: 1 } } });
	});

	it("restates kept tactics/lazy entries when it deletes an intent, so cascades cannot remove them", () => {
		const current = state({ intents: { i: { owns: [{ $ref: "cwd.tactics.t" }] } }, tactics: { t: "x", u: "y" } });
		const patch = importPatch({ cwd: current }, { cwd: state({ tactics: { t: "x" } }) });
		assert.deepEqual(patch, { cwd: { intents: { i: null }, tactics: { u: null, t: "x" } } });
	});

	it("makes the store equal the file even when an owning intent goes (real commit with cascades)", async (t) => {
		const root = mkdtempSync(join(tmpdir(), "state-flow-import-"));
		t.after(() => rmSync(root, { recursive: true, force: true }));
		const run = (args: string[], input: unknown) => main([...args, "--cwd", root, "--agent-dir", root], () => JSON.stringify(input));
		const before = state({ intents: { i: { owns: [{ $ref: "cwd.tactics.t" }, { $ref: "cwd.lazy.l" }] } }, tactics: { t: "x" }, lazy: { l: "body" } });
		assert.equal((await run(["import", "-", "--owner", "cwd"], before)).code, 0);
		const target = state({ tactics: { t: "x" }, lazy: { l: "body" } });
		const r = await run(["import", "-", "--owner", "cwd"], target);
		assert.equal(r.code, 0, r.stderr);
		const out = JSON.parse((await run(["export", "cwd"], null)).stdout) as { owners: { cwd: { state: OwnerState } } };
		assert.deepEqual(out.owners.cwd.state, target);
	});

	it("fills planes missing from a plain state object and refuses what stored state cannot hold", () => {
		assert.deepEqual(parseImport({ tactics: { a: 1 } }, "cwd"), { cwd: state({ tactics: { a: 1 } }) });
		const refusals: Array<[unknown, RegExp]> = [
			[[], /must hold a JSON object/],
			[{ tactics: { a: { b: null } } }, /`tactics\.a\.b` is null/],
			[{ response: {} }, /`response` is not a plane/],
			[{ intents: { i: { $ref: "lazy.plan" } } }, /`cwd\.lazy\.plan`/],
			[{ tactics: { n: Number.NaN } }, /finite JSON/],
		];
		for (const [input, message] of refusals) {
			assert.throws(
				() => parseImport(input, "cwd"),
				(e: unknown) => isStateError(e) && message.test(e.message),
				JSON.stringify(input),
			);
		}
	});
});
