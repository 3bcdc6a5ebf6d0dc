/**
 * Whether one commit is an ancestor of another, answered from git's object files alone (the
 * object store, `git-objects.ts`), never by running git: a repository's config cannot make
 * this run anything. `undefined` means "cannot say within the bounds": an object missing (a
 * shallow or partial clone, alternates, which are never followed), a file that is a link, a
 * FIFO or another user's, corrupt data, or a bound reached. It never throws.
 *
 * The walk goes down from the descendant and prunes what cannot lead to the ancestor: with a
 * commit-graph file (exact, by topological level: an ancestor has a lower level) and otherwise
 * by committer date, as `git name-rev` does: a commit dated more than a day (the slack for
 * clock skew) before the ancestor is not explored. Grafts and replace refs are not honoured:
 * the answer is about the commits as written.
 */
import { join } from "node:path";
import { BlockFile, type Bounds, Budget, DEFAULT_BOUNDS, Stop, safeDir } from "./git-object-files.js";
import { ObjectStore } from "./git-objects.js";

export interface AncestryOptions extends Partial<Bounds> {
	/** Clock skew tolerated when pruning by committer date, in seconds (git's name-rev: one day). */
	slackSeconds?: number;
	/** Read `objects/info/commit-graph` when it is there and valid (default true). */
	commitGraph?: boolean;
	/** Told why, when the answer is undefined. */
	why?: (reason: string) => void;
	/** Filled with what the call spent (commits read, bytes read from files). */
	spent?: { commits: number; bytes: number };
}

const ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const DAY = 86_400;
/** Commits of one generation read at once. */
const PARALLEL = 8;

/** A commit as the walk sees it; `pos` is its row in the commit-graph when it has one. */
interface Node {
	parents: Ref[];
	/** Committer date (seconds); +Infinity when unreadable, so it is never pruned by date. */
	date: number;
	/** Topological level from the commit-graph (1 for a root); undefined outside it or when not computed. */
	level: number | undefined;
	inGraph: boolean;
}
interface Ref {
	hex: string;
	pos?: number;
}

/** Parents and committer date from a commit's header (gitformat-commit: tree, parents, then the rest). */
export function parseCommit(data: Buffer, hexLen: number): Node {
	const end = data.indexOf("\n\n");
	const head = data.toString("latin1", 0, end < 0 ? data.length : end).split("\n");
	if (!new RegExp(`^tree [0-9a-f]{${hexLen}}$`).test(head[0] ?? "")) throw new Stop("a commit without its tree line");
	const parent = new RegExp(`^parent ([0-9a-f]{${hexLen}})$`);
	const parents: Ref[] = [];
	let date = Number.POSITIVE_INFINITY;
	for (let i = 1; i < head.length; i++) {
		const line = head[i] as string;
		const m = parent.exec(line);
		if (m !== null && i === parents.length + 1) parents.push({ hex: m[1] as string });
		else if (line.startsWith("committer ")) {
			const d = /> (-?[0-9]{1,15}) [-+][0-9]{4}$/.exec(line);
			if (d !== null) date = Number(d[1]);
		}
	}
	return { parents, date, level: undefined, inGraph: false };
}

const GRAPH_NONE = 0x70000000;

/** The commit-graph file (gitformat-commit-graph): sorted ids, then per commit its parents' rows, level and date. */
class CommitGraph {
	private constructor(
		readonly file: BlockFile,
		readonly n: number,
		readonly hashLen: number,
		readonly fanout: Uint32Array,
		readonly oidl: number,
		readonly cdat: number,
		readonly edge: { at: number; count: number } | undefined,
	) {}

