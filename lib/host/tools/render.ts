/**
 * TUI renderers for `patch_state` and `read_state`: a compact one-to-few-line summary
 * (owner, changed paths, cascades, compiled artifacts, errors) that expands (Ctrl+O in pi) to full detail.
 * Pure functions of (args | result, theme) returning pi-tui `Text` components; they never
 * throw on partial, streaming or foreign-shaped input, because a renderer crash would
 * break the user's screen rather than the tool call. Arguments and results are made
 * `printable` first: a model's argument or a stored value never sends terminal controls.
 * Every view is a `ScreenText`: what it hands pi-tui is bounded by the screen, not by the value
 * (`COLLAPSED_ROWS`, `EXPANDED_ROWS`; a marker says what was left out).
 */
import { utf8Bytes } from "../../core/size.js";
import type { Theme, ToolRenderResultOptions } from "@mariozechner/pi-coding-agent";
import { type Component, Text } from "@mariozechner/pi-tui";
import { ScreenText, WIDEST, clipDeep } from "../screen-text.js";
import { formatKeySegment } from "../../core/locator.js";
import { printableDeep } from "../../core/printable.js";
import { ARTIFACT_COMPILER_FIELDS, OWNERS } from "../../core/types.js";

/** The part of pi's `Theme` the renderers use (pi's `Theme` satisfies it). */
export type RenderTheme = Pick<Theme, "fg" | "bold">;

/** The part of pi's `ToolRenderContext` (not exported by pi) the renderers read. */
export interface RenderContext {
	isError: boolean;
	expanded: boolean;
}

/** A tool result as pi hands it to `renderResult`. */
export interface RenderableResult {
	content: ReadonlyArray<{ type: string; text?: string }>;
	details?: unknown;
}

/** Rows of the width a collapsed view takes at most (a long key or value line is cut, with a marker). */
export const COLLAPSED_ROWS = 24;
/** Rows of the width an expanded view takes at most: the rest is read in `/state browse`. */
export const EXPANDED_ROWS = 200;

/**
 * Arguments or a result as a view of `rows` rows shows them: every string cut to what that many
 * rows of the widest screen could show (marked where it is cut), then `printable`. Linear work
 * (`printable`, JSON) is then bounded by the screen too, not by the value.
 */
function shown(v: unknown, rows: number): unknown {
	return printableDeep(clipDeep(v, rows * WIDEST));
}

/** Lines of `text`, counted without splitting it. */
function lineCount(text: string): number {
	let n = 1;
	for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
	return n;
}

/** The view of `text`, at most `rows` rows of the width it is drawn at. */
function view(text: string, rows: number, theme: RenderTheme): Component {
	return new ScreenText(text, rows, { mark: (s) => theme.fg("dim", s) });
}

/** Paths shown in the collapsed view before "+N more". */
const COMPACT_ITEMS = 4;
/** Characters of an error message shown collapsed. */
const COMPACT_ERROR = 160;

type Rec = Record<string, unknown>;

