/**
 * pi event wiring: session lifecycle (open stores, restore the selection), per-run context
 * (protocol in the system prompt, one frozen head inserted ephemerally next to the run's
 * prompt), admission capture (`context` → receipt, `message_end` → bind tool-call ids),
 * the Session `response` plane and Active reconciliation. Handlers never throw at pi:
 * a failure is reported with `ctx.ui.notify` and the agent keeps running.
 */
import { artifactRootsFor } from "../storage/artifacts/files.js";
import { keyLensFor } from "../storage/project/project.js";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { messageOf } from "../core/errors.js";
import type { Owner } from "../core/types.js";
import { DEFAULT_HEAD_BUDGET } from "../model/head.js";
import { renderProtocol } from "../model/protocol.js";
import { acquisitionHint } from "./skills/acquisition.js";
import { type CommandOutput, withoutOutput } from "./commands/output.js";
import { type SkillSync, registerSkillSync } from "./skills/sync.js";
import type { RunState, StateFlowHost } from "./runtime.js";
import { shapeOf } from "./session/selection.js";
import { ensureShape } from "./tools/tools.js";
import { surfaceOf } from "./tools/surface.js";
import { buildHead } from "../surface/head.js";

/**
 * Built-in tools whose use without a state update triggers reconciliation (docs/spec.md §6.5):
 * `write` and `edit` when they succeeded (a failed or blocked one changed nothing), `bash` once
 * it started (a command that failed may still have changed files).
 */
const FILE_WRITING_TOOLS = new Set(["write", "edit"]);

/** Custom message type of the single reconciliation follow-up. */
export const RECONCILE_TYPE = "state-flow/reconcile";

export const RECONCILE_TEXT =
	"State Flow reconciliation: files changed in this run but the state was not updated. " +
	"Bring it up to date now with `patch_state`: record or update the intent for what the user asked, " +
	"mark finished tactics done or remove them, add the next tactics, and close intents that are complete. " +
	"If the state is already accurate, say so in one short sentence and change nothing.";

function report(host: StateFlowHost, ctx: ExtensionContext, what: string, e: unknown): void {
	host.say(`State Flow: ${what}: ${messageOf(e)}`, "error", ctx);
}

/** Session start (startup, reload, new, resume, fork) and `/tree` navigation. */
function onSession(host: StateFlowHost, output: CommandOutput): void {
	host.pi.on("session_start", async (event, ctx) => {
		output.reset();
		const problems = host.loadSettings();
		await host.openSession(ctx, event.reason);
		for (const p of problems) host.say(`State Flow: ${p}`, "warning", ctx);
		host.tellPlacement(ctx);
		// Stored data of registered roots is checked before the declaration names them.
		await host.roots.checkStored();
		ensureShape(host);
		host.applyActivation();
		host.showStatus();
		// Damage, an outage: the footer says so from the start, without holding the session start up.
		void host.checkHealth();
	});
	host.pi.on("session_shutdown", async () => {
		await host.closeSession();
	});
	host.pi.on("session_tree", async (_event, ctx) => {
		await host.followBranch(ctx);
		host.applyActivation();
		host.showStatus();
	});
}

/** Before each user prompt: declarations, activation, protocol and the frozen head. */
function onBeforeAgentStart(host: StateFlowHost, skills: SkillSync): void {
	host.pi.on("before_agent_start", async (event, ctx) => {
		host.bind(ctx);
		try {
			// A link or database URL changed in the user's config since the last prompt, or the
			// project's store moved (`followProject`): the stores move first.
			await host.followPlacement(ctx);
			await host.followProject(ctx);
		} catch (e) {
			report(host, ctx, "cannot follow the changed config", e);
		}
		const sel = host.selection();
		// The conversation keeps this grammar when continued or resumed.
		host.recordRunSelection(ctx);
		ensureShape(host, shapeOf(sel.owners));
		host.applyActivation(sel.mode);
		host.showStatus();
		await host.roots.sync();
		if (sel.mode === "off") {
			host.runs.startRun(undefined);
			return undefined;
		}
		let head: string | undefined;
		let bootstrap = false;
		let seqAtHead: Partial<Record<Owner, number>> = {};
		let shown: string[] = [];
		try {
			const built = await buildHead(surfaceOf(host, ctx), {
				mode: sel.mode,
				wanted: sel.owners,
				budget: host.config.headBudget ?? DEFAULT_HEAD_BUDGET,
				// Compiled Skills missing here are written first; what cannot be is named like a stale artifact.
				skillProblems: (histories) => skills.sync(ctx, histories).problems,
			});
			({ head, bootstrap, seqAtHead, shown } = built);
		} catch (e) {
			report(host, ctx, "cannot show the state head", e);
		}
		host.runs.startRun(head, seqAtHead, shown);
		const protocol = renderProtocol({ mode: sel.mode, wanted: sel.owners, bootstrap });
		return { systemPrompt: `${skills.withListing(event.systemPrompt, event.systemPromptOptions)}\n\n${protocol}` };
	});
	host.pi.on("agent_start", () => host.runs.agentStarted());
}

/** Summaries pi puts first in the context after a compaction or `/tree` branch summary. */
const SUMMARY_ROLES = new Set(["compactionSummary", "branchSummary"]);

/**
 * Where the head goes in one request: after the run's user prompt, else after the last user
 * message, else (the prompt was compacted away mid-run, e.g. an overflow retry) after the
 * summary that replaced it, else first. -1 only for an empty request.
 */