	/** The graph when it is there, a single file (no chain) of this hash and consistent in its sizes; else undefined. */
	static async open(path: string, hashLen: number, budget: Budget): Promise<CommitGraph | undefined> {
		const file = await BlockFile.open(path, budget);
		if (file === undefined) return undefined;
		try {
			const head = await file.read(0, 8);
			const chunks = head[6] as number;
			if (head.toString("latin1", 0, 4) !== "CGPH" || head[4] !== 1 || head[5] !== (hashLen === 20 ? 1 : 2) || head[7] !== 0) {
				throw new Stop(`${path}: not a single commit-graph of this hash`);
			}
			const table = await file.read(8, (chunks + 1) * 12);
			const at = new Map<string, { start: number; size: number }>();
			for (let i = 0; i < chunks; i++) {
				const start = Number(table.readBigUInt64BE(i * 12 + 4));
				const next = Number(table.readBigUInt64BE(i * 12 + 16));
				if (start < 8 + table.length || next < start || next > file.size - hashLen) throw new Stop(`${path}: a chunk out of the file`);
				at.set(table.toString("latin1", i * 12, i * 12 + 4), { start, size: next - start });
			}
			const oidf = at.get("OIDF");
			const oidl = at.get("OIDL");
			const cdat = at.get("CDAT");
			const edge = at.get("EDGE");
			if (oidf === undefined || oidl === undefined || cdat === undefined || oidf.size !== 1024) throw new Stop(`${path}: a chunk is missing`);
			const raw = await file.read(oidf.start, 1024);
			const fanout = new Uint32Array(256);
			for (let i = 0; i < 256; i++) fanout[i] = raw.readUInt32BE(i * 4);
			const n = fanout[255] as number;
			if (oidl.size !== n * hashLen || cdat.size !== n * (hashLen + 16) || (edge !== undefined && edge.size % 4 !== 0)) {
				throw new Stop(`${path}: chunk sizes disagree with ${n} commits`);
			}
			return new CommitGraph(file, n, hashLen, fanout, oidl.start, cdat.start, edge && { at: edge.start, count: edge.size / 4 });
		} catch (e) {
			await file.close();
			if (e instanceof Stop) return undefined; // An accelerator that does not hold is not used: the objects still answer.
			throw e;
		}
	}

	/** The row of `hex`, or undefined when the graph does not hold it. */
	async find(hex: string): Promise<number | undefined> {
		const id = Buffer.from(hex, "hex");
		const first = id[0] as number;
		let lo = first === 0 ? 0 : (this.fanout[first - 1] as number);
		let hi = Math.min(this.fanout[first] as number, this.n);
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			const at = this.oidl + mid * this.hashLen;
			const cmp = (this.file.peek(at, this.hashLen) ?? (await this.file.read(at, this.hashLen))).compare(id);
			if (cmp === 0) return mid;
			if (cmp < 0) lo = mid + 1;
			else hi = mid;
		}
		return undefined;
	}

	/** The commit at `pos`: its parents (rows, with their ids), level and date. */
	async node(pos: number): Promise<Node> {
		const row = await this.file.read(this.cdat + pos * (this.hashLen + 16), this.hashLen + 16);
		const p1 = row.readUInt32BE(this.hashLen);
		const p2 = row.readUInt32BE(this.hashLen + 4);
		const word = row.readUInt32BE(this.hashLen + 8);
		const rows: number[] = [];
		if (p1 !== GRAPH_NONE) rows.push(p1);
		if (p2 !== GRAPH_NONE && (p2 & 0x80000000) === 0) rows.push(p2);
		else if (p2 !== GRAPH_NONE) {
			// An octopus: the rest of the parents are listed in EDGE from this index; the last has the high bit.
			for (let i = p2 & 0x7fffffff; ; i++) {
				if (this.edge === undefined || i >= this.edge.count) throw new Stop("a commit-graph edge out of its chunk");
				const e = (await this.file.read(this.edge.at + i * 4, 4)).readUInt32BE(0);
				rows.push(e & 0x7fffffff);
				if (e & 0x80000000) break;
			}
		}
		const parents: Ref[] = [];
		for (const r of rows) {
			if (r >= this.n) throw new Stop("a commit-graph parent out of the graph");
			parents.push({ hex: (await this.file.read(this.oidl + r * this.hashLen, this.hashLen)).toString("hex"), pos: r });
		}
		// 0 is "not computed"; the largest value is a cap, not a level.
		const level = word >>> 2;
		const date = (word & 3) * 2 ** 32 + row.readUInt32BE(this.hashLen + 12);
		return { parents, date, level: level === 0 || level >= 0x3fffffff ? undefined : level, inGraph: true };
	}
}

/**
 * Whether `ancestor` is `descendant` or one of its ancestors (as `git merge-base
 * --is-ancestor`), from the object files of the git dir `commonDir`; undefined when that cannot
 * be said within the bounds. Never throws, never runs git, never reads outside `commonDir`.
 */
