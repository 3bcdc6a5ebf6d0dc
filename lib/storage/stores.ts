/**
 * The storage facade: the owners of one agent directory, project and pi session, behind the
 * owner-store port (`port.ts`). It reads each owner through the port (after the backend
 * completed what a crashed writer left) and commits a canonical patch through the backend's
 * atomic multi-owner commit, staging on the fresh state under its locks. It never touches
 * files, locks or journals itself, and never a store's class: it is handed its backends
 * (`open.ts` opens it, the one place naming concrete stores), routes by each store's backend
 * (`router.ts`), and another plugs in there.
 */
import { fail } from "../core/errors.js";
import { stage } from "../core/stage.js";
import { DEFAULT_LIMITS, DEFAULT_RETENTION, MAX_RETENTION, OWNERS } from "../core/types.js";
import type {
	CanonicalPatch,
	JsonObject,
	Limits,
	Owner,
	OwnerHistory,
	Provenance,
	RootGate,
	SharedOwner,
	StageReport,
	TransitionRecord,
	Who,
} from "../core/types.js";
import type { Placement } from "./placement/placement.js";
import { configPath } from "./placement/config.js";
import { type AllowList, refuseCredentials } from "./credentials/check.js";
import { locationKey } from "./port.js";
import type { LoadAnswer, OwnerLocation, OwnerStore, OwnerStoreStatus } from "./port.js";
import type { PlacedBackend } from "./router.js";
import type { SessionLog, SessionStore } from "./session/store.js";

export type { SessionLog } from "./session/store.js";

/** What a `Stores` runs on: the Global and CWD stores wherever they live, the router over their backends, and Session stores. */
export interface OpenedBackend {
	shared: Record<SharedOwner, OwnerStore>;
	router: PlacedBackend;
	openSession(log: SessionLog): SessionStore;
}

export interface StoresOptions {
	/** Global root = `<agentDir>/state-flow/global/`; journals under `<agentDir>/state-flow/journal/` (see `paths.ts`). */
	agentDir: string;
	/** The folder whose project's store is the CWD root (`project.ts`: `<project root>/.pi/state-flow/` mostly). */
	cwd: string;
	/** Absent: the Session owner is unavailable. */
	session?: SessionLog;
	/** Retained transitions per owner, 0..1000 (default 20). */
	retention?: number;
	limits?: Limits;
	/** How long a writer waits for a lock before "busy" (default 10 s). */
	lockTimeoutMs?: number;
	/** Who this process writes as (`whoAmI`), stamped on every owner's record of each commit; absent: not recorded. */
	who?: Who;
	/** Where shared owners live (`placementFor`); absent: Global and CWD on files. */
	placement?: Placement;
	/** Strings the user said are no secret (the config's `allowSecrets`; `credentials.ts`). */
	allowSecrets?: AllowList;
}

export interface CommitOptions {
	by: Provenance;
	id: string;
	at: string;
	/** An exact state delta (undo): staged without ownership cascades. */
	exact?: boolean;
	/** Which registered roots may be written, and their schemas (absent: none). */
	roots?: RootGate;
	/** Checked again right before the durable write; aborted -> "aborted", nothing written. */
	signal?: AbortSignal;
	/** Admission re-check under the locks right before the durable write; throws to refuse. */
	check?: () => void;
	/** Artifact compiler hook: may rewrite the patch and carry file effects. */
	prepare?: (patch: CanonicalPatch, histories: Partial<Record<Owner, OwnerHistory>>) => Promise<CommitEffects> | CommitEffects;
	/**
	 * The user said, for this one command, that what it writes is no secret (`--allow-secret` of
	 * `/state set` and `state-flow set|edit|import`): the credential check is skipped. Only those
	 * commands set it; no tool or extension call can (docs/security.md §7).
	 */
	allowSecret?: boolean;
}

/** File effects of a commit: `apply()` after staging, before the durable write; `revert()` if that write fails. */
export interface CommitEffects {
	patch: CanonicalPatch;
	apply(): void;
	revert(): void;
	/** `apply()` would change files even when the state does not change (a compiled file went missing). */
	hasEffects?: boolean;
}

export type CommitResult =
	| { noop: true; report: StageReport }
	| { noop: false; transitionId: string; report: StageReport; records: Partial<Record<Owner, TransitionRecord>> };

