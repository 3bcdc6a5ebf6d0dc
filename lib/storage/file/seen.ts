/**
 * What this machine last made durable in each file store: the seq a writer here last
 * appended and that transition's id, one small file per store folder in
 * `<agentDir>/state-flow/seen/`. A store that comes back shorter, or with another
 * transition at that seq, lost acknowledged work — a log cut exactly at a record boundary,
 * or a folder replaced by an older copy — which no checksum can show and a process that
 * never read the lost records could not know (docs/security.md, "What this machine has
 * committed"). A mark is written after the log's own fsync and without one of its own: after a
 * power cut it may lag the log, never lead it. Marks are a safety net: one that cannot be
 * read or written is left out, never an error of the commit or read that asked.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, existsSync, fstatSync, ftruncateSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { isPlainObject } from "../../core/json.js";
import { ensureDirIn, lstatOrUndefined, openFile, readRegular, removeFile } from "../fs-util.js";

/** The last transition a writer on this machine made durable in a store (`id` absent: none retained, e.g. an accepted empty store). */
export interface SeenMark {
	seq: number;
	id?: string;
}

/** The marks of an agent directory's stores (`StorePaths`; the file adapter names only what it uses, so it never depends on the project rule). */
export function seenMarksOf(paths: { seenDir: string; base: string }): SeenMarks {
	return new SeenMarks(paths.seenDir, paths.base);
}

/** Marks are written in blocks of this many bytes, so a growing seq rarely needs a truncate. */
const BLOCK = 128;

export class SeenMarks {
	private readonly open = new Map<string, { fd: number; length: number }>();

	/** `dir` is `<agentDir>/state-flow/seen`; `base` the real `<agentDir>/state-flow` it must stay inside. */
	constructor(
		readonly dir: string,
		private readonly base: string,
	) {}

	/** The mark file of a store folder (named by a hash: any path, no name to escape). */
	fileOf(root: string): string {
		return join(this.dir, `${createHash("sha256").update(root).digest("hex").slice(0, 32)}.json`);
	}

	/** This machine's mark for `root`; undefined when there is none or it cannot be read (never a link, never followed). */
	read(root: string): SeenMark | undefined {
		let value: unknown;
		try {
			// The marks folder itself must be a real folder: a link there is never read through.
			if (!lstatOrUndefined(this.dir)?.isDirectory()) return undefined;
			const bytes = readRegular(this.fileOf(root));
			if (bytes === undefined) return undefined;
			value = JSON.parse(bytes.toString("utf8"));
		} catch {
			return undefined;
		}
		// A mark of another folder (a hash collision, a copied file) or of an unknown shape says nothing.
		if (!isPlainObject(value) || value.root !== root || !Number.isSafeInteger(value.seq) || (value.seq as number) < 1) return undefined;
		return typeof value.id === "string" ? { seq: value.seq as number, id: value.id } : { seq: value.seq as number };
	}

	/** Record `mark` for `root` (after the log's fsync, under the store's lock); false when it could not be written. */
	write(root: string, mark: SeenMark): boolean {
		const text = JSON.stringify({ root, ...mark });
		const length = Math.ceil((text.length + 1) / BLOCK) * BLOCK;
		const bytes = Buffer.from(`${text.padEnd(length - 1, " ")}\n`);
		try {
			let file = this.open.get(root);
			// Removed meanwhile (a new history began, or `doctor --accept-store`): write a new file, not the removed one.
			if (file !== undefined && fstatSync(file.fd).nlink === 0) {
				this.close(root);
				file = undefined;
			}
			if (file === undefined) {
				// Marks belong to an agent directory: without one (a bare test or CLI folder) there is nowhere to keep them.
				if (!existsSync(dirname(this.base))) return false;
				ensureDirIn(this.dir, this.base, "State Flow's folder of seen marks");
				const fd = openFile(this.fileOf(root), constants.O_WRONLY | constants.O_CREAT) as number;
				file = { fd, length: Number.POSITIVE_INFINITY };
				this.open.set(root, file);
			}
			writeSync(file.fd, bytes, 0, bytes.length, 0);
			if (bytes.length < file.length) ftruncateSync(file.fd, bytes.length);
			file.length = bytes.length;
			return true;
		} catch {
			this.close(root);
			return false;
		}
	}

	/** Forget the mark of `root` (a new history starts, or `state-flow doctor --accept-store`); false when it could not be removed. */
	clear(root: string): boolean {
		this.close(root);
		try {
			// Nothing is removed through a link in place of the marks folder.
			if (!lstatOrUndefined(this.dir)?.isDirectory()) return !lstatOrUndefined(this.dir);
			removeFile(this.fileOf(root));
			return true;
		} catch {
			return false;
		}
	}

	/** Close the mark file of `root` (the store dropped its handles). */
	close(root: string): void {
		const file = this.open.get(root);
		if (file === undefined) return;
		this.open.delete(root);
		try {
			closeSync(file.fd);
		} catch {
			// Already closed.
		}
	}
}
