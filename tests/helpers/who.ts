/**
 * This process's who as listings show it: the host and the CLI stamp `whoAmI()` (no `user` in
 * the tests' configs), so the expected text follows the machine the tests run on.
 */
import { shortWho } from "../../lib/host/commands/status.js";
import { formatWho, whoAmI } from "../../lib/storage/placement/who.js";

/** `text` as a literal inside a RegExp. */
export function literal(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** This process's who in a listing line (`root@vm`), as a RegExp source. */
export const ME = literal(shortWho(whoAmI()));
/** This process's who in full (`root@vm.example.com`), as a RegExp source. */
export const ME_FULL = literal(formatWho(whoAmI()));
