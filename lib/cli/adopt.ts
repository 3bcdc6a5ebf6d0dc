/**
 * `state-flow adopt <folder> [--keep]`: decide about a store apart (`stores-apart.ts`), a CWD
 * store an older build made in a subfolder or a worktree of this project. Into an empty
 * project store it moves WITH its history (`FileOwnerStore.adopt`, read back and compared, as
 * `migrate` does); into a project store that holds state it goes as one transition adding its
 * entries, refused with nothing written when any key exists in both. A subfolder's artifact
 * keys are rebased onto the checkout's root on the way, its Skills moved to the root's Skill
 * places (`rebased`). `--keep` keeps it apart
 * on purpose. Either way the store apart is left in place, marked, and no longer reported:
 * nothing is merged or deleted without this command.
 */
import { randomUUID } from "node:crypto";
import { relative, resolve, sep } from "node:path";
import { mapHistoryKeys, rebaseKey } from "../core/artifact-keys.js";
import { isPlainObject } from "../core/json.js";
import { inline } from "../core/printable.js";
import { fail, messageOf } from "../core/errors.js";
import { formatKeySegment } from "../core/locator.js";
import { DEFAULT_RETENTION, type OwnerHistory, PLANES, type PlanePatch } from "../core/types.js";
import { FileOwnerStore } from "../storage/file/owner-store.js";
import { sameHistoryText } from "../storage/format.js";
import { realOrSelf } from "../storage/fs-util.js";
import { type StorePaths, storePaths } from "../storage/project/paths.js";
import { seenMarksOf } from "../storage/file/seen.js";
import { projectOf, storeInRoot } from "../storage/project/project.js";
import { skillFolders } from "../storage/artifacts/skill-format.js";
import { type StoreApart, markApart, storesApart } from "../storage/project/stores-apart.js";
import type { Parsed } from "./args.js";
import { lines, ok, openStores, type Outcome } from "./commands.js";

/** Keys named in a refusal before "and N more". */
const SHOWN_CONFLICTS = 5;

/** The keys, per plane, both states hold, and the Skill places both compile to. */
function conflicts(a: OwnerHistory, b: OwnerHistory): string[] {
	const out: string[] = [];
	for (const plane of PLANES) {
		for (const key of Object.keys(a.state[plane])) if (Object.hasOwn(b.state[plane], key)) out.push(`${plane}${formatKeySegment(key)}`);
	}
	const taken = new Set(compiledPlaces(b));
	for (const place of compiledPlaces(a)) if (taken.has(place)) out.push(`a Skill compiled to ${place}`);
	return out;
}

/** Where an owner's Skills compile (`compiledTo`). */
function compiledPlaces(h: OwnerHistory): string[] {
	return Object.values(h.state.artifacts).flatMap((v) => (isPlainObject(v) && typeof v.compiledTo === "string" ? [v.compiledTo] : []));
}

/**
 * A subfolder's history with its artifact keys (relative to that folder) rebased onto the
 * checkout's root, where the project's keys are relative to: checkpoint, state and every
 * retained transition alike (`mapHistoryKeys`), references to them included, so the history
 * moves whole. A Skill's own place (`.pi/skills/<name>/SKILL.md`, `.agents/skills/…`) is the
 * project's place for that Skill, kept as it is: the Skill now compiles at the checkout's root,
 * where pi lists it for the whole repository (the next session writes it there), and its old
 * copy under the subfolder is left in place. Returns the history and the Skills that moved.
 */
function rebased(source: OwnerHistory, found: StoreApart): { history: OwnerHistory; skills: string[] } {
	const base = relative(projectOf(found.folder).checkout, found.folder).split(sep).join("/");
	const places = skillFolders("cwd").map((f) => `${f}/`);
	const isPlace = (k: string) => places.some((f) => k.startsWith(f) && /^[^/]+\/SKILL\.md$/.test(k.slice(f.length)));
	const history = mapHistoryKeys(source, (k) => (isPlace(k) ? k : rebaseKey(base, k, `the store apart's artifacts[${JSON.stringify(k)}]`)));
	return { history, skills: compiledPlaces(history) };
}

/**
 * `state-flow adopt <repository root>` while the project's memory is the root's `.pi/state-flow`
 * an older build made: move it, with its history, into the repository's `<common dir>/state-flow`
 * (where checkout, pull and clean never touch it), holding the root store's lock, read back and
 * compared; the root store is left in place and marked. Processes that opened the root store
 * refuse it from then on and pi sessions follow at their next prompt (`Project.supersededBy`).
 */
async function moveIntoGit(paths: StorePaths, linked: string | undefined, retention = DEFAULT_RETENTION, warnings: string[]): Promise<Outcome> {
	const { store: from, supersededBy: into } = paths.project;
	if (into === undefined) return fail("invalid_input", "this project's memory is not in a root store an older build made; nothing was changed.");
	if (linked !== undefined) {
		fail(
			"invalid_input",
			`this checkout's CWD memory is linked to project \`${linked}\` in the database; its local root store is not in use. Nothing was changed.`,
		);
	}
	const seen = seenMarksOf(paths);
	const source = new FileOwnerStore({ owner: "cwd", root: from, retention, gitignore: true, seen });
	const target = new FileOwnerStore({ owner: "cwd", root: into, retention, gitignore: true, seen });
	const written = await source.moveInto(target);
	const differs = sameHistoryText(target.read(), written);
	// Folder names are shown as data: a line break or control in one never ends the line.
	if (differs !== undefined) fail("corrupt", `the copy in ${inline(into)} reads back differently (${differs}); ${inline(from)} is untouched and unmarked.`);
	markApart(from, `moved into ${into} at ${new Date().toISOString()}`);
	return ok(
		`Moved this project's memory from ${inline(from)} into ${inline(into)} (seq ${written.seq}, ${written.tail.length} retained transition(s)), with its history; read back and verified. Git's checkout, pull and clean never touch it there.\nThe old folder is left in place, marked, and no longer read; running pi sessions follow at their next prompt.\n`,
		lines(warnings),
	);
}

