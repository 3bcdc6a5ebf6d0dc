/**
 * Where the owners live, said in pi: `/state`'s placement lines, the notice a running session
 * gives when the config moved its owners, and what it says at session start (a placement
 * problem, the repository's suggested project, a link it claims that cannot be asked about
 * here). The words are `ops/where.ts`'s; where the owners live is decided in one place only
 * (`placementFor`), and what a link records in `ops/link.ts`.
 */
import { configPath, readConfig, type StateFlowConfig } from "../../storage/placement/config.js";
import { realOrSelf } from "../../storage/fs-util.js";
import type { Placement } from "../../storage/placement/placement.js";
import { formatWho, whoAmI } from "../../storage/placement/who.js";
import { readSuggestion } from "../../storage/project/suggestion.js";
import { databaseInUseLines, linkCommand, linkableWords, placedWords } from "../../ops/where.js";

/**
 * The notice a running session gives when the user's config moved its shared owners (a link
 * made in another terminal, a new database URL): each moved owner and where it lives now, and
 * the placement problem if there is one. Undefined when nothing a user sees changed.
 */
export function placementChange(before: Placement, after: Placement, files: { global: string; cwd: string }): string | undefined {
	const moved: string[] = [];
	for (const owner of ["global", "cwd"] as const) {
		const now = placedWords(after, owner, files[owner]);
		if (now !== placedWords(before, owner, files[owner])) moved.push(`${owner} now lives in ${now}`);
	}
	if (moved.length === 0 && after.problem === before.problem) return undefined;
	const problem = after.problem === undefined ? "" : ` Problem: ${after.problem}`;
	return `State Flow: the config changed where the state lives: ${moved.length > 0 ? moved.join("; ") : "same places"}.${problem}`;
}

/** Config fields that say where the shared owners live: a running session follows them at its next prompt. */
const PLACEMENT_FIELDS = ["database", "databaseSchema", "user", "shareGlobal", "links", "repoLinks", "linkConsents"] as const;

/**
 * `current` with only the placement fields taken over from the config file as it is now (the
 * other settings wait for the next session start). Undefined when the file cannot be read at
 * all (mid-edit by hand): that moves nothing, and the next session start reports it.
 */
export function withPlacementOf(agentDir: string, current: StateFlowConfig): StateFlowConfig | undefined {
	const { config, problems } = readConfig(agentDir);
	if (problems.length > 0 && Object.keys(config).length === 0) return undefined;
	const next: StateFlowConfig = { ...current };
	for (const field of PLACEMENT_FIELDS) {
		if (config[field] === undefined) delete next[field];
		else (next as Record<string, unknown>)[field] = config[field];
	}
	return next;
}

/**
 * At session start: why a shared owner cannot be placed, if so; a link this checkout claims
 * that cannot be asked about here (no interactive UI: it stays local); else the repository's
 * suggested project, offered once per checkout and id (`offered` remembers them), only when a
 * database is configured and the checkout is not linked. Never links anything.
 */
export function placementNotice(
	placement: Placement,
	cwd: string,
	offered: Set<string>,
	hasUI: boolean,
): { message: string; level: "info" | "warning" } | undefined {
	if (placement.problem !== undefined) return { message: `State Flow: shared memory is unavailable: ${placement.problem}`, level: "warning" };
	if (placement.database === undefined || placement.project !== undefined) return undefined;
	const claim = placement.linkable;
	if (claim !== undefined) {
		if (hasUI) return undefined;
		return {
			message: `State Flow: not linked: ${linkableWords(claim)}. Nothing can be asked here (no interactive UI); to share it, run: ${linkCommand(claim.project, cwd)}`,
			level: "info",
		};
	}
	const suggestion = readSuggestion(cwd);
	if (suggestion === undefined) return undefined;
	const key = JSON.stringify([realOrSelf(cwd), "project" in suggestion ? suggestion.project : suggestion.problem]);
	if (offered.has(key)) return undefined;
	offered.add(key);
	if ("problem" in suggestion) return { message: `State Flow: ${suggestion.problem}`, level: "warning" };
	return {
		message: `State Flow: this repository suggests sharing its CWD memory as project \`${suggestion.project}\`. Nothing is shared unless you agree: \`/state link\` links it after confirmation.`,
		level: "info",
	};
}

/** What `/state` needs to say where the shared owners are. */
export interface PlacementView {
	placement: Placement;
	config: StateFlowConfig;
	agentDir: string;
	cwd: string;
	hasUI: boolean;
	/** The user said no to the claimed link in this session. */
	declined: boolean;
	/** `/state`'s wrapping of a line to its width. */
	wrap: (text: string) => string[];
}

/**
 * `/state`'s lines about shared memory: the database in use (its URL on a line of its own, as the
 * stores' are), who the user is to teammates, the placement problem, and a link not taken up —
 * one this checkout claims (`linkable: acme/api — /state link to share`) or the repository's
 * suggestion.
 */
export function placementLines(v: PlacementView): string[] {
	const p = v.placement;
	const lines: string[] = [];
	if (p.database !== undefined) {
		const [url, rest] = databaseInUseLines(p.database);
		lines.push(`database: ${url}`, `          ${rest}`);
		// Teammates see this name on every transition; without `user` it is the OS user (often the same for everyone, e.g. root).
		const me = formatWho(whoAmI(v.config.user));
		const from = v.config.user !== undefined ? "config `user`" : `the OS user; set "user" in ${configPath(v.agentDir)} so teammates see your name`;
		lines.push(`you are: ${me} (${from})`);
	}
	if (p.problem !== undefined) lines.push(`problem: ${p.problem}`);
	if (p.linkable !== undefined) {
		const how = v.hasUI ? "/state link to share" : `not asked here (no interactive UI); ${linkCommand(p.linkable.project)} here shares it`;
		lines.push(`linkable: ${p.linkable.project} — ${how}`, `${v.declined ? "you said no in this session: " : ""}${linkableWords(p.linkable)}.`);
	} else if (p.database !== undefined && p.project === undefined) {
		const suggestion = readSuggestion(v.cwd);
		if (suggestion !== undefined && "project" in suggestion)
			lines.push(`the repository suggests project ${suggestion.project}: /state link shares it (asks first)`);
	}
	return lines.flatMap((l) => (l.startsWith("  ") ? [l] : v.wrap(l)));
}
