/**
 * `npm run demo`: an offline, scripted pi session with State Flow loaded — pi-ai's faux
 * provider plays the model, project and agent folders are temporary, no keys, no network.
 * It prints, step by step, what the model was shown, what it sent and what came back, in
 * lines of at most 100 columns; it starts by saying what its words mean and ends by saying how
 * to try State Flow in pi itself.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AssistantMessage, type Context, fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { AuthStorage, createAgentSession, DefaultResourceLoader, ModelRegistry, SessionManager, SettingsManager } from "@mariozechner/pi-coding-agent";
import { createStateFlow } from "../lib/index.js";

type Call = { name: string; args: Record<string, unknown> };
/** One scripted model answer: tool calls or final text; `during` runs while it "streams". */
type Reply = { calls: Call[]; during?: () => Promise<void> } | { text: string };

/** Columns every printed line fits in. */
const WIDTH = 100;

/** A long line broken at a space or after a comma, continuation lines indented two more. */
function fit(text: string): string[] {
	if (text.length <= WIDTH) return [text];
	const hang = `${/^\s*/.exec(text)?.[0] ?? ""}  `;
	const out: string[] = [];
	let rest = text;
	while (rest.length > WIDTH) {
		const window = rest.slice(0, WIDTH);
		const at = Math.max(window.lastIndexOf(" "), window.lastIndexOf(",") + 1);
		const cut = at > hang.length ? at : WIDTH;
		out.push(rest.slice(0, cut).trimEnd());
		rest = hang + rest.slice(cut).trimStart();
	}
	out.push(rest);
	return out;
}

const line = (s = "") => {
	for (const l of s.split("\n")) for (const part of fit(l)) console.log(part);
};

/** The words the demo uses, said once before it starts. */
const GLOSSARY = `State Flow demo: a scripted pi session (no model, no network) with State Flow loaded.

Words used below:
  owner       where state lives: global (you, everywhere), cwd (this project), session (this chat)
  plane       a part of an owner's state: intents (what the user wants), strategy (the approach
              agreed), tactics (next steps), artifacts (files it tracks), lazy (notes read later)
  transition  one committed change, with an id; history lists them, /state undo reverts them
  head        the short summary of the state the model is shown before each prompt
  mode        active (keeps the state current), passive (writes only when asked), off (no tools)
  scoped/flat the tools' grammar: owners named in each call (several owners) or not (one owner)
  [pi]        what State Flow shows the user in pi (the chat messages of /state)`;

const TRY_IT = `
Try it in pi:
  pi -e ./                           from this checkout: State Flow for one run
  pi install ./                      or install it (pi install -l ./ for this project only)
  pi                                 then ask for some work; the model records what it plans
  /state                             see the mode, owners and stores; /state help lists commands
  /state browse                      browse the state and its history with the keyboard
  state-flow history --cwd .         the same history from a shell`;
const indent = (text: string, pad = "    ") =>
	text
		.split("\n")
		.map((l) => pad + l)
		.join("\n");
const clip = (text: string, max = 900) => (text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text);

