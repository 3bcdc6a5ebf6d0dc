/**
 * Git's object database read from its files alone, never by running git: a repository's
 * `.git/config` can make git run any command (`core.fsmonitor`, `core.sshCommand` through a
 * promisor fetch), so its objects are read as data. Loose objects, pack indexes (v2) and packs
 * (OFS_DELTA and REF_DELTA chains, bounded in depth, cycles refused), SHA-1 and SHA-256 (the
 * id's length says which: no config is read). Only `objects/` of the git dir is read: alternates
 * are never followed (a repository must not make us read outside its git dir). Packs are read
 * at the needed offsets, never whole (`git-object-files.ts`); every object read is checked against its
 * name. Whatever is odd stops the call with `Stop`.
 */
import { createHash } from "node:crypto";
import { opendir } from "node:fs/promises";
import { join } from "node:path";
import { BlockFile, type Budget, Stop, safeDir, unzip } from "./git-object-files.js";

export type ObjectType = "commit" | "tree" | "blob" | "tag";
export interface GitObject {
	type: ObjectType;
	data: Buffer;
}

const TYPES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** Pack reads come in blocks of this size (commits sit together; a 64 KiB read costs ~4 times a 16 KiB one). */
const PACK_BLOCK = 16 * 1024;
/** Base objects kept for delta chains (by bytes), per call. */
const BASE_CACHE = 16 * 1024 * 1024;

/** Git's delta format (gitformat-pack): base size, result size, then copy and insert instructions. */
export function applyDelta(base: Buffer, delta: Buffer, max: number): Buffer {
	let p = 0;
	const size = (): number => {
		let n = 0;
		for (let shift = 0; ; shift += 7) {
			const c = delta[p++];
			if (c === undefined || shift > 49) throw new Stop("corrupt delta header");
			n += (c & 0x7f) * 2 ** shift;
			if ((c & 0x80) === 0) return n;
		}
	};
	if (size() !== base.length) throw new Stop("a delta names a base of another size");
	const target = size();
	if (target > max) throw new Stop(`a delta result of ${target} bytes`);
	const out = Buffer.allocUnsafe(target);
	let o = 0;
	while (p < delta.length) {
		const c = delta[p++] as number;
		if (c & 0x80) {
			let off = 0;
			let len = 0;
			for (let i = 0; i < 4; i++) if (c & (1 << i)) off += (delta[p++] ?? Number.NaN) * 2 ** (8 * i);
			for (let i = 0; i < 3; i++) if (c & (0x10 << i)) len += (delta[p++] ?? Number.NaN) * 2 ** (8 * i);
			if (len === 0) len = 0x10000;
			if (!(off + len <= base.length) || o + len > target) throw new Stop("a delta copies out of bounds");
			base.copy(out, o, off, off + len);
			o += len;
		} else if (c !== 0) {
			if (p + c > delta.length || o + c > target) throw new Stop("a delta inserts out of bounds");
			delta.copy(out, o, p, p + c);
			p += c;
			o += c;
		} else throw new Stop("a delta holds the reserved instruction 0");
	}
	if (o !== target) throw new Stop("a delta result of the wrong size");
	return out;
}

/** One pack: its v2 index (fanout, sorted ids, offsets) and the pack read at those offsets. */
class Pack {
	#pack: Promise<BlockFile> | undefined;
	/** The pack file once opened (to close it). */
	opened: BlockFile | undefined;
	private constructor(
		readonly idx: BlockFile,
		readonly packPath: string,
		readonly fanout: Uint32Array,
		readonly large: number,
		readonly hashLen: number,
	) {}

	static async open(idxPath: string, packPath: string, hashLen: number, budget: Budget): Promise<Pack | undefined> {
		const idx = await BlockFile.open(idxPath, budget);
		if (idx === undefined) return undefined;
		try {
			const head = await idx.read(0, 8 + 1024);
			if (head.readUInt32BE(0) !== 0xff744f63 || head.readUInt32BE(4) !== 2) throw new Stop(`${idxPath} is not a v2 pack index`);
			const fanout = new Uint32Array(256);
			for (let i = 0; i < 256; i++) {
				fanout[i] = head.readUInt32BE(8 + 4 * i);
				if (i > 0 && (fanout[i] as number) < (fanout[i - 1] as number)) throw new Stop(`${idxPath}: fanout not sorted`);
			}
			// The size is fixed by the count (ids, crc, offsets, trailer) but for the 8-byte offsets: a truncated or padded index is refused.
			const n = fanout[255] as number;
			const extra = idx.size - (8 + 1024 + n * (hashLen + 8) + 2 * hashLen);
			if (extra < 0 || extra % 8 !== 0 || extra / 8 > n) throw new Stop(`${idxPath} has the wrong size for ${n} objects`);
			return new Pack(idx, packPath, fanout, extra / 8, hashLen);
		} catch (e) {
			await idx.close();
			throw e;
		}
	}

