/**
 * JSON value primitives: detachment of untrusted input, equality, cloning, limits and
 * pointers. Invariant: every key is written as an own data property (`setOwn`), so keys
 * such as `__proto__` stay ordinary data and no object prototype is ever touched.
 */

import { utf8Bytes } from "./size.js";
import { fail, formatPath, isStateError, messageOf } from "./errors.js";
import type { Json, JsonObject, Limits } from "./types.js";

type Path = (string | number)[];

/** Hard nesting cap of `detach`, far above any sane depth limit: keeps recursion off the stack limit. */
const DETACH_MAX_DEPTH = 1000;

/** Own-property test that never consults the prototype chain. */
export function hasOwn(obj: object, key: string): boolean {
	return Object.hasOwn(obj, key);
}

/** Write `key` as an own enumerable data property (`__proto__` included, never the setter). */
export function setOwn(obj: JsonObject, key: string, value: Json): void {
	// A name `Object.prototype` has (`__proto__`, `constructor`, …) is defined, never assigned: assigning
	// would call the `__proto__` setter, or fail where the prototype is frozen. Any other name
	// assigns to the same own data property, at a fraction of the cost (every clone and merge does this).
	if (Object.hasOwn(Object.prototype, key)) Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
	else obj[key] = value;
}

/** Read an own property; inherited names (`__proto__`, `constructor`, ...) read as absent. */
export function getOwn(obj: JsonObject, key: string): Json | undefined {
	return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** No own enumerable key, found without listing the keys (a large plane costs the same as an empty one). */
export function isEmptyObject(obj: object): boolean {
	for (const key in obj) if (Object.hasOwn(obj, key)) return false;
	return true;
}

/** A plain JSON object: non-null, not an array, prototype `Object.prototype` or null. */
export function isPlainObject(v: unknown): v is JsonObject {
	if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
	const proto = Object.getPrototypeOf(v);
	return proto === Object.prototype || proto === null;
}

/** A field path for messages, abbreviated when very deep so a message stays readable. */
function shortPath(path: Path): string {
	return path.length <= 16 ? formatPath(path) : `${formatPath(path.slice(0, 12))}...(${path.length} levels)`;
}

function describe(v: unknown): string {
	if (v === undefined) return "undefined";
	if (typeof v === "number") return String(v);
	if (typeof v === "function") return "a function";
	if (typeof v === "symbol") return "a symbol";
	if (typeof v === "bigint") return "a bigint";
	const ctor = (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
	return typeof ctor === "string" && ctor !== "" ? `a ${ctor} instance` : "a non-plain object";
}

function refuse(what: string, path: Path): never {
	return fail(
		"invalid_value",
		`\`${formatPath(path)}\` is ${what}; state values must be finite JSON (null, boolean, finite number, string, array, plain object)`,
		path,
	);
}

/**
 * Deep copy of the own enumerable JSON data of `value`. Each property is read exactly
 * once, so a getter or a later mutation by the caller cannot change what was copied.
 */
export function detach(value: unknown, path: Path = []): Json {
	const at = path.slice();
	try {
		return detachAt(value, at, new Set<object>());
	} catch (e) {
		if (isStateError(e)) throw e;
		// A throwing getter or proxy trap: refuse the input instead of crashing the caller.
		const reason = messageOf(e);
		return fail("invalid_value", `reading \`${formatPath(at)}\` threw (${reason}); send plain JSON data`, at, e);
	}
}

function detachAt(value: unknown, path: Path, ancestors: Set<object>): Json {
	if (value === null || typeof value === "string" || typeof value === "boolean") return value;
	if (typeof value === "number") {
		if (!Number.isFinite(value)) refuse(describe(value), path);
		return value;
	}
	if (typeof value !== "object") return refuse(describe(value), path);
	if (ancestors.has(value)) refuse("a cycle (a value that contains itself)", path);
	if (ancestors.size >= DETACH_MAX_DEPTH) fail("limit", `\`${shortPath(path)}\` is nested deeper than ${DETACH_MAX_DEPTH} levels; flatten the value`, path);
	ancestors.add(value);
	try {
		if (Array.isArray(value)) {
			if (Object.getPrototypeOf(value) !== Array.prototype) refuse(describe(value), path);
			const len = value.length;
			const out: Json[] = new Array<Json>(len);
			for (let i = 0; i < len; i++) {
				path.push(i);
				if (!Object.hasOwn(value, i)) refuse("a hole in a sparse array; fill it with `null` or remove it", path);
				out[i] = detachAt(value[i], path, ancestors);
				path.pop();
			}
			return out;
		}
		if (!isPlainObject(value)) return refuse(describe(value), path);
		for (const sym of Object.getOwnPropertySymbols(value)) {
			if (Object.prototype.propertyIsEnumerable.call(value, sym)) refuse(`keyed by ${String(sym)}, a symbol`, path);
		}
		const out: JsonObject = {};
		const src = value as Record<string, unknown>;
		for (const key of Object.keys(src)) {
			path.push(key);
			setOwn(out, key, detachAt(src[key], path, ancestors));
			path.pop();
		}
		return out;
	} finally {
		ancestors.delete(value);
	}
}

/** True when `text` is one complete JSON value (e.g. a log record whose line end was dropped, not one cut short). */
export function isJsonText(text: string): boolean {
	try {
		JSON.parse(text);
		return true;
	} catch {
		return false;
	}
}

/** Deep, key-order-insensitive equality of two JSON values. */
export function jsonEqual(a: Json, b: Json): boolean {
	if (a === b) return true;
	if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
	if (Array.isArray(a)) {
		if (!Array.isArray(b) || a.length !== b.length) return false;
		for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i] as Json, b[i] as Json)) return false;
		return true;
	}
	if (Array.isArray(b)) return false;
	const ka = Object.keys(a);
	if (ka.length !== Object.keys(b).length) return false;
	for (const k of ka) {
		if (!Object.hasOwn(b, k) || !jsonEqual(a[k] as Json, b[k] as Json)) return false;
	}
	return true;
}

