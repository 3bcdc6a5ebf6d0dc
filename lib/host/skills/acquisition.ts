/**
 * Acquisition hint: after pi's own `read` tool returns a Skill file that no wanted owner
 * tracks yet, the read result gets one line with the exact `artifacts["<path>"]` patch that
 * would keep it. Only the owner whose territory holds the file is offered, and only when it
 * is wanted; reading never writes anything. Called from the host's `tool_result` handler.
 */
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { type KeyLens, SAME_KEYS } from "../../core/artifact-keys.js";
import type { Owner, OwnerHistory } from "../../core/types.js";
import { type ArtifactRoots, ownerRoot, realOrSelf, territoryOf } from "../../storage/artifacts/files.js";

/** What the hint needs: the roots, the captured wanted owners and their current histories. */
export interface AcquisitionArgs extends ArtifactRoots {
	/** The folder pi runs in: a relative `read` path is relative to it (the roots' `cwd` is the checkout's root; default: that root). */
	from?: string;
	/** How the model is shown keys relative to the checkout's root (default: as stored). */
	lens?: KeyLens;
	wanted: readonly Owner[];
	histories: Partial<Record<Owner, OwnerHistory>>;
}

/** Resolve a `read` path the way pi's read tool does: `@` prefix, `~`, relative to cwd. */
export function resolveReadPath(readPath: string, cwd: string): string {
	let p = readPath.startsWith("@") ? readPath.slice(1) : readPath;
	if (p === "~") p = homedir();
	else if (p.startsWith("~/")) p = homedir() + p.slice(1);
	return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}

/** True when any artifact of `history` already names this file, as its key or where it compiled to. */
function tracked(owner: Owner, abs: string, history: OwnerHistory | undefined, roots: ArtifactRoots): boolean {
	if (history === undefined) return false;
	const root = ownerRoot(owner, roots);
	const real = realOrSelf(abs);
	const artifacts = history.state.artifacts;
	for (const key of Object.keys(artifacts)) {
		if (realOrSelf(resolve(root, key)) === real) return true;
		const value = artifacts[key];
		const to = typeof value === "object" && value !== null && !Array.isArray(value) ? value.compiledTo : undefined;
		if (typeof to === "string" && realOrSelf(resolve(root, to)) === real) return true;
	}
	return false;
}

/**
 * The one-line hint for a `read` of a Skill file, or undefined when there is nothing to
 * suggest (not a SKILL.md, outside every root, an excluded owner's territory, already tracked).
 */
export function acquisitionHint(readPath: string, args: AcquisitionArgs): string | undefined {
	try {
		const abs = resolveReadPath(readPath, args.from ?? args.cwd);
		if (!/(^|[\\/])SKILL\.md$/.test(abs)) return undefined;
		const owner = territoryOf(abs, args);
		if (owner === undefined || !args.wanted.includes(owner)) return undefined;
		// "Not yet an artifact of a wanted owner": a Session draft of the same file counts too.
		if (args.wanted.some((o) => tracked(o, abs, args.histories[o], args))) return undefined;
		const rel = relative(realOrSelf(ownerRoot(owner, args)), realOrSelf(abs))
			.split(sep)
			.join("/");
		if (rel === "" || rel === ".." || rel.startsWith("../")) return undefined;
		// The key as the model writes it: a CWD key relative to the folder pi runs in.
		const lens = owner === "global" ? SAME_KEYS : (args.lens ?? SAME_KEYS);
		const key = lens.toModel(rel);
		const entry = { artifacts: { [key]: { kind: "skill" } } };
		const input = args.wanted.length === 1 ? entry : { [owner]: entry };
		const where = owner === "global" ? "the agent directory" : lens.base === "" ? "the checkout's root" : "the folder pi runs in";
		return `State Flow: this Skill is not tracked yet. To keep it for ${owner === "global" ? "Global" : "CWD"}, call patch_state with ${JSON.stringify(input)} (artifacts[${JSON.stringify(key)}], relative to ${where}).`;
	} catch {
		// A hint is a courtesy; a failure here must never disturb pi's read result.
		return undefined;
	}
}
