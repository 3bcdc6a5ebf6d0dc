/**
 * The locator language of `read_state` and structured references (docs/spec.md §4.1, §3.3):
 * one parser for the flat, scoped and canonical forms and one canonical printer.
 * `[N]` right after an owner or `effective` is temporal; everywhere else it is an index.
 * The grammar is documented in docs/query-language.md.
 */
import { jsonId } from "./printable.js";
import { fail } from "./errors.js";
import { PLANES, ROOTS, type Owner, type Section, isOwner, isPlane } from "./types.js";

/** A path step below a plane: a string is an object key, a number an array index. */
export type Segment = string | number;

/**
 * A parsed locator. `scope`/`owner` null means "the sole owner" (flat form only, relative
 * text); the model interface resolves it against the captured wanted owners.
 */
export type Locator =
	| {
			kind: "state";
			/** An owner, the read-only overlay of the wanted owners (in flat form: the sole owner), or null (flat plane root). */
			scope: Owner | "effective" | null;
			/** Transitions back: 0 is the current state. */
			offset: number;
			/** null reads the whole five-plane state of the root; `roots` is a registered root, named by `path[0]`. */
			plane: Section | null;
			path: Segment[];
	  }
	| { kind: "patches"; owner: Owner | null; index: number; path: Segment[] }
	| { kind: "response"; owner: "session" | null; path: Segment[] };

/** flat: one wanted owner (model side); scoped: 2-3 owners (model side); canonical: stored refs. */
export type LocatorForm = "flat" | "scoped" | "canonical";

