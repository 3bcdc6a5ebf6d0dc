/**
 * The Skill-frontmatter parser for the front-ends that run outside pi (the `state-flow` command,
 * the MCP server): pi's own when a patch touches artifacts, so a Skill is read exactly as pi
 * reads it. pi takes seconds to load: it is imported only when a patch writes artifacts, once
 * per process; other patches, and a run where pi is not installed, use the built-in parser for
 * the same YAML subset (`storage/artifacts/skill-format.ts`).
 */
import type { CanonicalPatch } from "../core/types.js";
import { type FrontmatterParser, simpleFrontmatter } from "../storage/artifacts/skill-format.js";

/** The import of pi, started by the first patch that writes artifacts. */
let loading: Promise<FrontmatterParser> | undefined;

/** The parser a commit of `patch` reads Skills with: pi's, loaded on the first patch that writes artifacts. */
export async function frontmatterParser(patch: CanonicalPatch): Promise<FrontmatterParser> {
	if (!Object.values(patch).some((planes) => planes?.artifacts !== undefined)) return simpleFrontmatter;
	loading ??= import("@mariozechner/pi-coding-agent").then(
		(pi) => pi.parseFrontmatter,
		() => simpleFrontmatter,
	);
	return loading;
}