/** Deep clone of a JSON value; keys are copied as own data. */
export function cloneJson<T extends Json>(v: T): T {
	return cloneAny(v) as T;
}

function cloneAny(v: Json): Json {
	if (typeof v !== "object" || v === null) return v;
	if (Array.isArray(v)) return v.map(cloneAny);
	const out: JsonObject = {};
	for (const k of Object.keys(v)) setOwn(out, k, cloneAny(v[k] as Json));
	return out;
}

/**
 * Check nesting depth (a scalar is depth 0, a container 1 + its deepest child) and the
 * length of every key inside `value`. Refuses with `limit` naming the field and the limit.
 */
export function checkLimits(value: Json, limits: Limits, path: (string | number)[]): void {
	checkAt(value, limits, path.slice(), 0);
}

function checkAt(value: Json, limits: Limits, path: Path, depth: number): void {
	if (typeof value !== "object" || value === null) return;
	if (depth + 1 > limits.maxDepth) {
		fail("limit", `\`${shortPath(path)}\` nests deeper than the depth limit of ${limits.maxDepth}; store deep data flatter or as a string`, path);
	}
	if (Array.isArray(value)) {
		for (let i = 0; i < value.length; i++) {
			path.push(i);
			checkAt(value[i] as Json, limits, path, depth + 1);
			path.pop();
		}
		return;
	}
	for (const k of Object.keys(value)) {
		path.push(k);
		checkKeyLength(k, limits, path);
		checkAt(value[k] as Json, limits, path, depth + 1);
		path.pop();
	}
}

/** Refuse a key longer than `limits.maxKeyLength`; `path` ends with the key. */
export function checkKeyLength(key: string, limits: Limits, path: readonly (string | number)[]): void {
	if (key.length > limits.maxKeyLength) {
		fail(
			"limit",
			`key \`${formatPath(path.slice(0, -1))}\` + ${JSON.stringify(key.slice(0, 40))}... is ${key.length} characters; the key length limit is ${limits.maxKeyLength}, use a shorter key`,
			path,
		);
	}
}

