/**
 * The edges of the locator grammar (docs/query-language.md): which characters make a plain
 * name (printed `.key`) at every boundary of its character classes, the exact refusal of each
 * malformed locator (words, column, the token it quotes), and the printer for every kind of root.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isStateError } from "../../lib/core/errors.js";
import { formatKeySegment, formatLocator, formatModelLocator, type Locator, type LocatorForm, parseLocator, tryParseLocator } from "../../lib/core/locator.js";

/** The first line of the refusal: `unexpected <token> at column <n> in \`text\`: <why>`. Without `roots`, none are passed (the default: no registered roots). */
function refusal(text: string, form: LocatorForm, roots?: readonly string[]): string {
	try {
		if (roots === undefined) parseLocator(text, form);
		else parseLocator(text, form, roots);
	} catch (e) {
		assert.ok(isStateError(e) && e.code === "parse_error", `expected parse_error, got ${String(e)}`);
		return e.message.split("\n")[0] as string;
	}
	return assert.fail(`\`${text}\` parsed in ${form} form`);
}

describe("plain names, character by character", () => {
	// The documented classes: a name starts with [A-Za-z_$] and goes on with [A-Za-z0-9_$-].
	const starts = "AZaz_$";
	const inner = `${starts}09-`;
	// Each neighbour of a class boundary by character code, and other punctuation.
	const neither = "@[`{^#%/:., \"'\\]~";

	it("prints a key bare exactly when it is a plain name", () => {
		for (const c of starts) {
			assert.equal(formatKeySegment(c), `.${c}`, c);
			assert.equal(formatKeySegment(`${c}long`), `.${c}long`, c);
		}
		for (const c of "09-") assert.equal(formatKeySegment(c), `[${JSON.stringify(c)}]`, c);
		for (const c of inner) assert.equal(formatKeySegment(`k${c}`), `.k${c}`, c);
		for (const c of neither) {
			assert.equal(formatKeySegment(c), `[${JSON.stringify(c)}]`, c);
			assert.equal(formatKeySegment(`k${c}`), `[${JSON.stringify(`k${c}`)}]`, c);
			assert.equal(formatKeySegment(`kk${c}k`), `[${JSON.stringify(`kk${c}k`)}]`, c);
		}
	});

	it("parses a plain name after `.` and stops a name at the first other character", () => {
		for (const c of inner)
			assert.deepEqual(parseLocator(`cwd.tactics.k${c}`, "canonical"), { kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: [`k${c}`] });
		for (const c of starts) assert.deepEqual(parseLocator(`tactics.${c}`, "flat"), { kind: "state", scope: null, offset: 0, plane: "tactics", path: [c] });
		for (const c of "09-") assert.match(refusal(`tactics.${c}`, "flat"), /at column 9 .*expected a key name after `\.`/);
		for (const c of "@[`{^#%/:") assert.equal(tryParseLocator(`tactics.k${c}`, "flat"), undefined, c);
	});
});

