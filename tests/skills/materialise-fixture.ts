/**
 * Two "machines" for the compiled-Skill materialisation tests: each its own agent folder and
 * a checkout of the project at its own path, with real pi sessions (faux model, pi's default
 * Skill discovery on, its read tool active) and the user notices tapped.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { createStateFlow } from "../../lib/index.js";
import { type Captured, capturing, createHarness } from "../helpers/pi-harness.js";
import { tempDir } from "../helpers/temp-dir.js";

export const KEY = ".pi/skills/release-notes/SKILL.md";
export const releaseNotes = {
	kind: "skill",
	name: "release-notes",
	description: "Write release notes for this project.",
	body: "# Release notes\n\nGroup by type.",
};
export const deployNotes = { kind: "skill", name: "deploy-notes", description: "Write the deploy log.", body: "# Deploy\n\nList what shipped." };

/** A "machine": its own agent folder and a checkout of the project at its own path. */
export interface Machine {
	cwd: string;
	agentDir: string;
}

/** Machines `a` and `b`; `config` gives each one's State Flow config file. */
export function machines(t: { after(fn: () => void): void }, config: (m: Machine) => Record<string, unknown> = () => ({ owners: ["cwd"] })) {
	const base = tempDir(t, "state-flow-materialise-");
	const make = (name: string): Machine => {
		const m = { cwd: join(base, `proj-${name}`), agentDir: join(base, `agent-${name}`) };
		mkdirSync(join(m.agentDir, "state-flow"), { recursive: true });
		mkdirSync(m.cwd);
		writeFileSync(join(m.agentDir, "state-flow", "config.json"), JSON.stringify(config(m)));
		return m;
	};
	return { a: make("a"), b: make("b"), base };
}

/** A pi session on one machine. */
export async function open(m: Machine) {
	const notes: string[] = [];
	const seen: Captured[] = [];
	const h = await createHarness({
		extensionFactories: [createStateFlow({ agentDir: m.agentDir, notify: (msg) => notes.push(msg) })],
		...m,
		skillPaths: [],
		builtinTools: true,
	});
	return {
		h,
		notes,
		seen,
		/** One prompt; the model makes these patch_state calls, then answers. Returns what the last request carried. */
		async prompt(calls: Array<Record<string, unknown>> = []) {
			h.faux.setResponses([
				...calls.map((args) => capturing(seen, () => fauxAssistantMessage([fauxToolCall("patch_state", args)], { stopReason: "toolUse" }))),
				capturing(seen, () => fauxAssistantMessage(fauxText("done"))),
			]);
			await h.session.prompt("go");
			await h.session.agent.waitForIdle();
			const results = h.session.messages.filter((x) => x.role === "toolResult");
			for (const r of results) assert.equal(r.isError, false, JSON.stringify(r.content));
			return seen.at(-1) as Captured;
		},
		/** What pi's own Skill loader holds: [name, file]. */
		skills: () => h.session.resourceLoader.getSkills().skills.map((s) => [s.name, s.filePath]),
		dispose: () => h.dispose(),
	};
}

/** Commit on machine `a` through a real session: the state another machine will load. */
export async function commitOn(a: Machine, artifacts: Record<string, unknown>): Promise<void> {
	const s = await open(a);
	try {
		await s.prompt([{ artifacts }]);
	} finally {
		s.dispose();
	}
}

export const headOf = (c: Captured) => JSON.stringify(c.messages);
export const wrote = (notes: string[]) => notes.filter((n) => n.includes("wrote the compiled Skill"));
/** How many times `part` occurs in `text`. */
export const count = (text: string, part: string) => text.split(part).length - 1;
