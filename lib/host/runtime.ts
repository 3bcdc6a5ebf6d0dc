/**
 * The per-session host: the one owner of every decision that depends on "what is the selection
 * now" (selection layers, stores and placement, admission, registration, the run), so events,
 * tools and commands cannot disagree. A selection or identity change bumps the admission epoch at once.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { fail, messageOf } from "../core/errors.js";
import { boundNotice } from "./screen-text.js";
import { inline, printable } from "../core/printable.js";
import type { Owner, OwnerHistory } from "../core/types.js";
import { type Mode, readConfig, type StateFlowConfig } from "../storage/placement/config.js";
import { storePaths } from "../storage/project/paths.js";
import type { Project } from "../storage/project/project.js";
import { type Placement, placementFor, placementKey } from "../storage/placement/placement.js";
import type { Stores } from "../storage/stores.js";
import { OpenStores } from "./session/open-stores.js";
import { rootsHostOf } from "./roots/host-port.js";
import { Admission, type Identity } from "./session/admission.js";
import {
	type Selection,
	SELECTION_ENTRY,
	type SelectionEntryData,
	type Shape,
	sameSelection,
	selectionFromBranch,
	selectionFromFlags,
	shapeOf,
} from "./session/selection.js";
import { SelectionLayers } from "./session/selection-layers.js";
import { IdentityCache } from "./session/identity.js";
import { placementChange, placementNotice, withPlacementOf } from "./commands/link-text.js";
import { LinkAsker } from "./commands/link-ask.js";
import { createSessionLog } from "./session/session-log.js";
import { RootRegistry } from "./roots/registry.js";
import { GitBranchWatch } from "../storage/project/git-branch.js";
import { footerText } from "./session/footer.js";
import { type Available, type Health, historiesOf, sortLoaded } from "../surface/available.js";
import { RunTracker } from "../surface/run.js";
import { applyActivation, MODE_FLAG, OWNERS_FLAG } from "./activation.js";
import type { RootDeclaration } from "../model/schemas.js";

/** Injected environment: tests pass temp folders, a fixed clock and predictable ids. */
export interface StateFlowOptions {
	agentDir: string;
	now: () => Date;
	newId: () => string;
	/** Also receives every message shown with `ctx.ui.notify` (pi has no UI in SDK/print mode). */
	notify?: (message: string, level: "info" | "warning" | "error") => void;
}

export type { RunState } from "../surface/run.js";
export { MODE_FLAG, OWNERS_FLAG, TOOL_NAMES } from "./activation.js";

export class StateFlowHost {
	readonly admission = new Admission();
	#config: StateFlowConfig = {};
	/** The flags' and the session's selection layers above the config. */
	readonly #layers = new SelectionLayers();
	/** The open stores and where they put the shared owners (`open-stores.ts`). */
	readonly #open = new OpenStores();
	/** Shape of the `patch_state` declaration currently registered. */
	#registeredShape: Shape | undefined;
	/** Registered external roots (docs/spec.md §12). */
	readonly roots = new RootRegistry();
	/** The checkout's git branch, read before each prompt's head; new intents record it (issue 26). */
	readonly git = new GitBranchWatch();
	/** The roots the registered declaration names: what the model was told, what its calls may use. */
	#declaredRoots: RootDeclaration[] = [];
	/** The current agent run (`run.ts`); the methods below are its only writers. */
	/** The current agent run and what it has shown and written (`surface/run.ts`); events and tools write to it. */
	readonly runs = new RunTracker();
	#ctx: ExtensionContext | undefined;
	#lastKey: { key: string; id: Identity | undefined; mode: Mode; owners: string } | undefined;
	/** The session's project and identity, computed once per change. */
	readonly #where = new IdentityCache();
	/** Session id seen last (the session manager may switch sessions in place). */
	#sessionId: string | undefined;
	/** Repository suggestions already offered in this process, by checkout and project id. */
	readonly #offered = new Set<string>();
	/** The question a checkout that only claims a linked repository asks at a prompt, and the session's noes. */
	readonly linkAsk = new LinkAsker();
	/** Owners the last load could not read, and why in one word: the footer shows it. */
	#health: Partial<Record<Owner, Health>> = {};

