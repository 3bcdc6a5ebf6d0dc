/**
 * Structured references (docs/spec.md §3.3, §4.3): `{ "$ref": "<locator>" }` with exactly that one
 * key (in a merge patch, other keys may be `null` deletions; see `refOf`). Flat input is anchored to the captured owner by prefixing `<owner>.`; flat
 * presentation strips that prefix again, so anchoring then presenting is the identity.
 * Everything that is not a relative locator stays byte-identical.
 */
import { fail, formatPath, isStateError } from "./errors.js";
import { getOwn, hasOwn, isPlainObject, setOwn } from "./json.js";
import { formatLocator, type Locator, tryParseLocator } from "./locator.js";
import { applyMergePatch } from "./merge.js";
import { OWNERS, PLANES, ROOTS, type Json, type JsonObject, type Owner, type OwnerState, type Plane, type PlanePatch } from "./types.js";

/** A structured reference: an object with exactly one own key `$ref` holding a string. */
export function isRef(v: unknown): v is { $ref: string } {
	// Most objects have no `$ref`: say so without listing their keys (a large value has many).
	if (typeof v !== "object" || v === null || Array.isArray(v) || !Object.hasOwn(v, "$ref")) return false;
	const keys = Object.keys(v);
	return keys.length === 1 && keys[0] === "$ref" && typeof (v as JsonObject)["$ref"] === "string";
}

/**
 * The locator of the reference `v` would be once merged. Outside arrays a value is a merge
 * patch, so `{ "$ref": "lazy.plan", "note": null }` merges into `{ "$ref": "lazy.plan" }` and
 * is a reference too; inside arrays values are stored literally and only `isRef` counts.
 * On stored state (no null members outside arrays) this is exactly `isRef`.
 */
function refOf(v: Json, merged: boolean): string | undefined {
	if (isRef(v)) return v.$ref;
	if (!merged || !isPlainObject(v) || typeof getOwn(v, "$ref") !== "string") return undefined;
	for (const key of Object.keys(v)) if (key !== "$ref" && v[key] !== null) return undefined;
	return v["$ref"] as string;
}

/** Every reference string inside `value`, in document order. */
export function refsIn(value: Json): string[] {
	const out: string[] = [];
	visit(value, (ref) => void out.push(ref));
	return out;
}

function visit(value: Json, onRef: (ref: string) => void, merged = true): void {
	if (typeof value !== "object" || value === null) return;
	if (Array.isArray(value)) {
		for (const item of value) visit(item, onRef, false);
		return;
	}
	const ref = refOf(value, merged);
	if (ref !== undefined) onRef(ref);
	else for (const key of Object.keys(value)) visit(value[key] as Json, onRef, merged);
}

/**
 * Rebuild `value` with each reference string passed through `rewrite` (copies; input
 * untouched). `merged`: `value` sits where merge-patch semantics apply (not inside an array).
 */
export function mapRefs(value: Json, rewrite: (ref: string, path: (string | number)[]) => string, path: (string | number)[] = [], merged = true): Json {
	if (typeof value !== "object" || value === null) return value;
	if (Array.isArray(value)) return value.map((item, i) => mapRefs(item, rewrite, [...path, i], false));
	const ref = refOf(value, merged);
	const out: JsonObject = {};
	for (const key of Object.keys(value)) {
		const v = value[key] as Json;
		setOwn(out, key, ref === undefined ? mapRefs(v, rewrite, [...path, key], merged) : key === "$ref" ? rewrite(ref, [...path, key]) : v);
	}
	return out;
}

/** A flat-form locator that names no owner: a plane root (`lazy.plan`), `patches[N]` or `response`. */
function relative(text: string): Locator | undefined {
	const loc = tryParseLocator(text, "flat");
	if (loc === undefined) return undefined;
	return (loc.kind === "state" ? loc.scope : loc.owner) === null ? loc : undefined;
}

/** Whether `<owner>.<text>` is what the relative `text` means for sole owner `owner`. */
function anchorable(text: string, owner: Owner): boolean {
	const loc = relative(text);
	return loc !== undefined && (loc.kind !== "response" || owner === "session");
}

