/**
 * A real terminal for end-to-end tests: one tmux server on a private socket, one pane running
 * a command. Tests type into the pane and poll what it shows until the expected text appears
 * or a bounded deadline passes (then the error carries the screen). `kill` ends only this
 * socket's server, i.e. only what the test started.
 */
import { execFileSync } from "node:child_process";

export interface PaneOptions {
	cols: number;
	rows: number;
	cwd: string;
	env: Record<string, string>;
}

const POLL_MS = 100;
const EXIT = "the program to exit";

export class Pane {
	readonly socket = `state-flow-e2e-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
	constructor(private readonly opts: PaneOptions) {}

	#tmux(...args: string[]): string {
		return execFileSync("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
	}

	#shell(argv: string[]): string {
		const env = Object.entries(this.opts.env).map(([k, v]) => `${k}=${quote(v)}`);
		return `cd ${quote(this.opts.cwd)} && exec env ${env.join(" ")} ${argv.map(quote).join(" ")}`;
	}

	/** Start the pane with a command; the pane stays (dead) after the command exits. */
	start(argv: string[]): void {
		try {
			execFileSync("tmux", ["-V"], { stdio: "ignore" });
		} catch {
			throw new Error("terminal: tmux is not installed; install it (Debian: apt-get install tmux; .ci/run does this).");
		}
		this.#tmux("new-session", "-d", "-s", "e2e", "-x", String(this.opts.cols), "-y", String(this.opts.rows), this.#shell(argv));
		this.#tmux("set-option", "-t", "e2e", "remain-on-exit", "on");
		this.#tmux("set-option", "-t", "e2e", "history-limit", "5000");
		this.#tmux("set-option", "-s", "extended-keys", "on");
	}

	/** Run another command in the same pane (after the previous one exited). */
	respawn(argv: string[]): void {
		this.#tmux("clear-history", "-t", "e2e");
		this.#tmux("respawn-pane", "-k", "-t", "e2e", this.#shell(argv));
	}

	/** Type literal text (no Enter). */
	type(text: string): void {
		this.#tmux("send-keys", "-t", "e2e", "-l", text);
	}

	/** Press keys by tmux name: `Enter`, `Escape`, `Tab`, `Down`, `C-c`. */
	press(...keys: string[]): void {
		for (const k of keys) this.#tmux("send-keys", "-t", "e2e", k);
	}

	/** What the screen shows now (`history`: with scrollback). */
	screen(history = false): string {
		return this.#tmux("capture-pane", "-p", "-J", "-t", "e2e", ...(history ? ["-S", "-5000"] : []));
	}

	/** Resize the terminal (the program sees SIGWINCH and draws again at the new size). */
	resize(cols: number, rows: number): void {
		this.#tmux("resize-window", "-t", "e2e", "-x", String(cols), "-y", String(rows));
	}

	dead(): boolean {
		return this.#tmux("display-message", "-p", "-t", "e2e", "#{pane_dead}").trim() === "1";
	}

	/** Poll until `test(screen)` holds; throws with the screen when the deadline passes. */
	async waitFor(what: string, test: (screen: string) => boolean, { timeoutMs = 20_000, history = false } = {}): Promise<string> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const s = this.screen(history);
			if (test(s)) return s;
			if (what !== EXIT && this.dead()) throw new Error(`terminal: the program exited while waiting for ${what}. Screen:\n${this.screen(true)}`);
			if (Date.now() > deadline) throw new Error(`terminal: timed out after ${timeoutMs} ms waiting for ${what}. Screen:\n${s}`);
			await new Promise((r) => setTimeout(r, POLL_MS));
		}
	}

	/** Poll until the text (or pattern) is on the screen. */
	async waitForText(pattern: string | RegExp, options: { timeoutMs?: number; history?: boolean } = {}): Promise<string> {
		const test = typeof pattern === "string" ? (s: string) => s.includes(pattern) : (s: string) => pattern.test(s);
		return this.waitFor(String(pattern), test, options);
	}

	async waitForExit(timeoutMs = 20_000): Promise<void> {
		await this.waitFor(EXIT, () => this.dead(), { timeoutMs });
	}

	/** The text in pi's editor: the lines between the last two full-width rules. */
	editor(): string {
		const lines = this.screen().split("\n");
		const rules = lines.flatMap((l, i) => (/^─{20,}\s*$/.test(l) ? [i] : []));
		if (rules.length < 2) return "";
		return lines
			.slice((rules.at(-2) as number) + 1, rules.at(-1))
			.join("\n")
			.trim();
	}

	/**
	 * Type a line into pi's editor and submit it. When an autocomplete list is open, the first
	 * Enter accepts the highlighted completion (as it does for a person) and a second submits.
	 */
	async submit(text: string, timeoutMs: number): Promise<void> {
		this.type(text);
		await this.waitFor(`the editor to show ${JSON.stringify(text)}`, () => this.editor().includes(text), { timeoutMs });
		for (let attempt = 0; attempt < 3; attempt++) {
			this.press("Enter");
			try {
				await this.waitFor("the editor to take the line", () => !this.editor().includes(text), { timeoutMs: attempt < 2 ? 1500 : timeoutMs });
				return;
			} catch (e) {
				if (attempt === 2) throw e;
			}
		}
	}

	kill(): void {
		try {
			this.#tmux("kill-server");
		} catch {
			// Already gone.
		}
	}
}

function quote(s: string): string {
	return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