function headAnchor(host: StateFlowHost, messages: AgentMessage[], run: RunState): number {
	if (run.promptTimestamp !== undefined) {
		const i = messages.findIndex((m) => m.role === "user" && m.timestamp === run.promptTimestamp);
		if (i >= 0) return i;
	}
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m?.role === "user") {
			// The first request of a run ends with its prompt; later ones find it by timestamp.
			host.runs.notePrompt(m.timestamp);
			return i;
		}
	}
	for (let i = messages.length - 1; i >= 0; i--) if (SUMMARY_ROLES.has(messages[i]?.role ?? "")) return i;
	return messages.length > 0 ? 0 : -1;
}

/**
 * Every model request: capture the receipt, drop `/state` output (it is for the user), insert
 * the frozen head (never persisted).
 */
function onContext(host: StateFlowHost): void {
	host.pi.on("context", (event, ctx) => {
		const { selection: sel, identity } = host.bind(ctx);
		host.admission.capture({ identity, wanted: sel.owners, mode: sel.mode });
		const run = host.runs.run;
		const messages = withoutOutput(event.messages);
		const filtered = messages.length === event.messages.length ? undefined : { messages };
		if (sel.mode === "off" || run?.head === undefined) return filtered;
		const at = headAnchor(host, messages, run);
		if (at < 0) return filtered;
		const anchor = messages[at] as AgentMessage & { timestamp: number };
		const head: AgentMessage = { role: "user", content: [{ type: "text", text: run.head }], timestamp: anchor.timestamp };
		// A lone non-user anchor (no prompt, no summary) would put the head after an assistant turn; put it first.
		const after = anchor.role === "user" || SUMMARY_ROLES.has(anchor.role) ? at + 1 : 0;
		return { messages: [...messages.slice(0, after), head, ...messages.slice(after)] };
	});
	host.pi.on("message_end", (event) => {
		const m = event.message;
		if (m.role !== "assistant") return;
		const ids = m.content.filter((c) => c.type === "toolCall").map((c) => (c as { id: string }).id);
		host.admission.bind(ids);
	});
}

/**
 * How a run ended: the final assistant text ("" when none) and whether it was interrupted —
 * aborted by the user or failed (pi's retry, if any, continues it as the same prompt run).
 */
function runEnding(messages: AgentMessage[]): { text: string; interrupted: boolean } {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m?.role !== "assistant") continue;
		const text = m.content
			.filter((c) => c.type === "text")
			.map((c) => (c as { text: string }).text)
			.join("\n")
			.trim();
		return { text, interrupted: m.stopReason === "aborted" || m.stopReason === "error" };
	}
	return { text: "", interrupted: false };
}

/** After pi's own `read` returns an untracked Skill of a wanted owner: one hint line (docs/spec.md §9). */
function onReadResult(host: StateFlowHost): void {
	host.pi.on("tool_result", async (event, ctx) => {
		if (event.toolName !== "read" || event.isError || typeof event.input.path !== "string") return undefined;
		host.bind(ctx);
		const sel = host.selection();
		if (sel.mode === "off") return undefined;
		const wanted = host.admission.receipt(event.toolCallId)?.wanted ?? sel.owners;
		try {
			const hint = acquisitionHint(event.input.path, {
				...artifactRootsFor(ctx.cwd, host.options.agentDir, host.project(ctx)),
				from: ctx.cwd,
				lens: keyLensFor(host.project(ctx)),
				wanted,
				histories: (await host.available(wanted)).histories,
			});
			return hint === undefined ? undefined : { content: [...event.content, { type: "text" as const, text: `\n${hint}` }] };
		} catch {
			return undefined;
		}
	});
}

/** Run end: publish Session `response`, send at most one reconciliation follow-up. */
function onAgentEnd(host: StateFlowHost, output: CommandOutput): void {
	host.pi.on("tool_execution_start", (event) => {
		if (event.toolName === "bash") host.runs.noteFileChange();
	});
	host.pi.on("tool_execution_end", (event) => {
		if (FILE_WRITING_TOOLS.has(event.toolName) && !event.isError) host.runs.noteFileChange();
	});
	// Changes by other processes reach the extensions at the next turn boundary.
	host.pi.on("turn_end", async () => {
		await host.roots.sync();
	});
	host.pi.on("agent_end", (event, ctx) => {
		host.bind(ctx);
		void host.roots.sync();
		// `/state` output given while the run streamed; pi is idle only after agent_end returns.
		setTimeout(() => output.flush(ctx), 0);
		const run = host.runs.run;
		if (!run) return;
		const sel = host.selection();
		if (sel.mode === "off") return;
		// An aborted or failed run has no final answer, and the user did not ask for another turn.
		const { text, interrupted } = runEnding(event.messages);
		if (interrupted) return;
		if (run.fromPrompt && sel.owners.includes("session")) {
			if (text !== "") {
				try {
					host.requireStores().setResponse(text, host.options.now().toISOString());
				} catch (e) {
					report(host, ctx, "cannot record the final answer in Session `response`", e);
				}
			}
		}
		if (sel.mode === "active" && host.config.reconcile !== false && run.fileChanged && !run.committed && !run.reconcileSent) {
			host.runs.reconcileDecided();
			// Inside agent_end pi still counts as streaming; a deferred triggerTurn starts a new run.
			setTimeout(() => {
				try {
					host.runs.reconcileSending();
					host.pi.sendMessage({ customType: RECONCILE_TYPE, content: RECONCILE_TEXT, display: true }, { triggerTurn: true });
				} catch (e) {
					report(host, ctx, "cannot send the reconciliation follow-up", e);
				}
			}, 0);
		}
	});
}

/** Wire every event handler. */
export function registerEvents(host: StateFlowHost, output: CommandOutput): void {
	onSession(host, output);
	onBeforeAgentStart(host, registerSkillSync(host));
	onContext(host);
	onReadResult(host);
	onAgentEnd(host, output);
}
