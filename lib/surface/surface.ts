/**
 * The model surface any front-end serves: what `read_state`, `patch_state` and the head need
 * from the front-end that runs them, as one small interface. pi's host (`host/tools/surface.ts`)
 * and the MCP server (`mcp/context.ts`) each implement it; the engine (`read.ts`, `patch.ts`,
 * `head.ts`) is written once against it. Nothing here knows pi's extension context or a protocol.
 */
import type { KeyLens } from "../core/artifact-keys.js";
import type { GitView } from "../core/intent-branch.js";
import type { CanonicalPatch, Owner, RootGate, TransitionRecord } from "../core/types.js";
import type { StateOf } from "../model/interface.js";
import type { ArtifactRoots } from "../storage/artifacts/compiler.js";
import { artifactRootsFor } from "../storage/artifacts/files.js";
import type { FrontmatterParser } from "../storage/artifacts/skill-format.js";
import { keyLensFor, type Project } from "../storage/project/project.js";
import type { CommitResult, Stores } from "../storage/stores.js";
import type { Available } from "./available.js";
import type { RunState } from "./run.js";

/** The run the courtesy lines of a result are relative to (pi: the prompt's run; stdio MCP: since the last head). */
export interface SurfaceRun {
	readonly run: RunState | undefined;
	markHinted(signatures: Iterable<string>): void;
	takeStaleWindow(total: number, count: number): number;
}

/** What the engine asks of the front-end that serves it. */
export interface Surface {
	/** The folder the front-end runs in: artifact keys are shown relative to it. */
	readonly cwd: string;
	readonly agentDir: string;
	/** The project of `cwd` (`projectOf`, resolved once by the front-end). */
	project(): Project;
	stores(): Stores;
	/** Histories of the owners that can be read now, and why the others cannot (pi also notes them for its footer). */
	available(owners: readonly Owner[]): Promise<Available>;
	/** Registered roots the model was told about (pi's extensions'); none elsewhere. */
	rootNames(): string[];
	/** Which registered roots a commit may write, paths spelled for `sole` (absent: none). */
	rootGate?(sole: Owner | undefined): RootGate;
	/** The model's patch arguments → the canonical patch, refused in State Flow's words. */
	toCanonical(params: unknown, wanted: readonly Owner[], states?: StateOf): CanonicalPatch;
	/** The frontmatter parser a commit of `patch` reads Skills with (pi's own, exactly as pi reads them). */
	frontmatter(patch: CanonicalPatch): FrontmatterParser | Promise<FrontmatterParser>;
	/** The checkout's branch new intents record. */
	branch(): string | undefined | Promise<string | undefined>;
	/** The checkout's branch and what became of the `recorded` ones (the head folds by it). */
	gitView(recorded: Set<string>): Promise<GitView>;
	newId(): string;
	now(): Date;
	/** The run courtesy lines are relative to; absent (stateless HTTP): results carry none. */
	readonly runs?: SurfaceRun;
	/** After a commit returned (committed or not): pi's registered roots hear of it, its run records its own write. */
	committed?(outcome: CommitResult): Promise<void> | void;
}

/** Per owner, the seq of the history a result was computed on: what a client sends back as `seen`. */
export type Seqs = Partial<Record<Owner, number>>;

/** How the model is shown artifact keys: relative to the folder the front-end runs in. */
export function lensOf(s: Surface): KeyLens {
	return keyLensFor(s.project());
}

/** Where artifact keys of each owner are rooted for this front-end. */
export function artifactRootsOf(s: Surface): ArtifactRoots {
	return artifactRootsFor(s.cwd, s.agentDir, s.project());
}

/** The seqs of whichever wanted owners were read. */
export function seqsOf(wanted: readonly Owner[], histories: Partial<Record<Owner, { seq: number }>>): Seqs {
	const out: Seqs = {};
	for (const owner of wanted) {
		const h = histories[owner];
		if (h !== undefined) out[owner] = h.seq;
	}
	return out;
}

/** The per-owner records of a commit, or none for a no-op. */
export function recordsOf(outcome: CommitResult): Partial<Record<Owner, TransitionRecord>> {
	return outcome.noop ? {} : outcome.records;
}
