/**
 * The text of a `read_state` search (issue 26): one line per match, the locator that reads it
 * and a short JSON snippet, so "everything about X" is found without reading whole planes into
 * the context. Bounded twice: the engine keeps at most `MAX_SEARCH_MATCHES`, and the lines stop
 * at `MAX_SEARCH_TEXT` characters; whatever is left out is counted with the way to narrow it.
 */
import { printable } from "../core/printable.js";
import type { SearchAnswer } from "../core/search.js";
import type { Owner } from "../core/types.js";
import type { ReadDetails, ToolText } from "./results.js";

/** Matches the engine keeps per search; the rest are counted. */
export const MAX_SEARCH_MATCHES = 40;
/** Characters of match lines per result (~1 K tokens). */
export const MAX_SEARCH_TEXT = 4000;

/** `details` of a search: what was asked and where each shown match is. */
export interface SearchDetails extends ReadDetails {
	search: { query: string; matches: string[]; omitted: number };
}

export function searchResult(input: {
	query: string;
	/** The locator searched under, as the model sent it; absent: every wanted owner. */
	under?: string;
	canonical?: string;
	answer: SearchAnswer;
	wanted: readonly Owner[];
	notices?: string[];
}): ToolText<SearchDetails> {
	const { query, answer } = input;
	const notices = input.notices ?? [];
	const lines: string[] = [];
	let used = 0;
	let shown = 0;
	for (const m of answer.matches) {
		// Stored text is shown JSON-escaped and made printable: it never ends a line or moves a cursor.
		const line = printable(`${m.locator}${m.in === "key" ? " (key)" : ""}: ${m.snippet}`);
		if (shown > 0 && used + line.length > MAX_SEARCH_TEXT) break;
		lines.push(line);
		used += line.length + 1;
		shown++;
	}
	const total = answer.matches.length + answer.omitted;
	const where = input.under === undefined ? input.wanted.join(", ") : printable(JSON.stringify(input.under));
	const head = `search ${printable(JSON.stringify(query))} in ${where} (case-insensitive, keys and text): ${total === 0 ? "no match" : `${total} match${total === 1 ? "" : "es"}`}`;
	const left = total - shown;
	const tail = left > 0 ? [`+ ${left} more not shown: search under a narrower path (e.g. one of the locators above), or read_state it`] : [];
	const text = [head, ...lines, ...tail, ...notices].join("\n");
	return {
		content: [{ type: "text", text }],
		details: {
			locators: input.under === undefined ? [] : [input.under],
			canonical: input.canonical === undefined ? [] : [input.canonical],
			projection: "search",
			transitionIds: [],
			notices,
			search: { query, matches: answer.matches.slice(0, shown).map((m) => m.locator), omitted: left },
		},
	};
}
