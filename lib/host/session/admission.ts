/**
 * Admission (docs/spec.md §7): every model request is captured with the selection epoch and the
 * physical identity; each tool call of the answer is bound to that capture. A call is judged
 * against its own capture, never against the present selection, so flat arguments are never
 * rebound to another owner. Pure bookkeeping; the host feeds it events.
 */
import { fail } from "../../core/errors.js";
import type { Owner } from "../../core/types.js";
import type { Mode } from "../../storage/placement/config.js";
import { shapeOf } from "./selection.js";

/** Where the state physically lives for this session. */
export interface Identity {
	sessionId: string;
	/** realpath of the session cwd (the cwd itself when it cannot be resolved). */
	cwd: string;
	globalRoot: string;
	cwdRoot: string;
}

/** What was captured when a model request was issued. */
export interface Receipt {
	epoch: number;
	identity: Identity;
	wanted: Owner[];
	mode: Mode;
}

/** Receipts kept per tool-call id; old ones are dropped so a long session stays small. */
const MAX_RECEIPTS = 512;

export class Admission {
	#epoch = 0;
	#pending: Receipt | undefined;
	readonly #receipts = new Map<string, Receipt>();

	/** Start a new epoch (any change of mode, owners, session, cwd or store root): every call issued before now becomes stale at once. */
	bump(): void {
		this.#epoch++;
	}

	/** Capture the request about to be sent (the `context` event). */
	capture(receipt: Omit<Receipt, "epoch">): Receipt {
		this.#pending = { ...receipt, wanted: [...receipt.wanted], epoch: this.#epoch };
		return this.#pending;
	}

	/** Bind the tool calls of the assistant message that answered the captured request. */
	bind(toolCallIds: readonly string[]): void {
		const receipt = this.#pending;
		if (!receipt) return;
		for (const id of toolCallIds) this.#receipts.set(id, receipt);
		while (this.#receipts.size > MAX_RECEIPTS) {
			const oldest = this.#receipts.keys().next().value as string;
			this.#receipts.delete(oldest);
		}
	}

	/** The receipt of a tool call, if it was bound. */
	receipt(toolCallId: string): Receipt | undefined {
		return this.#receipts.get(toolCallId);
	}

	/**
	 * Admit a call or throw `stale_call`. `current` is the selection and identity now; the
	 * message says what changed, that nothing was written, and how to recover. A call issued
	 * while the mode is Off (later in a run the user switched Off) is refused as well.
	 */
	admit(tool: string, toolCallId: string, current: Current): Receipt {
		const receipt = this.#receipts.get(toolCallId);
		if (!receipt) {
			staleCall(tool, "it was not issued by a model request of this session (the extension was reloaded or the session changed)", undefined, current);
		}
		if (receipt.epoch !== this.#epoch || !unchanged(receipt, current)) {
			const changes = describeChanges(receipt, current);
			staleCall(tool, changes.length > 0 ? changes.join("; ") : "the selection changed and changed back while it was in flight", receipt, current);
		}
		// Off mid-run: the running loop still offers the tools, but they are withdrawn.
		if (current.mode === "off") {
			fail(
				"stale_call",
				`\`${tool}\` refused: State Flow is off for this session (the user withdrew its tools). Nothing was written. ` +
					"Do not retry; the user can turn it back on with `/state active` or `/state passive`.",
			);
		}
		return receipt;
	}
}

/** The selection and identity at the time of a check. */
type Current = { mode: Mode; wanted: readonly Owner[]; identity: Identity };

/** The receipt still describes the present: what `describeChanges` compares, without building its words (every call checks this). */
function unchanged(receipt: Receipt, current: Current): boolean {
	const a = receipt.identity;
	const b = current.identity;
	return (
		receipt.mode === current.mode &&
		receipt.wanted.length === current.wanted.length &&
		receipt.wanted.every((o, i) => current.wanted[i] === o) &&
		a.sessionId === b.sessionId &&
		a.cwd === b.cwd &&
		a.globalRoot === b.globalRoot &&
		a.cwdRoot === b.cwdRoot
	);
}

/** Human-readable differences between a receipt and the present. */
export function describeChanges(receipt: Receipt, current: Current): string[] {
	const out: string[] = [];
	if (receipt.mode !== current.mode) out.push(`mode changed from ${receipt.mode} to ${current.mode}`);
	const was = receipt.wanted.join("+");
	const now = current.wanted.join("+");
	if (was !== now) out.push(`wanted owners changed from ${was} to ${now}`);
	const a = receipt.identity;
	const b = current.identity;
	if (a.sessionId !== b.sessionId) out.push("the session changed");
	if (a.cwd !== b.cwd) out.push(`the working directory changed from ${a.cwd} to ${b.cwd}`);
	if (a.globalRoot !== b.globalRoot || a.cwdRoot !== b.cwdRoot) out.push("the state store location changed");
	return out;
}

/**
 * What the model can do now, inside the turn that is still running: its head and declarations
 * are those of the run, so name the present owners and their grammar explicitly.
 */
function advice(receipt: Receipt | undefined, current: Current): string {
	if (current.mode === "off") return "State Flow is now off: `read_state` and `patch_state` are withdrawn; do not retry.";
	const sole = current.wanted.length === 1;
	const example = sole ? "`tactics`" : `\`${current.wanted[0]}.tactics\``;
	const passive = current.mode === "passive" ? "; write only what the user explicitly asked for" : "";
	const now = `Now: ${current.mode}, owners ${current.wanted.join("+")} (${sole ? "flat" : "scoped"} locators and patch keys, e.g. ${example}${passive}).`;
	if (receipt !== undefined && shapeOf(receipt.wanted) !== shapeOf(current.wanted)) {
		return `${now} \`read_state\` works at once; the matching \`patch_state\` declaration arrives with the next user prompt, so do not retry writes in this turn: tell the user what you meant to record.`;
	}
	return `${now} Re-read what you need with \`read_state\` and retry.`;
}

function staleCall(tool: string, why: string, receipt: Receipt | undefined, current: Current): never {
	fail("stale_call", `Stale \`${tool}\` call refused: ${why} after this call was issued. Nothing was written. ${advice(receipt, current)}`);
}
