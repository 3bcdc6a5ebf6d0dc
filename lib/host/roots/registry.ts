/**
 * Registered external roots on the host side (docs/spec.md §12): the registry behind the
 * public bus contract of `lib/api.ts`. It decides which roots are active (declared to the
 * model, writable) and which are dormant (stored data kept untouched, hidden, not writable),
 * validates values with ajv, commits the extensions' own writes and tells them of changes.
 * A co-installed extension is not trusted to be small or fast (issue 24): names that are
 * `Object.prototype` members are refused, the number of roots and the bytes they add to every
 * request are bounded, and schema patterns run on RE2 (linear time, no backtracking), so
 * validating a value under a store's lock is linear in the value.
 */
import AjvModule from "ajv";
import type { ValidateFunction } from "ajv";
import type { RootChange, RootHandle, RootListener, RootOwner, RootSpec, RootStatus, StateFlowBus } from "../../api.js";
import { fail, formatPath, messageOf } from "../../core/errors.js";
import { cloneJson, detach } from "../../core/json.js";
import { OWNERS, ROOTS, type Json, type JsonObject, type Owner, type OwnerHistory, type RootGate } from "../../core/types.js";
import type { RootDeclaration } from "../../model/schemas.js";
import { FolderWatch } from "./folder-watch.js";
import { checkRootSpec, re2 } from "./spec.js";

const Ajv = AjvModule.default;

/** What the registry needs from the host; kept small so the registry can be read on its own. */
export interface RootsHost {
	/** Histories of `owners` now, or undefined when no stores are open. */
	histories(owners: readonly Owner[]): Promise<Partial<Record<Owner, OwnerHistory>> | undefined>;
	/** Commit a canonical patch through the stores, recorded as the extension's. */
	commit(patch: Partial<Record<Owner, JsonObject>>, extension: string): Promise<string | null>;
	/** Tell the user (notify). */
	say(message: string, level: "info" | "warning" | "error"): void;
	/** The folders of the owners kept in files here (a database owner has none to watch). */
	storeFolders(): string[];
	/** Call `changed` after each commit to an owner kept in a database; returns the way to stop (none without stores). */
	watchDatabases(changed: () => void): (() => void) | undefined;
}

interface Entry {
	spec: RootSpec;
	listener: RootListener;
	validate: ValidateFunction;
	/** Why the root is dormant now (its schema rejects stored data); undefined while active. */
	dormant: string | undefined;
	/** The value each owner had when last seen, as JSON text, to tell changes apart. */
	seen: Partial<Record<Owner, string>>;
}

