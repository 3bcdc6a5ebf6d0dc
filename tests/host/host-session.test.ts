/**
 * Real SDK sessions set up the way a user's pi is, not the way the test harness is: the host's
 * tool allowlist (`createAgentSession({ tools })`, pi's `--tools`) — registrations and Off → On
 * never re-activate a tool it excluded, and never change another tool's active state (pi's
 * registry refresh re-adds every allowlisted tool) — and pi's own system prompt, to which State
 * Flow adds exactly its protocol block and nothing else (no tool snippets); and an interactive UI
 * (pi's `hasUI`), where the status line follows the selection and no command opens a dialog.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import assert from "node:assert/strict";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type AssistantMessage, type Context, fauxAssistantMessage, fauxText } from "@mariozechner/pi-ai";
import type { ExtensionFactory, ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import { createStateFlow } from "../../lib/index.js";
import { configPath } from "../../lib/storage/placement/config.js";
import { commitMeta } from "../helpers/meta.js";
import { renderProtocol } from "../../lib/model/protocol.js";
import { tempDir } from "../helpers/temp-dir.js";
import { extensionSession } from "./fixture.js";
import { shownOutput } from "../helpers/output.js";

/** What a recording interactive UI saw: status lines, notifications, and any dialog State Flow opened. */
interface UiLog {
	status: Array<string | undefined>;
	notes: Array<{ message: string; level: string | undefined }>;
	dialogs: string[];
}

/** An interactive UI (pi's `hasUI` is true) that records what it is asked to show; dialogs are recorded and dismissed. */
function recordingUi(log: UiLog): ExtensionUIContext {
	const dialog = (name: string) => async () => {
		log.dialogs.push(name);
		return undefined;
	};
	const ui: Partial<ExtensionUIContext> = {
		select: dialog("select"),
		confirm: async () => {
			log.dialogs.push("confirm");
			return false;
		},
		input: dialog("input"),
		editor: dialog("editor"),
		custom: dialog("custom") as ExtensionUIContext["custom"],
		notify: (message, level) => void log.notes.push({ message, level }),
		setStatus: (key, text) => void (key === "state-flow" && log.status.push(text)),
	};
	// Everything else an interactive UI offers (widgets, titles, editor text) is a no-op here.
	return new Proxy(ui, { get: (target, prop) => (prop in target ? target[prop as keyof ExtensionUIContext] : () => undefined) }) as ExtensionUIContext;
}

/** A session with pi's default system prompt and, when given, the host allowlist `tools` and an interactive UI. */
async function hostSession(t: Parameters<typeof tempDir>[0], tools?: string[], extra: ExtensionFactory[] = [], uiContext?: ExtensionUIContext) {
	const cwd = tempDir(t, "state-flow-cwd-");
	const agentDir = tempDir(t, "state-flow-agent-");
	const { session, faux } = await extensionSession(t, {
		cwd,
		agentDir,
		factories: [createStateFlow({ agentDir }), ...extra],
		...(tools ? { tools } : {}),
		...(uiContext ? { uiContext } : {}),
	});
	const seen: string[][] = [];
	const prompts: string[] = [];
	return {
		session,
		cwd,
		agentDir,
		seen,
		prompts,
		async prompt(text: string) {
			faux.setResponses([
				(context: Context): AssistantMessage => {
					seen.push((context.tools ?? []).map((x) => x.name).sort());
					prompts.push(context.systemPrompt ?? "");
					return fauxAssistantMessage(fauxText("ok"));
				},
			]);
			await session.prompt(text);
			await session.agent.waitForIdle();
		},
	};
}

describe("the host's tool allowlist", () => {
	it("keeps an excluded State Flow tool out through shape changes and Off → On", async (t) => {
		const s = await hostSession(t, ["read", "read_state"]);
		await s.prompt("scoped");
		await s.session.prompt("/state owners cwd");
		await s.prompt("flat: re-registers both tools");
		await s.session.prompt("/state off");
		await s.prompt("off");
		await s.session.prompt("/state active");
		await s.prompt("on");
		assert.deepEqual(s.seen, [["read", "read_state"], ["read", "read_state"], ["read"], ["read", "read_state"]]);
	});

	it("re-registering on a shape change leaves another tool that was turned off, off", async (t) => {
		// Another extension turns `bash` off at start; the allowlist would let pi's registry refresh re-add it.
		const bashOff: ExtensionFactory = (pi) => {
			pi.on("session_start", () => pi.setActiveTools(pi.getActiveTools().filter((n) => n !== "bash")));
		};
		const s = await hostSession(t, ["read", "bash", "read_state", "patch_state"], [bashOff]);
		await s.prompt("scoped");
		await s.session.prompt("/state owners cwd");
		await s.prompt("flat");
		await s.session.prompt("/state off");
		await s.session.prompt("/state owners cwd,session");
		await s.prompt("off, shape changed back");
		await s.session.prompt("/state active");
		await s.prompt("on");
		assert.deepEqual(s.seen, [["patch_state", "read", "read_state"], ["patch_state", "read", "read_state"], ["read"], ["patch_state", "read", "read_state"]]);
	});
});

