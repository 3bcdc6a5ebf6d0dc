/**
 * Bounded reads of a git dir's object files (loose objects, pack indexes, packs, the
 * commit-graph) for the object store (`git-objects.ts`): every file and folder passes the rule
 * of git's small files (`git-files.ts`: opened `O_NOFOLLOW|O_NONBLOCK`, a regular file of this
 * user's by `fstat` of the handle; folders real and the user's), but is read by positioned reads
 * in aligned blocks, each counted against the call's byte budget, never whole; inflating is
 * capped per object. Time, bytes and commits of one call are a `Budget`; whatever is odd or
 * over a bound is a `Stop`, which the caller turns into "cannot say".
 */
import { type FileHandle, lstat, open } from "node:fs/promises";
import { promisify } from "node:util";
import { inflate, inflateSync } from "node:zlib";
import { SAFE_READ } from "../fs-util.js";
import { gitFileProblem, gitFolderProblem, refused } from "./git-files.js";

/** The limits of one call; hostile input is the normal case. */
export interface Bounds {
	/** Largest object, inflated delta or delta result (commits are a few hundred bytes). */
	maxObjectBytes: number;
	/** Longest delta chain followed (git writes at most 50 by default, 250 with old `--aggressive`). */
	maxDeltaDepth: number;
	/** Most commits read in one call. */
	maxCommits: number;
	/** Most bytes read from files in one call (each block counted once, as it is read). */
	maxBytesRead: number;
	/** Wall-clock bound of one call. */
	timeoutMs: number;
	/** Most pack indexes consulted (git warns far below, `gc.autoPackLimit` is 50). */
	maxPacks: number;
}

export const DEFAULT_BOUNDS: Readonly<Bounds> = {
	maxObjectBytes: 1024 * 1024,
	maxDeltaDepth: 256,
	maxCommits: 20_000,
	maxBytesRead: 64 * 1024 * 1024,
	timeoutMs: 2000,
	maxPacks: 256,
};

/** Why a call could not answer: the caller's "cannot say". */
export class Stop extends Error {}

/** Inflates up to this size run on the loop (measured ~15 µs for a commit, 90 µs through the pool). */
const SYNC_INFLATE = 64 * 1024;
/** Longest stretch of work between two yields to the event loop. */
const SLICE_MS = 4;
const inflateAsync = promisify(inflate);

