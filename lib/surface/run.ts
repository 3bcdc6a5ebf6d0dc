/**
 * The run tracker: what one agent run froze and observed (its head, prompt, file changes, own
 * commits, stale hints) and where the next bounded stale check starts. pi's host owns one per
 * session, the stdio MCP server one per process (its run starts at each `state_head`); each is
 * the only writer of its own, everyone else reads it as `RunState`.
 */
import type { Owner } from "../core/types.js";

/** What one agent run froze and observed: the host's own, writable record of it. */
interface Run {
	/** The head rendered in `before_agent_start`, sent unchanged on every request of the run. */
	head: string | undefined;
	/** Timestamp of the run's user prompt message, found on the first request. */
	promptTimestamp: number | undefined;
	/** Started by a user prompt, retries included (false once the reconciliation follow-up runs). */
	fromPrompt: boolean;
	/** A file-changing built-in tool (`write`, `edit`, `bash`) ran. */
	fileChanged: boolean;
	/** Something was committed to state by a tool call. */
	committed: boolean;
	/** The reconciliation follow-up for this user prompt was already sent. */
	reconcileSent: boolean;
	/** Shared owners' seq when the head was rendered (for concurrent-change notices). */
	seqAtHead: Partial<Record<Owner, number>>;
	/** Per-owner seqs this run committed (acknowledged in their own results, not as notices). */
	ownSeqs: Partial<Record<Owner, Set<number>>>;
	/** Stale-artifact hints the model already saw in this run (head or an earlier result), by `staleSignature`. */
	hinted: Set<string>;
}

/** The current run as everyone else sees it: changed only through the host's run methods. */
export type RunState = Readonly<Omit<Run, "seqAtHead" | "ownSeqs" | "hinted">> & {
	readonly seqAtHead: Readonly<Run["seqAtHead"]>;
	readonly ownSeqs: Readonly<Partial<Record<Owner, ReadonlySet<number>>>>;
	readonly hinted: ReadonlySet<string>;
};

export class RunTracker {
	#run: Run | undefined;
	/** Where the next bounded stale-artifact check (head or tool call) starts; walks the tracked artifacts over checks. */
	#staleCursor = 0;
	/**
	 * Set when the reconciliation follow-up is sent, consumed by the next `agent_start`: that run
	 * is not a prompt run. Other runs pi starts without `before_agent_start` (a retry after a
	 * provider error, the continuation after an overflow compaction) still belong to the prompt.
	 */
	#reconcilePending = false;

	/** The current agent run, if one started in this session. */
	get run(): RunState | undefined {
		return this.#run;
	}

	/** A new session: no run yet. */
	clear(): void {
		this.#run = undefined;
	}

	/**
	 * A user prompt's run starts (`before_agent_start`): its frozen head, the shared owners' seqs
	 * it showed, and the stale hints it already named. A reconciliation follow-up delivered
	 * inside this prompt never started a run of its own.
	 */
	startRun(head: string | undefined, seqAtHead: Partial<Record<Owner, number>> = {}, hinted: readonly string[] = []): void {
		this.#reconcilePending = false;
		this.#run = {
			head,
			promptTimestamp: undefined,
			fromPrompt: true,
			fileChanged: false,
			committed: false,
			reconcileSent: false,
			seqAtHead,
			ownSeqs: {},
			hinted: new Set(hinted),
		};
	}

	/** pi started a run (`agent_start`): the one our reconciliation follow-up triggered is not a prompt run. */
	agentStarted(): void {
		if (this.#run && this.#reconcilePending) this.#run.fromPrompt = false;
		this.#reconcilePending = false;
	}

	/** The first request of the run found its user prompt. */
	notePrompt(timestamp: number): void {
		if (this.#run) this.#run.promptTimestamp ??= timestamp;
	}

	/** A file-changing built-in tool ran in this run. */
	noteFileChange(): void {
		if (this.#run) this.#run.fileChanged = true;
	}

	/** A tool call of this run committed these per-owner transitions (its own writes are not "concurrent"). */
	recordOwnWrite(records: Partial<Record<Owner, { seq: number }>>): void {
		const run = this.#run;
		if (!run) return;
		run.committed = true;
		for (const [owner, record] of Object.entries(records) as Array<[Owner, { seq: number }]>) (run.ownSeqs[owner] ??= new Set()).add(record.seq);
	}

	/** The model was shown these stale-artifact hints (by `staleSignature`). */
	markHinted(signatures: Iterable<string>): void {
		for (const sig of signatures) this.#run?.hinted.add(sig);
	}

	/** The run's reconciliation follow-up is decided: at most one per prompt. */
	reconcileDecided(): void {
		if (this.#run) this.#run.reconcileSent = true;
	}

	/** The follow-up is being sent: the run it triggers is not a prompt run. */
	reconcileSending(): void {
		this.#reconcilePending = true;
	}

	/** Where a stale check of `count` of `total` tracked artifacts starts; the next check continues after it. */
	takeStaleWindow(total: number, count: number): number {
		const start = this.#staleCursor % total;
		this.#staleCursor = start + count;
		return start;
	}
}
