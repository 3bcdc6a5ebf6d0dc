/**
 * The multi-owner commit over wherever the owners live, routed by each store's backend: all
 * owners of one backend commit there; owners of two commit through the one that can wait on the
 * other (`commitAround`: the local journal right before the database's COMMIT). It knows the
 * port only, never a store's class, so a new backend plugs in without touching it.
 */
import { fail } from "../core/errors.js";
import type { LoadAnswer, OwnerBackend, OwnerStore, StageStep } from "./port.js";

/** The stores grouped by backend, in first-seen order. */
export function byBackend(stores: readonly OwnerStore[]): Map<OwnerBackend, OwnerStore[]> {
	const groups = new Map<OwnerBackend, OwnerStore[]>();
	for (const s of stores) {
		const g = groups.get(s.backend);
		if (g === undefined) groups.set(s.backend, [s]);
		else g.push(s);
	}
	return groups;
}

export class PlacedBackend implements OwnerBackend {
	async recover(store: OwnerStore): Promise<void> {
		await store.backend.recover?.(store);
	}

	settled(stores: readonly OwnerStore[]): boolean {
		// One look per backend (a backend without a journal never waits).
		for (const [backend, group] of byBackend(stores)) if (!(backend.settled?.(group) ?? true)) return false;
		return true;
	}

	async commitTogether<T>(stores: readonly OwnerStore[], stage: StageStep<T>): Promise<T> {
		const groups = byBackend(stores);
		for (const [backend, group] of groups) await backend.ready?.(group);
		const backends = [...groups.keys()];
		if (backends.length <= 1) return (backends[0] ?? this.empty()).commitTogether(stores, stage);
		const around = backends.find((b) => b.commitAround !== undefined);
		const other = backends.find((b) => b !== around);
		if (backends.length > 2 || around?.commitAround === undefined || other === undefined) fail("invalid_input", "One transition cannot span two databases.");
		return around.commitAround(stores, other, stage);
	}

	/** True when one backend keeps all of `stores` and reads them as one snapshot itself. */
	canLoadTogether(stores: readonly OwnerStore[]): boolean {
		const backend = stores[0]?.backend;
		return backend?.loadTogether !== undefined && stores.every((s) => s.backend === backend);
	}

	/** `stores` as one snapshot, read by the one backend that keeps them (`canLoadTogether`). */
	loadTogether(stores: readonly OwnerStore[]): Promise<LoadAnswer[]> {
		const backend = stores[0]?.backend;
		if (backend?.loadTogether === undefined || !this.canLoadTogether(stores))
			throw new Error("loadTogether: these owners are not kept by one backend that reads them together");
		return backend.loadTogether(stores);
	}

	/** Watch every backend of `stores` that can tell of other processes' commits; returns the way to stop. */
	watchAll(stores: readonly OwnerStore[], changed: () => void): () => void {
		const stops = [...byBackend(stores).keys()].flatMap((b) => (b.watch !== undefined ? [b.watch(changed)] : []));
		return () => {
			for (const stop of stops) stop();
		};
	}

	/** A commit that touches no owner still runs its stage (on no histories). */
	private empty(): OwnerBackend {
		return { commitTogether: async (_stores, stage) => (await stage([])).value };
	}
}
