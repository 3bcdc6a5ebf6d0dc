/**
 * The stores a session has open, where they put the shared owners, and why they could not be
 * opened: reopened whenever the placement moves, no longer watched once the session closed.
 */
import { openStores } from "../../storage/open.js";
import { fail, messageOf } from "../../core/errors.js";
import { type Placement, placementFor, placementKey } from "../../storage/placement/placement.js";
import type { StateFlowConfig } from "../../storage/placement/config.js";
import type { SessionLog } from "../../storage/session/store.js";
import type { Stores } from "../../storage/stores.js";

export class OpenStores {
	#stores: Stores | undefined;
	/** Why the stores could not be opened (whatever was thrown). */
	#openError: { cause: unknown } | undefined;
	/** Where the stores opened put the shared owners, and its key (a change reopens them). */
	#placement: Placement = {};
	#placementKey: string | undefined;
	/** The open stores may be watched for other processes' commits (false once the session closed). */
	#watch = false;

	/** The stores opened last, if opening worked (still set after the session closed: they reopen on use). */
	get current(): Stores | undefined {
		return this.#stores;
	}

	/** The open stores while they may be watched for other processes' commits. */
	get watched(): Stores | undefined {
		return this.#watch ? this.#stores : undefined;
	}

	get placement(): Placement {
		return this.#placement;
	}

	get placementKey(): string | undefined {
		return this.#placementKey;
	}

	/** Open stores where `config` places the owners for `cwd` (the caller closed the old ones); returns what was thrown if opening failed. */
	open(config: StateFlowConfig, agentDir: string, cwd: string, session: SessionLog): { cause: unknown } | undefined {
		const placement = placementFor(config, cwd);
		this.#stores = undefined;
		this.#openError = undefined;
		try {
			this.#stores = openStores(config, { agentDir, cwd, placement, session });
			this.#watch = true;
		} catch (e) {
			this.#openError = { cause: e };
		}
		this.#placement = placement;
		this.#placementKey = placementKey(placement);
		return this.#openError;
	}

	/** The stores, or a clear error (not opened yet, or opening failed and why). */
	require(): Stores {
		if (this.#openError) fail("io", `State Flow could not open its stores: ${messageOf(this.#openError.cause)}`, [], this.#openError.cause);
		if (!this.#stores) fail("io", "State Flow has no session yet; try again after the session has started.");
		return this.#stores;
	}

	/** Nothing is watched for a closed session, even if a late event asks (`open` watches again). */
	stopWatching(): void {
		this.#watch = false;
	}

	/** Release database connections; nothing is lost (the stores reopen on use). */
	async close(): Promise<void> {
		try {
			await this.#stores?.close();
		} catch {
			// Closing is best effort: a connection that is already gone has nothing to release.
		}
	}
}
