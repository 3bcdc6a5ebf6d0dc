/**
 * The text of a `read_state` search (issue 26): one line per match, the locator that reads it
 * and a short JSON snippet, so "everything about X" is found without reading whole planes into
 * the context. Bounded three times: the engine keeps at most `MAX_SEARCH_MATCHES`, each line is
 * at most `MAX_SEARCH_LINE` characters however long the keys its locator is made of (issue 33:
 * a locator shows its start and end, `shownLocator`), and the lines stop at `MAX_SEARCH_TEXT`
 * characters; whatever is left out is counted with the way to narrow it.
 */
import { elideMiddle, MAX_SHOWN_LOCATOR, shownLocator } from "../core/elide.js";
import { printable } from "../core/printable.js";
import { type SearchAnswer, searchTerms } from "../core/search.js";
import type { Owner } from "../core/types.js";
import type { ReadDetails, ToolText } from "./results.js";

/** Matches the engine keeps per search; the rest are counted. */
export const MAX_SEARCH_MATCHES = 40;
/** Characters of match lines per result (~1 K tokens). */
export const MAX_SEARCH_TEXT = 4000;
/** Characters of one match line: its locator (`MAX_SHOWN_LOCATOR`), `(key): ` and the snippet's share. */
export const MAX_SEARCH_LINE = 600;

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
	const locators: string[] = [];
	for (const m of answer.matches) {
		// Stored text is shown JSON-escaped and made printable: it never ends a line or moves a cursor.
		// Each part is cut where it is too long (start and end kept), so every line, the first too, fits.
		const locator = shownLocator(printable(m.locator));
		const label = `${m.in === "key" ? " (key)" : ""}: `;
		const line = `${locator}${label}${elideMiddle(printable(m.snippet), MAX_SEARCH_LINE - locator.length - label.length)}`;
		if (used + line.length > MAX_SEARCH_TEXT) break;
		lines.push(line);
		locators.push(locator);
		used += line.length + 1;
		shown++;
	}
	const total = answer.matches.length + answer.omitted;
	// What was searched, said once, so a model need not search again to be sure (issue 36).
	const covered =
		input.under === undefined
			? `in ${input.wanted.join(", ")}: keys and text of every plane, lazy bodies and registered roots, now (not history)`
			: `under ${elideMiddle(printable(JSON.stringify(input.under)), MAX_SHOWN_LOCATOR + 2)}: keys and text`;
	const terms = searchTerms(query);
	// However long the query, the first line stays within a match line's bound.
	const asked = elideMiddle(
		terms.length > 1 ? `any of ${terms.map((t) => printable(JSON.stringify(t))).join(", ")}` : printable(JSON.stringify(query)),
		MAX_SEARCH_LINE / 2,
	);
	const head = `search ${asked} ${covered}, case-insensitive: ${total === 0 ? "no match" : `${total} match${total === 1 ? "" : "es"}`}`;
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
			// The locators as shown: a cut one is no locator, and details are kept in the session file.
			search: { query, matches: locators, omitted: left },
		},
	};
}
