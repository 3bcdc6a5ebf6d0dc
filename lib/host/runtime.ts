/**
 * The per-session host state: selection layers, the stores, admission, what is registered and
 * the current run. One object owns every decision that depends on "what is the selection
 * now", so events, tools and commands cannot disagree.
 * A selection or identity change always bumps the admission epoch at once.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { fail, isStateError, messageOf, type StateError } from "../core/errors.js";
import { boundNotice } from "./screen-text.js";
import { printable } from "../core/printable.js";
import type { Owner, OwnerHistory } from "../core/types.js";
import { isOneOf, SHARED_OWNERS } from "../core/types.js";
import { limitsOf, type Mode, readConfig, type StateFlowConfig } from "../storage/config.js";
import { realOrSelf } from "../storage/artifact-files.js";
import { storePaths } from "../storage/paths.js";
import { type Project, projectOf } from "../storage/project.js";
import { type Placement, placementFor, placementKey } from "../storage/backend.js";
import { Stores } from "../storage/stores.js";
import type { StoresIdentity } from "../storage/stores.js";
import { whoAmI } from "../storage/who.js";
import { Admission, type Identity } from "./admission.js";
import {
	resolveSelection,
	type Selection,
	SELECTION_ENTRY,
	type SelectionEntryData,
	type Shape,
	sameSelection,
	selectionFromBranch,
	selectionFromFlags,
	startChoice,
	type StoredSelection,
	shapeOf,
} from "./selection.js";
import { placementChange, readSuggestion } from "./link.js";
import { createSessionLog } from "./session-log.js";
import { RootRegistry } from "./roots.js";
import { GitBranchWatch } from "./git-branch.js";
import { footerText, type Health } from "./footer.js";
import type { RootDeclaration } from "../model/schemas.js";

/** Injected environment: tests pass temp folders, a fixed clock and predictable ids. */
export interface StateFlowOptions {
	agentDir: string;
	now: () => Date;
	newId: () => string;
	/** Also receives every message shown with `ctx.ui.notify` (pi has no UI in SDK/print mode). */
	notify?: (message: string, level: "info" | "warning" | "error") => void;
}

/** Config fields that say where the shared owners live: a running session follows them at its next prompt. */
const PLACEMENT_FIELDS = ["database", "databaseSchema", "user", "shareGlobal", "links", "repoLinks"] as const;

/** Histories of the owners that could be read, and why the others are unavailable right now. */
export interface Available {
	histories: Partial<Record<Owner, OwnerHistory>>;
	unavailable: Partial<Record<Owner, StateError>>;
}

/** Names of the two tools; they never change. */
export const TOOL_NAMES = ["read_state", "patch_state"] as const;

/** Flag names (`--state-mode`, `--state-owners`). */
export const MODE_FLAG = "state-mode";
export const OWNERS_FLAG = "state-owners";

/** What one agent run froze and observed: the host's own, writable record of it. */
interface Run {
	/** The head rendered in `before_agent_start`, sent unchanged on every request of the run. */
	head: string | undefined;
	/** Timestamp of the run's user prompt message, found on the first request. */
	promptTimestamp: number | undefined;
	/** Started by a user prompt, retries included (false once the reconciliation follow-up runs). */
	fromPrompt: boolean;
	/** A file-changing built-in tool (`write`, `edit`, `bash`) ran. */
	fileChanged: boolean;
	/** Something was committed to state by a tool call. */
	committed: boolean;
	/** The reconciliation follow-up for this user prompt was already sent. */
	reconcileSent: boolean;
	/** Shared owners' seq when the head was rendered (for concurrent-change notices). */
	seqAtHead: Partial<Record<Owner, number>>;
	/** Per-owner seqs this run committed (acknowledged in their own results, not as notices). */
	ownSeqs: Partial<Record<Owner, Set<number>>>;
	/** Stale-artifact hints the model already saw in this run (head or an earlier result), by `staleSignature`. */
	hinted: Set<string>;
}