export async function runAdopt(p: Parsed): Promise<Outcome> {
	const { stores, placement, config, warnings } = openStores(p);
	const paths = storePaths(p.agentDir, p.cwd);
	const folder = realOrSelf(resolve(p.positionals[0] as string));
	const project = paths.project;
	// The project's own root store, an older build's: moved into the repository's git dir on request.
	if (project.supersededBy !== undefined && project.store === storeInRoot(folder) && !p.keep)
		return moveIntoGit(paths, placement.project, config.retention, warnings);
	const apart = storesApart(project, true);
	const found = apart.find((a) => a.folder === folder);
	if (found === undefined) {
		const known = apart.length === 0 ? "none was found" : `found: ${apart.map((a) => a.folder).join(", ")}`;
		fail("invalid_input", `\`${folder}\` holds no undecided store apart from the project at ${paths.project.root} (${known}); nothing was changed.`, [
			"folder",
		]);
	}
	if (p.keep) {
		markApart(found.store, `kept apart by state-flow adopt --keep at ${new Date().toISOString()}`);
		return ok(`Kept ${found.store} apart on purpose: it is left as it is and no longer reported.\n`, lines(warnings));
	}
	if (placement.project !== undefined) {
		fail(
			"invalid_input",
			`this checkout's CWD memory is linked to project \`${placement.project}\` in the database; adopt a store apart into files only (\`state-flow migrate --to-files\` first). Nothing was changed.`,
		);
	}
	const retention = config.retention ?? DEFAULT_RETENTION;
	let source: OwnerHistory;
	try {
		source = new FileOwnerStore({ owner: "cwd", root: found.store, retention: Math.max(retention, 1000), gitignore: false }).read();
	} catch (e) {
		fail(
			"corrupt",
			`the store apart ${found.store} cannot be read (${messageOf(e)}); nothing was changed. Inspect it with \`state-flow doctor --cwd ${found.folder}\` from an older build, or keep it apart.`,
		);
	}
	let skills: string[] = [];
	if (found.where === "subfolder") ({ history: source, skills } = rebased(source, found));
	const target = new FileOwnerStore({
		owner: "cwd",
		root: paths.cwdRoot,
		retention,
		gitignore: true,
		seen: seenMarksOf(paths),
		refused: paths.project.refused,
	});
	const current = await stores.load("cwd");
	let said: string;
	if (current.seq === 0) {
		const written = await target.adopt(source);
		const differs = sameHistoryText(target.read(), written);
		if (differs !== undefined) fail("corrupt", `the copy in ${target.root} reads back differently (${differs}); the store apart is untouched and unmarked.`);
		said = `Moved ${found.store} (seq ${written.seq}, ${written.tail.length} retained transition(s)) into the project's store ${target.root}, with its history; read back and verified.`;
	} else {
		const both = conflicts(source, current);
		if (both.length > 0) {
			const first = both[0] as string;
			// The store apart cannot be edited (every command reaches the project's store): the way out is on the project's side.
			const fix = `Delete ${first.startsWith("a Skill") ? "that Skill's artifact" : `it (\`state-flow delete cwd.${first}\`)`} from the project's store and adopt again, or keep the store apart with \`--keep\`.`;
			const shown = both.slice(0, SHOWN_CONFLICTS).join(", ") + (both.length > SHOWN_CONFLICTS ? ` and ${both.length - SHOWN_CONFLICTS} more` : "");
			fail("invalid_input", `the store apart ${found.store} and the project's store both hold ${shown}; nothing was written. ${fix}`);
		}
		const patch: PlanePatch = {};
		for (const plane of PLANES) if (Object.keys(source.state[plane]).length > 0) patch[plane] = source.state[plane];
		const result = await stores.commit(
			{ cwd: patch },
			{ by: { kind: "command", command: `state-flow adopt ${found.folder}` }, id: randomUUID(), at: new Date().toISOString() },
		);
		said = result.noop
			? `${found.store} holds nothing to add.`
			: `Added the entries of ${found.store} to the project's store ${target.root} as transition ${result.transitionId} (its own history stays readable there).`;
	}
	markApart(found.store, `adopted into ${target.root} at ${new Date().toISOString()}`);
	const moved =
		skills.length === 0
			? ""
			: `Its Skills now compile at the checkout's root (${skills.join(", ")}), where pi lists them from every folder; the next session writes them there. Their copies under ${found.folder} are left in place: delete them when you no longer need them.\n`;
	return ok(`${said}\nThe store apart is left in place, marked as adopted, and no longer reported.\n${moved}`, lines(warnings));
}
