/**
 * Values of a git `config` file's text, as git's own parser reads them (git-config(1),
 * "CONFIGURATION FILE"): `[section]`, `[section "subsection"]` (case-sensitive, `\"` and `\\`
 * escaped) and the old `[section.subsection]`; names case-insensitive; a value's quotes, escapes
 * (`\n`, `\t`, `\b`, `\"`, `\\`), comments (`#`, `;` outside quotes) and `\`-continued lines. The
 * one parser for the few values State Flow reads (`remote.origin.url`, `core.worktree`,
 * `extensions.objectFormat`). `include`/`includeIf` are never followed: only the file given is
 * read, so a repository's config never makes State Flow read another file.
 */

/** One variable: section and name lower-cased, the subsection as written (undefined without one). */
export interface ConfigEntry {
	section: string;
	subsection?: string;
	name: string;
	/** The value; `true` for a name without `=` (git's boolean shorthand). */
	value: string | true;
}

/** A section header at `line[at]` (after `[`): the section, its subsection and where the header ends; undefined when malformed. */
function header(line: string, at: number): { section: string; subsection?: string; end: number } | undefined {
	const m = /^\s*([A-Za-z0-9.-]+)\s*/.exec(line.slice(at));
	if (m === null) return undefined;
	let i = at + m[0].length;
	const name = m[1] as string;
	if (line[i] === "]") {
		const dot = name.indexOf(".");
		// `[section.subsection]`: the old form, lower-cased as a whole.
		return dot < 0
			? { section: name.toLowerCase(), end: i + 1 }
			: { section: name.slice(0, dot).toLowerCase(), subsection: name.slice(dot + 1).toLowerCase(), end: i + 1 };
	}
	if (line[i] !== '"' || name.includes(".")) return undefined;
	let sub = "";
	for (i++; i < line.length && line[i] !== '"'; i++) {
		if (line[i] === "\\") i++;
		if (i < line.length) sub += line[i];
	}
	if (line[i] !== '"' || line[i + 1] !== "]") return undefined;
	return { section: name.toLowerCase(), subsection: sub, end: i + 2 };
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", b: "\b", '"': '"', "\\": "\\" };

/** A value from `text[at]` to its end (comments dropped, quotes and escapes applied, continuations joined); undefined when malformed. */
function value(lines: string[], index: { line: number }, at: number): string | undefined {
	let line = lines[index.line] as string;
	let out = "";
	// White space outside quotes is kept only between words (trailing space is dropped).
	let pending = "";
	let quoted = false;
	for (let i = at; ; i++) {
		if (i >= line.length) {
			if (quoted) return undefined;
			return out;
		}
		const c = line[i] as string;
		if (c === "\\") {
			if (i + 1 >= line.length) {
				// A continuation: the value goes on at the next line.
				index.line++;
				if (index.line >= lines.length) return undefined;
				line = lines[index.line] as string;
				i = -1;
				continue;
			}
			const e = ESCAPES[line[i + 1] as string];
			if (e === undefined) return undefined;
			out += pending + e;
			pending = "";
			i++;
		} else if (c === '"') {
			quoted = !quoted;
			out += pending;
			pending = "";
		} else if (!quoted && (c === "#" || c === ";")) {
			return out;
		} else if (!quoted && (c === " " || c === "\t")) {
			if (out !== "") pending += c;
		} else {
			out += pending + c;
			pending = "";
		}
	}
}

/** Every variable of a config's text, in order; a malformed line ends the reading (git refuses such a file). */
export function configEntries(text: string): ConfigEntry[] {
	const lines = text.split(/\r?\n/);
	const out: ConfigEntry[] = [];
	let section: string | undefined;
	let subsection: string | undefined;
	for (const index = { line: 0 }; index.line < lines.length; index.line++) {
		const line = lines[index.line] as string;
		let at = /^\s*/.exec(line)?.[0].length ?? 0;
		if (line[at] === "[") {
			const h = header(line, at + 1);
			if (h === undefined) return out;
			({ section, subsection } = h);
			at = h.end + (/^\s*/.exec(line.slice(h.end))?.[0].length ?? 0);
		}
		if (at >= line.length || line[at] === "#" || line[at] === ";") continue;
		const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(=?)/.exec(line.slice(at));
		if (m === null || section === undefined) return out;
		const name = (m[1] as string).toLowerCase();
		if (m[2] === "") {
			if (!/^\s*(?:[#;].*)?$/.test(line.slice(at + m[0].length))) return out;
			out.push({ section, ...(subsection !== undefined ? { subsection } : {}), name, value: true });
			continue;
		}
		const v = value(lines, index, at + m[0].length);
		if (v === undefined) return out;
		out.push({ section, ...(subsection !== undefined ? { subsection } : {}), name, value: v });
	}
	return out;
}

/** The values of `section[.subsection].name` in order (git's last one wins for a single value; `remote.*.url` takes the first). */
export function configValues(text: string, section: string, name: string, subsection?: string): Array<string | true> {
	const s = section.toLowerCase();
	const n = name.toLowerCase();
	return configEntries(text)
		.filter((e) => e.section === s && e.name === n && e.subsection === subsection)
		.map((e) => e.value);
}

/** The last value of a single-valued variable as a string (git's rule), or undefined. */
export function configValue(text: string, section: string, name: string, subsection?: string): string | undefined {
	const v = configValues(text, section, name, subsection).at(-1);
	return typeof v === "string" ? v : undefined;
}