/** Flat input → canonical: `lazy.plan` becomes `<owner>.lazy.plan` (also `patches[N]`, Session's `response`); all else stays as sent. */
export function anchorRefs(value: Json, owner: Owner): Json {
	return mapRefs(value, (ref) => (anchorable(ref, owner) ? `${owner}.${ref}` : ref));
}

/**
 * One canonical locator as the model writes it: relative (`lazy["a.md"]`) when `soleOwner`
 * is the only wanted owner and the rest anchors back to it, as it is otherwise. The one
 * presentation of references for the head, reads and results.
 */
export function presentRef(ref: string, soleOwner: Owner | undefined): string {
	if (soleOwner === undefined || !ref.startsWith(`${soleOwner}.`)) return ref;
	const rest = ref.slice(soleOwner.length + 1);
	return anchorable(rest, soleOwner) ? rest : ref;
}

/** Canonical → flat presentation, the inverse of anchoring: `<owner>.lazy.plan` is shown as `lazy.plan`. */
export function presentRefs(value: Json, soleOwner: Owner): Json {
	return mapRefs(value, (ref) => presentRef(ref, soleOwner));
}

/**
 * Scoped input: every semantic reference must name its owner. A relative locator
 * (`lazy.plan`, `patches[0]`, `response`) is refused, showing the qualified forms of the
 * wanted owners only (`response` is Session's alone).
 */
export function checkScopedRefs(value: Json, path: (string | number)[] = [], wanted: readonly Owner[] = OWNERS): void {
	mapRefs(
		value,
		(ref, at) => {
			const loc = relative(ref);
			if (loc === undefined) return ref;
			const options = loc.kind === "response" ? wanted.filter((o) => o === "session") : wanted;
			const fix =
				options.length > 0
					? `in scoped mode write ${options.map((o) => `\`${o}.${ref}\``).join(" or ")}`
					: `only Session has \`response\` and Session is not wanted here (${wanted.join(", ")}); reference an entry of a wanted owner instead`;
			fail("invalid_input", `\`${formatPath(at)}\` is \`${ref}\`; ${fix}`, at);
		},
		path,
	);
}

/**
 * Stored data such as `{ "$ref": "lazy.plan", "x": 1 }` is ordinary data (two keys); a patch
 * that deletes every sibling turns it into a reference. Its locator was never anchored, so
 * when it is relative, the patch also rewrites it to `<owner>.<locator>` (the owner that
 * stores it), keeping canonical storage owner-qualified. Walks only the patch and the stored
 * objects it merges into; returns `patch` itself when nothing is revealed.
 */
export function anchorRevealedRefs(owner: Owner, state: OwnerState, patch: PlanePatch): PlanePatch {
	let out: PlanePatch | undefined;
	for (const plane of PLANES) {
		const p = patch[plane];
		if (p === undefined) continue;
		const next = anchorChildren(owner, state[plane], p);
		if (next !== p) (out ??= { ...patch })[plane] = next;
	}
	return out ?? patch;
}

/** `patch` with revealed references anchored in the values it merges into `cur`'s members. */
function anchorChildren(owner: Owner, cur: JsonObject, patch: JsonObject): JsonObject {
	let out: JsonObject | undefined;
	for (const key of Object.keys(patch)) {
		const pv = patch[key] as Json;
		const old = getOwn(cur, key);
		if (!isPlainObject(pv) || !isPlainObject(old)) continue;
		const next = anchorRevealed(owner, old, pv);
		if (next !== pv) setOwn((out ??= { ...patch }), key, next);
	}
	return out ?? patch;
}

