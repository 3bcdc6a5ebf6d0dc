/**
 * The project id a repository suggests in its `.pi/state-flow.json` (at the checkout's root):
 * untrusted input, only ever offered (by `/state link` and `state-flow link` without an id),
 * never bound. Here so that pi and the CLI read it the same way.
 */
import { closeSync, constants, fstatSync } from "node:fs";
import { join } from "node:path";
import { messageOf } from "../../core/errors.js";
import { isPlainObject } from "../../core/json.js";
import { sharedKeyProblem } from "../placement/config.js";
import { checkContained, openFile, readFrom } from "../fs-util.js";
import { projectOf } from "./project.js";

/** Where a repository may suggest its shared project id, relative to the checkout. */
export const SUGGESTION_FILE = ".pi/state-flow.json";

/** A suggestion file is a few bytes; anything larger is not one (and is never read whole). */
export const MAX_SUGGESTION_BYTES = 4096;

/** What the repository suggests: a valid project id, a reason it was ignored, or nothing. */
export type Suggestion = { project: string } | { problem: string } | undefined;

/**
 * Read the checkout's `.pi/state-flow.json` (at its work tree root, `projectOf`): a regular file (no link, FIFO or folder) inside
 * the checkout, at most 4 KiB, a JSON object whose `project` is a valid project id. Never
 * throws: anything else is a problem to report, and the suggestion is ignored.
 */
export function readSuggestion(cwd: string): Suggestion {
	const checkout = projectOf(cwd).checkout;
	const file = join(checkout, SUGGESTION_FILE);
	const ignored = (why: string): Suggestion => ({ problem: `the repository's ${SUGGESTION_FILE} is ignored: ${why}` });
	let text: string;
	try {
		checkContained(join(checkout, ".pi"), checkout, "The folder");
		const fd = openFile(file, constants.O_RDONLY);
		if (fd === undefined) return undefined;
		try {
			const size = fstatSync(fd).size;
			if (size > MAX_SUGGESTION_BYTES) return ignored(`it holds ${size} bytes, more than the ${MAX_SUGGESTION_BYTES} a project suggestion may.`);
			text = readFrom(fd, 0, size).toString("utf8");
		} finally {
			closeSync(fd);
		}
	} catch (e) {
		return ignored(messageOf(e));
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		return ignored('it is not valid JSON (expected { "project": "team/repo" }).');
	}
	if (!isPlainObject(raw) || !Object.hasOwn(raw, "project")) return ignored('it must be a JSON object such as { "project": "team/repo" }.');
	const why = sharedKeyProblem(raw.project);
	if (why !== undefined) return ignored(`its \`project\` ${why}.`);
	return { project: raw.project as string };
}
