/**
 * Key order shared by the head and the `keys` projection, so a model sees one order for a
 * plane wherever it looks (docs/model-surface.md, "Which keys come first").
 */

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * Natural key order, the order the head lists a plane's keys in: runs of digits compare as
 * numbers (`s2` before `s10`, `1-reproduce` before `2-fix`), everything else by code unit; a
 * total order (ties such as `s01`/`s1` fall back to plain code-unit order).
 */
export function naturalCompare(a: string, b: string): number {
	let i = 0;
	let j = 0;
	while (i < a.length && j < b.length) {
		const ca = a.charCodeAt(i);
		const cb = b.charCodeAt(j);
		if (isDigit(ca) && isDigit(cb)) {
			let ie = i;
			while (ie < a.length && isDigit(a.charCodeAt(ie))) ie++;
			let je = j;
			while (je < b.length && isDigit(b.charCodeAt(je))) je++;
			let is = i;
			while (is < ie - 1 && a.charCodeAt(is) === 48) is++;
			let js = j;
			while (js < je - 1 && b.charCodeAt(js) === 48) js++;
			const byLength = ie - is - (je - js);
			if (byLength !== 0) return byLength;
			for (let k = 0; k < ie - is; k++) {
				const d = a.charCodeAt(is + k) - b.charCodeAt(js + k);
				if (d !== 0) return d;
			}
			i = ie;
			j = je;
			continue;
		}
		if (ca !== cb) return ca - cb;
		i++;
		j++;
	}
	const rest = a.length - i - (b.length - j);
	if (rest !== 0) return rest;
	return a < b ? -1 : a > b ? 1 : 0;
}
