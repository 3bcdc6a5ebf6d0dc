/**
 * "Did you mean …?" for mistyped commands, subcommands and flags (issue 27): the CLI and
 * `/state` suggest the nearest known word the same way. Optimal string alignment distance
 * (a swapped pair of letters costs one, as in `histroy`); a word is near when at most a third
 * of its letters (at least one, at most two) differ, or when it is a prefix of exactly one word.
 */

/** Edits from `a` to `b`: insert, delete, substitute, or swap two neighbours. */
export function editDistance(a: string, b: string): number {
	const rows: number[][] = [];
	for (let i = 0; i <= a.length; i++) {
		const row: number[] = [i];
		for (let j = 1; j <= b.length; j++) {
			if (i === 0) {
				row.push(j);
				continue;
			}
			const prev = rows[i - 1] as number[];
			const cost = a[i - 1] === b[j - 1] ? 0 : 1;
			let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
			if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
			row.push(d);
		}
		rows.push(row);
	}
	return (rows[a.length] as number[])[b.length] as number;
}

/** The known word nearest to `word`, if one is near enough to suggest; ties give none. */
export function nearest(word: string, known: readonly string[]): string | undefined {
	const typed = word.toLowerCase();
	if (typed === "") return undefined;
	const prefixed = known.filter((k) => k.startsWith(typed) && k !== typed);
	if (prefixed.length === 1) return prefixed[0];
	const bare = typed.replace(/^-+/, "");
	const limit = Math.min(2, Math.max(1, Math.floor(bare.length / 3)));
	let best: string | undefined;
	let bestDistance = limit + 1;
	let tie = false;
	for (const k of known) {
		const d = editDistance(typed, k);
		if (d < bestDistance) {
			best = k;
			bestDistance = d;
			tie = false;
		} else if (d === bestDistance) tie = true;
	}
	return best !== undefined && !tie ? best : undefined;
}

/** ` Did you mean \`history\`?` or nothing: appended to an "unknown …" message. */
export function didYouMean(word: string, known: readonly string[], spell: (k: string) => string = (k) => `\`${k}\``): string {
	const hit = nearest(word, known);
	return hit === undefined ? "" : ` Did you mean ${spell(hit)}?`;
}
