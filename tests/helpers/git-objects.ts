/**
 * Real git repositories for the object-reader tests (`lib/storage/project/git-ancestry.ts`): histories written with `git fast-import`
 * (one process per repository), stored loose, packed, aggressively packed (deltas), packed with
 * REF_DELTA bases or with a commit-graph, in SHA-1 or SHA-256; and packs written by hand where a
 * test needs bytes git never writes (cycles, deep chains, lying offsets). git runs here only on
 * repositories the tests make, with no user or system config.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

export const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" };

export function git(dir: string, args: string[], input?: string | Buffer): string {
	return execFileSync("git", ["-C", dir, ...args], { env: GIT_ENV, input, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

/** git's own answer: true, false, or undefined when git fails (exit code other than 0 and 1). */
export function gitIsAncestor(dir: string, a: string, b: string): boolean | undefined {
	const r = spawnSync("git", ["-C", dir, "merge-base", "--is-ancestor", a, b], { env: GIT_ENV, stdio: "ignore" });
	return r.status === 0 ? true : r.status === 1 ? false : undefined;
}

/** A fresh temp folder for one repository (the caller removes it). */
export function scratchRepoDir(prefix: string): string {
	return mkdtempSync(join(tmpdir(), `state-flow-gitobj-${prefix}-`));
}

export type Format = "sha1" | "sha256";
export type Storage = "loose" | "pack" | "aggressive" | "refdelta" | "graph" | "mixed";

/** A commit of a generated history: its parents (indexes of earlier commits) and committer date. */
export interface Spec {
	parents: number[];
	date: number;
}

/** A bare repository holding `specs` as commits, stored as `storage` says; returns its git dir and the commit ids. */
export function makeRepo(specs: Spec[], storage: Storage, format: Format = "sha1", dir = scratchRepoDir("repo")): { dir: string; ids: string[] } {
	git(dir, ["init", "-q", "--bare", `--object-format=${format}`]);
	// Long, similar messages: packed with --aggressive, commits become deltas of each other.
	const filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(30);
	const half = storage === "mixed" ? Math.ceil(specs.length / 2) : specs.length;
	const load = (from: number, to: number): void => {
		let stream = "";
		for (let i = from; i < to; i++) {
			const s = specs[i] as Spec;
			const msg = `commit ${i}\n\n${filler}${i}\n`;
			const blob = `content of ${i}\n`;
			stream += `commit refs/heads/c${i}\nmark :${i + 1}\ncommitter T <t@example.com> ${s.date} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`;
			const [first, ...rest] = s.parents;
			if (first !== undefined) stream += `from :${first + 1}\n`;
			for (const p of rest) stream += `merge :${p + 1}\n`;
			stream += `M 644 inline file${i % 3}\ndata ${Buffer.byteLength(blob)}\n${blob}\n`;
		}
		git(dir, ["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--import-marks-if-exists=marks", "--export-marks=marks"], `${stream}done\n`);
	};
	load(0, half);
	if (storage === "aggressive") git(dir, ["-c", "gc.writeCommitGraph=false", "gc", "-q", "--aggressive", "--prune=now"]);
	if (storage === "refdelta") git(dir, ["-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=50"]);
	if (storage === "graph") {
		git(dir, ["-c", "gc.writeCommitGraph=false", "gc", "-q", "--prune=now"]);
		git(dir, ["commit-graph", "write", "--reachable"]);
	}
	if (storage === "loose" || storage === "mixed") {
		// fast-import writes packs: to have loose objects, move the later pack out and unpack it.
		const packDir = join(dir, "objects", "pack");
		const kept = storage === "mixed" ? new Set(readdirSync(packDir)) : new Set<string>();
		if (storage === "mixed") load(half, specs.length);
		for (const name of readdirSync(packDir).filter((n) => n.endsWith(".pack") && !kept.has(n))) {
			const moved = join(dir, name);
			renameSync(join(packDir, name), moved);
			rmSync(join(packDir, name.replace(/\.pack$/, ".idx")));
			execFileSync("git", ["-C", dir, "unpack-objects", "-q"], { env: GIT_ENV, input: readFileSync(moved) });
			rmSync(moved);
		}
	}
	const refs = git(dir, ["show-ref"]).trim().split("\n");
	const byRef = new Map(refs.map((l) => [l.split(" ")[1] as string, l.split(" ")[0] as string]));
	return { dir, ids: specs.map((_, i) => byRef.get(`refs/heads/c${i}`) as string) };
}

/** The id git gives an object of this type and content. */
export function objectId(type: string, data: Buffer, format: Format = "sha1"): string {
	return createHash(format === "sha1" ? "sha1" : "sha256")
		.update(`${type} ${data.length}\0`)
		.update(data)
		.digest("hex");
}

