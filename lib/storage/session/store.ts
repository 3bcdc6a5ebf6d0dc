/**
 * The Session owner: transitions stored as pi custom entries (`state-flow/transition`)
 * on the current branch of the session tree, rebuilt from the branch (root -> leaf), so
 * forks and tree navigation each see their own state. The runtime-owned response plane
 * is a separate entry type and never a transition.
 */
import { spellId } from "../../core/printable.js";
import { historyFrom } from "../../core/history.js";
import { emptyState } from "../../core/state.js";
import type { JsonObject, OwnerHistory, TransitionRecord } from "../../core/types.js";
import { fail, messageOf } from "../../core/errors.js";
import { applyDurable, checkCommitSeq, commitDecision, expectNext } from "../owner-log.js";
import type { CommitOutcome, OwnerBackend, OwnerLocation, OwnerStore, OwnerStoreStatus } from "../port.js";
import { FORMAT_VERSION, LEGACY_VERSION, checkRecord, recordValue } from "../format.js";

/** The backend of a Session store no local backend took in (a test, a tool): only its own single-owner commit. */
const ALONE: OwnerBackend = {
	commitTogether: () => fail("invalid_input", "this Session store belongs to no backend; commit through its `Stores`"),
};

/** Custom entry type of one Session transition. */
export const TRANSITION_ENTRY = "state-flow/transition";
/** Custom entry type of the runtime-owned response plane. */
export const RESPONSE_ENTRY = "state-flow/response";

/** What to tell the user about damaged Session entries: where, what, and how to go on. */
function sessionDamaged(where: string, what: string): never {
	fail(
		"corrupt",
		`The Session state of ${where} is damaged: ${what}. The session was left unchanged and nothing was written; Global and CWD state are unaffected. Continue from an entry before the damaged one with \`/tree\`, start a new session, or fix that line of the session file.`,
	);
}

/** Port over pi's session (the host adapts `pi.appendEntry` + `ctx.sessionManager`). */
export interface SessionLog {
	sessionId(): string;
	/** False for in-memory / `--no-session` sessions. */
	persistent(): boolean;
	/** Entries of the current branch, root -> leaf. */
	branch(): ReadonlyArray<{ id: string; type: string; customType?: string; data?: unknown }>;
	append(customType: string, data: unknown): void;
	/** Make appended entries durable (fsync the session file); absent or a no-op where there is none. */
	sync?(): void;
}

export class SessionStore implements OwnerStore {
	readonly owner = "session" as const;
	private h: OwnerHistory | undefined;
	/** Damage found while rebuilding: reported by every access, never thrown at construction. */
	private error: unknown;
	private ids = new Set<string>();
	private last: JsonObject | undefined;

	constructor(
		readonly log: SessionLog,
		private readonly retention: number,
		/** The local backend that commits this owner with Global and CWD; absent, it commits alone. */
		readonly backend: OwnerBackend = ALONE,
	) {
		this.reset();
	}

	/** Rebuild from the branch (the leaf may have moved). */
	private rebuild(): OwnerHistory {
		const records: TransitionRecord[] = [];
		const where = `pi session \`${this.log.sessionId()}\``;
		this.ids.clear();
		this.last = undefined;
		for (const e of this.log.branch()) {
			if (e.type !== "custom") continue;
			if (e.customType === TRANSITION_ENTRY) {
				const r = checkRecord(e.data, where, `entry \`${spellId(String(e.id))}\``, sessionDamaged);
				records.push(r);
				this.ids.add(r.id);
			} else if (e.customType === RESPONSE_ENTRY) {
				const d = e.data as { v?: unknown; last?: { text?: unknown; at?: unknown } } | undefined;
				if ((d?.v === FORMAT_VERSION || d?.v === LEGACY_VERSION) && typeof d.last?.text === "string" && typeof d.last.at === "string") {
					this.last = { last: { text: d.last.text, at: d.last.at } };
				}
			}
		}
		// A fork replays the branch root -> leaf, so seqs continue; anything else is damage.
		records.forEach((r, i) => expectNext(i, r, (what) => sessionDamaged(where, `the entry of ${what}`)));
		return historyFrom("session", emptyState(), 0, records, this.retention);
	}

	/** Re-read the branch (session_start / session_tree). */
	reset(): void {
		try {
			this.h = this.rebuild();
			this.error = undefined;
		} catch (e) {
			this.h = undefined;
			this.error = e;
		}
	}

	/** The branch's history; throws "corrupt" when an entry on the branch is damaged. */
	history(): OwnerHistory {
		if (this.h === undefined) throw this.error;
		return this.h;
	}

	/** False when the branch holds damaged entries (nothing may be appended then). */
	healthy(): boolean {
		return this.h !== undefined;
	}

	/** True when the current branch holds the transition. */
	has(id: string): boolean {
		return this.ids.has(id);
	}

	location(): OwnerLocation {
		return { backend: "session", owner: "session", sessionId: this.log.sessionId() };
	}

	async load(): Promise<OwnerHistory> {
		return this.history();
	}

	/** The port's single-owner commit: one entry on the branch (pi appends without fsync). */
	async commit(record: TransitionRecord, expectedSeq: number): Promise<CommitOutcome> {
		checkCommitSeq(record, expectedSeq);
		const h = this.history();
		const decided = commitDecision(h, record, expectedSeq, this.heldSeq(h, record.id));
		if (decided !== undefined) return decided;
		this.append(record);
		applyDurable(h, record);
		return { kind: "committed", seq: record.seq };
	}

	/** Seq of a transition on the branch; one folded out of the retained tail is at or before the checkpoint. */
	private heldSeq(h: OwnerHistory, id: string): number | undefined {
		return this.ids.has(id) ? (h.tail.find((r) => r.id === id)?.seq ?? h.checkpointSeq) : undefined;
	}

	async committedSeq(id: string): Promise<number | undefined> {
		return this.heldSeq(this.history(), id);
	}

	async status(): Promise<OwnerStoreStatus> {
		const out: OwnerStoreStatus = { location: this.location(), exists: false, seq: 0, retained: 0, bytes: 0 };
		try {
			const h = this.history();
			Object.assign(out, { exists: h.seq > 0, seq: h.seq, retained: h.tail.length, bytes: h.bytes });
		} catch (e) {
			out.error = messageOf(e);
		}
		return out;
	}

	/** Nothing to release: pi owns the session file. */
	async close(): Promise<void> {}

	/** Append a committed record as an entry; the caller applies it in memory afterwards. */
	append(record: TransitionRecord): void {
		this.history();
		this.log.append(TRANSITION_ENTRY, recordValue(record));
		this.ids.add(record.id);
	}

	setResponse(text: string, at: string): void {
		this.log.append(RESPONSE_ENTRY, { v: FORMAT_VERSION, last: { text, at } });
		this.last = { last: { text, at } };
	}

	response(): JsonObject | undefined {
		return this.last;
	}
}