/** `"/a/b"` (ajv's instance path) → `["a", "b"]`. */
function pathOf(pointer: string): string[] {
	return pointer === ""
		? []
		: pointer
				.slice(1)
				.split("/")
				.map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

export class RootRegistry {
	readonly #entries = new Map<string, Entry>();
	readonly #ajv = new Ajv({ allErrors: false, strict: false, code: { regExp: re2 } });
	#host: RootsHost | undefined;
	/** While a root is registered, the file stores' folders: another process's commit is told as it lands. */
	readonly #watch = new FolderWatch(() => this.#changedElsewhere());
	/** While a root is registered, the stop of the database owners' notifications. */
	#unwatchDatabases: (() => void) | undefined;
	/** Syncs run one after the other, so a slower one never tells an older value after a newer one. */
	#syncing: Promise<void> = Promise.resolve();

	/** The object State Flow publishes on the bus. */
	readonly bus: StateFlowBus = { version: 1, registerRoot: (spec, listener) => this.register(spec, listener) };

	attach(host: RootsHost): void {
		this.#host = host;
	}

	/** Watch the stores while a root is registered (the stores may have moved, or a folder appeared, since). */
	#follow(): void {
		const wanted = this.#entries.size > 0;
		this.#watch.follow(wanted ? (this.#host?.storeFolders() ?? []) : []);
		if (wanted && this.#unwatchDatabases === undefined) this.#unwatchDatabases = this.#host?.watchDatabases(() => this.#changedElsewhere());
		if (!wanted) this.#stopDatabases();
	}

	#changedElsewhere(): void {
		void this.sync().catch(() => undefined);
	}

	#stopDatabases(): void {
		this.#unwatchDatabases?.();
		this.#unwatchDatabases = undefined;
	}

	/** Stop watching (the stores close); the next sync or check watches the stores open then. */
	unwatch(): void {
		this.#watch.close();
		this.#stopDatabases();
	}

	/** Active roots, in registration order: what the next declaration names. */
	declarations(): RootDeclaration[] {
		const out: RootDeclaration[] = [];
		for (const e of this.#entries.values()) {
			if (e.dormant === undefined) out.push({ name: e.spec.name, description: e.spec.description, owners: e.spec.owners, schema: e.spec.schema });
		}
		return out;
	}

	/** Registered roots (active or dormant by schema), for `/state`. */
	entries(): Array<{ name: string; extension: string; owners: readonly Owner[]; dormant?: string }> {
		return [...this.#entries.values()].map((e) => ({
			name: e.spec.name,
			extension: e.spec.extension,
			owners: e.spec.owners,
			...(e.dormant ? { dormant: e.dormant } : {}),
		}));
	}

	/** Staging's question: may `name` be written in `owner`, and is the value it would have valid? Paths spelled canonically. */
	readonly gate: RootGate = (owner, name, value, path) => this.gateFor(undefined)(owner, name, value, path);

	/**
	 * The gate whose refusals spell paths as the model writes them: relative to `sole` in flat
	 * form (`checklist.x`, not `cwd.checklist.x`; issue 26). The error's `path` stays canonical.
	 */
	gateFor(sole: Owner | undefined): RootGate {
		return (owner, name, value, canonical) => {
			const shown = (at: (string | number)[]): string => formatPath(sole !== undefined && at[0] === sole ? at.slice(1) : at);
			this.#check(owner, name, value, canonical, shown);
		};
	}

	#check(owner: Owner, name: string, value: Json, path: (string | number)[], shown: (at: (string | number)[]) => string): void {
		const e = this.#entries.get(name);
		if (e === undefined)
			fail(
				"invalid_input",
				`\`${shown(path)}\`: root \`${name}\` is not registered now (its extension is not loaded); its stored data is kept unchanged and cannot be written`,
				path,
			);
		if (e.dormant !== undefined) fail("invalid_input", `\`${shown(path)}\`: root \`${name}\` is dormant: ${e.dormant}`, path);
		if (!e.spec.owners.includes(owner as RootOwner)) {
			fail("invalid_input", `\`${shown(path)}\`: root \`${name}\` lives only in ${e.spec.owners.join(", ")}; write it there`, path);
		}
		if (value !== null && !e.validate(value)) {
			const err = e.validate.errors?.[0];
			const at = [...path, ...pathOf(err?.instancePath ?? "")];
			fail(
				"invalid_input",
				`\`${shown(at)}\` ${err?.message ?? "is invalid"} (schema of root \`${name}\`, extension ${e.spec.extension}); nothing was written`,
				at,
			);
		}
	}

	/** Register a root; a refusal is returned as a handle whose status says why. */
	register(spec: RootSpec, listener: RootListener): RootHandle {
		let entry: Entry;
		try {
			entry = this.#admit(spec, listener);
		} catch (e) {
			const status: RootStatus = { state: "refused", message: `State Flow refused root registration: ${messageOf(e)}` };
			this.#host?.say(status.message as string, "warning");
			try {
				listener.status?.(status);
			} catch {
				// The extension's callback failed; State Flow keeps running.
			}
			return refusedHandle(status);
		}
		this.#entries.set(entry.spec.name, entry);
		// Stores already open (a registration after session start): check stored data now; the status follows.
		this.#notifyStatus(entry);
		void this.checkStored(entry);
		return this.#handle(entry);
	}

	#admit(raw: RootSpec, listener: RootListener): Entry {
		const spec = checkRootSpec(
			raw,
			[...this.#entries.values()].map((e) => e.spec),
		);
		const { name, extension, description, schema, owners } = spec;
		let validate: ValidateFunction;
		try {
			validate = this.#ajv.compile(schema);
		} catch (e) {
			fail("invalid_input", `\`schema\` is not a valid JSON Schema: ${messageOf(e)}`, ["schema"]);
		}
		const ordered = OWNERS.filter((o) => owners.includes(o));
		return { spec: { name, extension, description, schema, owners: ordered }, listener, validate, dormant: undefined, seen: {} };
	}

	/**
	 * Check stored data against the schema (at session start and when a root registers later):
	 * a value the schema rejects makes the root dormant with a message; nothing is rewritten.
	 */
	async checkStored(only?: Entry): Promise<void> {
		this.#follow();
		for (const e of only ? [only] : [...this.#entries.values()]) {
			const histories = await this.#histories(e);
			if (histories === undefined) continue;
			let problem: string | undefined;
			for (const owner of e.spec.owners) {
				const value = histories[owner]?.state.roots?.[e.spec.name];
				if (value === undefined || e.validate(value)) continue;
				const err = e.validate.errors?.[0];
				const at = formatPath([owner, e.spec.name, ...pathOf(err?.instancePath ?? "")]);
				problem = `its schema rejects the value stored in ${owner} (\`${at}\` ${err?.message ?? "is invalid"}); the data is kept unchanged and hidden from the model. Fix the schema (or the data with \`/state\` tools) and reload`;
				break;
			}
			const was = e.dormant;
			e.dormant = problem;
			for (const owner of e.spec.owners) e.seen[owner] = JSON.stringify(histories[owner]?.state.roots?.[e.spec.name] ?? {});
			if (problem !== undefined && problem !== was)
				this.#host?.say(`State Flow: root \`${e.spec.name}\` (extension ${e.spec.extension}) is dormant: ${problem}`, "warning");
			if (problem !== was) this.#notifyStatus(e);
		}
	}

	/** Tell every listener whose root value changed since last seen, whoever changed it. */
	sync(): Promise<void> {
		const run = this.#syncing.then(() => this.#syncNow());
		this.#syncing = run.catch(() => undefined);
		return run;
	}

	async #syncNow(): Promise<void> {
		this.#follow();
		for (const e of [...this.#entries.values()]) {
			const histories = await this.#histories(e);
			if (histories === undefined) continue;
			for (const owner of e.spec.owners) {
				const h = histories[owner];
				if (h === undefined) continue;
				const value = (h.state.roots?.[e.spec.name] ?? {}) as JsonObject;
				const text = JSON.stringify(value);
				if (e.seen[owner] === text) continue;
				const first = e.seen[owner] === undefined;
				e.seen[owner] = text;
				if (first) continue;
				const change: RootChange = { owner, value: cloneJson(value) as JsonObject, ...lastTouch(h, e.spec.name) };
				try {
					e.listener.change?.(change);
				} catch (err) {
					this.#host?.say(`State Flow: extension ${e.spec.extension} failed on a change of root \`${e.spec.name}\`: ${messageOf(err)}`, "warning");
				}
			}
		}
	}

	/** Names of roots with data in `histories` that no active registration covers (listed by `/state`). */
	dormantNames(histories: Partial<Record<Owner, OwnerHistory>>): Array<{ name: string; owners: Owner[]; why: string }> {
		const found = new Map<string, Owner[]>();
		for (const owner of OWNERS) {
			for (const name of Object.keys(histories[owner]?.state.roots ?? {})) {
				const e = this.#entries.get(name);
				if (e !== undefined && e.dormant === undefined) continue;
				found.set(name, [...(found.get(name) ?? []), owner]);
			}
		}
		return [...found].map(([name, owners]) => ({ name, owners, why: this.#entries.get(name)?.dormant ?? "not registered (its extension is not loaded)" }));
	}

	async #histories(e: Entry): Promise<Partial<Record<Owner, OwnerHistory>> | undefined> {
		try {
			return await this.#host?.histories(e.spec.owners);
		} catch {
			// A store that cannot be read now is reported where it is used; try again at the next event.
			return undefined;
		}
	}

	#notifyStatus(e: Entry): void {
		try {
			e.listener.status?.(statusOf(e));
		} catch {
			// The extension's callback failed; State Flow keeps running.
		}
	}

	#handle(e: Entry): RootHandle {
		return {
			status: () => (this.#entries.get(e.spec.name) === e ? statusOf(e) : { state: "dormant", message: "disposed: the root is withdrawn, its data kept" }),
			read: async (owner) => {
				if (!e.spec.owners.includes(owner)) fail("invalid_input", `root \`${e.spec.name}\` lives only in ${e.spec.owners.join(", ")}`);
				const h = (await this.#host?.histories([owner]))?.[owner];
				if (h === undefined) fail("io", `State Flow has no ${owner} store open now (no session yet, or ${owner} is unavailable)`);
				return cloneJson((h.state.roots?.[e.spec.name] ?? {}) as JsonObject) as JsonObject;
			},
			write: async (owner, patch) => {
				if (this.#entries.get(e.spec.name) !== e) fail("invalid_input", `root \`${e.spec.name}\` was disposed; register it again to write`);
				if (!this.#host) fail("io", "State Flow has no session yet; write after the session has started");
				const id = await this.#host.commit({ [owner]: { [ROOTS]: { [e.spec.name]: detach(patch, [e.spec.name]) } } }, e.spec.extension);
				await this.sync();
				return { transitionId: id };
			},
			dispose: () => {
				if (this.#entries.get(e.spec.name) === e) this.#entries.delete(e.spec.name);
			},
		};
	}
}

function statusOf(e: Entry): RootStatus {
	return e.dormant === undefined ? { state: "active" } : { state: "dormant", message: e.dormant };
}

function refusedHandle(status: RootStatus): RootHandle {
	const refuse = (): never => {
		throw new Error(status.message);
	};
	return { status: () => status, read: async () => refuse(), write: async () => refuse(), dispose: () => undefined };
}

/** Who last touched root `name` in the retained history of `h`. */
function lastTouch(h: OwnerHistory, name: string): Pick<RootChange, "by" | "transitionId"> {
	for (let i = h.tail.length - 1; i >= 0; i--) {
		const r = h.tail[i];
		if (r !== undefined && r.patch.roots !== undefined && Object.hasOwn(r.patch.roots, name)) return { by: r.by, transitionId: r.id };
	}
	return {};
}