/** A loose object file written as git would (or with any header and content a test wants). */
export function writeLoose(dir: string, id: string, raw: Buffer): void {
	mkdirSync(join(dir, "objects", id.slice(0, 2)), { recursive: true });
	writeFileSync(join(dir, "objects", id.slice(0, 2), id.slice(2)), deflateSync(raw));
}

/** One entry of a hand-written pack: a whole object, or a delta on an earlier entry (by index) or on an id. */
export type PackEntry =
	| { kind: "commit" | "blob"; data: Buffer; id: string }
	| { kind: "ofs"; base: number; delta: Buffer; id: string }
	| { kind: "ref"; base: string; delta: Buffer; id: string };

function varint(n: number): number[] {
	const out: number[] = [];
	do {
		let c = n & 0x7f;
		n = Math.floor(n / 128);
		if (n > 0) c |= 0x80;
		out.push(c);
	} while (n > 0);
	return out;
}

/** A delta that makes `target` from a base of `baseSize` bytes by inserting every byte. */
export function insertDelta(baseSize: number, target: Buffer): Buffer {
	const out = [...varint(baseSize), ...varint(target.length)];
	for (let i = 0; i < target.length; i += 127) {
		const part = target.subarray(i, i + 127);
		out.push(part.length, ...part);
	}
	return Buffer.from(out);
}

/** Write `objects/pack/pack-<name>.{pack,idx}` (pack v2, index v2, SHA-1) holding `entries`. */
export function writePack(dir: string, entries: PackEntry[], hashLen = 20): { offsets: number[]; idxPath: string; packPath: string } {
	const parts: Buffer[] = [Buffer.from("PACK"), u32(2), u32(entries.length)];
	let pos = 12;
	const offsets: number[] = [];
	for (const e of entries) {
		offsets.push(pos);
		const type = e.kind === "commit" ? 1 : e.kind === "blob" ? 3 : e.kind === "ofs" ? 6 : 7;
		const body = "data" in e ? e.data : e.delta;
		const head: number[] = [];
		let size = body.length;
		let c = (type << 4) | (size & 15);
		size = Math.floor(size / 16);
		while (size > 0) {
			head.push(c | 0x80);
			c = size & 0x7f;
			size = Math.floor(size / 128);
		}
		head.push(c);
		if (e.kind === "ofs") {
			let back = pos - (offsets[e.base] as number);
			const bytes = [back & 0x7f];
			while ((back = Math.floor(back / 128)) > 0) bytes.unshift(0x80 | (--back & 0x7f));
			head.push(...bytes);
		}
		const chunk = Buffer.concat([Buffer.from(head), e.kind === "ref" ? Buffer.from(e.base, "hex") : Buffer.alloc(0), deflateSync(body)]);
		parts.push(chunk);
		pos += chunk.length;
	}
	const pack = Buffer.concat(parts);
	const packSum = createHash("sha1").update(pack).digest();
	const sorted = entries.map((e, i) => ({ id: Buffer.from(e.id, "hex"), off: offsets[i] as number })).sort((a, b) => a.id.compare(b.id));
	const fanout = Buffer.alloc(1024);
	for (let b = 0; b < 256; b++) fanout.writeUInt32BE(sorted.filter((s) => (s.id[0] as number) <= b).length, b * 4);
	const idxBody = Buffer.concat([
		Buffer.from([0xff, 0x74, 0x4f, 0x63]),
		u32(2),
		fanout,
		...sorted.map((s) => s.id),
		...sorted.map(() => u32(0)),
		...sorted.map((s) => u32(s.off)),
		packSum.subarray(0, hashLen),
	]);
	const idx = Buffer.concat([idxBody, createHash("sha1").update(idxBody).digest().subarray(0, hashLen)]);
	const name = packSum.toString("hex");
	const packDir = join(dir, "objects", "pack");
	mkdirSync(packDir, { recursive: true });
	const packPath = join(packDir, `pack-${name}.pack`);
	const idxPath = join(packDir, `pack-${name}.idx`);
	writeFileSync(packPath, Buffer.concat([pack, packSum]));
	writeFileSync(idxPath, idx);
	return { offsets, idxPath, packPath };
}

function u32(n: number): Buffer {
	const b = Buffer.alloc(4);
	b.writeUInt32BE(n);
	return b;
}

/** A commit's raw content (what git hashes after its header). */
export function commitText(tree: string, parents: string[], date: number, msg: string): Buffer {
	return Buffer.from(
		`tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join("")}author T <t@example.com> ${date} +0000\ncommitter T <t@example.com> ${date} +0000\n\n${msg}\n`,
	);
}

/** Settle `p` within `ms` or fail naming `what` (a hang is a failure, never a stuck test). */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const deadline = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms (a hang)`)), ms);
	});
	try {
		return await Promise.race([p, deadline]);
	} finally {
		clearTimeout(timer);
	}
}
