/**
 * The MCP server's side of the model surface (`surface/surface.ts`): the stores of one project
 * opened as pi and the CLI open them (`storage/open.ts`, the user's config and placement), the
 * project found from `--cwd` by pi's rule, the checkout's branch read before each write and
 * head, the Skill parser of the other front-ends outside pi (`ops/frontmatter.ts`). Registered
 * roots are pi extensions' and stay pi's: none here. A stdio server serves one client, so it
 * keeps one run (the head it last showed, its own writes) for the courtesy lines; stateless HTTP
 * keeps none.
 */
import { randomUUID } from "node:crypto";
import type { Owner, SharedOwner } from "../core/types.js";
import { toCanonicalPatch } from "../model/interface.js";
import { frontmatterParser } from "../ops/frontmatter.js";
import { openStores } from "../storage/open.js";
import { readConfig, type StateFlowConfig } from "../storage/placement/config.js";
import { GitBranchWatch } from "../storage/project/git-branch.js";
import { type Project, projectOf } from "../storage/project/project.js";
import type { Stores } from "../storage/stores.js";
import { type Available, sortLoaded } from "../surface/available.js";
import { RunTracker } from "../surface/run.js";
import type { Surface } from "../surface/surface.js";

/** What `state-flow mcp` serves: one folder's project, for these owners. */
export interface ServeAt {
	/** The folder whose project is the CWD owner (`--cwd`, else where the server started). */
	cwd: string;
	agentDir: string;
	/** Global and/or CWD (Session is pi's: docs/decisions.md, "MCP: no Session owner"). */
	owners: readonly SharedOwner[];
}

/** One server process's view of its project: stores, project, branch; runs only where one client is served. */
export class McpContext {
	readonly config: StateFlowConfig;
	/** Config problems, said once on stderr at start. */
	readonly problems: readonly string[];
	readonly #stores: Stores;
	readonly #project: Project;
	readonly #git = new GitBranchWatch();
	/** stdio: the one client's run; HTTP (stateless): none. */
	readonly runs: RunTracker | undefined;

	constructor(
		readonly at: ServeAt,
		perClient: boolean,
	) {
		const { config, problems } = readConfig(at.agentDir);
		this.config = config;
		this.problems = problems;
		this.#project = projectOf(at.cwd);
		this.#stores = openStores(config, { agentDir: at.agentDir, cwd: at.cwd });
		this.runs = perClient ? new RunTracker() : undefined;
	}

	get wanted(): readonly Owner[] {
		return this.at.owners;
	}

	get stores(): Stores {
		return this.#stores;
	}

	/** The surface the engine runs against. */
	surface(): Surface {
		const runs = this.runs;
		return {
			cwd: this.at.cwd,
			agentDir: this.at.agentDir,
			project: () => this.#project,
			stores: () => this.#stores,
			available: async (owners): Promise<Available> => sortLoaded(owners, await this.#stores.loadEach(owners), {}),
			rootNames: () => [],
			toCanonical: (params, wanted, states) => toCanonicalPatch(params, wanted, states, []),
			frontmatter: (patch) => frontmatterParser(patch),
			// Read at each write, as pi reads it before each prompt: a client may switch branches between calls.
			branch: async () => (await this.#git.refresh(this.at.cwd)).branch,
			gitView: (recorded) => this.#git.refresh(this.at.cwd, recorded),
			newId: () => randomUUID(),
			now: () => new Date(),
			...(runs !== undefined
				? {
						runs,
						committed: (outcome) => {
							if (!outcome.noop) runs.recordOwnWrite(outcome.records);
						},
					}
				: {}),
		};
	}

	/** Release database connections and file handles. */
	async close(): Promise<void> {
		await this.#stores.close();
	}
}
