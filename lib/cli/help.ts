/**
 * Help of `state-flow` and of each command, laid out at 80 columns: the overview lists every
 * command's rows from its record (`verbs.ts`), each command's own text is its record's `help`
 * (the prose lives in `help-text.ts`). A long line is broken at a phrase where one is near
 * (after a comma, colon or semicolon, before a parenthesis), so no word is left alone.
 */
import { MAIN_HEAD, MAIN_TAIL } from "./help-text.js";
import { VERBS, verbNamed } from "./verbs.js";

/** Columns every help line fits in. */
export const HELP_WIDTH = 80;

/** How a line may break: anywhere between words, at phrase ends (a row), or between options (a usage form). */
type Breaks = "words" | "phrases" | "options";

/** The last space at or before `from` outside `[…]` and `<…>` (a usage form's option stays whole), or -1. */
function lastOptionSpace(text: string, from: number): number {
	let depth = 0;
	let last = -1;
	for (let i = 0; i <= Math.min(from, text.length - 1); i++) {
		const c = text[i];
		if (c === "[" || c === "<") depth++;
		else if ((c === "]" || c === ">") && depth > 0) depth--;
		else if (c === " " && depth === 0) last = i;
	}
	return last;
}

/**
 * Where to break `text` to fit `width`: at the last space before the width; for a row
 * (`phrases`) at the last phrase end (after `,` `:` `;`, before `(`) in the second half of the
 * room, so a row's text is never cut one word before its end; for a usage form (`options`) only
 * between its options, never inside `[--move-aside <owner>]`. Undefined: no space to break at.
 */
function breakAt(text: string, width: number, hang: number, breaks: Breaks): number | undefined {
	const cut = breaks === "options" ? lastOptionSpace(text, width) : text.lastIndexOf(" ", width);
	if (cut <= hang) {
		// A word longer than the line keeps its own line.
		const after = text.indexOf(" ", width);
		return after < 0 ? undefined : after;
	}
	if (breaks !== "phrases") return cut;
	for (let at = cut; at > hang + (width - hang) / 2; at = text.lastIndexOf(" ", at - 1)) {
		if (/[,:;]$/.test(text.slice(0, at)) || text[at + 1] === "(") return at;
	}
	return cut;
}

/**
 * A line longer than HELP_WIDTH broken at spaces; continuation lines hang under the
 * description column of an option or command row (`  --cwd <dir>        …`), under the first
 * option of a usage form (`Usage: state-flow doctor [--dry-run] …`), under the text of a list
 * item (`  - a torn last line …`), else under the line's own indentation. Spacing inside the
 * line is kept.
 */
export function wrapHelpLine(line: string, width = HELP_WIDTH): string[] {
	if (line.length <= width) return [line];
	const usage = /^(Usage: +| {7})state-flow \S+ (?! )/.exec(line);
	const item = /^\s*- /.exec(line);
	const row = usage || item ? null : /^(\s*\S.*?\s{2,})\S/.exec(line);
	const lead = usage?.[0] ?? item?.[0] ?? row?.[1] ?? /^\s*/.exec(line)?.[0] ?? "";
	const hang = " ".repeat(lead.length);
	const breaks: Breaks = usage ? "options" : row ? "phrases" : "words";
	const out: string[] = [];
	let rest = line;
	while (rest.length > width) {
		const at = breakAt(rest, width, hang.length, breaks);
		if (at === undefined) break;
		out.push(rest.slice(0, at).trimEnd());
		rest = hang + rest.slice(at).trimStart();
	}
	out.push(rest);
	return out;
}

/** Column where a command row's text starts in the overview. */
const ROW_TEXT = 27;

/** `state-flow --help`: the head, every command's rows, `help`, the tail. */
function mainHelp(): string {
	const rows = [...VERBS.flatMap((v) => v.rows), ["help [command]", "show this help, or one command's"] as const].flatMap(([form, what]) => {
		const lead = `  ${form}`;
		return lead.length + 2 <= ROW_TEXT ? [lead.padEnd(ROW_TEXT) + what] : [lead, " ".repeat(ROW_TEXT) + what];
	});
	return `${MAIN_HEAD}\n\nCommands:\n${rows.join("\n")}\n\n${MAIN_TAIL}`;
}

/** Lines that continue a row's text (indented to where it starts) joined to it, so the row is wrapped as one. */
function joinRows(lines: readonly string[]): string[] {
	const out: string[] = [];
	let hang = -1;
	for (const line of lines) {
		const lead = /^ */.exec(line)?.[0].length ?? 0;
		if (hang > 0 && lead === hang && out.length > 0) {
			out[out.length - 1] += ` ${line.trimStart()}`;
			continue;
		}
		const row = /^(\s*\S.*?\s{2,})\S/.exec(line);
		hang = row ? (row[1] as string).length : -1;
		out.push(line);
	}
	return out;
}

/**
 * Help text at HELP_WIDTH: a paragraph of prose (every line starts at column 1, none is a
 * `Usage:` line) is filled again, so a long line never leaves one word alone on the next; other
 * lines (rows, usage forms) are wrapped one by one.
 */
function fitHelp(text: string): string {
	return text
		.split("\n\n")
		.map((para) => {
			const lines = para.split("\n");
			const prose = lines.every((l) => /^\S/.test(l) && !l.startsWith("Usage:")) && lines.some((l) => l.length > HELP_WIDTH);
			return (prose ? wrapHelpLine(lines.join(" ")) : joinRows(lines).flatMap((l) => wrapHelpLine(l))).join("\n");
		})
		.join("\n\n");
}

/** The help of a command, or (undefined, or no such command) the overview. */
const textOf = (command: string | undefined): string => verbNamed(command)?.help ?? mainHelp();

/** Help for one command, or the overview, at most HELP_WIDTH columns a line. */
export function helpText(command: string | undefined): string {
	return fitHelp(textOf(command));
}

/** The usage line(s) of a command (or of `state-flow`), and where the whole help is. */
export function usageLine(command: string | undefined): string {
	const text = textOf(command);
	const lines = text.split("\n");
	const start = lines.findIndex((l) => l.startsWith("Usage:"));
	const usage = [lines[start] as string];
	// `state-flow migrate` has more than one form: each on its own line under the first.
	for (const l of lines.slice(start + 1)) {
		if (!/^ {7}state-flow /.test(l)) break;
		usage.push(l);
	}
	return [...usage.flatMap((l) => wrapHelpLine(l)), `Run \`state-flow help${verbNamed(command) === undefined ? "" : ` ${command}`}\` for more.`].join("\n");
}
