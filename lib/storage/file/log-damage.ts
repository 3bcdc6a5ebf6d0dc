/**
 * What a file store says when its log is damaged, worded once for its readers and its writer:
 * bytes after the last complete record that no writer explains, a log that went back or was
 * replaced under a process that read it, and acknowledged work this machine's seen mark shows
 * missing (docs/security.md, "What this machine has seen"). Each names the cause and the repair.
 */
import { spellId } from "../../core/printable.js";
import type { OwnerHistory, SharedOwner, TransitionRecord } from "../../core/types.js";
import { lost } from "./log-cache.js";
import type { SeenMark } from "./seen.js";

/** Torn bytes at the log's end that `nobody` (no writer holds or left the lock; no crashed writer left them) explains. */
export function tornWords(bytes: number, nobody: "no writer holds or left its lock" | "no crashed writer left them", owner: SharedOwner): string {
	return `it ends in ${bytes} byte(s) after its last complete record that are not a complete record, and ${nobody}: the file was cut short (a transition may be lost) or the machine lost power during a write. \`state-flow doctor --cut-torn ${owner}\` cuts those bytes if you know pi crashed`;
}

/** Why a history re-read from the files lost what this process already read, or undefined. */
export function behindWords(seen: OwnerHistory, now: OwnerHistory): string | undefined {
	const last = seen.tail[seen.tail.length - 1];
	const gone = lost({ seq: seen.seq, ...(last !== undefined ? { id: last.id } : {}) }, now.seq, now.tail);
	if (gone === "behind") return `the store went back from seq ${seen.seq}, which this process read, to seq ${now.seq} (acknowledged transitions are missing)`;
	if (gone !== undefined)
		return `seq ${seen.seq} now holds transition \`${spellId(gone.id)}\`, but this process read \`${spellId(String(last?.id))}\` there (the store was replaced)`;
	return undefined;
}

/** Why the files lost what a writer on this machine made durable (`mark`), or undefined; `found` says what the files hold. */
export function seenLossWords(mark: SeenMark, gone: "behind" | TransitionRecord, found: string, root: string, owner: SharedOwner): string {
	const fix = `Restore the newer copy of ${root} if you have one, or run \`state-flow doctor --accept-store ${owner}\` to go on from the store as it is`;
	if (gone === "behind") {
		return `${found}, but a writer on this machine committed seq ${mark.seq}${mark.id === undefined ? "" : ` (transition \`${spellId(mark.id)}\`)`} to it: acknowledged transitions are missing (the file was cut short or the folder replaced by an older copy). ${fix}`;
	}
	return `seq ${mark.seq} holds transition \`${spellId(gone.id)}\`, but a writer on this machine committed \`${spellId(String(mark.id))}\` there: the folder was replaced by another history. ${fix}`;
}
