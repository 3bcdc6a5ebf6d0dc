/**
 * A real pi `Theme` for rendering tests (every colour mapped to a distinct 256-colour code, so
 * colour use is checkable) and helpers that draw a pi-tui component to plain lines.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Theme, type ThemeColor } from "@mariozechner/pi-coding-agent";
import { type Component, visibleWidth } from "@mariozechner/pi-tui";

const piDist = dirname(fileURLToPath(import.meta.resolve("@mariozechner/pi-coding-agent")));
const dark = JSON.parse(readFileSync(join(piDist, "modes/interactive/theme/dark.json"), "utf8")) as {
	colors: Record<string, unknown>;
};
const fgKeys = Object.keys(dark.colors).filter((k) => !/Bg$/.test(k));
const bgKeys = ["selectedBg", "userMessageBg", "customMessageBg", "toolPendingBg", "toolSuccessBg", "toolErrorBg"];
export const fg = Object.fromEntries(fgKeys.map((k, i) => [k, 16 + i])) as Record<ThemeColor, number>;
export const theme = new Theme(fg, Object.fromEntries(bgKeys.map((k, i) => [k, 100 + i])) as never, "256color");
export const code = (c: ThemeColor) => `\x1b[38;5;${fg[c]}m`;

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what we strip
export const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
export const draw = (c: Component, width = 200) => c.render(width).map((l) => plain(l).trimEnd());
export const raw = (c: Component, width = 200) => c.render(width).join("\n");

/** The widest rendered line, in terminal columns. */
export const widest = (c: Component, width: number) => Math.max(0, ...c.render(width).map((l) => visibleWidth(l)));
