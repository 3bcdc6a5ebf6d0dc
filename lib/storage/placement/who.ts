/**
 * Who makes the transitions of this process: the user (the config's `user`, else the OS user)
 * and the machine (its host name). Stamped on every record by `Stores` so a shared store's
 * history says which teammate or machine made each change. Stored records are untrusted: the
 * same rule (`WHO_TEXT`) bounds what is written here and what a store may hold.
 */
import { hostname, userInfo } from "node:os";
import { spellId } from "../../core/printable.js";
import type { Who } from "../../core/types.js";

/** Longest user or host name kept, in code points (a DNS name is at most 253 characters). */
export const WHO_MAX_LENGTH = 256;
/**
 * Characters a user or host name may not hold: C0 and C1 controls, DEL, and the invisible
 * format characters that reorder or hide text in a terminal (bidi overrides, zero widths).
 */
const UNSAFE = "\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff";
/** JSON Schema of a stored user or host name (the record schema uses it). */
export const WHO_TEXT = { type: "string", minLength: 1, maxLength: WHO_MAX_LENGTH, pattern: `^[^${UNSAFE}]+$` } as const;
const UNSAFE_RE = new RegExp(`[${UNSAFE}]`, "gu");

/** `text` made storable: unsafe characters dropped, trimmed, bounded; empty when nothing is left. */
function storable(text: string | undefined): string {
	// Cut by code points, as the schema counts them, so no surrogate pair is split.
	return Array.from((text ?? "").replace(UNSAFE_RE, "").trim())
		.slice(0, WHO_MAX_LENGTH)
		.join("");
}

/** The OS user name; containers without a passwd entry (`userInfo()` throws) fall back to `$USER`, then "unknown". */
export function osUser(): string {
	try {
		return userInfo().username;
	} catch {
		return process.env.USER || process.env.USERNAME || "unknown";
	}
}

/** Who this process is: `user` (the config's name) when given, else the OS user; the host name. */
export function whoAmI(user?: string): Who {
	return {
		user: storable(user) || storable(osUser()) || "unknown",
		host: storable(hostname()) || "unknown",
	};
}

/** `alice@laptop.example.com`: both names whole (listings shorten it: `shortWho`). */
export function formatWho(who: Who): string {
	// The schema refuses what hides or reorders text; anything it leaves that shows nothing is spelled (one identifier rule).
	return `${spellId(who.user)}@${spellId(who.host)}`;
}
