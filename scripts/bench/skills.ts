/** The Skill part: the compiled-Skill check every prompt runs, over an owner with 50 Skills. */
import { openStoresAt } from "../../lib/storage/open.js";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject } from "../../lib/core/types.js";
import { createArtifactCompiler } from "../../lib/storage/artifacts/compiler.js";
import { CompiledSkills } from "../../lib/storage/artifacts/compiled-skills.js";
import { BY, ITER, ms, newId, p50, value } from "./shared.js";

/**
 * The compiled-Skill check of a prompt (`CompiledSkills.refresh`) for an owner with 50 compiled
 * Skills of ~2 KB: the full pass of a session start (every file read and hashed), and the pass
 * of an unchanged owner (keyed by its seq: no file is touched).
 */
export async function skillSync(dir: string): Promise<{ full: number; unchanged: number }> {
	const roots = { cwd: join(dir, "proj"), agentDir: join(dir, "agent") };
	mkdirSync(roots.cwd, { recursive: true });
	const stores = openStoresAt(roots);
	const artifacts: JsonObject = {};
	for (let i = 0; i < 50; i++)
		artifacts[`.pi/skills/s-${i}/SKILL.md`] = { kind: "skill", name: `s-${i}`, description: "A bench Skill.", body: value(i).repeat(11) };
	await stores.commit({ cwd: { artifacts } }, { by: BY, id: newId(), at: new Date().toISOString(), prepare: createArtifactCompiler(roots) });
	const h = await stores.load("cwd");
	const time = (n: number, f: () => void): number => {
		const xs: number[] = [];
		for (let i = 0; i < n; i++) {
			const t0 = process.hrtime.bigint();
			f();
			xs.push(ms(t0));
		}
		return p50(xs);
	};
	const full = time(60, () => new CompiledSkills().refresh("cwd", h, "bench", roots));
	const warm = new CompiledSkills();
	warm.refresh("cwd", h, "bench", roots);
	return { full, unchanged: time(ITER, () => warm.refresh("cwd", h, "bench", roots)) };
}
