/**
 * Where `/state` output goes. Multi-line output (status, show, history, undo, errors with the
 * usage text) becomes a custom message in the chat: pi keeps it in scrollback and in the
 * session file exactly as it was shown, where notices are merged and redrawn. The message is
 * never sent to the model (the `context` handler drops it), and while a run is streaming it
 * waits for the run to end, because pi would steer a message sent mid-run into that run and
 * start another model turn. One-line confirmations of `/state` go there too (issue 27): pi 1.6
 * rewrites earlier notices with the newest text, so a notice history could say what never
 * happened; a chat message is never rewritten.
 */
import type { ExtensionAPI, ExtensionContext, MessageRenderer } from "@mariozechner/pi-coding-agent";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Component } from "@mariozechner/pi-tui";
import { printable } from "../../core/printable.js";
import type { RenderTheme } from "../tools/render.js";
import { ScreenText, WIDEST, cutText } from "../screen-text.js";

/** How a one-line message starts; its renderer shows it as the label. */
const LINE_LEAD = "State Flow: ";

/** Custom message type of `/state` output. */
export const OUTPUT_TYPE = "state-flow/output";

export type Level = "info" | "warning" | "error";

/** What the renderer needs besides the text. */
export interface OutputDetails {
	/** What produced it: `status`, `show`, `history`, `undo`, `usage`, … */
	title: string;
	level: Level;
	/** One line that names State Flow itself (`State Flow: off cwd …`): shown without the label. */
	line?: boolean;
}

/** Queue + delivery of `/state` output for one extension instance. */
export class CommandOutput {
	#pending: Array<{ text: string; details: OutputDetails }> = [];

	constructor(
		private readonly pi: ExtensionAPI,
		private readonly tap?: (message: string, level: Level) => void,
	) {}

	/** Show multi-line output now, or when the current run ends. */
	show(text: string, details: OutputDetails, ctx: ExtensionContext): void {
		// The tap sees what the user sees: terminal controls as escapes.
		this.tap?.(printable(text), details.level);
		this.#pending.push({ text, details });
		this.flush(ctx);
	}

	/** A one-line confirmation or refusal of a `/state` command, as a chat message (kept as shown). */
	line(message: string, level: Level, ctx: ExtensionContext): void {
		this.show(message, { title: "line", level, line: true }, ctx);
	}

	/** Deliver what waits, if pi is idle; otherwise keep it for the next idle moment. */
	flush(ctx: ExtensionContext): void {
		let idle: boolean;
		try {
			idle = ctx.isIdle();
		} catch {
			// A stale context (the session was replaced): the output belonged to that session.
			this.#pending = [];
			return;
		}
		if (!idle) return;
		const out = this.#pending;
		this.#pending = [];
		for (const { text, details } of out) this.pi.sendMessage<OutputDetails>({ customType: OUTPUT_TYPE, content: text, display: true, details });
	}

	/** A new session: output of the old one is dropped. */
	reset(): void {
		this.#pending = [];
	}
}

/** Drop `/state` output from what a request sends to the model. */
export function withoutOutput(messages: AgentMessage[]): AgentMessage[] {
	return messages.filter((m) => !(m.role === "custom" && (m as { customType?: string }).customType === OUTPUT_TYPE));
}

/**
 * Rows of the width an output message takes at most (`/state show` of a state at the size limit
 * is megabytes): the message keeps its whole text (session file), the screen shows this much and
 * says what it left out.
 */
export const OUTPUT_ROWS = 300;

/** The message renderer: a `State Flow · <title>` label, then the text as shown (terminal controls as escapes). */
export function renderOutput(text: string, details: Partial<OutputDetails> | undefined, theme: RenderTheme): Component {
	const level = details?.level ?? "info";
	const color = level === "info" ? "accent" : level;
	const line = details?.line === true && text.startsWith(LINE_LEAD);
	const label = theme.fg(color, theme.bold(line ? LINE_LEAD.trimEnd() : `State Flow · ${details?.title ?? "output"}`));
	// Cut before `printable` (linear in what it is given); the marker counts the cut part too.
	const cut = cutText(line ? text.slice(LINE_LEAD.length) : text, OUTPUT_ROWS * WIDEST);
	// No side padding: the text is laid out for TEXT_WIDTH columns itself, and a padded 80-column
	// line would be wrapped again by pi, leaving its last word alone on the next line (issue 27).
	return new ScreenText(`${label}${line ? " " : "\n"}${printable(cut.text)}`, OUTPUT_ROWS, {
		mark: (s) => theme.fg("dim", s),
		...(cut.left ? { more: cut.left } : {}),
	});
}

export const outputRenderer: MessageRenderer<OutputDetails> = (message, _options, theme) => {
	const text = typeof message.content === "string" ? message.content : message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
	return renderOutput(text, message.details, theme);
};