/** What identifies an owner's storage for admission checks: a folder for files, the location key otherwise. */
function placeOf(l: OwnerLocation): string {
	return l.backend === "file" ? l.path : locationKey(l);
}

function aborted(signal: AbortSignal | undefined): void {
	if (signal?.aborted) fail("aborted", "The tool call was cancelled before its commit; nothing was written.");
}

/** Reads of several shared owners tried before giving up on a snapshot (each retry follows another process's commit). */
const SNAPSHOT_ATTEMPTS = 16;

/** What identifies the owners' storage now (admission compares it). */
export interface StoresIdentity {
	readonly globalRoot: string;
	readonly cwdRoot: string;
	readonly sessionId: string | undefined;
}

export class Stores {
	/** The last identity computed, and the Session store it was computed for. */
	private known: { session: SessionStore | undefined; value: StoresIdentity } | undefined;
	private readonly shared: Record<SharedOwner, OwnerStore>;
	private readonly router: PlacedBackend;
	private readonly openSession: (log: SessionLog) => SessionStore;
	private session: SessionStore | undefined;
	/** The limits every commit of these stores is checked against (a hand edit previews with them). */
	readonly limits: Limits;
	private readonly who: Who | undefined;
	private readonly allowSecrets: AllowList;
	/** Where `allowSecrets` goes: the credential refusal names it in full. */
	private readonly configFile: string;
	private queue: Promise<unknown> = Promise.resolve();

	/** `backend`: what the stores run on, built for the session getter it is handed (`open.ts`; tests may hand their own). */
	constructor(opts: StoresOptions, backend: (session: () => SessionStore | undefined, retention: number) => OpenedBackend) {
		const retention = opts.retention ?? DEFAULT_RETENTION;
		if (!Number.isInteger(retention) || retention < 0 || retention > MAX_RETENTION) {
			fail("invalid_input", `\`retention\` must be a whole number from 0 to ${MAX_RETENTION}, got ${String(retention)}; fix the config file.`, ["retention"]);
		}
		this.limits = opts.limits ?? DEFAULT_LIMITS;
		this.who = opts.who;
		this.allowSecrets = opts.allowSecrets ?? [];
		this.configFile = configPath(opts.agentDir);
		const session = () => this.session;
		const opened = backend(session, retention);
		this.shared = opened.shared;
		this.router = opened.router;
		this.openSession = opened.openSession;
		this.resetSession(opts.session);
	}

	/** Current history of an owner; never creates anything; completes what a crashed writer left first. */
	async load(owner: Owner): Promise<OwnerHistory> {
		const store = this.storeOf(owner);
		await this.router.recover(store);
		return store.load();
	}

	/**
	 * `load` for several owners, each answered with its history or the error that kept it from
	 * being read (one owner's outage or damage leaves the others readable). Pending journals are
	 * looked for once for all of them; only when one is there does each owner complete it first.
	 *
	 * The histories are one snapshot: another process's multi-owner transition is in all of
	 * them or in none. Owners are read one after the other, so one that committed between two
	 * reads could leave the first read before it and the second after it; a read of two or more
	 * shared owners therefore checks afterwards that no journal is pending and that every owner
	 * is still where it was read, and reads again otherwise (`snapshotHolds`). When one database
	 * keeps them all, the database gives the snapshot itself (`loadOnce` with `together`). The
	 * Session belongs to this process alone: it cannot change between the reads.
	 */
	async loadEach(owners: readonly Owner[]): Promise<LoadAnswer[]> {
		// One backend that keeps every shared owner asked for and reads them as one snapshot gives it itself.
		const together = owners.filter((o) => o !== "session").map((o) => this.storeOf(o));
		if (together.length >= 2 && this.router.canLoadTogether(together)) return this.loadOnce(owners, together);
		for (let attempt = 1; ; attempt++) {
			const out = await this.loadOnce(owners);
			// Where each owner was read, taken now: a store may bring the very history object it returned up to date later.
			const shared = owners.flatMap((owner, i) => {
				const got = out[i];
				return owner !== "session" && got !== undefined && "history" in got ? [{ owner, seq: got.history.seq, last: got.history.tail.at(-1)?.id }] : [];
			});
			if (shared.length < 2 || (await this.snapshotHolds(shared))) return out;
			if (attempt >= SNAPSHOT_ATTEMPTS) {
				fail("busy", `Global and CWD kept changing while they were read (${SNAPSHOT_ATTEMPTS} reads, each overtaken by another process's commit); retry.`);
			}
		}
	}

