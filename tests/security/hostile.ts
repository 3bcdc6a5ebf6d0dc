/**
 * What a hostile repository can plant where State Flow keeps its files, and a sentinel
 * folder outside the project and the agent directory whose every byte is compared before
 * and after (docs/security.md).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { isStateError } from "../../lib/core/errors.js";

/** How a path is planted: links in the relative form a git checkout carries and in absolute form, a dangling link, a folder, a FIFO, garbage. */
export const KINDS = ["link-relative", "link-absolute", "link-dangling", "folder", "fifo", "garbage"] as const;
export type Kind = (typeof KINDS)[number];

/** Paths State Flow touches in a project (relative to it) and in the agent directory. */
export const CWD_PATHS = [
	".pi",
	".pi/state-flow",
	".pi/state-flow/log.jsonl",
	".pi/state-flow/checkpoint.json",
	".pi/state-flow/.gitignore",
	".pi/state-flow/lock",
	".pi/state-flow/lock.holders",
	".pi/state-flow/lock.break",
	".pi/state-flow/lock.broken",
] as const;
export const AGENT_PATHS = [
	"state-flow",
	"state-flow/global",
	"state-flow/global/log.jsonl",
	"state-flow/global/checkpoint.json",
	"state-flow/global/lock",
	"state-flow/global/lock.holders",
	"state-flow/journal",
	"state-flow/journal/planted.json",
	"state-flow/seen",
	"state-flow/config.json",
] as const;

/** Folders State Flow keeps as folders (a link to one leads to a folder outside). */
const FOLDERS = new Set([
	".pi",
	".pi/state-flow",
	".pi/state-flow/lock.holders",
	"state-flow",
	"state-flow/global",
	"state-flow/global/lock.holders",
	"state-flow/journal",
	"state-flow/seen",
]);

/** A sentinel folder outside both roots, with a file and a folder for every link to point at. */
export function makeSentinel(dir: string): string {
	mkdirSync(dir, { recursive: true });
	for (const name of ["log.jsonl", "checkpoint.json", "lock", "config.json", ".gitignore", "lock.break", "lock.broken", "secret.txt"]) {
		writeFileSync(join(dir, name), `sentinel ${name}: must never change\n`);
	}
	for (const name of [".pi", "state-flow", "global", "lock.holders", "journal"]) {
		mkdirSync(join(dir, `dir-${name}`), { recursive: true });
		writeFileSync(join(dir, `dir-${name}`, "keep.txt"), `sentinel folder ${name}\n`);
	}
	return dir;
}

/** Every entry under `dir`: its type, mode and bytes (or link target). */
export function snapshot(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (d: string) => {
		for (const name of readdirSync(d).sort()) {
			const p = join(d, name);
			const st = lstatSync(p);
			const rel = relative(dir, p);
			if (st.isSymbolicLink()) out[rel] = `link ${readlinkSync(p)}`;
			else if (st.isDirectory()) {
				out[rel] = `dir ${st.mode.toString(8)}`;
				walk(p);
			} else if (st.isFile()) out[rel] = `file ${st.mode.toString(8)} ${readFileSync(p).toString("hex")}`;
			else out[rel] = `other ${st.mode.toString(8)}`;
		}
	};
	walk(dir);
	return out;
}

/** Plant `kind` at `abs` (replacing what is there); links point into the sentinel. */
export function plant(abs: string, rel: string, kind: Kind, sentinel: string): void {
	rmSync(abs, { recursive: true, force: true });
	mkdirSync(dirname(abs), { recursive: true });
	const target = FOLDERS.has(rel) ? join(sentinel, `dir-${basename(rel)}`) : join(sentinel, basename(rel));
	switch (kind) {
		case "link-relative":
			symlinkSync(relative(dirname(abs), target), abs);
			break;
		case "link-absolute":
			symlinkSync(target, abs);
			break;
		case "link-dangling":
			symlinkSync(join(sentinel, "does-not-exist", basename(rel)), abs);
			break;
		case "folder":
			mkdirSync(abs);
			writeFileSync(join(abs, "planted.txt"), "planted\n");
			break;
		case "fifo":
			execFileSync("mkfifo", [abs]);
			break;
		case "garbage":
			writeFileSync(abs, "\u0000\u0001 not what State Flow wrote {{{\n");
			break;
	}
}

/** A refusal the user can act on: a StateError naming a path and saying what to do; never a raw error. */
export function assertClearRefusal(e: unknown, label: string): void {
	assert.ok(isStateError(e), `${label}: expected a StateError, got ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
	assert.match(e.message, /`\/[^`]+`/, `${label}: the message must name the path: ${e.message}`);
	assert.match(e.message, /state-flow doctor|remove|Remove|retry|Retry|restore/, `${label}: the message must say what to do: ${e.message}`);
}
