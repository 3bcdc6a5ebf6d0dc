/**
 * The selection's layers above the config: the flags given to this process and the session's
 * own choice, restored from its branch. Kept apart from the host so the precedence rule
 * (defaults < config < flags < the session's choice) is read in one place.
 */
import { resolveSelection, type Selection, type SelectionEntryData, selectionFromBranch, startChoice, type StoredSelection } from "./selection.js";

type Branch = Parameters<typeof selectionFromBranch>[0];

export class SelectionLayers {
	/** The session's own `/state` choice (highest precedence), restored from the branch. */
	#sessionChoice: StoredSelection | undefined;
	/** The stored choice a CLI flag replaced at this session's start (shown by `/state`). */
	#flagOverride: Selection | undefined;
	#flagLayer: Partial<Selection> = {};

	/** Effective selection: defaults < config < flags < the session's choice. */
	resolve(config: Partial<Selection>): Selection {
		return resolveSelection(config, this.#flagLayer, this.#sessionChoice);
	}

	/** Where the effective selection comes from. */
	source(): "session" | "run" | "flags" | "config" {
		if (this.#sessionChoice) return this.#sessionChoice.byRun ? "run" : "session";
		return this.#flagLayer.mode || this.#flagLayer.owners ? "flags" : "config";
	}

	/** The stored choice a CLI flag replaced at this session's start, if one did. */
	get flagOverride(): Selection | undefined {
		return this.#flagOverride;
	}

	/** The flags this process was given (read again at each session start). */
	setFlags(layer: Partial<Selection>): void {
		this.#flagLayer = layer;
	}

	/**
	 * At session start: the branch's choice, with this process's flags winning over it. On a
	 * reload the selection a run recorded yields to the settings just read (the user reloads to apply them).
	 */
	restore(branch: Branch, reason: string | undefined): void {
		const found = selectionFromBranch(branch);
		const start = startChoice(reason === "reload" && found?.byRun ? undefined : found, this.#flagLayer);
		this.#sessionChoice = start.choice;
		this.#flagOverride = start.overridden;
	}

	/** Another branch or session: its own choice, no flag override to report. */
	followBranch(branch: Branch): void {
		this.#sessionChoice = selectionFromBranch(branch);
		this.#flagOverride = undefined;
	}

	/** A `/state` command's choice; returns the entry that records it on the branch. */
	choose(next: Selection): SelectionEntryData {
		this.#sessionChoice = { mode: next.mode, owners: [...next.owners], byRun: false };
		this.#flagOverride = undefined;
		return { mode: next.mode, owners: [...next.owners] };
	}
}
