/**
 * Staging at its edges: every refusal names its field by path and says what to write instead,
 * roots are validated before the gate sees them, the size limit is inclusive, cascade deletions
 * merge with the caller's own writes, and staged records are plain data of their own.
 * (Written against the survivors of the mutation run on `lib/core/stage.ts`, docs/decisions.md.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateError } from "../../lib/core/errors.js";
import { newHistory } from "../../lib/core/history.js";
import { commitStaged, stage } from "../../lib/core/stage.js";
import { DEFAULT_LIMITS } from "../../lib/core/types.js";
import type { CanonicalPatch, Json, Owner, OwnerHistory, RootGate } from "../../lib/core/types.js";

const meta = (id: string) => ({ id, at: "2026-11-30T10:00:00.000Z", by: { kind: "tool", sessionId: "s1", toolCallId: id } as const });

function histories(...owners: Owner[]): Partial<Record<Owner, OwnerHistory>> {
	const out: Partial<Record<Owner, OwnerHistory>> = {};
	for (const o of owners) out[o] = newHistory(o, 20);
	return out;
}

/** A refusal of the expected kind: code, words of the message and the path of the field. */
function refused(fn: () => unknown, code: string, text: string, path: readonly (string | number)[]): void {
	assert.throws(fn, (e: unknown) => {
		assert.ok(e instanceof StateError, String(e));
		assert.equal(e.code, code);
		assert.ok(e.message.includes(text), `message ${JSON.stringify(e.message)} should contain ${JSON.stringify(text)}`);
		assert.deepEqual(e.path, path);
		return true;
	});
}

function run(hs: Partial<Record<Owner, OwnerHistory>>, patch: CanonicalPatch, id: string) {
	const r = stage(hs, patch, meta(id));
	commitStaged(hs, r);
	return r;
}

describe("stage refusals name the field and the words to use", () => {
	const hs = histories("cwd", "session");
	const bad = (patch: unknown) => () => stage(hs, patch as CanonicalPatch, meta("x"));

	it("an unknown or malformed owner lists the owners", () => {
		refused(bad({ project: {} }), "invalid_input", "unknown owner `project`; use one of global, cwd, session", ["project"]);
		refused(bad({ cwd: [] }), "invalid_input", "`cwd` must be an object of planes (intents, strategy, tactics, artifacts, lazy)", ["cwd"]);
	});

	it("`response` is refused as runtime-owned, not as an unknown plane", () => {
		refused(
			bad({ session: { response: {} } }),
			"invalid_input",
			"`session.response` is runtime-owned and cannot be patched; write to intents, strategy, tactics, artifacts, lazy",
			["session", "response"],
		);
	});

	it("an unknown plane lists the planes", () => {
		refused(bad({ cwd: { notes: {} } }), "invalid_input", "unknown plane `cwd.notes`; use one of intents, strategy, tactics, artifacts, lazy", [
			"cwd",
			"notes",
		]);
	});

	it("a key over the length limit is named with the entry it would write", () => {
		const limits = { ...DEFAULT_LIMITS, maxKeyLength: 8 };
		refused(
			() => stage(hs, { cwd: { tactics: { "long-key-here": 1 } } }, meta("x"), limits),
			"limit",
			'key `cwd.tactics` + "long-key-here"... is 13 characters; the key length limit is 8',
			["cwd", "tactics", "long-key-here"],
		);
	});

	it("an excluded owner is named by its path", () => {
		refused(bad({ global: { tactics: { a: 1 } } }), "excluded_owner", "`global` is not wanted", ["global"]);
	});

	it("growth past the size limit is refused at the owner; a write that ends exactly at the limit is staged", () => {
		const h = histories("cwd");
		const patch = { cwd: { lazy: { body: "x".repeat(40) } } };
		const free = stage(h, patch, meta("free"));
		assert.ok(!free.noop);
		if (free.noop) return;
		const after = free.bytesAfter.cwd as number;
		const at = stage(h, patch, meta("at"), { ...DEFAULT_LIMITS, maxOwnerBytes: after });
		assert.equal(at.noop, false, `a write ending at exactly the limit (${after} bytes) is staged`);
		refused(() => stage(h, patch, meta("over"), { ...DEFAULT_LIMITS, maxOwnerBytes: after - 1 }), "limit", `\`cwd\` would grow to ${after} bytes`, ["cwd"]);
	});
});