/** Bytes, time and commits spent by one call; any excess is a `Stop`. */
export class Budget {
	bytes = 0;
	commits = 0;
	readonly #deadline: number;
	#slice = performance.now();
	constructor(readonly bounds: Bounds) {
		this.#deadline = this.#slice + bounds.timeoutMs;
	}
	spend(bytes: number): void {
		this.bytes += bytes;
		if (this.bytes > this.bounds.maxBytesRead) throw new Stop(`more than ${this.bounds.maxBytesRead} bytes to read`);
	}
	commit(): void {
		if (++this.commits > this.bounds.maxCommits) throw new Stop(`more than ${this.bounds.maxCommits} commits to walk`);
	}
	/** Yield to the event loop when this call has run for a slice; stop at the deadline. */
	async tick(): Promise<void> {
		const now = performance.now();
		if (now > this.#deadline) throw new Stop(`no answer within ${this.bounds.timeoutMs} ms`);
		if (now - this.#slice < SLICE_MS) return;
		await new Promise<void>((done) => setImmediate(done));
		this.#slice = performance.now();
	}
}

/** A folder under the git dir, checked (a real folder of the user's: `gitFolderProblem`); false when it does not exist. */
export async function safeDir(path: string): Promise<boolean> {
	let st: Awaited<ReturnType<typeof lstat>>;
	try {
		st = await lstat(path);
	} catch (e) {
		if ("absent" in refused(e)) return false;
		throw e;
	}
	const problem = gitFolderProblem(st);
	if (problem !== undefined) throw new Stop(`${path}: ${problem}`);
	return true;
}

/** A file read by positioned reads through a cache of aligned blocks, each counted once. */
export class BlockFile {
	readonly #blocks = new Map<number, Buffer>();
	/** Blocks being read: concurrent readers of one block share the read. */
	readonly #reading = new Map<number, Promise<Buffer>>();
	private constructor(
		readonly path: string,
		readonly size: number,
		readonly fh: FileHandle,
		readonly budget: Budget,
		readonly block: number,
	) {}

	/**
	 * Opens a regular file of the user's by the rule of git's files (`gitFileProblem`, judged on
	 * the opened handle: a link or a FIFO is never followed or waited on); undefined when nothing
	 * is there.
	 */
	static async open(path: string, budget: Budget, block = 4096): Promise<BlockFile | undefined> {
		let fh: FileHandle;
		try {
			fh = await open(path, SAFE_READ);
		} catch (e) {
			const why = refused(e);
			if ("absent" in why) return undefined;
			throw new Stop(`${path}: ${why.problem}`);
		}
		try {
			const st = await fh.stat();
			const problem = gitFileProblem(st);
			if (problem !== undefined) throw new Stop(`${path}: ${problem}`);
			return new BlockFile(path, st.size, fh, budget, Math.max(1, Math.min(block, st.size)));
		} catch (e) {
			await fh.close();
			throw e;
		}
	}

	/** The bytes [pos, pos + len), which must lie in the file. */
	async read(pos: number, len: number): Promise<Buffer> {
		if (!Number.isSafeInteger(pos) || !Number.isSafeInteger(len) || pos < 0 || len < 0 || pos + len > this.size) {
			throw new Stop(`${this.path}: read past its end`);
		}
		const first = Math.floor(pos / this.block);
		const last = Math.floor((pos + Math.max(len, 1) - 1) / this.block);
		const at = pos - first * this.block;
		if (first === last) return (this.#blocks.get(first) ?? (await this.#block(first))).subarray(at, at + len);
		const parts: Buffer[] = [];
		for (let i = first; i <= last; i++) parts.push(this.#blocks.get(i) ?? (await this.#block(i)));
		return Buffer.concat(parts).subarray(at, at + len);
	}

	/** The same bytes when they are cached (no await: binary searches stay on the fast path). */
	peek(pos: number, len: number): Buffer | undefined {
		const first = Math.floor(pos / this.block);
		if (pos < 0 || len <= 0 || pos + len > this.size || Math.floor((pos + len - 1) / this.block) !== first) return undefined;
		const at = pos - first * this.block;
		return this.#blocks.get(first)?.subarray(at, at + len);
	}

	#block(i: number): Promise<Buffer> {
		let reading = this.#reading.get(i);
		if (reading === undefined) {
			const len = Math.min(this.block, this.size - i * this.block);
			this.budget.spend(len);
			const buf = Buffer.allocUnsafe(len);
			reading = this.fh.read(buf, 0, len, i * this.block).then(({ bytesRead }) => {
				this.#reading.delete(i);
				if (bytesRead !== len) throw new Stop(`${this.path} is shorter than it was`);
				this.#blocks.set(i, buf);
				return buf;
			});
			this.#reading.set(i, reading);
		}
		return reading;
	}

	close(): Promise<void> {
		return this.fh.close();
	}
}

/** Inflate exactly one zlib stream (trailing bytes are ignored) to at most `max` bytes. */
export async function unzip(input: Buffer, max: number, exact?: number): Promise<Buffer> {
	let out: Buffer;
	try {
		try {
			out = inflateSync(input, { maxOutputLength: Math.max(Math.min(max, SYNC_INFLATE), 1) });
		} catch (e) {
			// Past the small size, the rest is inflated off the loop (a 1 MiB inflate takes ~8 ms).
			if ((e as NodeJS.ErrnoException).code !== "ERR_BUFFER_TOO_LARGE" || max <= SYNC_INFLATE) throw e;
			out = await inflateAsync(input, { maxOutputLength: max });
		}
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		throw new Stop(code === "ERR_BUFFER_TOO_LARGE" ? `an object inflates past ${max} bytes` : `corrupt zlib data (${code ?? "?"})`);
	}
	if (exact !== undefined && out.length !== exact) throw new Stop(`an object inflates to ${out.length} bytes, not the ${exact} its header says`);
	return out;
}