describe("every refusal: its token, column and words", () => {
	const planes = "planes are `intents`, `strategy`, `tactics`, `artifacts`, `lazy`";
	const cases: Array<[string, LocatorForm, string, string[]?]> = [
		["plans.x", "flat", `unexpected \`plans\` at column 1 in \`plans.x\`: unknown plane \`plans\`; ${planes}`],
		["roots.a", "flat", `unexpected \`roots\` at column 1 in \`roots.a\`: unknown plane \`roots\`; ${planes}, \`todos\``, ["todos"]],
		["cwd.response", "canonical", `unexpected \`response\` at column 5 in \`cwd.response\`: unknown plane \`response\`; ${planes}`],
		["session[1].response", "canonical", `unexpected \`response\` at column 12 in \`session[1].response\`: unknown plane \`response\`; ${planes}`],
		[
			"lazy.plan",
			"canonical",
			"unexpected `lazy` at column 1 in `lazy.plan`: `lazy` is not an owner; qualify it with an owner, e.g. `cwd.lazy.plan` or `session.lazy.plan`",
		],
		[
			"patches[0]",
			"scoped",
			"unexpected `patches` at column 1 in `patches[0]`: `patches` is not an owner; qualify it with an owner, e.g. `cwd.patches[0]` or `session.patches[0]`",
		],
		["response", "canonical", "unexpected `response` at column 1 in `response`: `response` is not an owner; write `session.response`"],
		["foo.x", "scoped", "unexpected `foo` at column 1 in `foo.x`: `foo` is not an owner; a locator starts with `global`, `cwd`, `session` or `effective`"],
		["1abc", "flat", "unexpected `1` at column 1 in `1abc`: expected a root (an owner, `effective` or a plane)"],
		["cwd/x", "canonical", "unexpected `/` at column 4 in `cwd/x`: expected `.` followed by a plane"],
		["cwd.", "canonical", "unexpected end of locator at column 5 in `cwd.`: expected a plane name"],
		["effective.", "flat", "unexpected end of locator at column 11 in `effective.`: expected a plane name"],
		["effective/x", "flat", "unexpected `/` at column 10 in `effective/x`: expected `.` followed by a plane"],
		["tactics[99999999999999999999]", "flat", "unexpected `9` at column 9 in `tactics[99999999999999999999]`: number too large"],
		["tactics[1", "flat", "unexpected end of locator at column 10 in `tactics[1`: expected `]`"],
		["tactics[1x", "flat", "unexpected `x` at column 10 in `tactics[1x`: expected `]`"],
		["tactics[]", "flat", 'unexpected `]` at column 9 in `tactics[]`: expected a number (or a quoted key `["..."]`)'],
		["cwd[", "canonical", 'unexpected end of locator at column 5 in `cwd[`: expected a number (or a quoted key `["..."]`)'],
		["tactics[00]", "flat", "unexpected `0` at column 9 in `tactics[00]`: write `0` without leading zeros"],
		["patches.x", "flat", "unexpected `.` at column 8 in `patches.x`: expected `[N]`, e.g. `patches[0]`"],
		["cwd.patches", "canonical", "unexpected end of locator at column 12 in `cwd.patches`: expected `[N]`, e.g. `patches[0]`"],
		['tactics.a"b', "flat", 'unexpected `"` at column 10 in `tactics.a"b`: expected `.key`, `[N]` or `["key"]`'],
		['lazy["a"x', "flat", 'unexpected `x` at column 9 in `lazy["a"x`: expected `]`'],
		['lazy["a\\', "flat", 'unexpected end of locator at column 9 in `lazy["a\\`: unterminated string; close it with `"]`'],
		[
			"tactics.a.",
			"flat",
			'unexpected end of locator at column 11 in `tactics.a.`: expected a key name after `.` (use ["..."] for keys that are not identifiers)',
		],
		[
			"effective[2].tactics",
			"scoped",
			"unexpected `[2]` at column 10 in `effective[2].tactics`: `effective[2]` is refused with several owners: history is per owner, read e.g. `cwd[2]` instead",
		],
		["cwd.roots", "scoped", `unexpected \`roots\` at column 5 in \`cwd.roots\`: unknown plane \`roots\`; ${planes}`],
	];
	for (const [text, form, first, roots] of cases) {
		it(`\`${text}\` (${form})`, () => assert.equal(refusal(text, form, roots), first));
	}

	it("tryParseLocator answers undefined for a refusal and the locator otherwise, with the roots it is given", () => {
		assert.equal(tryParseLocator("todos.a", "flat"), undefined);
		assert.deepEqual(tryParseLocator("todos.a", "flat", ["todos"]), { kind: "state", scope: null, offset: 0, plane: "roots", path: ["todos", "a"] });
	});
});

describe("roots and owners the grammar accepts", () => {
	const rows: Array<[string, LocatorForm, Locator]> = [
		["cwd[2]", "canonical", { kind: "state", scope: "cwd", offset: 2, plane: null, path: [] }],
		["effective", "flat", { kind: "state", scope: "effective", offset: 0, plane: null, path: [] }],
		["effective[1]", "canonical", { kind: "state", scope: "effective", offset: 1, plane: null, path: [] }],
		["effective[3].lazy.a", "flat", { kind: "state", scope: "effective", offset: 3, plane: "lazy", path: ["a"] }],
		["effective.lazy", "scoped", { kind: "state", scope: "effective", offset: 0, plane: "lazy", path: [] }],
		["session.response", "scoped", { kind: "response", owner: "session", path: [] }],
		["response[0]", "flat", { kind: "response", owner: null, path: [0] }],
		["patches[12].patch", "flat", { kind: "patches", owner: null, index: 12, path: ["patch"] }],
		["cwd.roots.todos", "canonical", { kind: "state", scope: "cwd", offset: 0, plane: "roots", path: ["todos"] }],
	];
	for (const [text, form, loc] of rows) {
		it(`\`${text}\` (${form}) parses and prints back`, () => {
			assert.deepEqual(parseLocator(text, form), loc);
			assert.equal(formatLocator(loc), text);
		});
	}

	it("a registered root stands beside the planes in every form and prints beside them for the model", () => {
		const loc = parseLocator("cwd[1].todos.a", "canonical", ["todos"]);
		assert.deepEqual(loc, { kind: "state", scope: "cwd", offset: 1, plane: "roots", path: ["todos", "a"] });
		assert.equal(formatLocator(loc), "cwd[1].roots.todos.a");
		assert.equal(formatModelLocator(loc), "cwd[1].todos.a");
		assert.equal(formatModelLocator({ kind: "state", scope: "cwd", offset: 0, plane: "roots", path: [] }), "cwd.roots");
		assert.equal(formatModelLocator({ kind: "state", scope: "cwd", offset: 0, plane: "tactics", path: ["todos"] }), "cwd.tactics.todos");
		assert.equal(formatModelLocator({ kind: "patches", owner: "cwd", index: 0, path: ["roots"] }), "cwd.patches[0].roots");
	});
});