describe("roots in a staged patch", () => {
	const seen: Array<[string, string, Json, (string | number)[]]> = [];
	const gate: RootGate = (owner, name, value, path) => {
		seen.push([owner, name, value, path]);
	};
	const withTodos = () => {
		const h = newHistory("cwd", 20);
		h.state.roots = { todos: { a: { text: "x" } } };
		return { cwd: h };
	};

	it("a root written as a non-object is refused before the gate is asked", () => {
		const before = seen.length;
		refused(
			() => stage(withTodos(), { cwd: { roots: { todos: "milk" } } } as unknown as CanonicalPatch, { ...meta("r1"), roots: gate }),
			"invalid_input",
			"`cwd.todos` must be an object of entries (a merge patch)",
			["cwd", "roots"],
		);
		refused(
			() => stage(withTodos(), { cwd: { roots: { todos: 0 } } } as unknown as CanonicalPatch, { ...meta("r1"), roots: gate }),
			"invalid_input",
			"must be an object of entries",
			["cwd", "roots"],
		);
		assert.equal(seen.length, before, "the gate was not asked");
	});

	it("a root set to null (an undo removing its first value) passes validation and the gate sees it gone", () => {
		const hs = withTodos();
		const r = stage(hs, { cwd: { roots: { todos: null } } }, { ...meta("r2"), exact: true, roots: gate });
		assert.ok(!r.noop);
		if (r.noop) return;
		assert.deepEqual(r.records.cwd?.patch, { roots: { todos: null } });
		assert.deepEqual(seen.at(-1), ["cwd", "todos", null, ["cwd", "todos"]]);
	});

	it("the gate is asked with the root's path; without a gate the root is refused at that path", () => {
		stage(withTodos(), { cwd: { roots: { todos: { b: 1 } } } }, { ...meta("r3"), roots: gate });
		assert.deepEqual(seen.at(-1), ["cwd", "todos", { a: { text: "x" }, b: 1 }, ["cwd", "todos"]]);
		refused(
			() => stage(withTodos(), { cwd: { roots: { todos: { b: 1 } } } }, meta("r4")),
			"invalid_input",
			"`cwd.todos` is a registered root; only State Flow inside pi",
			["cwd", "todos"],
		);
	});
});

describe("cascade deletions beside the caller's own writes", () => {
	function owned() {
		const hs = histories("cwd");
		run(hs, { cwd: { intents: { goal: { steps: [{ $ref: "cwd.tactics.step1" }] } }, tactics: { step1: "do it", other: 1 } } }, "t1");
		return hs;
	}

	it("the caller's writes to a plane a cascade deletes from are kept", () => {
		const hs = owned();
		const r = run(hs, { cwd: { intents: { goal: null }, tactics: { other: 2, fresh: "new" } } }, "t2");
		assert.ok(!r.noop);
		if (r.noop) return;
		assert.deepEqual(r.records.cwd?.patch, { intents: { goal: null }, tactics: { other: 2, fresh: "new", step1: null } });
		assert.deepEqual(hs.cwd?.state.tactics, { other: 2, fresh: "new" });
	});

	it("an entry the caller writes explicitly wins over the cascade's deletion of it", () => {
		const hs = owned();
		const r = run(hs, { cwd: { intents: { goal: null }, tactics: { step1: "kept" } } }, "t2");
		assert.ok(!r.noop);
		if (r.noop) return;
		assert.deepEqual(r.records.cwd?.patch?.tactics, { step1: "kept" });
		assert.deepEqual(hs.cwd?.state.tactics, { step1: "kept", other: 1 });
	});

	it("an exact delta (an undo) reports no cascades and no dangling references", () => {
		const hs = owned();
		const r = stage(hs, { cwd: { intents: { goal: null } } }, { ...meta("t2"), exact: true });
		assert.ok(!r.noop);
		if (r.noop) return;
		assert.deepEqual(r.report.cascades, []);
		assert.deepEqual(r.report.danglingRefs, []);
		assert.deepEqual(r.records.cwd?.cascades, []);
	});
});

describe("staged records are plain data", () => {
	it("a record without an author has no `who` member: it equals its JSON round trip", () => {
		const r = stage(histories("cwd"), { cwd: { tactics: { a: 1 } } }, meta("t1"));
		assert.ok(!r.noop);
		if (r.noop) return;
		const record = r.records.cwd;
		assert.deepStrictEqual(JSON.parse(JSON.stringify(record)), record);
		const who = { user: "ann", host: "box" };
		const signed = stage(histories("cwd"), { cwd: { tactics: { a: 1 } } }, { ...meta("t2"), who });
		assert.ok(!signed.noop);
		if (!signed.noop) assert.deepEqual(signed.records.cwd?.who, who);
	});

	it("each owner's record holds its own owners list, apart from the other owners' and the report's", () => {
		const r = stage(histories("global", "session"), { global: { tactics: { a: 1 } }, session: { tactics: { b: 2 } } }, meta("t1"));
		assert.ok(!r.noop);
		if (r.noop) return;
		r.records.global?.owners.push("cwd");
		assert.deepEqual(r.records.session?.owners, ["global", "session"]);
		assert.deepEqual(r.report.scopes, ["global", "session"]);
	});

	it("committing into histories that lack a staged owner is refused, naming the owner", () => {
		const r = stage(histories("cwd"), { cwd: { tactics: { a: 1 } } }, meta("t1"));
		refused(() => commitStaged({}, r), "excluded_owner", "owner `cwd` has no loaded history to commit into", ["cwd"]);
	});
});