/** `[A-Za-z_$]` by character code (the parser runs on every tool call; no regex per character). */
function isIdentStart(c: number): boolean {
	return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

/** `[A-Za-z0-9_$-]` by character code. */
function isIdentChar(c: number): boolean {
	return isIdentStart(c) || isDigit(c) || c === 45;
}

function isDigit(c: number): boolean {
	return c >= 48 && c <= 57;
}

/** `^[A-Za-z_$][A-Za-z0-9_$-]*$`: the key prints as `.key`. */
function isIdent(key: string): boolean {
	if (!isIdentStart(key.charCodeAt(0))) return false;
	for (let i = 1; i < key.length; i++) if (!isIdentChar(key.charCodeAt(i))) return false;
	return true;
}

/** Print a key segment: `.ident` where it fits, `["json string"]` otherwise (`jsonId`). */
export function formatKeySegment(key: Segment): string {
	if (typeof key === "number") return `[${key}]`;
	// Spelled so a key reads as it is wherever a locator is shown (invisible and bidi characters as escapes, which parse back to them).
	return isIdent(key) ? `.${key}` : `[${jsonId(key)}]`;
}

/** Canonical text of a locator. A null owner prints relative (the flat presentation). */
export function formatLocator(loc: Locator): string {
	let head: string;
	if (loc.kind === "state") {
		// A relative root (flat form, sole owner) prints as nothing: `tactics.a`.
		const root = loc.scope === null ? "" : loc.scope + (loc.offset > 0 ? `[${loc.offset}]` : "");
		head = loc.plane === null ? root : root === "" ? loc.plane : `${root}.${loc.plane}`;
	} else if (loc.kind === "patches") {
		head = `${loc.owner === null ? "" : `${loc.owner}.`}patches[${loc.index}]`;
	} else {
		head = loc.owner === null ? "response" : "session.response";
	}
	return head + loc.path.map(formatKeySegment).join("");
}

/** A locator as the model writes it: a registered root stands beside the planes (`cwd.todos.a`, not `cwd.roots.todos.a`). */
export function formatModelLocator(loc: Locator): string {
	if (loc.kind !== "state" || loc.plane !== ROOTS || typeof loc.path[0] !== "string") return formatLocator(loc);
	return formatLocator({ ...loc, plane: loc.path[0] as Section, path: loc.path.slice(1) });
}

/**
 * Parse a locator; refusals are `parse_error` with the column and a caret line. `roots` are
 * the registered root names the model may write beside the planes (`todos.a` → plane
 * `roots`, path `["todos", "a"]`); the canonical form names the namespace (`cwd.roots.todos.a`).
 */
export function parseLocator(text: string, form: LocatorForm, roots: readonly string[] = []): Locator {
	return new Parser(text, form, roots).parse();
}

/** Whether `text` parses in `form` (no error object escapes). */
export function tryParseLocator(text: string, form: LocatorForm, roots: readonly string[] = []): Locator | undefined {
	try {
		return parseLocator(text, form, roots);
	} catch {
		return undefined;
	}
}

class Parser {
	private pos = 0;
	constructor(
		private readonly text: string,
		private readonly form: LocatorForm,
		private readonly roots: readonly string[],
	) {}

	/** A plane, the canonical `roots` namespace, or a registered root name; anything else is refused. */
	private section(start: number, word: string, scope: Owner | "effective" | null, offset: number): Locator {
		if (isPlane(word) || (word === ROOTS && this.form === "canonical")) return { kind: "state", scope, offset, plane: word, path: this.segments() };
		if (this.roots.includes(word)) return { kind: "state", scope, offset, plane: ROOTS, path: [word, ...this.segments()] };
		return this.unknownPlane(start, word);
	}

	parse(): Locator {
		if (this.text.length === 0) this.error(0, "empty locator; name a plane, e.g. `tactics`, or an owner, e.g. `cwd.tactics`");
		const start = this.pos;
		const word = this.ident("a root (an owner, `effective` or a plane)");
		if (isOwner(word)) return this.ownerRoot(word);
		if (word === "effective") return this.effectiveRoot();
		if (this.form !== "flat") {
			const hint =
				isPlane(word) || word === "patches"
					? `; qualify it with an owner, e.g. \`cwd.${this.text}\` or \`session.${this.text}\``
					: word === "response"
						? "; write `session.response`"
						: "; a locator starts with `global`, `cwd`, `session` or `effective`";
			this.error(start, `\`${word}\` is not an owner${hint}`, word.length);
		}
		if (word === "patches") {
			const index = this.index(true);
			return { kind: "patches", owner: null, index, path: this.segments() };
		}
		if (word === "response") return { kind: "response", owner: null, path: this.segments() };
		return this.section(start, word, null, 0);
	}

	private ownerRoot(owner: Owner): Locator {
		const offset = this.peek() === "[" ? this.index(false) : 0;
		if (this.pos >= this.text.length) return { kind: "state", scope: owner, offset, plane: null, path: [] };
		this.expect(".", "`.` followed by a plane");
		const start = this.pos;
		const word = this.ident("a plane name");
		if (offset === 0 && word === "patches") {
			const index = this.index(true);
			return { kind: "patches", owner, index, path: this.segments() };
		}
		if (offset === 0 && word === "response" && owner === "session") return { kind: "response", owner, path: this.segments() };
		return this.section(start, word, owner, offset);
	}

	private effectiveRoot(): Locator {
		const bracket = this.pos;
		const offset = this.peek() === "[" ? this.index(false) : 0;
		if (offset > 0 && this.form === "scoped") {
			this.error(
				bracket,
				`\`effective[${offset}]\` is refused with several owners: history is per owner, read e.g. \`cwd[${offset}]\` instead`,
				this.pos - bracket,
			);
		}
		// Flat `effective[N]` is the sole owner N transitions back; the model interface resolves it.
		const scope = "effective";
		if (this.pos >= this.text.length) return { kind: "state", scope, offset, plane: null, path: [] };
		this.expect(".", "`.` followed by a plane");
		const planeStart = this.pos;
		const word = this.ident("a plane name");
		return this.section(planeStart, word, scope, offset);
	}

	private segments(): Segment[] {
		const out: Segment[] = [];
		while (this.pos < this.text.length) {
			const c = this.peek();
			if (c === ".") {
				this.pos++;
				out.push(this.ident('a key name after `.` (use ["..."] for keys that are not identifiers)'));
			} else if (c === "[") {
				if (this.text[this.pos + 1] === '"') out.push(this.quotedKey());
				else out.push(this.index(false));
			} else {
				this.error(this.pos, 'expected `.key`, `[N]` or `["key"]`');
			}
		}
		return out;
	}

	private ident(what: string): string {
		const start = this.pos;
		if (!isIdentStart(this.text.charCodeAt(this.pos))) this.error(start, `expected ${what}`);
		while (this.pos < this.text.length && isIdentChar(this.text.charCodeAt(this.pos))) this.pos++;
		return this.text.slice(start, this.pos);
	}

	/** `[N]`: a non-negative decimal integer without leading zeros. */
	private index(required: boolean): number {
		if (required && this.peek() !== "[") this.error(this.pos, "expected `[N]`, e.g. `patches[0]`");
		this.pos++;
		const start = this.pos;
		while (this.pos < this.text.length && isDigit(this.text.charCodeAt(this.pos))) this.pos++;
		const digits = this.text.slice(start, this.pos);
		if (digits === "") this.error(start, 'expected a number (or a quoted key `["..."]`)');
		if (digits.length > 1 && digits.startsWith("0")) this.error(start, `write \`${Number(digits)}\` without leading zeros`);
		const n = Number(digits);
		if (!Number.isSafeInteger(n)) this.error(start, "number too large");
		this.expect("]", "`]`");
		return n;
	}

	/** `["..."]` with JSON string escapes. */
	private quotedKey(): string {
		this.pos++; // [
		const start = this.pos;
		this.pos++; // opening quote
		while (this.pos < this.text.length && this.peek() !== '"') this.pos += this.peek() === "\\" ? 2 : 1;
		if (this.pos >= this.text.length) this.error(this.text.length, 'unterminated string; close it with `"]`');
		this.pos++; // closing quote
		let key: unknown;
		try {
			key = JSON.parse(this.text.slice(start, this.pos));
		} catch {
			this.error(start, "invalid JSON string (check the escapes)");
		}
		this.expect("]", "`]`");
		return key as string;
	}

	private expect(ch: string, what: string): void {
		if (this.peek() !== ch) this.error(this.pos, `expected ${what}`);
		this.pos++;
	}

	private peek(): string {
		return this.text[this.pos] ?? "";
	}

	private unknownPlane(at: number, word: string): never {
		const names = [...PLANES, ...this.roots].map((p) => `\`${p}\``).join(", ");
		this.error(at, `unknown plane \`${word}\`; planes are ${names}`, word.length);
	}

	/** `len` widens the quoted token for whole-word refusals (`unknown plane`). */
	private error(at: number, why: string, len = 1): never {
		const found = at >= this.text.length ? "end of locator" : `\`${this.text.slice(at, at + len)}\``;
		const caret = `${" ".repeat(at)}^`;
		fail("parse_error", `unexpected ${found} at column ${at + 1} in \`${this.text}\`: ${why}\n  ${this.text}\n  ${caret}`);
	}
}