/** The current run as everyone else sees it: changed only through the host's run methods. */
export type RunState = Readonly<Omit<Run, "seqAtHead" | "ownSeqs" | "hinted">> & {
	readonly seqAtHead: Readonly<Run["seqAtHead"]>;
	readonly ownSeqs: Readonly<Partial<Record<Owner, ReadonlySet<number>>>>;
	readonly hinted: ReadonlySet<string>;
};

export class StateFlowHost {
	readonly admission = new Admission();
	#config: StateFlowConfig = {};
	/** The session's own `/state` choice (highest precedence), restored from the branch. */
	#sessionChoice: StoredSelection | undefined;
	/** The stored choice a CLI flag replaced at this session's start (shown by `/state`). */
	#flagOverride: Selection | undefined;
	#flagLayer: Partial<Selection> = {};
	#stores: Stores | undefined;
	/** Shape of the `patch_state` declaration currently registered. */
	#registeredShape: Shape | undefined;
	/** Registered external roots (docs/spec.md §12). */
	readonly roots = new RootRegistry();
	/** The checkout's git branch, read before each prompt's head; new intents record it (issue 26). */
	readonly git = new GitBranchWatch();
	/** The roots the registered declaration names: what the model was told, what its calls may use. */
	#declaredRoots: RootDeclaration[] = [];
	#run: Run | undefined;
	/** Where the next bounded stale-artifact check (head or tool call) starts; walks the tracked artifacts over checks. */
	#staleCursor = 0;
	/**
	 * Set when the reconciliation follow-up is sent, consumed by the next `agent_start`: that run
	 * is not a prompt run. Other runs pi starts without `before_agent_start` (a retry after a
	 * provider error, the continuation after an overflow compaction) still belong to the prompt.
	 */
	#reconcilePending = false;
	#ctx: ExtensionContext | undefined;
	#lastKey: { key: string; id: Identity | undefined; mode: Mode; owners: string } | undefined;
	/** The last identity computed and the stores' identity it was made from. */
	#identity: { roots: StoresIdentity | undefined; value: Identity } | undefined;
	/** Session id seen last (the session manager may switch sessions in place). */
	#sessionId: string | undefined;
	/** Why the stores could not be opened (whatever was thrown). */
	#openError: { cause: unknown } | undefined;
	/** Where the stores opened put the shared owners, and its key (a change reopens them). */
	#placement: Placement = {};
	#placementKey: string | undefined;
	/** Repository suggestions already offered in this process, by checkout and project id. */
	readonly #offered = new Set<string>();
	/** The open stores may be watched for other processes' commits (false once the session closed). */
	#watchStores = false;
	/** The last cwd resolved for `identity` and its realpath: every event and tool call asks, and a syscall per ask is the largest host cost of a read. */
	#realCwd: { cwd: string; real: string; project: Project } | undefined;
	/** Owners the last load could not read, and why in one word: the footer shows it. */
	#health: Partial<Record<Owner, Health>> = {};