	/**
	 * Every owner's answer, read once: pending journals looked for once for all of them and, only
	 * when one is there, completed for each owner first. `together`: shared owners one backend
	 * keeps, read as one snapshot by the backend itself (`OwnerBackend.loadTogether`; PostgreSQL: one
	 * statement, usually one round trip), so no second look is needed; the rest one by one.
	 */
	private async loadOnce(owners: readonly Owner[], together: readonly OwnerStore[] = []): Promise<LoadAnswer[]> {
		let settled = false;
		try {
			settled = this.router.settled(owners.map((o) => this.storeOf(o)));
		} catch {
			// The journal folder cannot be read (or the Session is missing): each owner's own recovery reports it.
		}
		const out = new Map<Owner, LoadAnswer>();
		if (!settled) {
			for (const owner of owners) {
				try {
					await this.router.recover(this.storeOf(owner));
				} catch (error) {
					out.set(owner, { error });
				}
			}
		}
		const joint = together.filter((s) => !out.has(s.owner));
		if (joint.length > 0) {
			let got: LoadAnswer[];
			try {
				got = await this.router.loadTogether(joint);
			} catch (error) {
				got = joint.map(() => ({ error }));
			}
			joint.forEach((s, i) => out.set(s.owner, got[i] as LoadAnswer));
		}
		for (const owner of owners) {
			if (out.has(owner)) continue;
			try {
				out.set(owner, { history: await this.storeOf(owner).load() });
			} catch (error) {
				out.set(owner, { error });
			}
		}
		return owners.map((o) => out.get(o) as LoadAnswer);
	}

	/**
	 * True when histories read one after the other still form one snapshot. A multi-owner
	 * transition keeps its journal from before its first owner gets its part until after the
	 * last one did; so if one is pending now, the reads may straddle it, and if none is, any
	 * part written since the reads began changed its owner, which is still where it was read
	 * only if that happened before its read. The journal is looked at first, then the owners.
	 */
	private async snapshotHolds(read: ReadonlyArray<{ owner: Owner; seq: number; last: string | undefined }>): Promise<boolean> {
		try {
			if (!this.router.settled(read.map((r) => this.storeOf(r.owner)))) return false;
			for (const { owner, seq, last } of read) {
				const now = await this.storeOf(owner).load();
				if (now.seq !== seq || now.tail.at(-1)?.id !== last) return false;
			}
			return true;
		} catch {
			// Damage or an outage since the reads: read again, and the next read reports it.
			return false;
		}
	}

	/**
	 * Call `changed` after each commit to a shared owner kept in a database, whoever made it, as
	 * it lands (PostgreSQL's LISTEN/NOTIFY); returns the way to stop. Owners kept in files are
	 * watched through their folders by the caller.
	 */
	watchDatabases(changed: () => void): () => void {
		return this.router.watchAll(Object.values(this.shared), changed);
	}

	/** Where an owner lives (never a password). */
	location(owner: Owner): OwnerLocation {
		return this.storeOf(owner).location();
	}

	/** What `/state` and `state-flow show` say about an owner: where, how big, and any problem. */
	status(owner: Owner): Promise<OwnerStoreStatus> {
		return this.storeOf(owner).status();
	}

	/** Release database connections (the CLI before it exits, a session shutting down); the stores reopen on use. */
	async close(): Promise<void> {
		for (const s of Object.values(this.shared)) await s.close();
	}

	/** Physical identity of the owners' storage (for admission checks). */
	identity(): StoresIdentity {
		const session = this.session?.location();
		const sessionId = session?.backend === "session" ? session.sessionId : undefined;
		// Asked on every tool call and event: the same object while nothing moved, so callers compare references.
		const known = this.known;
		if (known !== undefined && known.session === this.session && known.value.sessionId === sessionId) return known.value;
		const value = { globalRoot: placeOf(this.shared.global.location()), cwdRoot: placeOf(this.shared.cwd.location()), sessionId };
		this.known = { session: this.session, value };
		return value;
	}

