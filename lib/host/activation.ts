/**
 * The two tools' names and flags, and keeping their active state in line with the mode: pi
 * restores a recorded tool set on resume and `/tree`, so the mode is re-applied, not remembered.
 */
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { isOneOf } from "../core/types.js";
import type { Mode } from "../storage/placement/config.js";

/** Names of the two tools; they never change. */
export const TOOL_NAMES = ["read_state", "patch_state"] as const;

/** Flag names (`--state-mode`, `--state-owners`). */
export const MODE_FLAG = "state-mode";
export const OWNERS_FLAG = "state-owners";

/**
 * Make the tools' active state match the mode, whatever the host restored or another
 * extension changed: Active/Passive ⇒ both tools active, Off ⇒ neither. pi 1.6 re-applies
 * the tool set recorded in the session file on resume and `/tree` (before `session_start`),
 * so remembering what this process deactivated is not enough. Other tools are left alone;
 * a host allowlist that excludes our tools wins (pi does not register excluded tools).
 */
export function applyActivation(pi: ExtensionAPI, mode: Mode): void {
	const active = pi.getActiveTools();
	const ours = (n: string) => isOneOf(TOOL_NAMES, n);
	const registered = new Set(pi.getAllTools().map((t) => t.name));
	const want = mode === "off" ? [] : TOOL_NAMES.filter((n) => registered.has(n));
	const have = active.filter(ours);
	if (have.length === want.length && want.every((n) => have.includes(n))) return;
	pi.setActiveTools([...active.filter((n) => !ours(n)), ...want]);
}
