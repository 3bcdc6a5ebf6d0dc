/**
 * The status vocabulary the head reads (docs/model-surface.md, "Status"): whether an intent or a
 * tactic is in flight (shown whole, first), open, or closed (shown last, folded first). One
 * place for the words, so the head, its markers and the Skills never disagree. Pure.
 */
import { isPlainObject } from "../core/json.js";
import type { Json } from "../core/types.js";

/** Members that carry an entry's status; a shortened object shows them first. */
export const STATUS_FIELDS: ReadonlySet<string> = new Set(["status", "state", "done", "closed"]);

/** Words (or leading phrases) of a status that is current: the work in flight. */
const IN_FLIGHT = [
	"next",
	"now",
	"current",
	"doing",
	"active",
	"in progress",
	"ongoing",
	"started",
	"wip",
	"blocked",
	"waiting",
	"on hold",
	"paused",
	"in review",
	"review",
];

/** Words (or leading phrases) of a status that closes an intent or a step. */
const CLOSED = [
	"done",
	"closed",
	"complete",
	"completed",
	"finished",
	"dropped",
	"abandoned",
	"cancelled",
	"canceled",
	"rejected",
	"superseded",
	"obsolete",
	"wontfix",
	"shipped",
	"merged",
];

/** How the head treats an entry: in flight first and whole, open next, closed last. */
export type StatusClass = "inflight" | "open" | "closed";

/**
 * The status text's leading phrase in one spelling: lower case, `-` and `_` as spaces, up to the
 * first character that is neither a letter nor a space (`"Blocked: waiting on finance"` → `blocked`).
 */
function leading(text: string): string {
	return (/^[a-z ]*/.exec(text.toLowerCase().replace(/[-_]/g, " ").replace(/\s+/g, " ").trim())?.[0] ?? "").trim();
}

/** Whether a status text starts with one of `words` as a whole word or phrase. */
function says(text: string, words: readonly string[]): boolean {
	const phrase = leading(text);
	return words.some((w) => phrase === w || phrase.startsWith(`${w} `));
}

/**
 * The class of an intent or a tactic: closed when its `status` (or `state`) starts with a closing
 * word or `done` / `closed` is `true`; in flight when it starts with a current word; otherwise open
 * (a plain string, no status, `todo`, `pending`, `done: false`, …).
 */
export function statusClass(value: Json | undefined): StatusClass {
	if (!isPlainObject(value)) return "open";
	if (value.done === true || value.closed === true) return "closed";
	const texts = [value.status, value.state].filter((s): s is string => typeof s === "string");
	if (texts.some((s) => says(s, CLOSED))) return "closed";
	return texts.some((s) => says(s, IN_FLIGHT)) ? "inflight" : "open";
}

/** Whether an intent or a tactic is closed (`statusClass`). */
export function isClosed(value: Json | undefined): boolean {
	return statusClass(value) === "closed";
}
