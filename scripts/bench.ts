/**
 * `npm run bench`: the single-owner commit path against its physical floor (one append +
 * fsync of the same bytes in the same folder), warm reads, 8 concurrent writer processes,
 * the head renderer at the per-owner size limit (many small tactics, and one deep value), and the two tools inside a real pi session
 * (faux model), timed between `tool_execution_start` and `_end`. The commit figures
 * (`commit_p50_ms_*`, `raw_append_fsync_p50_ms`) are measured inside the 2 MB tool session, each
 * operation in a model reply of its own like the tool calls, so `tool_vs_commit` (the 2 MB patch
 * ÷ `commit_p50_ms_2mb`), `commit_vs_raw` and `growth` divide figures taken under the same disk
 * load and cache state (fsync latency drifts by several times with the machine's load, and a
 * commit right after another is much cheaper than one after a model reply). The same loop run
 * back to back on its own is reported as `*_back_to_back`; `commit_cpu_share` is the share of a
 * 2 MB commit spent outside its fsync (`commit_outside_fsync_p50_ms_2mb` the time), in a loop of its own (`node dist/scripts/bench.js --commit`). `tool_vs_session_commit` divides the
 * patch by a store commit made inside the scripted model reply (`tool_commit_p50_ms_2mb`).
 * `tool_noop_p50_ms` is pi's own cost for a tool that does nothing; `tool_freshness_floor_ms` what
 * a tool making only a read's two freshness look-ups costs beyond it (the first system calls after a
 * model reply are the dear ones), `tool_read_over_floor_ms` the read's own work beyond that. `skill_sync_*` time the
 * per-prompt compiled-Skill check (50 Skills): a session start's full pass, an unchanged owner's
 * pass. `credential_check_share` is the credential check on the 2 MB commit's patch ÷
 * `commit_p50_ms_2mb` (`--credentials` runs it alone against the back-to-back commit).
 * `guarantee_floor_p50_ms` is the raw floor plus the other system calls a commit's guarantees make
 * (lock, containment, journal, freshness, seen mark), with no State Flow code between them;
 * `commit_vs_guarantee_floor` (+ `_back_to_back`) what the commit costs beyond them.
 * `commit_vs_sqlite_full` divides the 2 MB commit by SQLite writing the same line with an fsync
 * per commit (WAL, `synchronous=FULL`, timed beside it in the same session; `_normal`: without,
 * for reference; `scripts/bench/sqlite.ts`; left out, saying why, where better-sqlite3 cannot
 * load). `cold_load_p50_ms_2mb` is a fresh process's load of the 2 MB owner when its log is the
 * longest the compaction rule lets it grow (`--cold` runs it alone; `--retention` compares the cold load and the log's growth per retention, printed only). Then the PostgreSQL owner
 * store against a minimal transaction of the same shape (`pg_*`, a real server started for the
 * run; `scripts/bench-pg.ts`). Then MCP: `state-flow mcp` beside the reference memory server through the
 * same client over stdio, at a 2 MB memory, and lost updates with 4 server processes each (`mcp_*`,
 * `memory_server_*`; `scripts/bench/mcp.ts`, `--mcp` runs it alone). Prints a table and writes `bench-results.json`.
 *
 * The parts live in `scripts/bench/`, one module each (storage, head, skills, tools, credentials;
 * `shared.ts` holds the one id counter and the timing helpers, `results.ts` the table and the file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchPg } from "./bench-pg.js";
import { credentialCheckP50 } from "./bench/credentials.js";
import { headActiveWork, headAtLimit, headFill, headOneDeepValue } from "./bench/head.js";
import { writeResults } from "./bench/results.js";
import { round } from "./bench/shared.js";
import { skillSync } from "./bench/skills.js";
import { sqliteAnchor, sqliteMissing } from "./bench/sqlite.js";
import { child, coldLoadP50, commitCpuShare, commitVsRawBackToBack, concurrent, readP50, seeded, storageOps } from "./bench/storage.js";
import { retentionCosts } from "./bench/retention.js";
import { toolTimes } from "./bench/tools.js";
import { type McpBench, mcpBench } from "./bench/mcp.js";

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	if (argv[0] === "--child") return child(argv[1] as string, argv[2] as string, Number(argv[3]));
	if (
		argv[0] === "--tools" ||
		argv[0] === "--head" ||
		argv[0] === "--skills" ||
		argv[0] === "--commit" ||
		argv[0] === "--credentials" ||
		argv[0] === "--cold" ||
		argv[0] === "--mcp"
	)
		return part(argv[0]);
	if (argv[0] === "--retention") return retentionPart();
	const root = mkdtempSync(join(tmpdir(), "state-flow-bench-"));
	try {
		const small = await seeded(join(root, "small"), 100);
		const big = await seeded(join(root, "big"), 10_000);
		const bytes = (await big.load("cwd")).bytes;
		const ops = storageOps(small, big, join(root, "big", "proj", ".pi", "state-flow", "raw.jsonl"), sqliteAnchor(join(root, "big", "proj"), 10_000));
		if (ops.sqlite === undefined) console.log(`SQLite anchor missing (better-sqlite3 cannot be loaded here: ${sqliteMissing}); commit_vs_sqlite_* left out`);
		const warm = await commitVsRawBackToBack(ops);
		const cpuShare = await commitCpuShare(ops);
		const read = await readP50(big, 10_000);
		const cold = await coldLoadP50(join(root, "cold"), 10_000);
		const conc = await concurrent(join(root, "conc"));
		const head = headAtLimit();
		const headDeep = headOneDeepValue();
		const fill = headFill();
		const activeWork = headActiveWork();
		const toolSmall = await toolTimes(join(root, "tool-small"), 100);
		const toolBig = await toolTimes(join(root, "tool-big"), 10_000, ops);
		// Reads in a 2 MB session of State Flow's own calls only: the storage probes double the
		// session, and pi's per-call floor grows with it (docs/decisions.md, "Tool calls at the cost of their commit").
		const toolRead = await toolTimes(join(root, "tool-read"), 10_000);
		ops.close();
		const cmp = toolBig.storage as { small: number; big: number; raw: number; guarded: number; full?: number; normal?: number };
		const anchor: Record<string, number> =
			cmp.full !== undefined && cmp.normal !== undefined && warm.full !== undefined
				? {
						sqlite_full_p50_ms: round(cmp.full),
						sqlite_normal_p50_ms: round(cmp.normal),
						commit_vs_sqlite_full: round(cmp.big / cmp.full),
						commit_vs_sqlite_normal: round(cmp.big / cmp.normal),
						commit_vs_sqlite_full_back_to_back: round(warm.big / warm.full),
					}
				: {};
		const skills = await skillSync(join(root, "skills"));
		const credentials = await credentialCheckP50();
		const results = {
			commit_p50_ms_20kb: round(cmp.small),
			commit_p50_ms_2mb: round(cmp.big),
			raw_append_fsync_p50_ms: round(cmp.raw),
			read_p50_ms_2mb: round(read),
			concurrent_commits_per_s: Math.round(conc.perSec),
			lost_commits: conc.lost,
			commit_vs_raw: round(cmp.big / cmp.raw),
			growth: round(cmp.big / cmp.small),
			commit_p50_ms_2mb_back_to_back: round(warm.big),
			raw_append_fsync_p50_ms_back_to_back: round(warm.raw),
			commit_vs_raw_back_to_back: round(warm.big / warm.raw),
			guarantee_floor_p50_ms: round(cmp.guarded),
			commit_vs_guarantee_floor: round(cmp.big / cmp.guarded),
			commit_vs_guarantee_floor_back_to_back: round(warm.big / warm.guarded),
			commit_cpu_share: round(cpuShare.share),
			commit_outside_fsync_p50_ms_2mb: round(cpuShare.outside),
			guarantee_floor_outside_fsync_p50_ms: round(cpuShare.floorOutside),
			...anchor,
			cold_load_p50_ms_2mb: round(cold.p50),
			cold_load_log_bytes_2mb: cold.logBytes,
			state_bytes_2mb: bytes,
			head_render_p50_ms_4mb: round(head.p50),
			head_state_bytes_4mb: head.stateBytes,
			head_bytes_4mb: head.headBytes,
			head_render_p50_ms_4mb_one_deep_value: round(headDeep.p50),
			head_fill_ratio: round(fill),
			head_active_work_shown: round(activeWork),
			tool_patch_p50_ms_20kb: round(toolSmall.patch),
			tool_patch_p50_ms_2mb: round(toolBig.patch),
			tool_read_p50_ms_2mb: round(toolRead.read),
			tool_commit_p50_ms_2mb: round(toolBig.commit),
			tool_noop_p50_ms: round(toolRead.noop),
			tool_read_over_noop_ms: round(toolRead.read - toolRead.noop),
			tool_freshness_floor_ms: round(toolRead.stat - toolRead.noop),
			tool_read_over_floor_ms: round(toolRead.read - toolRead.stat),
			tool_read_p50_ms_2mb_with_probes: round(toolBig.read),
			tool_noop_p50_ms_with_probes: round(toolBig.noop),
			tool_vs_commit: round(toolBig.patch / cmp.big),
			tool_vs_session_commit: round(toolBig.patch / toolBig.commit),
			tool_growth: round(toolBig.patch / toolSmall.patch),
			skill_sync_full_p50_ms_50: round(skills.full),
			skill_sync_unchanged_p50_ms_50: round(skills.unchanged),
			credential_check_p50_ms: round(credentials),
			credential_check_share: round(credentials / cmp.big),
			...(await benchPg()),
			...mcpResults(await mcpBench(join(root, "mcp"))),
		};
		writeResults(results);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

/** What the default retention costs (`scripts/bench/retention.ts`), printed and not written. */
async function retentionPart(): Promise<void> {
	const root = mkdtempSync(join(tmpdir(), "state-flow-bench-"));
	try {
		console.log(await retentionCosts(root));
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

/** One part alone, printed and not written (for profiling: `node --cpu-prof dist/scripts/bench.js --tools`). */
async function part(which: "--tools" | "--head" | "--skills" | "--commit" | "--credentials" | "--cold" | "--mcp"): Promise<void> {
	if (which === "--head") {
		console.log({ ...headAtLimit(), deep: headOneDeepValue(), fill: headFill(), activeWork: headActiveWork() });
		return;
	}
	const root = mkdtempSync(join(tmpdir(), "state-flow-bench-"));
	try {
		if (which === "--skills") console.log(await skillSync(root));
		else if (which === "--mcp") console.log(mcpResults(await mcpBench(root)));
		else if (which === "--cold") console.log(await coldLoadP50(join(root, "cold"), 10_000));
		else if (which === "--credentials") {
			// Against the back-to-back 2 MB commit (cheaper than one inside a tool session: a conservative share).
			const big = await seeded(join(root, "big"), 10_000);
			const ops = storageOps(big, big, join(root, "big", "proj", ".pi", "state-flow", "raw.jsonl"));
			const commit = (await commitVsRawBackToBack(ops)).big;
			ops.close();
			const check = await credentialCheckP50();
			console.log({ credential_check_p50_ms: round(check), commit_p50_ms_2mb_back_to_back: round(commit), credential_check_share: round(check / commit) });
		} else if (which === "--commit") {
			const big = await seeded(join(root, "big"), 10_000);
			const ops = storageOps(big, big, join(root, "big", "proj", ".pi", "state-flow", "raw.jsonl"), sqliteAnchor(join(root, "big", "proj"), 10_000));
			if (ops.sqlite === undefined) console.log(`SQLite anchor missing: ${sqliteMissing}`);
			console.log({ backToBack: await commitVsRawBackToBack(ops), commit_cpu_share: await commitCpuShare(ops) });
			ops.close();
		} else console.log({ small: await toolTimes(join(root, "s"), 100), big: await toolTimes(join(root, "b"), 10_000) });
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

/** The MCP part's keys, and its two ratios against the reference memory server. */
function mcpResults(m: McpBench): Record<string, number> {
	return {
		mcp_patch_p50_ms_2mb: round(m.mcp_patch_p50_ms_2mb),
		mcp_read_p50_ms_2mb: round(m.mcp_read_p50_ms_2mb),
		memory_server_write_p50_ms_2mb: round(m.memory_server_write_p50_ms_2mb),
		memory_server_read_p50_ms_2mb: round(m.memory_server_read_p50_ms_2mb),
		mcp_patch_vs_memory_server_write: round(m.mcp_patch_p50_ms_2mb / m.memory_server_write_p50_ms_2mb),
		mcp_read_vs_memory_server_read: round(m.mcp_read_p50_ms_2mb / m.memory_server_read_p50_ms_2mb),
		mcp_state_bytes_2mb: m.mcp_state_bytes,
		memory_server_file_bytes_2mb: m.memory_server_file_bytes,
		mcp_lost_updates_4x50: m.mcp_lost_updates_4x50,
		memory_server_lost_updates_4x50: m.memory_server_lost_updates_4x50,
	};
}

await main();
