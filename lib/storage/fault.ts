/**
 * Fault points for crash tests. `STATE_FLOW_FAULT=<point>[@<n>]` makes the process kill
 * itself with SIGKILL at the n-th time (default 1st) it reaches that point of the commit
 * path. Production never sets the variable; an unset variable costs one comparison.
 */

/** Every named step of the commit, compaction and lock paths where a crash is simulated. */
export const FAULT_POINTS = [
	"after-lock", // all locks taken, nothing written
	"mid-append", // half of a record line written (torn trailing record)
	"after-append", // one owner's record appended and fsynced (single-owner commit)
	"mid-journal", // journal temp file written, not yet renamed (no commit point yet)
	"after-journal", // journal renamed and fsynced: the multi-owner commit point
	"after-append-global", // multi-owner: Global record appended
	"after-append-cwd", // multi-owner: CWD record appended
	"after-append-session", // multi-owner: Session entry appended
	"before-journal-delete", // every owner appended, journal still present
	"mid-compaction", // new checkpoint renamed into place, log not yet rewritten
	"mid-compaction-log", // new log written to its temp file, not yet renamed
	"before-unlock", // commit finished, locks still held
	"pg-after-lock", // PostgreSQL: head rows locked in the open transaction, nothing inserted
	"pg-before-commit", // PostgreSQL: records inserted (and a mixed commit's journal written), COMMIT not sent
	"pg-after-commit", // PostgreSQL: COMMIT answered, local parts of a mixed commit not written yet
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

const spec = parseSpec(process.env.STATE_FLOW_FAULT);
let remaining = spec?.count ?? 0;

function parseSpec(text: string | undefined): { point: string; count: number } | undefined {
	if (!text) return undefined;
	const at = text.indexOf("@");
	if (at < 0) return { point: text, count: 1 };
	const count = Number(text.slice(at + 1));
	return { point: text.slice(0, at), count: Number.isInteger(count) && count > 0 ? count : 1 };
}

/** True when the process must crash at this point now (counts down the `@n` hits). */
export function faultDue(point: FaultPoint): boolean {
	if (spec === undefined || spec.point !== point) return false;
	remaining--;
	return remaining === 0;
}

/** Kill this process at once, as a power cut or `kill -9` would: no cleanup, no flush. */
export function crashNow(): never {
	process.kill(process.pid, "SIGKILL");
	// SIGKILL to self does not return; keep the type checker and any odd platform honest.
	throw new Error("state-flow fault injection: SIGKILL did not stop the process");
}

/** Crash here when the environment asks for it. */
export function fault(point: FaultPoint): void {
	if (spec !== undefined && faultDue(point)) crashNow();
}
