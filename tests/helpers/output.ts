/** The `/state` output messages in a session's messages (text and details), in order. */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { OUTPUT_TYPE, type OutputDetails } from "../../lib/host/commands/output.js";

export function shownOutput(messages: readonly AgentMessage[]): Array<{ text: string; details: OutputDetails }> {
	return messages.flatMap((m) =>
		m.role === "custom" && m.customType === OUTPUT_TYPE ? [{ text: String(m.content), details: m.details as OutputDetails }] : [],
	);
}
