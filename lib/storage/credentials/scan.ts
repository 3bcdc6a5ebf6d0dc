/**
 * One pass over a text that tells which credential patterns can match in it (issue 33). The
 * check runs in every commit, and most text holds no credential: running each of some forty
 * patterns over it would cost a scan each — more than the rest of a small patch's check. Each
 * pattern names hints, literal text every match of it holds; this pass finds, for all patterns
 * at once, which hints the text holds (by its ASCII character pairs, through typed tables). A
 * pattern (or a rule of secretlint's preset, `patterns.ts`) whose hints are absent cannot match
 * and is not run. Pure.
 */

/** Patterns that run when the text holds one of `hints` (ASCII; `caseless`: in any case). */
export interface HintGroup {
	hints: readonly string[];
	caseless?: boolean;
}

interface Hint {
	group: number;
	code: number[];
	caseless: boolean;
}

export class HintScanner {
	/** Every hint, and the group it opens. */
	private readonly hints: Hint[] = [];
	/** Hints by their first two characters: `list[start[p]..start[p+1])`, `p` = first << 7 | second. */
	private readonly start = new Uint16Array(128 * 128 + 1);
	private readonly list: Uint16Array;
	/** One-character hints: group + 1 by character, 0 for none. */
	private readonly single = new Uint16Array(128);

	constructor(private readonly groups: readonly HintGroup[]) {
		const byPair: number[][] = Array.from({ length: 128 * 128 }, () => []);
		groups.forEach((g, group) => {
			for (const hint of g.hints) {
				const text = g.caseless === true ? hint.toLowerCase() : hint;
				if (text.length === 1) {
					for (const c of g.caseless === true ? [text, text.toUpperCase()] : [text]) {
						// One slot per character: a second group would silently take the first one's.
						const taken = this.single[c.charCodeAt(0)] as number;
						if (taken !== 0 && taken !== group + 1) throw new Error(`two groups have the one-character hint ${c}`);
						this.single[c.charCodeAt(0)] = group + 1;
					}
					continue;
				}
				const index = this.hints.push({ group, code: [...text].map((c) => c.charCodeAt(0)), caseless: g.caseless === true }) - 1;
				const pairs = new Set<number>();
				for (const a of g.caseless === true ? [text[0] as string, (text[0] as string).toUpperCase()] : [text[0] as string])
					for (const b of g.caseless === true ? [text[1] as string, (text[1] as string).toUpperCase()] : [text[1] as string])
						pairs.add((a.charCodeAt(0) << 7) | b.charCodeAt(0));
				for (const p of pairs) byPair[p]?.push(index);
			}
		});
		this.list = new Uint16Array(byPair.reduce((n, l) => n + l.length, 0));
		let at = 0;
		byPair.forEach((l, p) => {
			this.start[p] = at;
			for (const h of l) this.list[at++] = h;
		});
		this.start[128 * 128] = at;
	}

	/** Per group, 1 where one of its hints is in `text`. */
	scan(text: string): Uint8Array {
		const found = new Uint8Array(this.groups.length);
		// Locals, not fields, in the loop: it runs once per character of every patch.
		const { single, start, list, hints } = this;
		const n = text.length;
		let b = n > 0 ? text.charCodeAt(0) : 0;
		for (let i = 0; i < n; i++) {
			const a = b;
			b = i + 1 < n ? text.charCodeAt(i + 1) : 0;
			if (a >= 128) continue;
			const one = single[a] as number;
			if (one !== 0) found[one - 1] = 1;
			if (b >= 128) continue;
			const p = (a << 7) | b;
			for (let k = start[p] as number, end = start[p + 1] as number; k < end; k++) {
				const h = hints[list[k] as number] as Hint;
				if (found[h.group] === 0 && holds(text, i, h)) found[h.group] = 1;
			}
		}
		return found;
	}
}

/** Whether `text` holds the hint at `i` (its first two characters are known to match; ASCII letters folded when caseless). */
function holds(text: string, i: number, h: Hint): boolean {
	if (i + h.code.length > text.length) return false;
	for (let j = 2; j < h.code.length; j++) {
		let c = text.charCodeAt(i + j);
		if (h.caseless && c >= 65 && c <= 90) c += 32;
		if (c !== h.code[j]) return false;
	}
	return true;
}
