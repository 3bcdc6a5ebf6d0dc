/**
 * Watching the file stores' folders, so a commit another process makes is noticed as it lands
 * rather than at State Flow's next event. A burst of file events becomes one call of `changed`.
 * Only real folders are watched (never through a link); a folder that is missing, replaced or
 * cannot be watched is simply looked at again at the next `follow`. The watches never keep the
 * process alive.
 */
import { type FSWatcher, watch } from "node:fs";
import { lstatOrUndefined } from "../../storage/fs-util.js";

export class FolderWatch {
	readonly #watchers = new Map<string, { watcher: FSWatcher; ino: number }>();
	#scheduled = false;

	constructor(private readonly changed: () => void) {}

	/** Watch exactly `folders` from now on: new ones are added, others closed, a replaced folder watched afresh. */
	follow(folders: readonly string[]): void {
		for (const [dir, w] of this.#watchers) {
			const st = lstatOrUndefined(dir);
			if (!folders.includes(dir) || !st?.isDirectory() || st.ino !== w.ino) this.#stop(dir);
		}
		for (const dir of folders) {
			const st = lstatOrUndefined(dir);
			if (this.#watchers.has(dir) || !st?.isDirectory()) continue;
			try {
				const watcher = watch(dir, { persistent: false }, () => this.#schedule());
				watcher.on("error", () => this.#stop(dir));
				this.#watchers.set(dir, { watcher, ino: st.ino });
			} catch {
				// Removed meanwhile, or no watches left on this system: the next event looks as before.
			}
		}
	}

	close(): void {
		for (const dir of [...this.#watchers.keys()]) this.#stop(dir);
	}

	#stop(dir: string): void {
		this.#watchers.get(dir)?.watcher.close();
		this.#watchers.delete(dir);
	}

	#schedule(): void {
		if (this.#scheduled) return;
		this.#scheduled = true;
		setImmediate(() => {
			this.#scheduled = false;
			this.changed();
		});
	}
}
