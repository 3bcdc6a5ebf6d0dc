/**
 * The multi-owner commit point: `<agentDir>/state-flow/journal/<id>.json` holds every
 * owner's record of one transition and is made durable (temp + fsync + rename + folder
 * fsync) before any owner changes. Pending journals are listed through a cache validated
 * by one `stat` of the folder, so the common "nothing pending" check is nearly free.
 */
import { readdirSync, statSync } from "node:fs";
import type { Stats } from "node:fs";
import { dirname, join } from "node:path";
import { fault } from "../fault.js";
import { journalText, parseJournal } from "../format.js";
import type { Journal } from "../format.js";
import { atomicWrite, checkContained, ensureDirIn, ioFail, isRealDir, readRegular, realOrSelf, removeFile } from "../fs-util.js";

const SUFFIX = ".json";
/**
 * Racy-git rule: folder timestamps can be coarse (a kernel tick, or a second on some file
 * systems), so a listing taken this soon after the folder's last change may have missed a
 * second change in the same tick; it is trusted only once the folder was older than this.
 */
const RACY_MS = 100;

export class JournalDir {
	/** The folder's identity and change time when `byName` was listed (undefined: not listed). */
	private stamp: { ino: number; mtimeMs: number; size: number } | undefined;
	/** When the cached listing was read (ms since the epoch). */
	private listedAt = 0;
	private byName = new Map<string, Journal>();

	/** `dir` is `<agentDir>/state-flow/journal`: it must lie inside the agent directory. */
	constructor(readonly dir: string) {}

	/** The folder must lead inside the agent directory and be a folder (checked whenever it is listed). */
	private checkDir(): void {
		checkContained(this.dir, realOrSelf(dirname(dirname(this.dir))), "The journal folder");
		const st = statSync(this.dir, { throwIfNoEntry: false });
		if (st !== undefined && !st.isDirectory()) isRealDir(this.dir);
	}

	/** Path of a transition's journal file. */
	pathOf(id: string): string {
		return join(this.dir, `${id}${SUFFIX}`);
	}

	/** Make the journal durable: after this returns, the transition is committed. */
	write(journal: Journal): void {
		ensureDirIn(this.dir, realOrSelf(dirname(dirname(this.dir))), "The journal folder");
		atomicWrite(this.pathOf(journal.id), journalText(journal), { midFault: "mid-journal" });
		fault("after-journal");
	}

	/** Remove a fully applied journal. A lost unlink only means an idempotent roll-forward later. */
	remove(id: string): void {
		this.checkDir();
		removeFile(this.pathOf(id));
		this.byName.delete(`${id}${SUFFIX}`);
	}

	/** Every journal present now (temp files of unfinished writes are not journals). */
	pending(): Journal[] {
		let st: Stats | undefined;
		try {
			st = statSync(this.dir, { throwIfNoEntry: false });
		} catch (e) {
			ioFail(this.dir, "read", e);
		}
		if (st === undefined) {
			this.stamp = undefined;
			this.byName.clear();
			return [];
		}
		const was = this.stamp;
		if (was !== undefined && was.ino === st.ino && was.mtimeMs === st.mtimeMs && was.size === st.size && this.listedAt - st.mtimeMs > RACY_MS) {
			return this.byName.size === 0 ? [] : [...this.byName.values()];
		}
		this.checkDir();
		const listedAt = Date.now();
		let names: string[];
		try {
			names = readdirSync(this.dir).filter((n) => n.endsWith(SUFFIX));
		} catch (e) {
			ioFail(this.dir, "list", e);
		}
		const next = new Map<string, Journal>();
		for (const name of names) {
			const known = this.byName.get(name);
			if (known) {
				next.set(name, known);
				continue;
			}
			const path = join(this.dir, name);
			const bytes = readRegular(path);
			if (bytes === undefined) continue; // removed by its writer meanwhile
			next.set(name, parseJournal(bytes.toString("utf8"), path));
		}
		this.byName = next;
		this.stamp = { ino: st.ino, mtimeMs: st.mtimeMs, size: st.size };
		this.listedAt = listedAt;
		return [...next.values()];
	}
}