	constructor(
		readonly pi: ExtensionAPI,
		readonly options: StateFlowOptions,
	) {
		this.roots.attach(
			rootsHostOf({
				open: this.#open,
				newId: () => this.options.newId(),
				now: () => this.options.now(),
				say: (message, level) => this.say(message, level),
				gate: this.roots.gate,
			}),
		);
	}

	/** Names of the roots the model was told about. */
	declaredRootNames(): string[] {
		return this.#declaredRoots.map((r) => r.name);
	}

	/** Settings from the config file (read at load, again at each session start). */
	get config(): StateFlowConfig {
		return this.#config;
	}

	/** Where the effective selection comes from. */
	selectionSource(): "session" | "run" | "flags" | "config" {
		return this.#layers.source();
	}

	/** The stored choice a CLI flag replaced at this session's start, if one did. */
	get flagOverride(): Selection | undefined {
		return this.#layers.flagOverride;
	}

	/** Before a prompt: record the selection it runs with on the branch, so `--continue` keeps it (issue 26). */
	recordRunSelection(ctx: ExtensionContext): void {
		const sel = this.selection();
		if (sameSelection(sel, selectionFromBranch(ctx.sessionManager.getBranch()))) return;
		const data: SelectionEntryData = { mode: sel.mode, owners: [...sel.owners], by: "run" };
		this.pi.appendEntry(SELECTION_ENTRY, data);
	}

	/** Shape of the `patch_state` declaration currently registered. */
	get registeredShape(): Shape | undefined {
		return this.#registeredShape;
	}

	/** The roots the registered declaration names: what the model was told, what its calls may use. */
	get declaredRoots(): readonly RootDeclaration[] {
		return this.#declaredRoots;
	}

	/** The declaration about to be registered names these roots. */
	declareRoots(roots: RootDeclaration[]): void {
		this.#declaredRoots = roots;
	}

	/** The tools were registered again for `shape`. */
	declared(shape: Shape): void {
		this.#registeredShape = shape;
	}

