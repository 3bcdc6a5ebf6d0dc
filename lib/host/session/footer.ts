/**
 * The footer's status text (issue 27): `state: active cwd+session`, then what the user must know
 * about a wanted owner without asking — damaged (refused until repaired), unavailable (its
 * database cannot be reached) or shared (a team reads and writes it). One line, short words; the
 * details are in `/state`.
 */
import type { Owner } from "../../core/types.js";
import type { Placement } from "../../storage/placement/placement.js";
import type { Health } from "../../surface/available.js";
import { describeSelection, type Selection } from "./selection.js";

/** `state: active cwd+session · cwd shared · session damaged`. */
export function footerText(sel: Selection, placement: Placement, health: Partial<Record<Owner, Health>>): string {
	const marks: string[] = [];
	for (const owner of sel.owners) {
		const words: string[] = [];
		if ((owner === "cwd" && placement.project !== undefined) || (owner === "global" && placement.user !== undefined)) words.push("shared");
		const h = health[owner];
		if (h !== undefined) words.push(h);
		if (words.length > 0) marks.push(`${owner} ${words.join(", ")}`);
	}
	return [`state: ${describeSelection(sel)}`, ...marks].join(" · ");
}
