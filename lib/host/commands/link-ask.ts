/**
 * pi's question before a link: the words `/state link` confirms with, and the question asked
 * when a prompt starts in a checkout that only claims a linked repository (issue 33: a clone of
 * the team's remote and an archive whose `.git/config` names its URL look the same, and either
 * may carry a hostile `AGENTS.md`). Asked once, through `ctx.ui.confirm`, before the head is
 * built; never without an interactive UI (print and JSON modes stay local, `/state` says so); a
 * no is remembered for the session (this runtime: until `/new`, `/resume`, `/reload` or quit),
 * so no prompt after it asks again. What a yes records is `ops/link.ts`'s.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { messageOf } from "../../core/errors.js";
import { printable } from "../../core/printable.js";
import { type LocalContent, hiddenByLink, hiddenWords, linkCheckout, linkHere } from "../../ops/link.js";
import { placementDatabaseWords } from "../../ops/where.js";
import { DEFAULT_RETENTION } from "../../core/types.js";
import type { StateFlowConfig } from "../../storage/placement/config.js";
import type { Linkable, Placement } from "../../storage/placement/placement.js";
import { commonDirOf } from "../../storage/placement/consent.js";
import { projectOf } from "../../storage/project/project.js";
import { repositoryWords } from "../../storage/project/repository.js";
import { SUGGESTION_FILE } from "../../storage/project/suggestion.js";

/** What a link question names. */
export interface LinkQuestion {
	project: string;
	/** Where the id came from when the user did not type it. */
	from?: "suggestion" | Linkable;
	checkout: string;
	placement: Placement;
	current?: string;
	/** The local store a link stops reading, when it holds state (`hiddenByLink`). */
	hidden?: LocalContent;
	store: string;
}

/** The confirmation's text (controls shown as escapes by the caller: the id may come from the repository). */
export function linkQuestion(q: LinkQuestion): string {
	const claim = typeof q.from === "object" ? q.from : undefined;
	const first =
		claim !== undefined
			? `This checkout's repository claims to be ${claim.repo}, which you linked to project \`${q.project}\` on this machine. Link this checkout to it too?`
			: `Link this checkout to project \`${q.project}\`${q.from === "suggestion" ? ` (suggested by the repository's ${SUGGESTION_FILE})` : ""}?`;
	const files =
		q.hidden !== undefined
			? `Its local store ${q.store} ${hiddenWords(q.hidden)}: it is NOT read while linked (\`/state unlink\` goes back to it).`
			: `The files in ${q.store} stay but are no longer used (\`/state unlink\` goes back to them).`;
	return [
		first,
		"",
		`checkout: ${q.checkout}`,
		`database: ${placementDatabaseWords(q.placement)}`,
		...(q.current !== undefined ? [`now linked to: ${q.current}`] : []),
		"",
		`This checkout's CWD memory becomes the project's, shared with everyone linked to \`${q.project}\`: their intents, strategy and tactics reach this agent, and what it records reaches them. ${files}`,
		...(claim !== undefined
			? [
					"",
					"A clone of the real remote and a downloaded copy that claims its URL look the same, and either may carry instructions for the agent: say yes only if you know where this checkout came from. A no keeps its memory local for this session.",
				]
			: []),
	].join("\n");
}

/** The question at a prompt, once per checkout and claim; the session's noes. */
export class LinkAsker {
	readonly #declined = new Set<string>();

	/** The key a no is remembered by: the repository's common dir on this machine (else its root), the claim and the project. */
	#key(cwd: string, l: Linkable): string {
		const p = projectOf(cwd);
		return JSON.stringify([commonDirOf(p)?.key ?? p.root, l.repo, l.project]);
	}

	/** Whether the user said no to this claim in this session. */
	declined(cwd: string, l: Linkable): boolean {
		return this.#declined.has(this.#key(cwd, l));
	}

	/**
	 * Ask about the placement's claimed link when there is one to ask about: a database to link to,
	 * an interactive UI, no no in this session. Returns whether the link was recorded (the caller
	 * then follows the config). Never throws: a failure to record is said, and not asked again.
	 */
	async ask(
		ctx: ExtensionContext,
		agentDir: string,
		config: StateFlowConfig,
		placement: Placement,
		say: (text: string, level?: "info" | "warning") => void,
	): Promise<boolean> {
		const l = placement.linkable;
		if (l === undefined || placement.database === undefined || placement.problem !== undefined || !ctx.hasUI) return false;
		const key = this.#key(ctx.cwd, l);
		if (this.#declined.has(key)) return false;
		// Asked once: a no, an Escape, a closed session or a failure below are all remembered.
		this.#declined.add(key);
		try {
			const here = linkHere(agentDir, ctx.cwd);
			const store = projectOf(ctx.cwd).store;
			const hidden = hiddenByLink(agentDir, ctx.cwd, here, l.project, config.retention ?? DEFAULT_RETENTION);
			const question = linkQuestion({ project: l.project, from: l, checkout: here.checkout, placement, store, ...(hidden !== undefined ? { hidden } : {}) });
			const yes = await ctx.ui.confirm(
				"State Flow: link this checkout to a shared project?",
				printable(question),
				ctx.signal ? { signal: ctx.signal } : undefined,
			);
			if (!yes) {
				say(`State Flow: not linked; this checkout's CWD memory stays local for this session (\`/state link\` shares it with project \`${l.project}\`).`);
				return false;
			}
			const linked = await linkCheckout(agentDir, ctx.cwd, l.project);
			this.#declined.delete(key);
			say(
				`State Flow: linked this checkout to project \`${l.project}\` (${placementDatabaseWords(placement)}); its CWD memory is shared from this prompt on. ${repositoryWords(linked.repo, here.checkout)}`,
			);
			return true;
		} catch (e) {
			say(`State Flow: not linked: ${messageOf(e)}`, "warning");
			return false;
		}
	}
}