	/** The pack offset of `id`, by its fanout bucket and a binary search; undefined when not here. */
	async find(id: Buffer): Promise<number | undefined> {
		const h = this.hashLen;
		const first = id[0] as number;
		let lo = first === 0 ? 0 : (this.fanout[first - 1] as number);
		let hi = this.fanout[first] as number;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			const at = 1032 + mid * h;
			const cmp = (this.idx.peek(at, h) ?? (await this.idx.read(at, h))).compare(id);
			if (cmp === 0) return this.#offset(mid);
			if (cmp < 0) lo = mid + 1;
			else hi = mid;
		}
		return undefined;
	}

	async #offset(i: number): Promise<number> {
		const n = this.fanout[255] as number;
		const base = 1032 + n * (this.hashLen + 4);
		const small = (await this.idx.read(base + i * 4, 4)).readUInt32BE(0);
		if ((small & 0x80000000) === 0) return small;
		const j = small & 0x7fffffff;
		if (j >= this.large) throw new Stop(`${this.idx.path}: a large offset out of its table`);
		const big = (await this.idx.read(base + n * 4 + j * 8, 8)).readBigUInt64BE(0);
		if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new Stop(`${this.idx.path}: an offset past any pack`);
		return Number(big);
	}

	/** The pack file, opened and its header checked at first use. */
	file(): Promise<BlockFile> {
		this.#pack ??= (async () => {
			const f = await BlockFile.open(this.packPath, this.idx.budget, PACK_BLOCK);
			if (f === undefined) throw new Stop(`${this.packPath} is missing`);
			this.opened = f;
			const head = await f.read(0, 12);
			if (head.toString("latin1", 0, 4) !== "PACK" || ![2, 3].includes(head.readUInt32BE(4))) throw new Stop(`${this.packPath} is not a pack`);
			return f;
		})();
		return this.#pack;
	}
}

/** The objects of one git dir, for one call: its packs, then its loose objects. */
export class ObjectStore {
	#packs: Promise<Pack[]> | undefined;
	readonly #dirs = new Map<string, Promise<boolean>>();
	readonly #bases = new Map<string, GitObject>();
	#baseBytes = 0;
	readonly #hashLen: number;
	constructor(
		readonly commonDir: string,
		readonly hexLen: 40 | 64,
		readonly budget: Budget,
	) {
		this.#hashLen = hexLen / 2;
	}

	/** The object named `hex` (its content checked against its name), or undefined when this git dir does not hold it. */
	async read(hex: string, depth = 0): Promise<GitObject | undefined> {
		await this.budget.tick();
		if (depth > this.budget.bounds.maxDeltaDepth) throw new Stop(`a delta chain deeper than ${this.budget.bounds.maxDeltaDepth}`);
		const id = Buffer.from(hex, "hex");
		let obj: GitObject | undefined;
		for (const pack of await this.#packList()) {
			const offset = await pack.find(id);
			if (offset !== undefined) {
				obj = await this.#packed(pack, offset, depth, new Set());
				break;
			}
		}
		obj ??= await this.#readLoose(hex);
		if (obj === undefined) return undefined;
		const hash = createHash(this.hexLen === 40 ? "sha1" : "sha256");
		if (!hash.update(`${obj.type} ${obj.data.length}\0`).update(obj.data).digest().equals(id)) throw new Stop(`object ${hex} does not hash to its name`);
		return obj;
	}

	async close(): Promise<void> {
		const packs = this.#packs === undefined ? [] : await this.#packs.catch(() => []);
		await Promise.allSettled(packs.flatMap((p) => [p.idx.close(), ...(p.opened === undefined ? [] : [p.opened.close()])]));
	}

