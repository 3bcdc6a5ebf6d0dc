/**
 * pi's Skill format, as State Flow compiles it: frontmatter parsing, the name and
 * description rules pi's loader applies (`dist/core/skills.js`), where each owner's Skills
 * are discovered, and the exact bytes written for an inline-authored Skill. Pure.
 */
import type { Owner } from "../../core/types.js";

/** Parses SKILL.md frontmatter; the host passes pi's own `parseFrontmatter` for exact YAML. */
export type FrontmatterParser = (text: string) => { frontmatter: Record<string, unknown> };

/** pi's limits (Agent Skills spec): name 1–64 chars, description 1–1024 chars. */
export const MAX_SKILL_NAME = 64;
export const MAX_SKILL_DESCRIPTION = 1024;

/** Why a Skill name is not valid for pi, or undefined when it is. `folder` is its parent folder. */
export function skillNameProblem(name: unknown, folder?: string): string | undefined {
	if (typeof name !== "string" || name.length === 0) return "`name` is required: 1–64 characters `a-z`, `0-9`, `-`";
	if (name.length > MAX_SKILL_NAME) return `\`name\` has ${name.length} characters; pi allows at most ${MAX_SKILL_NAME}`;
	if (!/^[a-z0-9-]+$/.test(name)) return `\`name\` "${name}" may contain only lowercase \`a-z\`, \`0-9\` and \`-\``;
	if (name.startsWith("-") || name.endsWith("-")) return `\`name\` "${name}" must not start or end with a hyphen`;
	if (name.includes("--")) return `\`name\` "${name}" must not contain consecutive hyphens`;
	if (folder !== undefined && folder !== name) return `\`name\` "${name}" must equal its folder "${folder}"`;
	return undefined;
}

/** Why a Skill description is not valid for pi, or undefined when it is. */
export function skillDescriptionProblem(description: unknown): string | undefined {
	if (typeof description !== "string" || description.trim() === "") return "`description` is required (pi skips a Skill without one)";
	if (description.length > MAX_SKILL_DESCRIPTION) return `\`description\` has ${description.length} characters; pi allows at most ${MAX_SKILL_DESCRIPTION}`;
	return undefined;
}

/** The folder, relative to the owner root, where pi discovers that owner's Skills. */
export function skillsFolder(owner: Owner): string {
	// Session Skills are never written; their virtual path mirrors the project's folder.
	return owner === "global" ? "skills" : ".pi/skills";
}

/** The exact artifact key (relative to the owner root) a Skill named `name` compiles to by default. */
export function skillKey(owner: Owner, name: string): string {
	return `${skillsFolder(owner)}/${name}/SKILL.md`;
}

/**
 * Every key a Skill named `name` may compile to, the default first. A project Skill may also live
 * in `.agents/skills/`, which pi reads from every folder up to the git root (`.pi/skills/` only
 * in the folder pi starts in): the place for a Skill a session in a subfolder must find.
 */
export function skillKeys(owner: Owner, name: string): string[] {
	return skillFolders(owner).map((folder) => `${folder}/${name}/SKILL.md`);
}

/** Every folder (relative to the owner root) a Skill of the owner may compile into, the default first. */
export function skillFolders(owner: Owner): string[] {
	return owner === "global" ? [skillsFolder(owner)] : [skillsFolder(owner), ".agents/skills"];
}

/** The frontmatter block as pi extracts it (`utils/frontmatter.js`), or undefined without one. */
export function frontmatterBlock(content: string): string | undefined {
	const normalized = content.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
	if (!normalized.startsWith("---")) return undefined;
	const end = normalized.indexOf("\n---", 3);
	return end === -1 ? undefined : normalized.slice(4, end);
}

/**
 * Fallback parser for the YAML subset Skill frontmatter uses in practice: top-level
 * `key: value` lines with plain, single- or double-quoted scalars, `|`/`>` block scalars and
 * indented plain continuations. The host injects pi's real parser so both always agree.
 */
export const simpleFrontmatter: FrontmatterParser = (text) => {
	const frontmatter: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
	const block = frontmatterBlock(text);
	if (block === undefined) return { frontmatter };
	const lines = block.split("\n");
	for (let i = 0; i < lines.length; i++) {
		// dotAll: JSON.stringify leaves U+2028/U+2029 unescaped, and `.` would stop at them.
		const m = /^([A-Za-z0-9_-]+):(?:\s+(.*))?$/s.exec(lines[i] ?? "");
		if (!m) continue;
		const key = m[1] as string;
		const raw = (m[2] ?? "").trim();
		const cont: string[] = [];
		while (i + 1 < lines.length && /^(\s+\S|\s*$)/.test(lines[i + 1] ?? "") && !/^[A-Za-z0-9_-]+:/.test(lines[i + 1] ?? "")) {
			cont.push(lines[++i] ?? "");
		}
		Object.defineProperty(frontmatter, key, { value: scalar(raw, cont), enumerable: true, writable: true, configurable: true });
	}
	return { frontmatter };
};

function scalar(raw: string, cont: string[]): unknown {
	if (raw === "|" || raw === ">" || /^[|>][-+]?$/.test(raw)) {
		const body = cont.map((l) => l.replace(/^\s+/, ""));
		const joined = raw.startsWith("|") ? body.join("\n") : body.join(" ");
		return raw.endsWith("-") ? joined.trimEnd() : `${joined.trimEnd()}\n`;
	}
	const full = [raw, ...cont.map((l) => l.trim())].filter((s) => s !== "").join(" ");
	if (full.startsWith('"')) {
		try {
			return JSON.parse(full) as unknown;
		} catch {
			return full;
		}
	}
	if (full.startsWith("'") && full.endsWith("'") && full.length >= 2) return full.slice(1, -1).replace(/''/g, "'");
	const plain = full.replace(/\s+#.*$/, "");
	if (plain === "true") return true;
	if (plain === "false") return false;
	return plain === "" ? undefined : plain;
}

/** Marker line in every Skill State Flow writes from an inline-authored artifact. */
export function compiledMarker(owner: Owner, key: string): string {
	return `<!-- Compiled by State Flow from ${owner} artifacts[${JSON.stringify(key)}]. Edit the artifact with patch_state; this file is rewritten from it. -->`;
}

/**
 * The exact bytes of an inline-authored Skill. Name and description are written as YAML
 * double-quoted scalars (JSON string escapes are valid YAML escapes), so any description
 * survives and a name like `123` or `true` stays a string.
 */
export function renderSkill(owner: Owner, key: string, name: string, description: string, body: string): string {
	const text = body.endsWith("\n") ? body : `${body}\n`;
	return `---\nname: ${JSON.stringify(name)}\ndescription: ${JSON.stringify(description)}\n---\n\n${compiledMarker(owner, key)}\n\n${text}`;
}
