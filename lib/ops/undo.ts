/**
 * Undo, redo and restore as every front-end does them (`/state undo|redo|restore`, the browser's
 * `u` and `r`, `state-flow undo|redo|restore`), written once: the words parsed into a plan
 * (core/undo), the plan committed through the normal commit path only while no owner moved since
 * it was planned, and the plan, its consent and its outcome in words. A front-end keeps its own
 * consent model (pi asks through its UI; a command line's invocation is the consent, `--yes` for
 * someone else's change) and its own output form, with these words.
 */
import { fail, isStateError } from "../core/errors.js";
import { formatLocator, tryParseLocator } from "../core/locator.js";
import { patchLeaves } from "../core/merge.js";
import { spellId } from "../core/printable.js";
import type { CanonicalPatch, Owner, OwnerHistory, Result, RootGate, TransitionRecord, Who } from "../core/types.js";
import {
	idUndoPlan,
	latestRedoPlan,
	latestUndoPlan,
	movedSince,
	othersIn,
	type RestoreScope,
	resolveId,
	restorePlan,
	reversalFor,
	type UndoPlan,
} from "../core/undo.js";
import type { LoadedHistories } from "../core/undo-chain.js";
import { formatWho } from "../storage/placement/who.js";
import type { CommitEffects, CommitResult, Stores } from "../storage/stores.js";
import { type HistoryText, TEXT_WIDTH } from "./history-text.js";

export type UndoVerb = UndoPlan["op"];

/** How a front-end is spoken to: the owners it serves and how its commands are typed. */
export interface UndoFront {
	/** The owners it serves, in display order (pi: all three; the command line: global and cwd). */
	owners: readonly Owner[];
	/** What an undo or redo without an owner walks: pi's wanted owners, every owner the command line serves. */
	walk: readonly Owner[];
	/** The command as typed before its verb: `/state`, `state-flow`. */
	command: string;
}

/** A plan, or a problem with the words (the front-end shows its usage). */
export type Asked = { plan: Result<UndoPlan> } | { usage: string };

