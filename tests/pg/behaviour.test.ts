/**
 * The behavioural store suite on both backends: the same cases through the `Stores` facade
 * with Global and CWD on files, and with both in PostgreSQL (a real server; a linked
 * checkout and a shared Global). Another instance (another process's view, with its own
 * caches) sees each write; writers never overwrite each other; several owners share one
 * transition; retention, reload and replay agree for arbitrary patches (fast-check);
 * `effective[N]`, `patches[N]`, undo, cascades and provenance survive a reload; the stored JSON
 * text comes back byte-identical; refusals and no-ops write nothing.
 */
import { openStoresAt } from "../../lib/storage/open.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { isStateError } from "../../lib/core/errors.js";
import { patchAt, replay, stateAt } from "../../lib/core/history.js";
import { applyPatch } from "../../lib/core/merge.js";
import { emptyState } from "../../lib/core/state.js";
import type { CanonicalPatch, JsonObject, Limits, OwnerHistory, SharedOwner } from "../../lib/core/types.js";
import { DEFAULT_LIMITS } from "../../lib/core/types.js";
import { placementFor } from "../../lib/storage/placement/placement.js";
import { realOrSelf } from "../../lib/storage/fs-util.js";
import type { Stores } from "../../lib/storage/stores.js";
import { serverForFile, testDatabase } from "../helpers/pg-server.js";
import { makeTempDir, removeTempDir } from "../helpers/temp-dir.js";
import { commitMeta } from "../helpers/meta.js";

const server = serverForFile(testDatabase);

interface Opts {
	retention?: number;
	limits?: Limits;
}

/** A place to keep both owners; `open` gives a new view of it, as another process would hold (its own caches). */
interface Place {
	open(opts?: Opts): Stores;
	dispose(): void;
}

interface Backend {
	name: string;
	place(): Place;
	/** How hard the replay law is tried (a database round trip per commit costs more than a file append). */
	law: { runs: number; maxPatches: number };
}

let views = 0;
const backends: Backend[] = [
	{
		name: "files",
		law: { runs: 25, maxPatches: 90 },
		place() {
			const dir = makeTempDir();
			return {
				open: (opts = {}) => openStoresAt({ agentDir: join(dir, "agent"), cwd: join(dir, "proj"), ...opts }),
				dispose: () => removeTempDir(dir),
			};
		},
	},
	{
		name: "PostgreSQL",
		law: { runs: 12, maxPatches: 40 },
		place() {
			const dir = makeTempDir();
			const cwd = join(dir, "proj");
			mkdirSync(cwd, { recursive: true });
			const schema = server.schema();
			return {
				open: (opts = {}) => {
					// Another URL spelling is another database object: its own connection and caches, like another process.
					const url = `${server.url}${server.url.includes("?") ? "&" : "?"}application_name=view${++views}`;
					const config = { database: url, databaseSchema: schema, shareGlobal: true, user: "alice", links: { [realOrSelf(cwd)]: "acme/api" } };
					return openStoresAt({ agentDir: join(dir, "agent"), cwd, placement: placementFor(config, cwd, {}), ...opts });
				},
				dispose: () => removeTempDir(dir),
			};
		},
	},
];

const by = { kind: "system", reason: "behaviour" } as const;
const meta = commitMeta("b", "2026-12-01T00:00:00.000Z", by);

async function withPlace<T>(backend: Backend, fn: (p: Place) => Promise<T>): Promise<T> {
	const p = backend.place();
	try {
		return await fn(p);
	} finally {
		p.dispose();
	}
}