	constructor(
		readonly pi: ExtensionAPI,
		readonly options: StateFlowOptions,
	) {
		this.roots.attach({
			histories: async (owners) => {
				if (!this.#stores) return undefined;
				const out: Partial<Record<Owner, OwnerHistory>> = {};
				// One snapshot of the owners; one that is unavailable (no Session) or damaged is reported where the store is used.
				const loaded = await this.#stores.loadEach(owners);
				owners.forEach((o, i) => {
					const got = loaded[i];
					if (got !== undefined && "history" in got) out[o] = got.history;
				});
				return out;
			},
			commit: async (patch, extension) => {
				const outcome = await this.requireStores().commit(patch, {
					by: { kind: "extension", extension },
					id: this.options.newId(),
					at: this.options.now().toISOString(),
					roots: this.roots.gate,
				});
				return outcome.noop ? null : outcome.transitionId;
			},
			say: (message, level) => this.say(message, level),
			watchDatabases: (changed) => (this.#watchStores ? this.#stores?.watchDatabases(changed) : undefined),
			storeFolders: () => {
				const stores = this.#stores;
				if (!stores || !this.#watchStores) return [];
				return SHARED_OWNERS.flatMap((o) => {
					const where = stores.location(o);
					return where.backend === "file" ? [where.path] : [];
				});
			},
		});
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
		if (this.#sessionChoice) return this.#sessionChoice.byRun ? "run" : "session";
		return this.#flagLayer.mode || this.#flagLayer.owners ? "flags" : "config";
	}

	/** The stored choice a CLI flag replaced at this session's start, if one did. */
	get flagOverride(): Selection | undefined {
		return this.#flagOverride;
	}

	/**
	 * Before a prompt: record on the branch the selection it runs with, when the branch does not
	 * hold it yet, so `--continue` and `--resume` keep the conversation's grammar (issue 26).
	 */
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

	/** The current agent run, if one started in this session. */
	get run(): RunState | undefined {
		return this.#run;
	}

	/**
	 * A user prompt's run starts (`before_agent_start`): its frozen head, the shared owners' seqs
	 * it showed, and the stale hints it already named. A reconciliation follow-up delivered
	 * inside this prompt never started a run of its own.
	 */
	startRun(head: string | undefined, seqAtHead: Partial<Record<Owner, number>> = {}, hinted: readonly string[] = []): void {
		this.#reconcilePending = false;
		this.#run = {
			head,
			promptTimestamp: undefined,
			fromPrompt: true,
			fileChanged: false,
			committed: false,
			reconcileSent: false,
			seqAtHead,
			ownSeqs: {},
			hinted: new Set(hinted),
		};
	}

	/** pi started a run (`agent_start`): the one our reconciliation follow-up triggered is not a prompt run. */
	agentStarted(): void {
		if (this.#run && this.#reconcilePending) this.#run.fromPrompt = false;
		this.#reconcilePending = false;
	}

	/** The first request of the run found its user prompt. */
	notePrompt(timestamp: number): void {
		if (this.#run) this.#run.promptTimestamp ??= timestamp;
	}

	/** A file-changing built-in tool ran in this run. */
	noteFileChange(): void {
		if (this.#run) this.#run.fileChanged = true;
	}

	/** A tool call of this run committed these per-owner transitions (its own writes are not "concurrent"). */
	recordOwnWrite(records: Partial<Record<Owner, { seq: number }>>): void {
		const run = this.#run;
		if (!run) return;
		run.committed = true;
		for (const [owner, record] of Object.entries(records) as Array<[Owner, { seq: number }]>) (run.ownSeqs[owner] ??= new Set()).add(record.seq);
	}

	/** The model was shown these stale-artifact hints (by `staleSignature`). */
	markHinted(signatures: Iterable<string>): void {
		for (const sig of signatures) this.#run?.hinted.add(sig);
	}

	/** The run's reconciliation follow-up is decided: at most one per prompt. */
	reconcileDecided(): void {
		if (this.#run) this.#run.reconcileSent = true;
	}

	/** The follow-up is being sent: the run it triggers is not a prompt run. */
	reconcileSending(): void {
		this.#reconcilePending = true;
	}

	/** Where a stale check of `count` of `total` tracked artifacts starts; the next check continues after it. */
	takeStaleWindow(total: number, count: number): number {
		const start = this.#staleCursor % total;
		this.#staleCursor = start + count;
		return start;
	}

	/** The latest context pi handed us; pi creates a new one per event. */
	get ctx(): ExtensionContext {
		if (!this.#ctx) fail("io", "State Flow is not bound to a session yet.");
		return this.#ctx;
	}

	/**
	 * Remember the newest context; an identity change (session, cwd) starts a new epoch. When
	 * the session changed under us without a `session_start`, follow it: its branch holds its
	 * own selection and Session state. Returns the selection and identity now, as admission compares them.
	 */
	bind(ctx: ExtensionContext): { selection: Selection; identity: Identity } {
		const previous = this.#sessionId;
		this.#ctx = ctx;
		this.#sessionId = ctx.sessionManager.getSessionId();
		if (previous !== undefined && previous !== this.#sessionId && this.#stores) {
			this.#sessionChoice = selectionFromBranch(ctx.sessionManager.getBranch());
			this.#flagOverride = undefined;
			// Reported when read (never thrown at pi); every Session access reports it again.
			void this.#resetSession();
		}
		const now = this.#noteKey();
		return { selection: now.selection, identity: now.identity as Identity };
	}

	/** Effective selection: defaults < config < flags < the session's choice. */
	selection(): Selection {
		return resolveSelection(this.#config, this.#flagLayer, this.#sessionChoice);
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
		this.#flagLayer = flags.layer;
		return [...problems, ...flags.problems];
	}

	/**
	 * Open the stores for the current session and restore its selection from the branch; flags
	 * given to this process win over it (reported by `/state`). On a reload the selection a run
	 * recorded yields to the settings just read (the user reloads to apply them).
	 */
	async openSession(ctx: ExtensionContext, reason?: string): Promise<void> {
		this.#ctx = ctx;
		this.#sessionId = ctx.sessionManager.getSessionId();
		const found = selectionFromBranch(ctx.sessionManager.getBranch());
		const start = startChoice(reason === "reload" && found?.byRun ? undefined : found, this.#flagLayer);
		this.#sessionChoice = start.choice;
		this.#flagOverride = start.overridden;
		await this.#openStores(ctx);
		this.#run = undefined;
		// The Session store keeps damage and reports it on every Session access (Global and CWD
		// keep working from the same stores); say so now too, not only at the first write.
		await this.#checkSession("cannot open Session state", ctx);
	}

	/** (Re)open the stores where the config places the owners now; the Session log is rebuilt from the branch. */
	async #openStores(ctx: ExtensionContext): Promise<void> {
		const placement = placementFor(this.#config, ctx.cwd);
		const options = {
			agentDir: this.options.agentDir,
			cwd: ctx.cwd,
			retention: this.#config.retention,
			limits: limitsOf(this.#config),
			allowSecrets: this.#config.allowSecrets ?? [],
		};
		await this.closeSession();
		this.#stores = undefined;
		this.#openError = undefined;
		this.#health = {};
		try {
			this.#stores = new Stores({ ...options, placement, who: whoAmI(this.#config.user), session: createSessionLog(this.pi, () => this.ctx) });
			this.#watchStores = true;
		} catch (e) {
			this.#openError = { cause: e };
			this.say(`State Flow: cannot open the state stores: ${messageOf(e)}`, "error", ctx);
		}
		this.#placement = placement;
		this.#placementKey = placementKey(placement);
		// The identity changed (or may have): calls issued before now are stale.
		this.admission.bump();
		this.#noteKey();
	}

	/** Where the stores opened put the shared owners. */
	get placement(): Placement {
		return this.#placement;
	}

	/**
	 * Follow the user's config when it moved the shared owners under a running session (a link
	 * made by `/state link` or by `state-flow link` in another terminal, a new database URL):
	 * reopen the stores there and say so once. Only the placement fields are taken over; the
	 * other settings wait for the next session start. Returns whether the stores moved;
	 * `announce` false leaves saying so to the caller (`/state link` says it its own way).
	 */
	async followPlacement(ctx: ExtensionContext, announce = true): Promise<boolean> {
		const { config, problems } = readConfig(this.options.agentDir);
		// A file that cannot be read at all (mid-edit by hand) moves nothing; the next session start reports it.
		if (problems.length > 0 && Object.keys(config).length === 0) return false;
		const next: StateFlowConfig = { ...this.#config };
		for (const field of PLACEMENT_FIELDS) {
			if (config[field] === undefined) delete next[field];
			else (next as Record<string, unknown>)[field] = config[field];
		}
		this.#config = next;
		if (placementKey(placementFor(next, ctx.cwd)) === this.#placementKey) return false;
		const before = this.#placement;
		await this.#openStores(ctx);
		const files = storePaths(this.options.agentDir, ctx.cwd);
		const said = placementChange(before, this.#placement, { global: files.globalRoot, cwd: files.cwdRoot });
		if (announce && said !== undefined) this.say(said, this.#placement.problem === undefined ? "info" : "warning", ctx);
		this.showStatus();
		await this.#checkSession("cannot open Session state", ctx);
		return true;
	}

	/**
	 * At session start: why a shared owner cannot be placed, if so; else the repository's
	 * suggested project, offered once per checkout and id in this process, only when a database
	 * is configured and the checkout is not linked. Never links anything.
	 */
	tellPlacement(ctx: ExtensionContext): void {
		if (this.#placement.problem !== undefined) return this.say(`State Flow: shared memory is unavailable: ${this.#placement.problem}`, "warning", ctx);
		if (this.#placement.database === undefined || this.#placement.project !== undefined) return;
		const suggestion = readSuggestion(ctx.cwd);
		if (suggestion === undefined) return;
		const key = JSON.stringify([realOrSelf(ctx.cwd), "project" in suggestion ? suggestion.project : suggestion.problem]);
		if (this.#offered.has(key)) return;
		this.#offered.add(key);
		if ("problem" in suggestion) return this.say(`State Flow: ${suggestion.problem}`, "warning", ctx);
		this.say(
			`State Flow: this repository suggests sharing its CWD memory as project \`${suggestion.project}\`. Nothing is shared unless you agree: \`/state link\` links it after confirmation.`,
			"info",
			ctx,
		);
	}

	/** The session ends (quit, switch, reload): release database connections; nothing is lost (the stores reopen on use). */
	async closeSession(): Promise<void> {
		// Nothing is watched for a closed session, even if a late event asks (`#openStores` opens again).
		this.#watchStores = false;
		this.roots.unwatch();
		try {
			await this.#stores?.close();
		} catch {
			// Closing is best effort: a connection that is already gone has nothing to release.
		}
	}

	/** After `/tree` navigation: the branch has its own selection and Session state. */
	async followBranch(ctx: ExtensionContext): Promise<void> {
		this.#ctx = ctx;
		this.#sessionChoice = selectionFromBranch(ctx.sessionManager.getBranch());
		this.#flagOverride = undefined;
		const checked = this.#resetSession();
		this.admission.bump();
		this.#noteKey();
		await checked;
	}

	/** A `/state` command's choice: recorded on the branch, effective for admission at once. */
	choose(next: Selection): void {
		this.#sessionChoice = { mode: next.mode, owners: [...next.owners], byRun: false };
		this.#flagOverride = undefined;
		const data: SelectionEntryData = { mode: next.mode, owners: [...next.owners] };
		this.pi.appendEntry(SELECTION_ENTRY, data);
		this.#noteKey();
	}

	/** Called after any settings change: bumps the epoch when the effective selection moved. */
	settingsChanged(): void {
		this.#noteKey();
	}

	/** The stores, or a clear error (not opened yet, or opening failed and why). */
	requireStores(): Stores {
		if (this.#openError) fail("io", `State Flow could not open its stores: ${messageOf(this.#openError.cause)}`, [], this.#openError.cause);
		if (!this.#stores) fail("io", "State Flow has no session yet; try again after the session has started.");
		return this.#stores;
	}

	/** Rebuild Session state from the current branch; damage is reported, never thrown at pi. */
	#resetSession(): Promise<void> {
		this.#stores?.resetSession(createSessionLog(this.pi, () => this.ctx));
		return this.#checkSession("cannot read Session state on this branch");
	}

	/** Read the Session owner (completing a journal part it waits for); damage is said, never thrown. */
	async #checkSession(what: string, ctx?: ExtensionContext): Promise<void> {
		try {
			await this.#stores?.load("session");
		} catch (e) {
			// Kept and reported on every Session access; Global and CWD keep working.
			this.say(`State Flow: ${what}: ${messageOf(e)}`, "error", ctx);
		}
	}

	/** The project of the session's cwd (`project.ts`), resolved once per cwd string. */
	project(ctx: ExtensionContext = this.ctx): Project {
		// pi keeps one cwd per session; a new cwd string is resolved again. Re-pointing a symlink
		// under a running session is not followed (the stores opened on the old target anyway).
		if (this.#realCwd?.cwd !== ctx.cwd) {
			const project = projectOf(ctx.cwd);
			this.#realCwd = { cwd: ctx.cwd, real: project.start, project };
		}
		return this.#realCwd.project;
	}

	/** Where the state physically lives right now. */
	identity(ctx: ExtensionContext = this.ctx): Identity {
		const cwd = this.project(ctx).start;
		// The stores' own roots are what a commit writes to; before they exist, the computed ones.
		const roots = this.#stores?.identity();
		const sessionId = ctx.sessionManager.getSessionId();
		// The same object while nothing it is made of moved: `#noteKey` compares references on every event.
		const known = this.#identity;
		if (known !== undefined && known.roots === roots && known.value.sessionId === sessionId && known.value.cwd === cwd) return known.value;
		const value = {
			sessionId,
			cwd,
			globalRoot: roots?.globalRoot ?? storePaths(this.options.agentDir, cwd).globalRoot,
			cwdRoot: roots?.cwdRoot ?? this.project(ctx).store,
		};
		this.#identity = { roots, value };
		return value;
	}

	/**
	 * Histories of the owners that can be read now; an owner whose store is unavailable (its
	 * database is down or not configured) or damaged is reported instead, and the others keep
	 * working. Any other failure is thrown.
	 */
	async available(owners: readonly Owner[]): Promise<Available> {
		const loaded = await this.requireStores().loadEach(owners);
		const out: Available = { histories: {}, unavailable: {} };
		const health = { ...this.#health };
		owners.forEach((owner, i) => {
			const got = loaded[i] as (typeof loaded)[number];
			if ("history" in got) {
				out.histories[owner] = got.history;
				delete health[owner];
				return;
			}
			const e = got.error;
			// Damage is kept apart like an outage: that owner is refused with what to do, the others keep working.
			if (!isStateError(e) || (e.code !== "unavailable" && e.code !== "corrupt")) throw e;
			out.unavailable[owner] = e;
			health[owner] = e.code === "corrupt" ? "damaged" : "unavailable";
		});
		this.#noteHealth(health);
		return out;
	}

	/** Histories of some owners, loaded through the stores (cheap when unchanged). */
	async histories(owners: readonly Owner[]): Promise<Partial<Record<Owner, OwnerHistory>>> {
		const loaded = await this.requireStores().loadEach(owners);
		const out: Partial<Record<Owner, OwnerHistory>> = {};
		owners.forEach((owner, i) => {
			const got = loaded[i] as (typeof loaded)[number];
			if (!("history" in got)) throw got.error;
			out[owner] = got.history;
		});
		return out;
	}

	/**
	 * Make the tools' active state match the mode, whatever the host restored or another
	 * extension changed: Active/Passive ⇒ both tools active, Off ⇒ neither. pi 1.6 re-applies
	 * the tool set recorded in the session file on resume and `/tree` (before `session_start`),
	 * so remembering what this process deactivated is not enough. Other tools are left alone;
	 * a host allowlist that excludes our tools wins (pi does not register excluded tools).
	 */
	applyActivation(mode: Mode = this.selection().mode): void {
		const active = this.pi.getActiveTools();
		const ours = (n: string) => isOneOf(TOOL_NAMES, n);
		const registered = new Set(this.pi.getAllTools().map((t) => t.name));
		const want = mode === "off" ? [] : TOOL_NAMES.filter((n) => registered.has(n));
		const have = active.filter(ours);
		if (have.length === want.length && want.every((n) => have.includes(n))) return;
		this.pi.setActiveTools([...active.filter((n) => !ours(n)), ...want]);
	}

	/**
	 * Show a message to the user (and to the injected tap); never throws, even with a stale context.
	 * Terminal controls in it are shown as escapes; its length is bounded by the screen (`boundNotice`).
	 */
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
			this.#ctx.ui.setStatus("state-flow", footerText(this.selection(), this.#placement, this.#health));
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
		const key = (h: Partial<Record<Owner, Health>>) => JSON.stringify(Object.entries(h).sort());
		if (key(next) === key(this.#health)) return;
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
