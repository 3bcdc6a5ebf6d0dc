/** The full run's report: each key beside its target, printed as a table and written to `bench-results.json`. */
import { writeFileSync } from "node:fs";
import { DEFAULT_HEAD_BUDGET } from "../../lib/model/head.js";

const targets: Record<string, string> = {
	commit_vs_raw: "<= 1.3",
	commit_vs_raw_back_to_back: "<= 1.3",
	growth: "<= 1.3",
	read_p50_ms_2mb: "<= 0.2",
	lost_commits: "= 0",
	head_render_p50_ms_4mb: "<= 5",
	head_render_p50_ms_4mb_one_deep_value: "<= 5",
	head_bytes_4mb: `<= ${DEFAULT_HEAD_BUDGET}`,
	head_fill_ratio: ">= 0.85",
	head_active_work_shown: "1.0",
	tool_read_p50_ms_2mb: "<= 0.15",
	tool_read_over_noop_ms: "<= 0.1",
	tool_freshness_floor_ms: "(two look-ups after a model reply)",
	tool_read_over_floor_ms: "(the read's own work)",
	tool_vs_commit: "<= 1.15",
	commit_cpu_share: "(outside fsync)",
	guarantee_floor_p50_ms: "(append + fsync + the guarantees' system calls)",
	commit_vs_guarantee_floor: "(State Flow's own work)",
	commit_outside_fsync_p50_ms_2mb: "<= 0.12 (quiet disk)",
	guarantee_floor_outside_fsync_p50_ms: "(the guarantees' system calls alone)",
	commit_vs_sqlite_full: "<= 1.0",
	commit_vs_sqlite_normal: "(reference)",
	cold_load_p50_ms_2mb: "(<= 1.5 x before issue 37)",
	tool_vs_session_commit: "<= 1.3",
	tool_growth: "<= 1.3",
	credential_check_share: "<= 0.05",
	pg_commit_vs_floor: "<= 1.5",
	pg_read_p50_ms: "<= 0.5",
	pg_lost_commits: "= 0",
	mcp_patch_vs_memory_server_write: "<= 1.3 (it does not fsync)",
	mcp_read_vs_memory_server_read: "< 1",
	mcp_lost_updates_4x50: "= 0",
	memory_server_lost_updates_4x50: "(reference)",
};

/** Prints the table in the order of `results` and writes them, in that order, to `bench-results.json`. */
export function writeResults(results: Record<string, number>): void {
	console.log(`${"metric".padEnd(40)}${"value".padEnd(11)}target`);
	for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(40)}${String(v).padEnd(11)}${targets[k] ?? ""}`);
	writeFileSync("bench-results.json", `${JSON.stringify(results, null, 2)}\n`);
	console.log("results written to bench-results.json");
}