	/** The latest context pi handed us (a new one per event). */
	get ctx(): ExtensionContext {
		if (!this.#ctx) fail("io", "State Flow is not bound to a session yet.");
		return this.#ctx;
	}

	/** Remember the newest context (a new identity starts an epoch; a session switched in place is followed); returns what admission compares. */
	bind(ctx: ExtensionContext): { selection: Selection; identity: Identity } {
		const previous = this.#sessionId;
		this.#ctx = ctx;
		this.#sessionId = ctx.sessionManager.getSessionId();
		if (previous !== undefined && previous !== this.#sessionId && this.#open.current) {
			this.#layers.followBranch(ctx.sessionManager.getBranch());
			// Reported when read (never thrown at pi); every Session access reports it again.
			void this.#resetSession();
		}
		const now = this.#noteKey();
		return { selection: now.selection, identity: now.identity as Identity };
	}

	/** Effective selection: defaults < config < flags < the session's choice. */
	selection(): Selection {
		return this.#layers.resolve(this.#config);
	}

	/** At extension load: the config file alone (pi parses flags later; each session start reads both). */
	loadConfig(): StateFlowConfig {
		this.#config = readConfig(this.options.agentDir).config;
		return this.#config;
	}

	/** Read config and flags again; returns the problems to report. */
	loadSettings(): string[] {
		const { config, problems } = readConfig(this.options.agentDir);
		this.#config = config;
		const flags = selectionFromFlags(this.pi.getFlag(MODE_FLAG), this.pi.getFlag(OWNERS_FLAG));
		this.#layers.setFlags(flags.layer);
		return [...problems, ...flags.problems];
	}

	/** Open the stores for the current session and restore its selection from the branch (`SelectionLayers.restore`). */
	async openSession(ctx: ExtensionContext, reason?: string): Promise<void> {
		this.#ctx = ctx;
		this.#sessionId = ctx.sessionManager.getSessionId();
		this.#layers.restore(ctx.sessionManager.getBranch(), reason);
		await this.#openStores(ctx);
		this.runs.clear();
		// Session damage is kept and reported on every Session access; say so now too, not only at the first write.
		await this.#checkSession("cannot open Session state", ctx);
	}

	/** (Re)open the stores where the config places the owners now; the Session log is rebuilt from the branch. */
	async #openStores(ctx: ExtensionContext): Promise<void> {
		await this.closeSession();
		this.#health = {};
		const failed = this.#open.open(
			this.#config,
			this.options.agentDir,
			ctx.cwd,
			createSessionLog(this.pi, () => this.ctx),
		);
		if (failed) this.say(`State Flow: cannot open the state stores: ${messageOf(failed.cause)}`, "error", ctx);
		// The identity changed (or may have): calls issued before now are stale.
		this.admission.bump();
		this.#noteKey();
	}

	/** Where the stores opened put the shared owners. */
	get placement(): Placement {
		return this.#open.placement;
	}

	/**
	 * Follow the config when it moved the shared owners (a link made in another terminal, a new
	 * database URL): reopen the stores there and say so once. At a prompt (`atPrompt`), a link
	 * this checkout only claims is asked about first (`LinkAsker`), before the head is built.
	 * Returns whether they moved; otherwise saying so is left to the caller (`/state link`).
	 */
	async followPlacement(ctx: ExtensionContext, atPrompt = true): Promise<boolean> {
		const next = withPlacementOf(this.options.agentDir, this.#config);
		if (next === undefined) return false;
		// A yes is said by the question's answer: the change notice would repeat it.
		const linked = atPrompt && (await this.linkAsk.ask(ctx, this.options.agentDir, next, placementFor(next, ctx.cwd), (m, l) => this.say(m, l, ctx)));
		this.#config = linked ? (withPlacementOf(this.options.agentDir, next) ?? next) : next;
		if (placementKey(placementFor(this.#config, ctx.cwd)) === this.#open.placementKey) return false;
		const before = this.#open.placement;
		await this.#openStores(ctx);
		const files = storePaths(this.options.agentDir, ctx.cwd);
		const said = placementChange(before, this.#open.placement, { global: files.globalRoot, cwd: files.cwdRoot });
		if (atPrompt && !linked && said !== undefined) this.say(said, this.#open.placement.problem === undefined ? "info" : "warning", ctx);
		this.showStatus();
		await this.#checkSession("cannot open Session state", ctx);
		return true;
	}

	/**
	 * Follow the project's store when it moved under a running session (its memory taken over by
	 * the repository's common dir, a refusal lifted or raised): reopen the stores there and say so.
	 */
	async followProject(ctx: ExtensionContext): Promise<boolean> {
		const moved = this.#where.refresh(ctx.cwd);
		if (moved === undefined) return false;
		await this.#openStores(ctx);
		const { before, after } = moved;
		const said =
			after.refused !== undefined
				? `State Flow: ${after.refused}.`
				: `State Flow: this project's memory is now ${after.store === before.store ? "readable again" : `kept in ${inline(after.store)} (it was ${inline(before.store)})`}; the CWD owner follows it from this prompt on.`;
		this.say(said, "warning", ctx);
		this.showStatus();
		return true;
	}

	/** At session start: why a shared owner cannot be placed, or the repository's suggested project (`placementNotice`). */
	tellPlacement(ctx: ExtensionContext): void {
		const notice = placementNotice(this.#open.placement, ctx.cwd, this.#offered, ctx.hasUI);
		if (notice !== undefined) this.say(notice.message, notice.level, ctx);
	}

	/** The session ends (quit, switch, reload): release database connections; nothing is lost (the stores reopen on use). */
	async closeSession(): Promise<void> {
		this.#open.stopWatching();
		this.roots.unwatch();
		await this.#open.close();
	}

	/** After `/tree` navigation: the branch has its own selection and Session state. */
	async followBranch(ctx: ExtensionContext): Promise<void> {
		this.#ctx = ctx;
		this.#layers.followBranch(ctx.sessionManager.getBranch());
		const checked = this.#resetSession();
		this.admission.bump();
		this.#noteKey();
		await checked;
	}

	/** A `/state` command's choice: recorded on the branch, effective for admission at once. */
	choose(next: Selection): void {
		this.pi.appendEntry(SELECTION_ENTRY, this.#layers.choose(next));
		this.#noteKey();
	}

	/** Called after any settings change: bumps the epoch when the effective selection moved. */
	settingsChanged(): void {
		this.#noteKey();
	}

	/** The stores, or a clear error (not opened yet, or opening failed and why). */
	requireStores(): Stores {
		return this.#open.require();
	}

	/** Rebuild Session state from the current branch; damage is reported, never thrown at pi. */
	#resetSession(): Promise<void> {
		this.#open.current?.resetSession(createSessionLog(this.pi, () => this.ctx));
		return this.#checkSession("cannot read Session state on this branch");
	}

	/** Read the Session owner (completing a journal part it waits for); damage is said, never thrown. */
	async #checkSession(what: string, ctx?: ExtensionContext): Promise<void> {
		try {
			await this.#open.current?.load("session");
		} catch (e) {
			// Kept and reported on every Session access; Global and CWD keep working.
			this.say(`State Flow: ${what}: ${messageOf(e)}`, "error", ctx);
		}
	}

	/** The project of the session's cwd (`project.ts`), resolved once per cwd string. */
	project(ctx: ExtensionContext = this.ctx): Project {
		return this.#where.project(ctx.cwd);
	}

	/** Where the state physically lives right now. */
	identity(ctx: ExtensionContext = this.ctx): Identity {
		return this.#where.identity(this.options.agentDir, ctx.cwd, ctx.sessionManager.getSessionId(), this.#open.current?.identity());
	}

	/** Histories of the owners that can be read now; an unavailable or damaged one is reported instead (`sortLoaded`). */
	async available(owners: readonly Owner[]): Promise<Available> {
		const health = { ...this.#health };
		const out = sortLoaded(owners, await this.requireStores().loadEach(owners), health);
		this.#noteHealth(health);
		return out;
	}

	/** Histories of some owners, loaded through the stores (cheap when unchanged). */
	async histories(owners: readonly Owner[]): Promise<Partial<Record<Owner, OwnerHistory>>> {
		return historiesOf(owners, await this.requireStores().loadEach(owners));
	}

	/** Make the tools' active state match the mode (`activation.ts`). */
	applyActivation(mode: Mode = this.selection().mode): void {
		applyActivation(this.pi, mode);
	}

	/** Tell the user (and the injected tap), controls escaped and bounded (`boundNotice`); never throws, even with a stale context. */
	say(message: string, level: "info" | "warning" | "error" = "info", ctx: ExtensionContext | undefined = this.#ctx): void {
		const shown = boundNotice(message, printable);
		try {
			ctx?.ui.notify(shown, level);
		} catch {
			// The session was replaced or closed (pi's stale-ctx guard): there is no UI left to tell.
		}
		this.options.notify?.(shown, level);
	}

	/** Status line: `state: active cwd+session`, with damaged, unavailable and shared owners (`footer.ts`). */
	showStatus(): void {
		if (!this.#ctx) return;
		try {
			this.#ctx.ui.setStatus("state-flow", footerText(this.selection(), this.#open.placement, this.#health));
		} catch {
			// A stale context (the session was replaced): its footer is gone with it.
		}
	}

	/** What the wanted owners' stores say now, shown in the footer; a failure to ask is reported where the stores are used. */
	async checkHealth(): Promise<void> {
		try {
			await this.available(this.selection().owners);
		} catch {
			// Not damage or an outage (a bug, a closed session): the next use of the stores reports it.
		}
	}

	#noteHealth(next: Partial<Record<Owner, Health>>): void {
		if (JSON.stringify(Object.entries(next).sort()) === JSON.stringify(Object.entries(this.#health).sort())) return;
		this.#health = next;
		this.showStatus();
	}

	/** Shape of the current selection. */
	shape(): Shape {
		return shapeOf(this.selection().owners);
	}

	#noteKey(): { selection: Selection; identity: Identity | undefined } {
		const sel = this.selection();
		const id = this.#ctx ? this.identity(this.#ctx) : undefined;
		const last = this.#lastKey;
		const owners = sel.owners.join(",");
		// Nothing moved (the common case, every event): no key text to build.
		if (last !== undefined && last.id === id && last.mode === sel.mode && last.owners === owners) return { selection: sel, identity: id };
		const key = JSON.stringify([sel.mode, sel.owners, id]);
		if (last !== undefined && key !== last.key) this.admission.bump();
		this.#lastKey = { key, id, mode: sel.mode, owners };
		return { selection: sel, identity: id };
	}
}
