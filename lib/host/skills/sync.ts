/**
 * Compiled Skills of the loaded owners, in this checkout and in pi's Skill list. At session
 * start (pi's `resources_discover`) and before each prompt, compiled Skills the state names
 * but this checkout lacks are written (`storage/artifacts/compiled-skills.ts`); the ones written at start
 * are handed to pi as Skill paths, so pi loads them like any other, and so are the project's
 * compiled Skills in the checkout root's `.pi/skills/` when pi runs in a subfolder (pi reads
 * `.pi/skills/` only in the folder it starts in, `.agents/skills/` up to the git root itself).
 * pi discovers Skills only at session start, so a compiled Skill that appears later (written
 * here for another machine's commit, or compiled by this session) is added to the prompt's
 * Skill list in pi's own format until the next session loads it. Nothing here fails a prompt.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { type BuildSystemPromptOptions, type ExtensionContext, formatSkillsForPrompt, loadSkills, type Skill } from "@mariozechner/pi-coding-agent";
import { type Owner, type OwnerHistory, type SharedOwner, type StaleArtifact, isSharedOwner } from "../../core/types.js";
import { type ArtifactRoots, artifactRootsFor, inside, realOrSelf, territoryOf } from "../../storage/artifacts/files.js";
import { CompiledSkills } from "../../storage/artifacts/compiled-skills.js";
import { skillsFolder } from "../../storage/artifacts/skill-format.js";
import type { StateFlowHost } from "../runtime.js";

/** What one sync found: notes for the head, and the compiled Skill files present now. */
export interface SkillSyncResult {
	problems: StaleArtifact[];
	present: string[];
	/** Written by this sync (they were missing). */
	written: string[];
}

export class SkillSync {
	readonly #compiled = new CompiledSkills();
	/** Compiled Skill files pi had at hand when the session started (found there, or handed to it). */
	readonly #atStart = new Set<string>();
	/** pi's reading of a compiled Skill file, by path and modification time. */
	readonly #parsed = new Map<string, { mtimeMs: number; skill: Skill | undefined }>();
	#present: string[] = [];

	constructor(private readonly host: StateFlowHost) {}

	/**
	 * Write the wanted shared owners' missing compiled Skills; tell the user what was written
	 * and, once, what could not be. Owners whose history is absent (unavailable) are skipped.
	 */
	sync(ctx: ExtensionContext, histories: Partial<Record<Owner, OwnerHistory>>): SkillSyncResult {
		const roots = artifactRootsFor(ctx.cwd, this.host.options.agentDir, this.host.project(ctx));
		const identity = this.host.requireStores().identity();
		const problems: StaleArtifact[] = [];
		const present: string[] = [];
		const written: string[] = [];
		for (const owner of Object.keys(histories).filter(isSharedOwner)) {
			const h = histories[owner];
			if (h === undefined) continue;
			const place = JSON.stringify([owner === "global" ? identity.globalRoot : identity.cwdRoot, owner === "global" ? roots.agentDir : roots.cwd]);
			const r = this.#compiled.refresh(owner, h, place, roots);
			for (const abs of r.written)
				this.host.say(`State Flow: wrote the compiled Skill ${abs} (${ownerName(owner)} state names it; it was missing here).`, "info", ctx);
			for (const p of r.newProblems) this.host.say(`State Flow: ${ownerName(owner)} artifacts[${JSON.stringify(p.key)}]: ${p.note}.`, "warning", ctx);
			problems.push(...r.problems);
			present.push(...r.present);
			written.push(...r.written);
		}
		this.#present = present;
		return { problems, present, written };
	}

	/**
	 * Session start: sync, remember what pi has, and return the Skills for pi to load: the ones
	 * written now, and the present ones pi's own discovery misses from this cwd.
	 */
	async atSessionStart(ctx: ExtensionContext): Promise<string[]> {
		const sel = this.host.selection();
		if (sel.mode === "off") return [];
		const histories: Partial<Record<Owner, OwnerHistory>> = {};
		for (const owner of sel.owners.filter(isSharedOwner)) {
			try {
				histories[owner] = (await this.host.histories([owner]))[owner];
			} catch {
				// Unavailable or damaged: the first prompt's head reports it, and syncs again.
			}
		}
		const { present, written } = this.sync(ctx, histories);
		// Files found in place were discovered by pi itself or are handed to it now (unless its discovery is off: the user's choice).
		for (const abs of present) this.#atStart.add(abs);
		const roots = artifactRootsFor(ctx.cwd, this.host.options.agentDir, this.host.project(ctx));
		const missed = present.filter((abs) => !written.includes(abs) && missedByPi(abs, ctx.cwd, roots));
		return [...written, ...missed];
	}

