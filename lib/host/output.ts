/**
 * Where `/state` output goes. Multi-line output (status, show, history, undo, errors with the
 * usage text) becomes a custom message in the chat: pi keeps it in scrollback and in the
 * session file exactly as it was shown, where notices are merged and redrawn. The message is
 * never sent to the model (the `context` handler drops it), and while a run is streaming it
 * waits for the run to end, because pi would steer a message sent mid-run into that run and
 * start another model turn. One-line confirmations stay notices.
 */
import type { ExtensionAPI, ExtensionContext, MessageRenderer } from "@mariozechner/pi-coding-agent";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Component } from "@mariozechner/pi-tui";
import { printable } from "../core/printable.js";
import type { RenderTheme } from "./render.js";
import { ScreenText, WIDEST, cutText } from "./screen-text.js";

/** Custom message type of `/state` output. */
export const OUTPUT_TYPE = "state-flow/output";

export type Level = "info" | "warning" | "error";

/** What the renderer needs besides the text. */
export interface OutputDetails {
	/** What produced it: `status`, `show`, `history`, `undo`, `usage`, … */
	title: string;
	level: Level;
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
		this.tap?.(text, details.level);
		this.#pending.push({ text, details });
		this.flush(ctx);
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
	const label = theme.fg(level === "info" ? "accent" : level, theme.bold(`State Flow · ${details?.title ?? "output"}`));
	// Cut before `printable` (linear in what it is given); the marker counts the cut part too.
	const cut = cutText(text, OUTPUT_ROWS * WIDEST);
	return new ScreenText(`${label}\n${printable(cut.text)}`, OUTPUT_ROWS, {
		paddingX: 1,
		mark: (s) => theme.fg("dim", s),
		...(cut.left ? { more: cut.left } : {}),
	});
}

export const outputRenderer: MessageRenderer<OutputDetails> = (message, _options, theme) => {
	const text = typeof message.content === "string" ? message.content : message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
	return renderOutput(text, message.details, theme);
};