/** One stored object `cur` and its merge patch: anchor `cur` if the patch reveals it as a reference. */
function anchorRevealed(owner: Owner, cur: JsonObject, patch: JsonObject): JsonObject {
	const ref = getOwn(cur, "$ref");
	if (typeof ref !== "string" || hasOwn(patch, "$ref") || !anchorable(ref, owner)) return anchorChildren(owner, cur, patch);
	let deleted = 0;
	for (const key of Object.keys(patch)) {
		if (patch[key] !== null) return anchorChildren(owner, cur, patch);
		if (hasOwn(cur, key)) deleted++;
	}
	if (deleted === 0 || Object.keys(cur).length - deleted !== 1) return patch;
	const out: JsonObject = { ...patch };
	setOwn(out, "$ref", `${owner}.${ref}`);
	return out;
}

/** What `checkWrittenRefs` needs: one owner's patch, the state it merges into, and how the writer spells locators. */
export interface WrittenRefs {
	owner: Owner;
	state: OwnerState;
	/** The owner's plane patch, references already anchored. */
	patch: PlanePatch;
	/** Message path prefix: `[]` for flat input, `[owner]` for scoped or canonical input. */
	base: readonly (string | number)[];
	/** A canonical locator as the writer spells it (relative for a sole owner). */
	spell: (canonical: string) => string;
}

/**
 * A reference is a reference (docs/spec.md §3.3): every object with a `$ref` member that the patch
 * writes or merges into must, once merged, be exactly `{ "$ref": "<locator>" }` with a locator
 * the grammar parses; otherwise the patch is refused, naming the field and the spelling to
 * send. A dotted spelling that names a missing key while the whole dotted text is an existing
 * key (`lazy.plan.md` with the key `plan.md`) is refused too: one spelling per key, never a
 * meaning that depends on which keys exist. Walks only the patch and the stored objects it
 * merges into; stored data the patch does not touch is not judged.
 */
export function checkWrittenRefs(input: WrittenRefs): void {
	for (const plane of PLANES) {
		const p = input.patch[plane];
		if (p === undefined) continue;
		for (const key of Object.keys(p)) {
			checkPatched(input, getOwn(input.state[plane], key), p[key] as Json, [...input.base, plane, key]);
		}
	}
}

/** A merge-patch value `pv` over the stored `cur`. */
function checkPatched(input: WrittenRefs, cur: Json | undefined, pv: Json, path: (string | number)[]): void {
	if (pv === null) return;
	if (!isPlainObject(pv)) return checkLiteral(input, pv, path);
	const old = isPlainObject(cur) ? cur : undefined;
	if (hasOwn(pv, "$ref") || (old !== undefined && hasOwn(old, "$ref"))) {
		const merged = applyMergePatch(cur, pv);
		if (isPlainObject(merged) && hasOwn(merged, "$ref")) return checkRefObject(input, merged, path);
	}
	for (const key of Object.keys(pv)) checkPatched(input, old === undefined ? undefined : getOwn(old, key), pv[key] as Json, [...path, key]);
}

/** A value stored as written (array items, or what replaces a non-object); `check` judges each object with a `$ref` member. */
function checkLiteral(input: WrittenRefs, v: Json, path: (string | number)[], check = checkRefObject): void {
	if (Array.isArray(v)) v.forEach((item, i) => checkLiteral(input, item, [...path, i], check));
	else if (isPlainObject(v)) {
		if (hasOwn(v, "$ref")) check(input, v, path);
		else for (const key of Object.keys(v)) checkLiteral(input, v[key] as Json, [...path, key], check);
	}
}

/**
 * Objects with a `$ref` member in an owner's stored planes that a write would refuse (kept by
 * builds before references were checked): for each, the refusal a patch touching it would get,
 * which names the spelling to send. They own nothing and are not reported as dangling, so
 * `state-flow doctor` lists them.
 */
export function storedRefProblems(owner: Owner, state: OwnerState): string[] {
	const input: WrittenRefs = { owner, state, patch: {}, base: [owner], spell: (canonical) => canonical };
	const out: string[] = [];
	const note = (i: WrittenRefs, obj: JsonObject, path: (string | number)[]): void => {
		try {
			checkRefObject(i, obj, path);
		} catch (e) {
			if (!isStateError(e)) throw e;
			out.push(e.message);
		}
	};
	for (const plane of PLANES) for (const key of Object.keys(state[plane])) checkLiteral(input, state[plane][key] as Json, [owner, plane, key], note);
	return out;
}