	/**
	 * The prompt's system prompt with the compiled Skills pi has not loaded (they appeared
	 * after its discovery) added to its Skill list, the way pi lists Skills.
	 */
	withListing(systemPrompt: string, options: BuildSystemPromptOptions | undefined): string {
		const later = this.#present.filter((abs) => !this.#atStart.has(abs));
		if (later.length === 0 || options === undefined) return systemPrompt;
		try {
			return this.#listed(systemPrompt, options, later);
		} catch {
			// A courtesy: a pi without these helpers (or a Skill that cannot be read now) never fails the prompt.
			return systemPrompt;
		}
	}

	#listed(systemPrompt: string, options: BuildSystemPromptOptions, later: readonly string[]): string {
		if (options.selectedTools !== undefined && !options.selectedTools.includes("read")) return systemPrompt;
		const known = options.skills ?? [];
		const paths = new Set(known.map((s) => realOrSelf(s.filePath)));
		const names = new Set(known.map((s) => s.name));
		const extra: Skill[] = [];
		for (const abs of later) {
			if (paths.has(realOrSelf(abs))) continue;
			const skill = this.#skillAt(abs);
			// pi keeps the first Skill of a name; so does this list.
			if (skill === undefined || names.has(skill.name)) continue;
			names.add(skill.name);
			extra.push(skill);
		}
		const block = formatSkillsForPrompt(extra);
		if (block === "") return systemPrompt;
		// Into pi's own list when it has one, so the model reads one list of Skills.
		const end = systemPrompt.lastIndexOf("</available_skills>");
		if (end < 0 || !known.some((s) => !s.disableModelInvocation)) return `${systemPrompt}${block}`;
		const open = "<available_skills>\n";
		const entries = block.slice(block.indexOf(open) + open.length, block.lastIndexOf("</available_skills>"));
		return `${systemPrompt.slice(0, end)}${entries}${systemPrompt.slice(end)}`;
	}

	/** pi's own reading of a Skill file (name, description, flags), cached while the file is unchanged. */
	#skillAt(abs: string): Skill | undefined {
		const mtimeMs = statSync(abs, { throwIfNoEntry: false })?.mtimeMs;
		if (mtimeMs === undefined) return undefined;
		const cached = this.#parsed.get(abs);
		if (cached?.mtimeMs === mtimeMs) return cached.skill;
		const skill = loadSkills({ skillPaths: [abs], includeDefaults: false, cwd: this.host.ctx.cwd, agentDir: this.host.options.agentDir }).skills[0];
		this.#parsed.set(abs, { mtimeMs, skill });
		return skill;
	}
}

/**
 * A present compiled Skill pi's discovery does not find from `cwd`: a project Skill in the
 * checkout root's `.pi/skills/` while pi runs elsewhere (a subfolder). Only a file whose real
 * path lies there, in CWD's territory, qualifies: nothing outside the owner's folders is handed.
 */
export function missedByPi(abs: string, cwd: string, roots: ArtifactRoots): boolean {
	const real = realOrSelf(abs);
	if (territoryOf(real, roots) !== "cwd" || !inside(real, realOrSelf(join(roots.cwd, skillsFolder("cwd"))))) return false;
	return !inside(real, realOrSelf(join(cwd, skillsFolder("cwd"))));
}

function ownerName(owner: SharedOwner): string {
	return owner === "global" ? "Global" : "CWD";
}

/** Wire the session-start sync; the prompt-time sync is called from `before_agent_start`. */
export function registerSkillSync(host: StateFlowHost): SkillSync {
	const sync = new SkillSync(host);
	host.pi.on("resources_discover", async (_event, ctx) => {
		host.bind(ctx);
		try {
			const written = await sync.atSessionStart(ctx);
			return written.length > 0 ? { skillPaths: written } : undefined;
		} catch {
			// No stores (they could not be opened): already reported at session start.
			return undefined;
		}
	});
	return sync;
}