function isRec(v: unknown): v is Rec {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

function strings(v: unknown): string[] {
	return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function resultText(result: RenderableResult): string {
	return result.content
		.map((c) => (c.type === "text" && typeof c.text === "string" ? c.text : ""))
		.filter((t) => t !== "")
		.join("\n");
}

function clip(text: string, max: number): string {
	const line = text.split("\n")[0] ?? "";
	return line.length > max || text.includes("\n") ? `${line.slice(0, max)}…` : line;
}

/** List items, collapsed to the first few plus a count. */
function list(items: string[], expanded: boolean, theme: RenderTheme, color: "muted" | "warning" | "error" | "dim"): string[] {
	const shown = expanded ? items : items.slice(0, COMPACT_ITEMS);
	const lines = shown.map((i) => `  ${theme.fg(color, i)}`);
	if (shown.length < items.length) lines.push(`  ${theme.fg("dim", `… ${items.length - shown.length} more`)}`);
	return lines;
}

/** Members of an artifact the compiler keeps for its own checks: a change to them alone is shown as `refreshed`. */
const BOOKKEEPING: ReadonlySet<string> = new Set(ARTIFACT_COMPILER_FIELDS);

/** An RFC 6901 pointer's segments (`~1` is `/`, `~0` is `~`); not a pointer: undefined. */
function segments(ptr: string): string[] | undefined {
	if (!ptr.startsWith("/")) return undefined;
	return ptr
		.slice(1)
		.split("/")
		.map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * Changed paths as the user types them (issue 36): `cwd.tactics.a`, `cwd.todos.t1` (a registered
 * root beside the planes), `cwd.artifacts["src/parse.js"]` — never a JSON pointer with its `~1`
 * escapes. An artifact whose only changes are the compiler's bookkeeping (fingerprint, hashes,
 * provenance) is one line, `cwd.artifacts["src/parse.js"] refreshed`; beside a change of its own
 * members the bookkeeping is not listed. Each line once, in first-seen order.
 */
export function changedLocators(pointers: readonly string[]): string[] {
	// Each line once, in first-seen order; a bookkeeping change stands for its artifact until the end.
	const lines = new Map<string, { artifact?: string }>();
	const own = new Set<string>();
	for (const ptr of pointers) {
		const segs = segments(ptr);
		if (segs === undefined || segs.length < 2) {
			lines.set(segs?.[0] ?? ptr, {});
			continue;
		}
		const [owner, section, ...rest] = segs as [string, string, ...string[]];
		// A registered root is written where a plane is: `cwd.todos.t1`, not `cwd.roots.todos.t1`.
		const [plane, path] = section === "roots" && rest.length > 0 ? [rest[0] as string, rest.slice(1)] : [section, rest];
		const at = (p: readonly string[]): string => `${owner}.${plane}${p.map(formatKeySegment).join("")}`;
		if (section !== "artifacts" || path.length === 0) lines.set(at(path), {});
		else if (path.length >= 2 && BOOKKEEPING.has(path[1] as string)) lines.set(`${at(path.slice(0, 1))} refreshed`, { artifact: at(path.slice(0, 1)) });
		else {
			own.add(at(path.slice(0, 1)));
			lines.set(at(path), {});
		}
	}
	return [...lines].filter(([, l]) => l.artifact === undefined || !own.has(l.artifact)).map(([text]) => text);
}

/** `tactics.step1`, `cwd: intents.goal (delete)` — the keys a patch touches, one level into each plane. */
export function summarizePatchArgs(args: unknown): string[] {
	if (!isRec(args)) return [];
	const out: string[] = [];
	const planes = (prefix: string, value: Rec) => {
		for (const [plane, body] of Object.entries(value)) {
			if (!isRec(body)) {
				out.push(`${prefix}${plane}${body === null ? " (delete)" : ""}`);
				continue;
			}
			const keys = Object.keys(body);
			if (keys.length === 0) out.push(`${prefix}${plane} (no-op)`);
			for (const key of keys) out.push(`${prefix}${plane}${formatKeySegment(key)}${body[key] === null ? " (delete)" : ""}`);
		}
	};
	const owners: readonly string[] = OWNERS;
	const scoped = Object.keys(args).length > 0 && Object.keys(args).every((k) => owners.includes(k));
	if (!scoped) planes("", args);
	else for (const [owner, value] of Object.entries(args)) isRec(value) ? planes(`${owner}.`, value) : out.push(owner);
	return out;
}

function title(theme: RenderTheme, name: string): string {
	return theme.fg("toolTitle", theme.bold(name));
}

/** `renderCall` for `patch_state`: tool name and the touched keys; full arguments when expanded. */
export function renderPatchCall(rawArgs: unknown, theme: RenderTheme, context?: Partial<RenderContext>): Component {
	const expanded = context?.expanded === true;
	const args = shown(rawArgs, expanded ? EXPANDED_ROWS : COLLAPSED_ROWS);
	const paths = summarizePatchArgs(args);
	let text = title(theme, "patch_state");
	if (paths.length === 0) text += ` ${theme.fg("dim", "…")}`;
	else if (!expanded) {
		text += ` ${theme.fg("accent", paths.slice(0, COMPACT_ITEMS).join(", "))}`;
		if (paths.length > COMPACT_ITEMS) text += theme.fg("dim", ` +${paths.length - COMPACT_ITEMS}`);
	} else text += `\n${theme.fg("muted", safeJson(args))}`;
	return view(text, expanded ? EXPANDED_ROWS : COLLAPSED_ROWS, theme);
}

function safeJson(v: unknown): string {
	try {
		return JSON.stringify(v, null, 2) ?? String(v);
	} catch {
		return String(v);
	}
}

interface CascadeLike {
	owner?: unknown;
	intent?: unknown;
	targets?: unknown;
}

function cascadeLines(v: unknown): string[] {
	if (!Array.isArray(v)) return [];
	return v.filter(isRec).map((c: CascadeLike) => {
		const owner = typeof c.owner === "string" ? `${c.owner}.` : "";
		return `${owner}intents${formatKeySegment(String(c.intent))} → ${strings(c.targets).join(", ")}`;
	});
}

function danglingLines(v: unknown): string[] {
	if (!Array.isArray(v)) return [];
	return v.filter(isRec).map((d) => `${typeof d.owner === "string" ? `${d.owner}.` : ""}intents${formatKeySegment(String(d.intent))} → ${String(d.ref)}`);
}

/** What the artifact compiler did: `cwd.artifacts[".pi/skills/x/SKILL.md"] compiled → .pi/skills/x/SKILL.md`. */
function artifactLines(v: unknown): string[] {
	if (!Array.isArray(v)) return [];
	return v.filter(isRec).map((a) => {
		const to = typeof a.compiledTo === "string" && a.compiledTo !== a.key ? ` → ${a.compiledTo}` : "";
		return `${String(a.owner)}.artifacts${formatKeySegment(String(a.key))} ${String(a.action)}${to}`;
	});
}

/** Concurrent-change notices (another pi process changed a shared owner): always shown, they matter. */
function noticeLines(v: unknown, theme: RenderTheme): string[] {
	return strings(v).map((n) => theme.fg("warning", `! ${n}`));
}

/** Error view shared by both tools: first line collapsed, whole message expanded. */
function renderError(result: RenderableResult, expanded: boolean, theme: RenderTheme): Component {
	const text = resultText(result) || "failed";
	return view(theme.fg("error", expanded ? text : clip(text, COMPACT_ERROR)), expanded ? EXPANDED_ROWS : COLLAPSED_ROWS, theme);
}

/**
 * `renderResult` for `patch_state`: `✓ cwd · 2 changed · <id>` plus changed paths, cascades,
 * missing deletions and dangling references; expanded shows every item (each once) and the full id.
 */
export function renderPatchResult(raw: RenderableResult, options: ToolRenderResultOptions, theme: RenderTheme, context?: Partial<RenderContext>): Component {
	if (options.isPartial) return new Text(theme.fg("warning", "Writing state…"), 0, 0);
	const result = shown(raw, options.expanded ? EXPANDED_ROWS : COLLAPSED_ROWS) as RenderableResult;
	if (context?.isError === true) return renderError(result, options.expanded, theme);
	const d = isRec(result.details) ? result.details : {};
	const changed = changedLocators(strings(d.changed));
	const scopes = strings(d.scopes);
	const id = typeof d.transitionId === "string" ? d.transitionId : undefined;
	if (id === undefined && changed.length === 0) {
		// No transition: a no-op, or a result shape this renderer does not know; show the text.
		const text = resultText(result) || "no change";
		return view(theme.fg("muted", options.expanded ? text : clip(text, COMPACT_ERROR)), options.expanded ? EXPANDED_ROWS : COLLAPSED_ROWS, theme);
	}
	const head = [theme.fg("success", "✓")];
	if (scopes.length > 0) head.push(theme.fg("accent", scopes.join("+")));
	head.push(theme.fg("muted", `${changed.length} changed`));
	if (id !== undefined) head.push(theme.fg("dim", options.expanded ? id : id.slice(0, 8)));
	const lines = [head.join(" · ")];
	lines.push(...list(changed, options.expanded, theme, "muted"));
	const cascades = cascadeLines(d.cascades);
	if (cascades.length > 0) lines.push(theme.fg("warning", "cascaded:"), ...list(cascades, options.expanded, theme, "warning"));
	const missing = changedLocators(strings(d.missingDeletions));
	if (missing.length > 0) lines.push(theme.fg("dim", "already absent:"), ...list(missing, options.expanded, theme, "dim"));
	const dangling = danglingLines(d.danglingRefs);
	if (dangling.length > 0) lines.push(theme.fg("warning", "dangling refs:"), ...list(dangling, options.expanded, theme, "warning"));
	const artifacts = artifactLines(d.artifacts);
	if (artifacts.length > 0) lines.push(theme.fg("muted", "artifacts:"), ...list(artifacts, options.expanded, theme, "muted"));
	lines.push(...noticeLines(d.notices, theme));
	// The model-facing text says the same in prose (changed, cascaded, …): expanded shows every
	// item above once instead of repeating each path.
	return view(lines.join("\n"), options.expanded ? EXPANDED_ROWS : COLLAPSED_ROWS, theme);
}

/** The locators a `read_state` call asks for, in request order. */
export function readLocators(args: unknown): string[] {
	if (!isRec(args)) return [];
	if (typeof args.path === "string") return [args.path];
	return strings(args.paths);
}

/** `renderCall` for `read_state`: `read_state tactics, lazy.plan [keys]`. */
export function renderReadCall(rawArgs: unknown, theme: RenderTheme, context?: Partial<RenderContext>): Component {
	const expanded = context?.expanded === true;
	const args = shown(rawArgs, expanded ? EXPANDED_ROWS : COLLAPSED_ROWS);
	const locators = readLocators(args);
	let text = title(theme, "read_state");
	if (locators.length === 0) text += ` ${theme.fg("dim", "…")}`;
	else {
		const shown = expanded ? locators : locators.slice(0, COMPACT_ITEMS);
		text += ` ${theme.fg("accent", shown.join(", "))}`;
		if (shown.length < locators.length) text += theme.fg("dim", ` +${locators.length - shown.length}`);
	}
	const projection = isRec(args) && typeof args.projection === "string" ? args.projection : undefined;
	if (projection !== undefined && projection !== "value") text += ` ${theme.fg("muted", `[${projection}]`)}`;
	return view(text, expanded ? EXPANDED_ROWS : COLLAPSED_ROWS, theme);
}

/** Lines of the model-facing read text shown collapsed. */
const COMPACT_READ_LINES = 3;

/**
 * `renderResult` for `read_state`: size and the first lines of the returned JSON collapsed,
 * the whole text (and the canonical locators from `details`) expanded.
 */
export function renderReadResult(raw: RenderableResult, options: ToolRenderResultOptions, theme: RenderTheme, context?: Partial<RenderContext>): Component {
	if (options.isPartial) return new Text(theme.fg("warning", "Reading state…"), 0, 0);
	const result = shown(raw, options.expanded ? EXPANDED_ROWS : COLLAPSED_ROWS) as RenderableResult;
	if (context?.isError === true) return renderError(result, options.expanded, theme);
	// Size and line count of the whole text; what is shown of it was cut to the screen above.
	const whole = resultText(raw);
	const text = resultText(result);
	const lines = text.split("\n", COMPACT_READ_LINES);
	const total = lineCount(whole);
	const d = isRec(result.details) ? result.details : {};
	const head = [theme.fg("success", "✓"), theme.fg("muted", `${utf8Bytes(whole)} bytes`)];
	if (typeof d.transitionId === "string") head.push(theme.fg("dim", options.expanded ? d.transitionId : d.transitionId.slice(0, 8)));
	const out = [head.join(" · "), ...noticeLines(d.notices, theme)];
	if (options.expanded) {
		const canonical = strings(d.canonical);
		if (canonical.length > 0) out.push(theme.fg("dim", `canonical: ${canonical.join(", ")}`));
		out.push(theme.fg("toolOutput", text));
	} else {
		out.push(...lines.map((l) => theme.fg("toolOutput", l)));
		if (total > COMPACT_READ_LINES) out.push(theme.fg("dim", `… ${total - COMPACT_READ_LINES} more lines`));
	}
	return view(out.join("\n"), options.expanded ? EXPANDED_ROWS : COLLAPSED_ROWS, theme);
}