/** Serialised size in UTF-16 code units: `JSON.stringify(v).length`. */
export function jsonBytes(v: Json): number {
	return JSON.stringify(v).length;
}

/**
 * UTF-8 sizes of the compact JSON of objects and arrays already measured, and the key lists of
 * objects already listed. Stored state is mutated only by `mergeInPlace` (core/merge), which
 * forgets every object it changes (each ancestor on a patch's path is one of them), and values
 * are cloned in: an entry describes the object as it is now. So a nested value is measured
 * and listed once, not once per level or pass that looks at it (the head fits a large value
 * level by level, a preview first and a longer form after).
 */
const utf8Sizes = new WeakMap<object, number>();
const keyLists = new WeakMap<object, readonly string[]>();

/** `Object.keys(obj)`, listed once per object (see `utf8Sizes`); never change the list. */
export function ownKeys(obj: JsonObject): readonly string[] {
	let keys = keyLists.get(obj);
	if (keys === undefined) {
		keys = Object.keys(obj);
		keyLists.set(obj, keys);
	}
	return keys;
}

/**
 * Sizes of long strings (immutable, so always right). The map keeps the strings it names alive:
 * it is dropped wholesale before it would hold more than `LONG_STRINGS_CHARS` characters, twice
 * the 4 MiB an owner's state may hold.
 */
const longStrings = new Map<string, number>();
const LONG_STRING = 1024;
const LONG_STRINGS_CHARS = 8 * 1024 * 1024;
let longStringsChars = 0;

/** UTF-8 bytes of `JSON.stringify(v)`, measured once per object, array or long string. */
export function jsonUtf8Bytes(v: Json): number {
	if (typeof v === "string" && v.length >= LONG_STRING) {
		const known = longStrings.get(v);
		if (known !== undefined) return known;
		const n = utf8Bytes(JSON.stringify(v));
		if (v.length > LONG_STRINGS_CHARS) return n;
		if (longStringsChars + v.length > LONG_STRINGS_CHARS) {
			longStrings.clear();
			longStringsChars = 0;
		}
		longStrings.set(v, n);
		longStringsChars += v.length;
		return n;
	}
	if (v === null || typeof v !== "object") return utf8Bytes(JSON.stringify(v));
	const known = utf8Sizes.get(v);
	if (known !== undefined) return known;
	let n: number;
	if (Array.isArray(v)) {
		n = 2 + Math.max(0, v.length - 1);
		for (const item of v) n += jsonUtf8Bytes(item);
	} else {
		// Not `ownKeys`: measuring a whole state would keep a key list per object; sizes suffice here.
		const keys = Object.keys(v);
		n = 2 + Math.max(0, keys.length - 1);
		for (const key of keys) n += utf8Bytes(JSON.stringify(key)) + 1 + jsonUtf8Bytes(v[key] as Json);
	}
	utf8Sizes.set(v, n);
	return n;
}

/** `obj` is about to change in place: its measured size and key list no longer hold. */
export function forgetMeasured(obj: object): void {
	utf8Sizes.delete(obj);
	keyLists.delete(obj);
}

/** Escape one RFC 6901 reference token (`~` -> `~0`, `/` -> `~1`). */
export function escapePointerToken(seg: string | number): string {
	return String(seg).replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Build an RFC 6901 pointer from segments, e.g. `["cwd", "tactics", "a/b"]` -> `/cwd/tactics/a~1b`. */
export function toPointer(segments: readonly (string | number)[]): string {
	let out = "";
	for (const s of segments) out += `/${escapePointerToken(s)}`;
	return out;
}

/** Split an RFC 6901 pointer into unescaped string tokens. */
export function parsePointer(pointer: string): string[] {
	if (pointer === "") return [];
	if (!pointer.startsWith("/")) fail("parse_error", `pointer \`${pointer}\` must start with \`/\``);
	return pointer
		.slice(1)
		.split("/")
		.map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}