/** `global, cwd or session`. */
function orList(items: readonly string[]): string {
	return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** What `restore` may be narrowed to, from one word: an owner, or a locator in one; undefined when it is neither. */
export function restoreScope(word: string, owners: readonly Owner[]): RestoreScope | undefined {
	const loc = tryParseLocator(word, "canonical");
	if (loc === undefined || loc.kind !== "state" || loc.scope === null || loc.scope === "effective" || loc.offset !== 0) return undefined;
	if (!owners.includes(loc.scope)) return undefined;
	return loc.plane === null ? { owner: loc.scope } : { owner: loc.scope, section: loc.plane, path: loc.path, locator: formatLocator({ ...loc, offset: 0 }) };
}

/**
 * Plan `undo [owner|id]`, `redo [owner]` or `restore <id> [owner|locator]` from its words
 * (options already taken out) over the loaded histories.
 */
export function planFromWords(histories: LoadedHistories, verb: UndoVerb, words: readonly string[], front: UndoFront): Asked {
	const [first, second, ...more] = words;
	const listed = `\`${front.command} history\``;
	if (verb === "undo" || verb === "redo") {
		if (second !== undefined) return { usage: `\`${verb}\` takes at most one owner${verb === "undo" ? " or id" : ""}.` };
		const owner = front.owners.find((o) => o === first);
		if (first !== undefined && owner === undefined) {
			if (verb === "redo")
				return { usage: `unknown owner \`${first}\`: use ${orList(front.owners)} (an undo is redone by undoing it: \`${front.command} undo <id>\`).` };
			return { plan: idUndoPlan(histories, first, front.owners.join(", "), listed) };
		}
		const owners = owner !== undefined ? [owner] : front.walk;
		const explicit = owner !== undefined;
		return { plan: verb === "undo" ? latestUndoPlan(histories, owners, explicit) : latestRedoPlan(histories, owners, explicit) };
	}
	if (first === undefined || more.length > 0) return { usage: "`restore` needs a transition id and at most one owner or locator." };
	const found = resolveId(histories, first, `no retained transition's id starts with \`${first}\`; ${listed} lists them.`);
	if (!found.ok) return { plan: found };
	const scope = second === undefined ? undefined : restoreScope(second, front.owners);
	if (second !== undefined && scope === undefined) {
		return { usage: `\`${second}\` is no owner or locator to restore; write an owner (${orList(front.owners)}) or a path in one (\`cwd.tactics.next\`).` };
	}
	return { plan: restorePlan(histories, found.value.id, scope) };
}

/**
 * Each owner's history read for planning; one that cannot be reached or is damaged is planned
 * around (a plan that needs it is refused, naming why). Other failures are thrown.
 */
export async function loadHistories(stores: Stores, owners: readonly Owner[]): Promise<LoadedHistories> {
	const histories: LoadedHistories = {};
	const loaded = await stores.loadEach(owners);
	owners.forEach((o, i) => {
		const got = loaded[i] as (typeof loaded)[number];
		if ("history" in got) histories[o] = { ok: true, value: got.history };
		else if (isStateError(got.error) && (got.error.code === "unavailable" || got.error.code === "corrupt"))
			histories[o] = { ok: false, why: got.error.message };
		else throw got.error;
	});
	return histories;
}

/** What a front-end adds to a commit: the new transition's id and time, the roots it may write, its artifact compiler. */
export interface UndoCommit {
	id: string;
	at: string;
	roots?: RootGate;
	compile: (patch: CanonicalPatch, histories: Partial<Record<Owner, OwnerHistory>>) => CommitEffects | Promise<CommitEffects>;
}

/**
 * Commit a plan as a user command naming what it reverted (`by.reverts`): exact deltas (no
 * cascades), artifacts through the compiler so a compiled Skill follows the state; refused,
 * writing nothing, when an owner moved since the plan.
 */
export function commitPlan(stores: Stores, plan: UndoPlan, front: UndoFront, c: UndoCommit): Promise<CommitResult> {
	return stores.commit(plan.patch, {
		by: { kind: "command", command: `${front.command} ${plan.op} ${plan.owners.join(",")}`, reverts: reversalFor(plan) },
		id: c.id,
		at: c.at,
		exact: true,
		...(c.roots !== undefined ? { roots: c.roots } : {}),
		prepare: (patch, histories) => {
			const moved = movedSince(plan, histories);
			if (moved !== undefined) fail("busy", `${moved}; nothing was written. Run the command again to see what it reverts now.`);
			return c.compile(patch, histories);
		},
	});
}

/** A transition id in these words: its first 8 characters, as history's `undo of 3f2a1b2c` (spelled: a stored id never ends a line). */
export const shortId = (id: string): string => spellId(id.slice(0, 8));

/** Reverted transitions listed before the rest is counted. */
const MAX_LISTED = 8;

/** Where a plan works: the path restored, else its owners (`global+cwd`). */
const whereOf = (plan: UndoPlan): string => plan.path ?? plan.owners.join("+");

/** The owner-qualified keys a plan changes, as locators: `cwd.tactics.a`. */
function changedLocators(plan: UndoPlan): string[] {
	const out: string[] = [];
	for (const owner of plan.owners) {
		for (const leaf of patchLeaves(plan.patch[owner] ?? {})) {
			out.push(formatLocator({ kind: "state", scope: owner, offset: 0, plane: leaf.plane, path: leaf.path.slice(0, 1) }));
		}
	}
	return [...new Set(out)];
}

/**
 * What a plan does, in lines that fit `TEXT_WIDTH` (`text` measures as the front-end's terminal
 * does): what it reverts (a redo: the change it applies again), one history line each, and the
 * keys it changes. Shown before a consent and after the commit.
 */
export function planLines(plan: UndoPlan, text: HistoryText, now: Date, front: UndoFront): string[] {
	const n = plan.reverts.length;
	const head =
		plan.op === "restore"
			? `It restores ${text.clipText(whereOf(plan), 20)} to after ${shortId(plan.id)}, reverting ${n} transition${n === 1 ? "" : "s"}:`
			: plan.op === "redo"
				? `It applies again what ${shortId(plan.id)} undid:`
				: "It reverts:";
	const lines = text.wrapWords(head, TEXT_WIDTH);
	const listed: ReadonlyArray<{ owner: Owner; record: TransitionRecord }> = plan.again !== undefined ? [plan.again] : plan.reverts.slice(0, MAX_LISTED);
	for (const { owner, record } of listed) lines.push(text.transitionLine(record, shortId(record.id), { now, full: false }, `  ${owner} `));
	if (plan.again === undefined && n > MAX_LISTED) lines.push(`  … and ${n - MAX_LISTED} more (\`${front.command} history\` lists them)`);
	lines.push(text.clipText(`changes: ${text.fitList(changedLocators(plan), TEXT_WIDTH - 9)}`, TEXT_WIDTH));
	return lines;
}

/** Why a plan needs the user's consent first (it reverts someone else's transition), or undefined. */
export interface Consent {
	/** The question, short: `undo someone else's change?`. */
	title: string;
	/** Whose work it reverts: `This undo reverts changes made by bob@desk.` */
	reason: string;
}

/** What a front-end that cannot ask says on the line after the consent's reason. */
export const ADD_YES = "Nothing was written; add --yes to go ahead.";

/** The consent a plan needs from `me`: none for my own transitions, nor for a redo that brings my own change back. */
export function consentOf(plan: UndoPlan, me: Who): Consent | undefined {
	const others = othersIn(plan, me);
	const whose = [...new Set(others.flatMap(({ record }) => (record.who === undefined ? [] : [formatWho(record.who)])))].join(", ");
	if (whose === "") return undefined;
	if (plan.op === "redo") {
		const made = plan.again?.record.who;
		const of = made === undefined ? "" : `, of a change made by ${formatWho(made)}`;
		return { title: "redo over someone else's undo?", reason: `This redo reverts an undo made by ${whose}${of}.` };
	}
	return { title: `${plan.op} someone else's change?`, reason: `This ${plan.op} reverts changes made by ${whose}.` };
}

/** What a commit of `plan` did, in one sentence (a long path restored is clipped, so it fits a line). */
export function doneLine(plan: UndoPlan, outcome: CommitResult, text: HistoryText): string {
	if (outcome.noop)
		return `Transition ${shortId(plan.id)} is already ${{ undo: "undone", redo: "redone", restore: "restored" }[plan.op]}; nothing was written.`;
	const as = `as transition ${shortId(outcome.transitionId)}`;
	if (plan.op === "restore") return `Restored ${text.clipText(whereOf(plan), 32)} to after ${shortId(plan.id)} ${as} (${plan.reverts.length} reverted).`;
	if (plan.op === "redo") return `Redid what ${shortId(plan.id)} undid (${plan.owners.join("+")}) ${as}.`;
	return `Reverted ${shortId(plan.id)} (${plan.owners.join("+")}) ${as}.`;
}