const ROOTED_KEY = new RegExp(`^(?:(${OWNERS.join("|")})\\.)?(${PLANES.join("|")})\\.(.+)$`, "s");

function checkRefObject(input: WrittenRefs, obj: JsonObject, path: (string | number)[]): void {
	const at = [...path, "$ref"];
	const ref = obj["$ref"] as Json;
	const example = (): string => input.spell(formatLocator({ kind: "state", scope: input.owner, offset: 0, plane: "tactics", path: ["t1"] }));
	if (typeof ref !== "string") {
		fail("invalid_input", `\`${formatPath(at)}\` must be a locator string, e.g. {"$ref":"${example()}"}`, at);
	}
	const others = Object.keys(obj).filter((k) => k !== "$ref");
	if (others.length > 0) {
		fail(
			"invalid_input",
			`\`${formatPath(path)}\` has \`$ref\` beside other members (${others.map((k) => `\`${k}\``).join(", ")}): a reference is {"$ref":"<locator>"} alone in its object; ` +
				`put it under its own key (e.g. {"ref":{"$ref":${JSON.stringify(input.spell(ref))}}}) or rename \`$ref\``,
			path,
		);
	}
	const loc = tryParseLocator(ref, "canonical");
	if (loc === undefined) {
		const fix = spellingOf(input, ref);
		fail(
			"invalid_input",
			`\`${formatPath(at)}\` is \`${input.spell(ref)}\`, which is not a locator` +
				(fix === undefined
					? `; a reference names a plane and keys, e.g. {"$ref":"${example()}"}, with keys that are not plain names quoted: ["notes/a.md"]`
					: `: a key that is not a plain name (letters, digits, _ $ -) is quoted; write {"$ref":${JSON.stringify(input.spell(fix))}}`),
			at,
		);
	}
	// A dotted spelling of an existing key with dots in it: refuse rather than guess.
	if (loc.kind !== "state" || loc.scope !== input.owner || loc.offset !== 0 || loc.plane === null || loc.plane === ROOTS) return;
	const first = loc.path[0];
	const prefix = `${input.owner}.${loc.plane}.`;
	if (typeof first !== "string" || loc.path.length < 2 || !ref.startsWith(prefix)) return;
	const whole = ref.slice(prefix.length);
	if (exists(input, loc.plane, first) || !exists(input, loc.plane, whole)) return;
	const fix = formatLocator({ ...loc, path: [whole] });
	fail(
		"invalid_input",
		`\`${formatPath(at)}\` is \`${input.spell(ref)}\`, which names the key \`${first}\` (missing), not the existing key \`${whole}\`; ` +
			`quote keys that are not plain names: write {"$ref":${JSON.stringify(input.spell(fix))}}`,
		at,
	);
}

/** Whether `plane.key` of the owner exists once the patch is applied. */
function exists(input: WrittenRefs, plane: Plane, key: string): boolean {
	const p = input.patch[plane];
	const pv = p === undefined ? undefined : getOwn(p, key);
	return pv !== undefined ? pv !== null : hasOwn(input.state[plane], key);
}

/** The canonical spelling an unparsable reference most likely meant: `lazy.plans/a.md` → `<owner>.lazy["plans/a.md"]`. */
function spellingOf(input: WrittenRefs, ref: string): string | undefined {
	const m = ROOTED_KEY.exec(ref);
	if (m !== null) {
		const [, owner, plane, key] = m as unknown as [string, Owner | undefined, Plane, string];
		return formatLocator({ kind: "state", scope: owner ?? input.owner, offset: 0, plane, path: [key] });
	}
	// A bare key: the one plane that holds it.
	const planes = PLANES.filter((plane) => exists(input, plane, ref));
	if (planes.length !== 1) return undefined;
	return formatLocator({ kind: "state", scope: input.owner, offset: 0, plane: planes[0] as Plane, path: [ref] });
}