async function main(): Promise<void> {
	const root = mkdtempSync(join(tmpdir(), "state-flow-demo-"));
	const cwd = mkdtempSync(join(root, "project-"));
	const agentDir = mkdtempSync(join(root, "agent-"));
	const faux = registerFauxProvider({ provider: "faux" });
	const auth = AuthStorage.inMemory();
	auth.setRuntimeApiKey("faux", "offline");
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
	let ids = 0;
	const resourceLoader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		extensionFactories: [createStateFlow({ agentDir, newId: () => `tr-${++ids}`, notify: (m) => line(indent(m, "  [pi] ")) })],
		noExtensions: true,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
		systemPromptOverride: () => "You are a coding agent (scripted for this demo).",
	});
	await resourceLoader.reload();
	const { session } = await createAgentSession({
		cwd,
		agentDir,
		model: faux.getModel(),
		thinkingLevel: "off",
		authStorage: auth,
		modelRegistry: ModelRegistry.inMemory(auth),
		settingsManager,
		resourceLoader,
		sessionManager: SessionManager.inMemory(cwd),
		noTools: "builtin",
	});
	await session.bindExtensions({ onError: (e) => line(`  [extension error] ${e.event}: ${e.error}`) });
	session.subscribe((event) => {
		if (event.type !== "tool_execution_end") return;
		const text = event.result.content.map((c: { type: string; text?: string }) => c.text ?? "").join("");
		line(`  ${event.isError ? "✗ error" : "✓ result"} for ${event.toolName}:`);
		line(indent(clip(text)));
	});

	let request = 0;
	const answer =
		(reply: Reply) =>
		async (context: Context): Promise<AssistantMessage> => {
			request++;
			const tools = (context.tools ?? []).map((t) => {
				const props = Object.keys((t.parameters as { properties?: object }).properties ?? {});
				return `${t.name}(${props.join(", ")})`;
			});
			line(
				`  model request #${request}: tools [${tools.join("; ") || "none"}]; protocol ${context.systemPrompt?.includes("<state_flow_protocol>") ? "in system prompt" : "absent"}`,
			);
			if ("during" in reply && reply.during) await reply.during();
			if ("text" in reply) {
				line(`  model says: ${reply.text}`);
				return fauxAssistantMessage(fauxText(reply.text));
			}
			for (const c of reply.calls) line(`  model calls ${c.name} ${JSON.stringify(c.args)}`);
			return fauxAssistantMessage(
				reply.calls.map((c, i) => fauxToolCall(c.name, c.args, { id: `call-${request}-${i}` })),
				{ stopReason: "toolUse" },
			);
		};
	let shownHead = "";
	const prompt = async (text: string, replies: Reply[]) => {
		line(`\nuser> ${text}`);
		faux.setResponses(
			replies.map((r, i) => async (context: Context) => {
				if (i === 0) {
					const head = context.messages
						.flatMap((m) => (m.role === "user" && Array.isArray(m.content) ? m.content : []))
						.map((c) => (c.type === "text" ? c.text : ""))
						.find((t) => t.includes("<state_flow_head>"));
					if (head && head !== shownHead) line(`  head the model sees this run:\n${indent(clip(head, 1200))}`);
					else if (head) line("  (the head is the same as in the previous run)");
					else line("  (no state head injected)");
					shownHead = head ?? "";
				}
				return answer(r)(context);
			}),
		);
		await session.prompt(text);
		await session.agent.waitForIdle();
	};
	const command = async (text: string) => {
		line(`\nuser> ${text}`);
		await session.prompt(text);
	};
	const step = (n: number, title: string) => line(`\n=== ${n}. ${title} ===`);
	line(GLOSSARY);

	try {
		step(1, "Default owners: CWD + Session, Active mode (scoped interface)");
		await command("/state");

		step(2, "Recording an intent that owns its tactics");
		await prompt("Fix the flaky login test, then make the error message friendlier.", [
			{
				calls: [
					{
						name: "patch_state",
						args: {
							cwd: {
								intents: { "login-fix": { goal: "fix the flaky login test", owns: [{ $ref: "cwd.tactics.reproduce" }, { $ref: "cwd.tactics.patch" }] } },
								tactics: { reproduce: "run the login test 20 times", patch: "await the session cookie before asserting" },
							},
							session: { strategy: { focus: "login first, wording second" } },
						},
					},
				],
			},
			{ text: "Recorded the intent and its two tactics." },
		]);

		step(3, "Progress, then reads with history");
		await prompt("The test is reproduced. Where are we?", [
			{ calls: [{ name: "patch_state", args: { cwd: { tactics: { reproduce: "done: fails 3 of 20" } } } }] },
			{ calls: [{ name: "read_state", args: { paths: ["cwd[1].tactics.reproduce", "cwd.patches[0]", "session.response"] } }] },
			{ text: "Reproduced; next is the patch." },
		]);

		step(4, "Switching to a sole owner: /state owners cwd (flat interface from the next prompt)");
		await command("/state owners cwd");
		await prompt("Show me what changed last.", [
			{ calls: [{ name: "read_state", args: { paths: ["effective[1].tactics", "patches[0]"] } }] },
			{ text: "One transition back the reproduce tactic was still open." },
		]);

		step(5, "Closing the intent: its owned tactics cascade away");
		await prompt("The fix landed. Close it.", [
			{ calls: [{ name: "patch_state", args: { intents: { "login-fix": null } } }] },
			{ text: "Closed the login intent; its tactics went with it." },
		]);

		step(6, "Back to CWD + Session");
		await command("/state owners cwd,session");

		step(7, "A stale call: the user switches to Passive while the model's call is in flight");
		await prompt("Note that the wording change is next.", [
			{ calls: [{ name: "patch_state", args: { cwd: { tactics: { wording: "friendlier login error" } } } }], during: () => command("/state passive") },
			{ calls: [{ name: "read_state", args: { path: "cwd.tactics" } }] },
			{ calls: [{ name: "patch_state", args: { cwd: { tactics: { wording: "friendlier login error" } } } }] },
			{ text: "Re-read the state and recorded the next tactic." },
		]);

		step(8, "Off: both tools withdrawn, nothing injected, data untouched");
		await command("/state off");
		await prompt("Just chat, no memory please.", [{ text: "Sure." }]);
		await command("/state active");
		await command("/state");
		line("\nDemo finished: everything above ran offline in a real pi session with temporary folders.");
		line(TRY_IT);
	} finally {
		session.dispose();
		faux.unregister();
		rmSync(root, { recursive: true, force: true });
	}
}

main().catch((e) => {
	console.error(e);
	process.exitCode = 1;
});