	/** Rebuild the Session view from the branch (session_start / session_tree); its next load completes its journal part. */
	resetSession(session?: SessionLog): void {
		this.session = session === undefined ? undefined : this.openSession(session);
	}

	/** Record the final answer of a run in the runtime-owned response plane (not a transition). */
	setResponse(text: string, at: string): void {
		this.sessionStore().setResponse(text, at);
	}

	response(): JsonObject | undefined {
		return this.session?.response();
	}

	private sessionStore(): SessionStore {
		if (this.session === undefined) {
			fail("excluded_owner", "Session state is unavailable here (no pi session is attached); use the `global` or `cwd` owner.", ["session"]);
		}
		return this.session;
	}

	private storeOf(owner: Owner): OwnerStore {
		return owner === "session" ? this.sessionStore() : this.shared[owner];
	}

	/**
	 * Commit a canonical patch atomically across every owner it touches. Commits of one
	 * Stores run one after another (the Session owner has no file lock, and `prepare` awaits).
	 */
	commit(patch: CanonicalPatch, opts: CommitOptions): Promise<CommitResult> {
		const run = this.queue.then(() => this.commitNow(patch, opts));
		this.queue = run.catch(() => undefined);
		return run;
	}

	private async commitNow(patch: CanonicalPatch, opts: CommitOptions): Promise<CommitResult> {
		aborted(opts.signal);
		// Every writer comes through here (model, extensions, import, hand edits, undo/redo/restore):
		// what the patch writes is checked once, before any lock (docs/security.md, "Credentials").
		if (opts.allowSecret !== true) await refuseCredentials(patch, this.allowSecrets, this.configFile);
		aborted(opts.signal);
		// Anything but an object is refused by `stage` with the usual message; it touches no owner.
		const touched = patch !== null && typeof patch === "object" ? OWNERS.filter((o) => Object.hasOwn(patch, o)) : [];
		// An unavailable Session owner has no store: staging refuses its part with the usual message.
		const owners = touched.filter((o) => o !== "session" || this.session !== undefined);
		const stores = owners.map((o) => this.storeOf(o));
		if (await this.notCreatedYet(stores)) {
			// First write: refuse bad input (also what `prepare` refuses, it is pure until apply) before any folder exists.
			const hs: Partial<Record<Owner, OwnerHistory>> = {};
			for (const o of owners) hs[o] = await this.load(o);
			const pre = opts.prepare ? await opts.prepare(patch, hs) : undefined;
			const dry = stage(hs, pre?.patch ?? patch, opts, this.limits);
			// Nothing to change in a store that does not exist: a valid outcome at this instant, and nothing is created.
			if (dry.noop) return { noop: true, report: dry.report };
		}
		return this.router.commitTogether<CommitResult>(stores, async (loaded) => {
			const histories: Partial<Record<Owner, OwnerHistory>> = {};
			owners.forEach((o, i) => {
				histories[o] = loaded[i];
			});
			const prepared = opts.prepare ? await opts.prepare(patch, histories) : undefined;
			const result = stage(
				histories,
				prepared?.patch ?? patch,
				{ id: opts.id, at: opts.at, by: opts.by, who: this.who, ...(opts.exact ? { exact: true } : {}), ...(opts.roots ? { roots: opts.roots } : {}) },
				this.limits,
			);
			if (result.noop) {
				// The state already says it all, but a compiled file it describes may be missing
				// (deleted by hand): restore it without a transition.
				if (prepared?.hasEffects) {
					opts.check?.();
					aborted(opts.signal);
					prepared.apply();
				}
				return { records: [], value: { noop: true, report: result.report } };
			}
			opts.check?.();
			aborted(opts.signal);
			prepared?.apply();
			return {
				records: owners.map((o) => result.records[o]),
				bytesAfter: owners.map((o) => result.bytesAfter[o]),
				value: { noop: false, transitionId: opts.id, report: result.report, records: result.records },
				abandon: () => prepared?.revert(),
			};
		});
	}

	/** Some file owner would be created by this commit (its folder does not exist yet). */
	private async notCreatedYet(stores: readonly OwnerStore[]): Promise<boolean> {
		for (const s of stores) if (s.created !== undefined && !(await s.created())) return true;
		return false;
	}
}