for (const backend of backends) {
	describe(`store behaviour: ${backend.name}`, () => {
		it("another instance sees each write, and two alternating writers never overwrite each other", () =>
			withPlace(backend, async (p) => {
				const a = p.open();
				const b = p.open();
				for (let i = 0; i < 5; i++) {
					await a.commit({ cwd: { tactics: { [`a${i}`]: i } } }, meta());
					await b.commit({ cwd: { tactics: { [`b${i}`]: i } } }, meta());
				}
				const want: Record<string, number> = {};
				for (let i = 0; i < 5; i++) Object.assign(want, { [`a${i}`]: i, [`b${i}`]: i });
				for (const s of [a, b, p.open()]) {
					const h = await s.load("cwd");
					assert.deepEqual(h.state.tactics, want);
					assert.equal(h.seq, 10);
				}
			}));

		it("a first commit that changes nothing creates nothing, and the owner takes the next write", () =>
			withPlace(backend, async (p) => {
				const s = p.open();
				assert.equal((await s.commit({ cwd: { tactics: { a: null } } } as CanonicalPatch, meta())).noop, true);
				assert.equal((await s.status("cwd")).exists, false);
				await s.commit({ cwd: { tactics: { a: "" } } }, meta());
				assert.deepEqual((await p.open().load("cwd")).state.tactics, { a: "" });
			}));

		it("Global and CWD change in one transition with one id", () =>
			withPlace(backend, async (p) => {
				const s = p.open();
				const r = await s.commit({ global: { intents: { g: 1 } }, cwd: { tactics: { c: 1 } } }, meta());
				assert.equal(r.noop, false);
				const fresh = p.open();
				for (const owner of ["global", "cwd"] as SharedOwner[]) {
					const h = await fresh.load(owner);
					assert.equal(h.tail.at(-1)?.id, r.noop ? undefined : r.transitionId);
					assert.deepEqual(h.tail.at(-1)?.owners, ["global", "cwd"]);
				}
			}));

		it("a read of Global and CWD is one snapshot, even when another instance commits to both between their reads", () =>
			withPlace(backend, async (p) => {
				const reader = p.open();
				const writer = p.open();
				await writer.commit({ global: { tactics: { n: 1 } }, cwd: { tactics: { n: 1 } } }, meta());
				const both = async () => {
					const got = await reader.loadEach(["global", "cwd"]);
					return got.map((g) => ("history" in g ? g.history.state.tactics.n : g.error));
				};
				assert.deepEqual(await both(), [1, 1]);
				// The other instance commits when Global has been read and CWD not yet: real stores, a chosen moment.
				// Files read CWD through its `load`; one database reads both in one transaction, CWD through `refresh`.
				const cwd = (reader as unknown as { shared: { cwd: Record<string, (...args: unknown[]) => Promise<OwnerHistory>> } }).shared.cwd;
				const step = backend.name === "files" ? "load" : "refresh";
				const read = (cwd[step] as (...args: unknown[]) => Promise<OwnerHistory>).bind(cwd);
				let reads = 0;
				cwd[step] = async (...args: unknown[]) => {
					if (reads++ === 0) await writer.commit({ global: { tactics: { n: 3 } }, cwd: { tactics: { n: 3 } } }, meta());
					return read(...args);
				};
				if (backend.name === "files") assert.deepEqual(await both(), [3, 3], "read again after the reads were overtaken");
				else {
					// The reader's caches are behind (n = 2), so both are read inside one snapshot taken before n = 3 landed.
					await writer.commit({ global: { tactics: { n: 2 } }, cwd: { tactics: { n: 2 } } }, meta());
					assert.deepEqual(await both(), [2, 2], "one snapshot, taken before the commit in between");
					assert.deepEqual(await both(), [3, 3]);
				}
				assert.equal(reads > 0, true, "the commit was made between the two reads");
			}));

		it("property: for any retention, live state, a reload and replay(checkpoint, tail) equal a sequential application of every patch", async () => {
			const key = fc.constantFrom("a", "b", "c", "__proto__", "x.y", "");
			const val = fc.oneof(
				fc.constant(null),
				fc.integer(),
				fc.string({ maxLength: 5 }),
				fc.dictionary(fc.constantFrom("p", "q"), fc.oneof(fc.constant(null), fc.integer())),
			);
			const patch = fc.record({ plane: fc.constantFrom("tactics", "lazy", "intents"), key, val });
			await assertProperty(
				fc.asyncProperty(fc.integer({ min: 0, max: 4 }), fc.array(patch, { minLength: 1, maxLength: backend.law.maxPatches }), (retention, patches) =>
					withPlace(backend, async (p) => {
						const s = p.open({ retention });
						const seen = emptyState();
						for (const q of patches) {
							const planePatch: JsonObject = {};
							Object.defineProperty(planePatch, q.key, { value: q.val, enumerable: true, writable: true, configurable: true });
							await s.commit({ cwd: { [q.plane]: planePatch } }, meta());
							applyPatch(seen, { [q.plane]: planePatch });
						}
						const live = await s.load("cwd");
						assert.deepEqual(live.state, seen);
						const fresh = await p.open({ retention }).load("cwd");
						assert.deepEqual(fresh.state, seen);
						assert.equal(fresh.seq, live.seq);
						assert.deepEqual(replay(fresh.checkpoint, fresh.tail), fresh.state);
						assert.ok(fresh.tail.length <= retention);
					}),
				),
				{ numRuns: backend.law.runs },
			);
		});

		it("effective[N], patches[N], undo, cascades and provenance survive a reload", () =>
			withPlace(backend, async (p) => {
				const s = p.open();
				await s.commit({ cwd: { intents: { goal: { text: "ship", steps: [{ $ref: "cwd.tactics.step1" }] } }, tactics: { step1: "do it", other: 1 } } }, meta());
				await s.commit({ cwd: { tactics: { other: 2 } } }, { ...meta(), by: { kind: "command", command: "/state test" } });
				const cascaded = await s.commit({ cwd: { intents: { goal: null } } }, meta());
				assert.ok(!cascaded.noop);
				let h: OwnerHistory = await p.open().load("cwd");
				assert.deepEqual(h.state.tactics, { other: 2 });
				assert.deepEqual(patchAt(h, 0).cascades, [{ owner: "cwd", intent: "goal", targets: ["cwd.tactics.step1"] }]);
				assert.deepEqual(patchAt(h, 1).by, { kind: "command", command: "/state test" });
				assert.deepEqual(stateAt(h, 2).tactics, { step1: "do it", other: 1 });
				// Undo the cascade: its stored inverse, exact.
				await s.commit({ cwd: patchAt(h, 0).undo }, { ...meta(), exact: true });
				h = await p.open().load("cwd");
				assert.deepEqual(h.state.intents, { goal: { text: "ship", steps: [{ $ref: "cwd.tactics.step1" }] } });
				assert.deepEqual(h.state.tactics, { step1: "do it", other: 2 });
			}));

		it("the stored JSON text comes back byte-identical (key order, numbers, Unicode)", () =>
			withPlace(backend, async (p) => {
				const value = { zeta: 1, alpha: { "b-key": [3, 2, 1], "a-key": 1.5e300 }, "ünï 🚀": "\u2028x", mid: -0, tiny: 5e-324 };
				await p.open().commit({ cwd: { lazy: { doc: value } } }, meta());
				const h = await p.open().load("cwd");
				assert.equal(JSON.stringify(h.state.lazy.doc), JSON.stringify(value));
				assert.equal(JSON.stringify(h.tail.at(-1)?.patch), JSON.stringify({ lazy: { doc: value } }));
			}));

		it("a no-op, a write over the size limit and a refused admission write nothing", () =>
			withPlace(backend, async (p) => {
				const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 300 };
				const s = p.open({ limits });
				await s.commit({ cwd: { lazy: { small: "x" } } }, meta());
				const noop = await s.commit({ cwd: { lazy: { small: "x", gone: null } } } as CanonicalPatch, meta());
				assert.equal(noop.noop, true);
				await assert.rejects(s.commit({ cwd: { lazy: { big: "x".repeat(500) } } }, meta()), (e: unknown) => isStateError(e) && e.code === "limit");
				await assert.rejects(
					s.commit(
						{ cwd: { lazy: { other: 1 } } },
						{
							...meta(),
							check: () => {
								throw new Error("stale call");
							},
						},
					),
					/stale call/,
				);
				const h = await p.open({ limits }).load("cwd");
				assert.equal(h.seq, 1);
				assert.deepEqual(h.state.lazy, { small: "x" });
			}));
	});
}