describe("pi's own system prompt", () => {
	it("gets the protocol block appended and nothing else: no tool snippets, no guidelines", async (t) => {
		const s = await hostSession(t);
		await s.session.prompt("/state off");
		await s.prompt("off");
		await s.session.prompt("/state active");
		await s.prompt("on");
		const [off, on] = s.prompts;
		assert.ok(off?.includes("Available tools:"), "pi's default prompt, not an override");
		assert.equal(on, `${off}\n\n${renderProtocol({ mode: "active", wanted: ["cwd", "session"], bootstrap: true })}`);
	});
});

describe("with an interactive UI", () => {
	it("keeps the status line current and never opens a dialog, not even for undo or a bad argument", async (t) => {
		const log: UiLog = { status: [], notes: [], dialogs: [] };
		const s = await hostSession(t, undefined, [], recordingUi(log));
		assert.equal(s.session.extensionRunner?.hasUI(), true);
		for (const c of [
			"/state",
			"/state passive",
			"/state owners cwd",
			"/state off",
			"/state owners nobody",
			"/state undo",
			"/state default passive",
			"/state active",
		]) {
			await s.session.prompt(c);
		}
		assert.deepEqual(log.dialogs, []);
		assert.deepEqual(log.status, [
			"state: active cwd+session",
			"state: passive cwd+session",
			"state: passive cwd",
			"state: off cwd",
			"state: off cwd",
			"state: active cwd",
		]);
		// Multi-line output (status, usage) is a State Flow message in the chat, not a notice.
		assert.ok(!log.notes.some((n) => n.message.includes("nobody")));
		const shown = shownOutput(s.session.messages);
		// One-line confirmations too (issue 27): pi 1.6 rewrites earlier notices with newer text.
		assert.deepEqual(log.notes, []);
		assert.deepEqual(
			shown.filter((m) => m.details.line).map((m) => m.text),
			[
				"State Flow: passive cwd+session",
				"State Flow: passive cwd (new tool grammar from the next prompt)",
				"State Flow: off cwd (tools withdrawn; data untouched)",
				"State Flow: no retained transition to undo for cwd.",
				`State Flow: saved default mode passive to ${configPath(s.agentDir)}; this session: off cwd (this session's own choice wins)`,
				"State Flow: active cwd",
			],
		);
		const bad = shown.find((m) => m.text.includes("nobody"));
		assert.equal(bad?.details.level, "warning");
		assert.match(
			bad?.text ?? "",
			/^unknown owner "nobody" — owners are global, cwd, session\.\nUsage:\n {2}\/state owners <list> .*\n\(\/state help lists every command\)$/,
		);
	});

	it("shows a damaged owner in the footer, and clears it when the store reads again (issue 27)", async (t) => {
		const log: UiLog = { status: [], notes: [], dialogs: [] };
		const s = await hostSession(t, undefined, [], recordingUi(log));
		const stores = openStoresAt({ agentDir: s.agentDir, cwd: s.cwd });
		await stores.commit({ cwd: { tactics: { t: "value one" } } }, commitMeta("d", "2026-12-01T00:00:00.000Z", { kind: "system", reason: "test" })());
		const file = join(stores.identity().cwdRoot, "log.jsonl");
		const intact = readFileSync(file, "utf8");
		writeFileSync(file, intact.replace("value one", "value 0ne"));
		utimesSync(file, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
		await s.prompt("with a damaged cwd");
		assert.equal(log.status.at(-1), "state: active cwd+session · cwd damaged");
		writeFileSync(file, intact);
		utimesSync(file, new Date(Date.now() + 120_000), new Date(Date.now() + 120_000));
		await s.prompt("repaired");
		assert.equal(log.status.at(-1), "state: active cwd+session");
	});
});