	/** A folder of the object store, checked once per call. */
	#dir(path: string): Promise<boolean> {
		let known = this.#dirs.get(path);
		if (known === undefined) this.#dirs.set(path, (known = safeDir(path)));
		return known;
	}

	#packList(): Promise<Pack[]> {
		this.#packs ??= (async () => {
			const packDir = join(this.commonDir, "objects", "pack");
			if (!(await this.#dir(join(this.commonDir, "objects"))) || !(await this.#dir(packDir))) return [];
			const names: string[] = [];
			for await (const e of await opendir(packDir)) {
				if (/^pack-[0-9a-f]{40,64}\.idx$/.test(e.name)) names.push(e.name);
				if (names.length > this.budget.bounds.maxPacks) throw new Stop(`more than ${this.budget.bounds.maxPacks} packs`);
			}
			const packs: Pack[] = [];
			try {
				for (const name of names.sort()) {
					const p = await Pack.open(join(packDir, name), join(packDir, `${name.slice(0, -4)}.pack`), this.#hashLen, this.budget);
					if (p !== undefined) packs.push(p);
				}
			} catch (e) {
				await Promise.allSettled(packs.map((p) => p.idx.close()));
				throw e;
			}
			return packs;
		})();
		return this.#packs;
	}

	/** The object at `offset` of a pack, its delta chain resolved (`chain` holds the offsets on the way: a cycle stops). */
	async #packed(pack: Pack, offset: number, depth: number, chain: Set<number>): Promise<GitObject> {
		const key = `${pack.packPath}#${offset}`;
		const cached = this.#bases.get(key);
		if (cached !== undefined) return cached;
		if (chain.has(offset) || depth > this.budget.bounds.maxDeltaDepth)
			throw new Stop(`a delta chain deeper than ${this.budget.bounds.maxDeltaDepth} or a cycle`);
		chain.add(offset);
		await this.budget.tick();
		const file = await pack.file();
		const end = file.size - this.#hashLen;
		if (offset < 12 || offset >= end) throw new Stop(`${file.path}: an object offset past its end`);
		const head = await file.read(offset, Math.min(32 + this.#hashLen, end - offset));
		let p = 0;
		let c = head[p++] as number;
		const kind = (c >> 4) & 7;
		let size = c & 15;
		for (let shift = 4; c & 0x80; shift += 7) {
			c = head[p++] ?? 0;
			if (shift > 49) throw new Stop(`${file.path}: corrupt object header`);
			size += (c & 0x7f) * 2 ** shift;
		}
		const max = this.budget.bounds.maxObjectBytes;
		if (size > max) throw new Stop(`an object of ${size} bytes in a pack`);
		let base: GitObject | undefined;
		if (kind === OFS_DELTA) {
			c = head[p++] ?? 0;
			let back = c & 0x7f;
			for (let bytes = 1; c & 0x80; bytes++) {
				c = head[p++] ?? 0;
				back = (back + 1) * 128 + (c & 0x7f);
				if (bytes > 7) throw new Stop(`${file.path}: corrupt delta offset`);
			}
			if (back <= 0 || back > offset) throw new Stop(`${file.path}: a delta base outside the pack`);
			base = await this.#packed(pack, offset - back, depth + 1, chain);
		} else if (kind === REF_DELTA) {
			const baseId = head.subarray(p, p + this.#hashLen);
			if (baseId.length !== this.#hashLen) throw new Stop(`${file.path}: truncated delta base id`);
			p += this.#hashLen;
			const local = await pack.find(baseId);
			base = local !== undefined ? await this.#packed(pack, local, depth + 1, chain) : await this.read(baseId.toString("hex"), depth + 1);
			if (base === undefined) throw new Stop(`a delta base ${baseId.toString("hex")} that is not here`);
		} else if (TYPES[kind] === undefined) throw new Stop(`${file.path}: object type ${kind}`);
		const start = offset + p;
		// git's zlib never writes more than size + size/8 + a few bytes; anything longer gets one wider read.
		let data: Buffer | undefined;
		for (const window of [size + (size >> 3) + 64, 2 * max + 1024]) {
			const input = await file.read(start, Math.min(window, end - start));
			try {
				data = await unzip(input, size, size);
				break;
			} catch (e) {
				if (!(e instanceof Stop && /Z_BUF_ERROR/.test(e.message)) || input.length === end - start) throw e;
			}
		}
		if (data === undefined) throw new Stop(`${file.path}: a truncated object`);
		const obj: GitObject = base === undefined ? { type: TYPES[kind] as ObjectType, data } : { type: base.type, data: applyDelta(base.data, data, max) };
		if (this.#baseBytes + obj.data.length > BASE_CACHE) {
			this.#bases.clear();
			this.#baseBytes = 0;
		}
		this.#bases.set(key, obj);
		this.#baseBytes += obj.data.length;
		return obj;
	}

	/** A loose object `objects/xx/yyyy…`: one zlib stream of "type size\0" and the content. */
	async #readLoose(hex: string): Promise<GitObject | undefined> {
		const dir = join(this.commonDir, "objects", hex.slice(0, 2));
		if (!(await this.#dir(join(this.commonDir, "objects"))) || !(await this.#dir(dir))) return undefined;
		const file = await BlockFile.open(join(dir, hex.slice(2)), this.budget, 2 ** 30);
		if (file === undefined) return undefined;
		const max = this.budget.bounds.maxObjectBytes;
		let raw: Buffer;
		try {
			if (file.size > 2 * max + 1024) throw new Stop(`${file.path}: a loose object of ${file.size} bytes`);
			raw = await unzip(await file.read(0, file.size), max + 32);
		} finally {
			await file.close();
		}
		const nul = raw.indexOf(0);
		const m = /^(commit|tree|blob|tag) (0|[1-9][0-9]{0,9})$/.exec(raw.toString("latin1", 0, Math.max(nul, 0)));
		if (nul < 0 || m === null || Number(m[2]) !== raw.length - nul - 1) throw new Stop(`${file.path}: corrupt loose object header`);
		return { type: m[1] as ObjectType, data: raw.subarray(nul + 1) };
	}
}