export async function isAncestor(commonDir: string, ancestor: string, descendant: string, opts: AncestryOptions = {}): Promise<boolean | undefined> {
	const say = (reason: string): undefined => {
		try {
			opts.why?.(reason);
		} catch {}
		return undefined;
	};
	if (!ID.test(ancestor) || !ID.test(descendant) || ancestor.length !== descendant.length) return say("not two commit ids of one hash");
	const bounds: Bounds = { ...DEFAULT_BOUNDS };
	for (const k of Object.keys(DEFAULT_BOUNDS) as (keyof Bounds)[]) {
		const v = opts[k];
		if (v !== undefined) {
			if (typeof v !== "number" || !(v >= 0)) return say(`bound ${k} is not a number`);
			bounds[k] = v;
		}
	}
	const slack = opts.slackSeconds ?? DAY;
	if (!(slack >= 0)) return say("slackSeconds is not a number of seconds");
	const budget = new Budget(bounds);
	const hexLen = ancestor.length as 40 | 64;
	const store = new ObjectStore(commonDir, hexLen, budget);
	let graph: CommitGraph | undefined;
	try {
		const info = join(commonDir, "objects", "info");
		// The folders on the way are checked as the object store checks its own (a link to elsewhere is refused).
		if (opts.commitGraph !== false && (await safeDir(join(commonDir, "objects"))) && (await safeDir(info))) {
			graph = await CommitGraph.open(join(info, "commit-graph"), hexLen / 2, budget);
		}
		const node = async (ref: Ref): Promise<Node | undefined> => {
			budget.commit();
			await budget.tick();
			const pos = ref.pos ?? (graph === undefined ? undefined : await graph.find(ref.hex));
			if (graph !== undefined && pos !== undefined) return graph.node(pos);
			const obj = await store.read(ref.hex);
			if (obj === undefined) return undefined;
			if (obj.type !== "commit") throw new Stop(`${ref.hex} is a ${obj.type}, not a commit`);
			return parseCommit(obj.data, hexLen);
		};
		const target = await node({ hex: ancestor });
		const start = await node({ hex: descendant });
		if (target === undefined || start === undefined) return say("a commit asked about is not in this git dir");
		if (ancestor === descendant) return true;
		// An ancestor without a readable date prunes nothing by date.
		const cutoff = Number.isFinite(target.date) ? target.date - slack : Number.NEGATIVE_INFINITY;
		// Pruned commits cannot lead to the ancestor. A graph is closed under parents, so a commit
		// in it never leads to one outside it; inside, levels decrease along every parent.
		const pruned = (n: Node): boolean => {
			if (n.inGraph && !target.inGraph) return true;
			if (n.level !== undefined && target.level !== undefined) return n.level <= target.level;
			return n.date < cutoff;
		};
		let lost: string | undefined;
		const seen = new Set<string>([descendant]);
		// Breadth first, one generation at a time; a generation's commits are read a few at once
		// (reads wait on the disk, not on the CPU).
		for (let queue: Node[] = [start]; queue.length > 0; ) {
			const refs: Ref[] = [];
			for (const n of queue) {
				for (const p of n.parents) {
					if (p.hex === ancestor) return true;
					if (!seen.has(p.hex)) refs.push(p);
					seen.add(p.hex);
				}
			}
			queue = [];
			for (let i = 0; i < refs.length; i += PARALLEL) {
				const batch = refs.slice(i, i + PARALLEL);
				const read = await Promise.allSettled(batch.map(node));
				for (const [j, r] of read.entries()) {
					if (r.status === "rejected") throw r.reason;
					if (r.value === undefined) lost ??= batch[j]?.hex;
					else if (!pruned(r.value)) queue.push(r.value);
				}
			}
		}
		// A parent that is not here (a shallow or partial clone, an alternate) may lead to it.
		return lost === undefined ? false : say(`commit ${lost} is not in this git dir`);
	} catch (e) {
		return say(e instanceof Stop ? e.message : `unreadable: ${(e as { code?: unknown } | null)?.code ?? String(e)}`);
	} finally {
		try {
			if (opts.spent !== undefined) Object.assign(opts.spent, { commits: budget.commits, bytes: budget.bytes });
		} catch {}
		await Promise.allSettled([store.close(), graph?.file.close()]);
	}
}
