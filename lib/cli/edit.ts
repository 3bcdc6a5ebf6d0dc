/**
 * `state-flow set <locator> <json>`, `state-flow delete <locator>` and `state-flow edit <locator>`:
 * a hand edit of Global or CWD as one transition signed by the user, through the normal commit
 * path (limits, validation, artifacts, cascades). What it changes is printed; an edit that
 * deletes more than the value named (an intent's owned tactics) needs `--yes`. `edit` opens
 * $VISUAL or $EDITOR on a temporary file; text that is refused stays in that file, with the
 * command that applies it once fixed.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fail, messageOf } from "../core/errors.js";
import { type EditOp, type EditTarget, parseEditTarget, valueAtTarget } from "../core/edit.js";
import { detach } from "../core/json.js";
import type { Json } from "../core/types.js";
import { artifactRootsFor } from "../storage/artifacts/files.js";
import { createArtifactCompiler } from "../storage/artifacts/compiler.js";
import { commitEdit, describeEdit, previewEdit } from "../ops/edit.js";
import { type Parsed, UsageError } from "./args.js";
import { lines, type Outcome, ok, openStores } from "./commands.js";
import { IMPORT_ROOTS } from "./transfer.js";

/** The target of a CLI edit: Global or CWD (Session lives in pi's session file). */
function cliTarget(p: Parsed): EditTarget {
	const target = parseEditTarget(p.positionals[0] as string);
	if (target.owner === "session") throw new UsageError(`Session state lives in pi's session file: use \`/state ${p.command} …\` inside pi.`, p.command);
	return target;
}

/** A JSON value from the command line, or from a file given as `@<path>`. */
export function parseValue(text: string, cwd: string, what = "the value"): Json {
	let source = text;
	if (text.startsWith("@")) {
		const path = resolve(cwd, text.slice(1));
		try {
			source = readFileSync(path, "utf8");
		} catch (e) {
			fail("io", `cannot read \`${path}\`: ${messageOf(e)}`);
		}
	}
	let raw: unknown;
	try {
		raw = JSON.parse(source);
	} catch (e) {
		fail("invalid_input", `${what} is not JSON (${messageOf(e)}); a string needs its quotes, e.g. '"write the parser"'.`);
	}
	return detach(raw);
}

/** Preview, ask (`--yes`) when it deletes more than named, commit; `kept` is said when the edit is refused. */
async function apply(p: Parsed, target: EditTarget, op: EditOp, command: string, kept = "", since?: { value: Json | undefined }): Promise<Outcome> {
	const { stores, warnings } = openStores(p);
	const preview = await previewEdit(stores, target, op, IMPORT_ROOTS, since);
	const shown = describeEdit(preview);
	if (preview.noop) return ok(`${lines(shown)}No change; nothing was written.\n`, lines(warnings));
	if (preview.alsoDeletes.length > 0 && !p.yes) {
		const again = `run it again with --yes to delete ${preview.alsoDeletes.length === 1 ? "it" : "them"} too`;
		return { stdout: lines(shown), stderr: lines([...warnings, `state-flow: nothing was written: ${again}.${kept}`]), code: 1 };
	}
	const compile = createArtifactCompiler(artifactRootsFor(p.cwd, p.agentDir));
	const result = await commitEdit(stores, preview, op, {
		by: { kind: "command", command },
		id: randomUUID(),
		at: new Date().toISOString(),
		roots: IMPORT_ROOTS,
		prepare: (patch, histories) => compile(patch, histories),
		...(p.allowSecret ? { allowSecret: true } : {}),
	});
	if (result.noop) return ok(`${lines(shown)}No change; nothing was written.\n`, lines(warnings));
	return ok(`${lines(shown)}Committed as transition ${result.transitionId}.\n`, lines(warnings));
}

/** `state-flow set <locator> <json|@file>`. */
export async function runSet(p: Parsed): Promise<Outcome> {
	const target = cliTarget(p);
	const value = parseValue(p.positionals[1] as string, p.cwd);
	return apply(p, target, { kind: "set", value }, `state-flow set ${p.positionals[0]}`);
}

/** `state-flow delete <locator>`. */
export async function runDelete(p: Parsed): Promise<Outcome> {
	return apply(p, cliTarget(p), { kind: "delete" }, `state-flow delete ${p.positionals[0]}`);
}

/** The editor command, as git reads it: $VISUAL, else $EDITOR, else vi. */
function editorOf(env: NodeJS.ProcessEnv): string {
	return env.VISUAL || env.EDITOR || "vi";
}

/**
 * `state-flow edit <locator>`: the value as indented JSON in a temporary file, opened in the
 * editor; the saved text is set as one transition. An empty or unchanged file changes nothing.
 */
export async function runEdit(p: Parsed, env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
	const target = cliTarget(p);
	const { stores } = openStores(p);
	const before = valueAtTarget((await stores.load(target.owner)).state, target);
	const dir = mkdtempSync(join(tmpdir(), "state-flow-edit-"));
	const file = join(dir, `${p.positionals[0]?.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 80)}.json`);
	const original = before === undefined ? "" : `${JSON.stringify(before, null, 2)}\n`;
	writeFileSync(file, original, { mode: 0o600 });
	// As git runs it: through the shell, so `code --wait` or `vim -u NONE` work; the file is an argument, never spliced.
	const ran = spawnSync("/bin/sh", ["-c", `${editorOf(env)} "$1"`, "state-flow-editor", file], { stdio: "inherit", env });
	const keep = ` Your text is kept in ${file}; fix it and apply it with \`state-flow set ${p.positionals[0]} @${file}\`.`;
	if (ran.error !== undefined || ran.status !== 0) {
		return {
			stdout: "",
			stderr: `state-flow: the editor (${editorOf(env)}) failed (${ran.error?.message ?? `exit code ${ran.status}`}); nothing was written.${keep}\n`,
			code: 1,
		};
	}
	const text = readFileSync(file, "utf8");
	if (text.trim() === "" || text === original) {
		rmSync(dir, { recursive: true, force: true });
		return ok(`No change to ${p.positionals[0]}; nothing was written.\n`);
	}
	let outcome: Outcome;
	try {
		const value = parseValue(text, p.cwd, "the edited text");
		outcome = await apply(p, target, { kind: "set", value }, `state-flow edit ${p.positionals[0]}`, keep, { value: before });
	} catch (e) {
		const why = messageOf(e);
		return { stdout: "", stderr: `state-flow: ${why}${/nothing was written/i.test(why) ? "" : " Nothing was written."}${keep}\n`, code: 1 };
	}
	if (outcome.code === 0) rmSync(dir, { recursive: true, force: true });
	return outcome;
}
