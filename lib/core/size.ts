/**
 * Sizes as State Flow counts and shows them, in one place: UTF-8 bytes of text (what a provider
 * bills and a terminal or database receives) and a byte count in words. The head, the browser,
 * the CLI and the roots' bounds all count with these. Pure: long strings are counted by the
 * runtime's native UTF-8 counter (deterministic, no allocation, ten times the loop's speed),
 * short ones by the loop, which is as fast there.
 */

/** From this length on, the runtime's native counter is used. */
const NATIVE_FROM = 256;

/** UTF-8 length of a string without allocating (a lone surrogate counts 3, as its replacement character is encoded). */
export function utf8Bytes(s: string): number {
	if (s.length >= NATIVE_FROM && typeof Buffer !== "undefined") return Buffer.byteLength(s, "utf8");
	let n = 0;
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		if (c < 0x80) n += 1;
		else if (c < 0x800) n += 2;
		else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
			const d = s.charCodeAt(i + 1);
			if (d >= 0xdc00 && d <= 0xdfff) {
				n += 4;
				i++;
			} else n += 3;
		} else n += 3;
	}
	return n;
}

/** UTF-8 bytes of a value's compact JSON text (0 for what JSON cannot spell). */
export function jsonTextBytes(v: unknown): number {
	return utf8Bytes(JSON.stringify(v) ?? "");
}

/** Human byte size, for the model and the user alike: `812 B`, `1.2 KB`, `3.4 MB`. */
export function formatSize(bytes: number): string {
	return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
