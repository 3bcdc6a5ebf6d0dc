/**
 * Selection = mode + wanted owners. One place decides precedence (defaults < config < flags <
 * the session's `/state` choice), the interface shape (flat for one owner, scoped otherwise)
 * and how a selection is named in status lines and messages. Pure.
 */
import { messageOf } from "../../core/errors.js";
import { OWNERS, type Owner } from "../../core/types.js";
import { isMode, type Mode, parseOwners } from "../../storage/placement/config.js";

/** flat = one wanted owner, scoped = two or three (docs/spec.md §1 "shape"). */
export type Shape = "flat" | "scoped";

export interface Selection {
	mode: Mode;
	/** Non-empty, in the fixed order Global, CWD, Session. */
	owners: Owner[];
}

/** Built-in defaults (docs/spec.md §5). */
export const DEFAULT_SELECTION: Selection = { mode: "active", owners: ["cwd", "session"] };

/** Custom entry type that records the session's `/state` choice. */
export const SELECTION_ENTRY = "state-flow/selection";

/**
 * Data of a `state-flow/selection` entry: the whole choice, so the latest entry alone restores it.
 * `by: "run"` marks the selection a prompt ran with when no `/state` choice recorded it (flags,
 * config): a continued or resumed conversation keeps its grammar (issue 26).
 */
export interface SelectionEntryData {
	mode: Mode;
	owners: Owner[];
	by?: "run";
}

/** A selection stored on the branch, and whether a run recorded it (rather than `/state`). */
export type StoredSelection = Selection & { byRun: boolean };

/** The same mode and owners. */
export function sameSelection(a: Selection | undefined, b: Selection | undefined): boolean {
	return a !== undefined && b !== undefined && a.mode === b.mode && a.owners.join() === b.owners.join();
}

/**
 * The session's choice at a session start: the stored one, with the flags given now winning
 * field by field (the user changed them for this process). `overridden` names the stored
 * choice a flag replaced, for `/state`.
 */
export function startChoice(stored: StoredSelection | undefined, flags: Partial<Selection>): { choice: StoredSelection | undefined; overridden?: Selection } {
	if (stored === undefined) return { choice: undefined };
	const next: StoredSelection = { mode: flags.mode ?? stored.mode, owners: flags.owners ? [...flags.owners] : stored.owners, byRun: stored.byRun };
	return sameSelection(next, stored) ? { choice: stored } : { choice: next, overridden: { mode: stored.mode, owners: stored.owners } };
}

export function shapeOf(owners: readonly Owner[]): Shape {
	return owners.length === 1 ? "flat" : "scoped";
}

/** Display form: `active cwd+session`. */
export function describeSelection(sel: Selection): string {
	return `${sel.mode} ${sel.owners.join("+")}`;
}

/** Later layers win field by field; absent fields fall through to earlier layers. */
export function resolveSelection(...layers: Array<Partial<Selection> | undefined>): Selection {
	let mode = DEFAULT_SELECTION.mode;
	let owners = DEFAULT_SELECTION.owners;
	for (const layer of layers) {
		if (layer?.mode !== undefined) mode = layer.mode;
		if (layer?.owners !== undefined && layer.owners.length > 0) owners = layer.owners;
	}
	return { mode, owners: [...owners] };
}

/**
 * Read the CLI flags `--state-mode` and `--state-owners`. Bad values are reported, not thrown,
 * so a typo on the command line never stops pi from starting.
 */
export function selectionFromFlags(modeFlag: unknown, ownersFlag: unknown): { layer: Partial<Selection>; problems: string[] } {
	const layer: Partial<Selection> = {};
	const problems: string[] = [];
	if (typeof modeFlag === "string" && modeFlag !== "") {
		if (isMode(modeFlag)) layer.mode = modeFlag;
		else problems.push(`--state-mode ${JSON.stringify(modeFlag)} is not a mode: use active, passive or off.`);
	}
	if (typeof ownersFlag === "string" && ownersFlag !== "") {
		try {
			layer.owners = parseOwners(ownersFlag);
		} catch (e) {
			problems.push(`--state-owners: ${messageOf(e)}`);
		}
	}
	return { layer, problems };
}

/** The latest valid selection entry on a branch (root → leaf), if any. */
export function selectionFromBranch(branch: ReadonlyArray<{ type: string; customType?: string; data?: unknown }>): StoredSelection | undefined {
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i];
		if (entry?.type !== "custom" || entry.customType !== SELECTION_ENTRY) continue;
		const data = entry.data as Partial<SelectionEntryData> | undefined;
		if (!data || !isMode(data.mode) || !Array.isArray(data.owners)) continue;
		try {
			return { mode: data.mode, owners: parseOwners(data.owners), byRun: data.by === "run" };
		} catch {
			// A damaged entry is skipped; an older valid one (or the defaults) applies.
		}
	}
	return undefined;
}

/** All seven non-empty owner selections, in a stable order (used by completions and docs). */
export function allOwnerSelections(): Owner[][] {
	const out: Owner[][] = [];
	for (let mask = 1; mask < 8; mask++) out.push(OWNERS.filter((_, i) => (mask >> i) & 1));
	return out;
}
