/**
 * Who in a history listing line (`/state history`): `alice@laptop` after the provenance within
 * 80 columns, the whole user and host with `--full`, nothing for records written before who was
 * recorded. Laws: a line never passes the width in terminal columns (wide CJK characters count
 * two, emoji and combining marks are never cut apart), and a model's change always shows who whole.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { visibleWidth } from "@mariozechner/pi-tui";
import { TEXT_WIDTH, clipText, shortWho, transitionLine } from "../../lib/host/commands/status.js";
import type { Provenance, TransitionRecord, Who } from "../../lib/core/types.js";
import { whoAmI } from "../../lib/storage/placement/who.js";

const now = new Date("2026-12-01T15:00:00");
const at = new Date("2026-12-01T14:03:09").toISOString();
const tool: Provenance = { kind: "tool", sessionId: "s", toolCallId: "call_8xKzQ2mN5pR7" };

function record(who: Who | undefined, by: Provenance = tool, seq = 12, keys = ["a"]): TransitionRecord {
	const patch = { tactics: Object.fromEntries(keys.map((k) => [k, 1])) };
	return { id: "3f2a1b2c-0000-4000-8000-000000000000", at, seq, by, ...(who ? { who } : {}), patch, undo: {}, cascades: [], owners: ["cwd"] };
}

describe("who in /state history", () => {
	it("shows user@host's first label after the provenance, and both whole with --full", () => {
		const r = record({ user: "alice", host: "laptop.example.com" });
		assert.equal(transitionLine(r, "3f2a", { now, full: false }), "  #12 3f2a 14:03:09 model call_8xKzQ2… alice@laptop set tactics.a");
		assert.equal(
			transitionLine(r, "3f2a", { now, full: true }),
			`  #12 ${r.id}\n     at ${at} by model call_8xKzQ2mN5pR7 alice@laptop.example.com\n     changed: tactics.a`,
		);
	});

	it("clips a long who to 20 columns in the listing, keeping part of both names; never in --full", () => {
		const who = { user: "continuous-integration", host: "ip-10-0-3-17.eu-west-1.compute.internal" };
		const line = transitionLine(record(who), "3f2a", { now, full: false });
		assert.match(line, / model call_8xKzQ2… continuou…@ip-10-0-… set tactics\.a$/);
		assert.equal(shortWho({ user: "alice", host: "buildkite-agent-runner-42.internal" }), "alice@buildkite-age…", "a short user leaves the host the rest");
		assert.equal(shortWho({ user: "maximilian.mustermann", host: "mac" }), "maximilian.must…@mac", "a short host leaves the user the rest");
		assert.match(transitionLine(record(who), "3f2a", { now, full: true }), / continuous-integration@ip-10-0-3-17\.eu-west-1\.compute\.internal\n/);
	});

	it("counts a wide (CJK) name by the columns it takes and never cuts a character apart", () => {
		const who = { user: "山田太郎", host: "開発用ノートパソコン.example.com" };
		const line = transitionLine(record(who), "3f2a", { now, full: false });
		assert.match(line, / model call_8xKzQ2… 山田太郎@開発用ノー… set tactics\.a$/);
		assert.equal(visibleWidth(shortWho(who)), 20);
		assert.equal(clipText("👩‍💻👩‍💻👩‍💻", 5), "👩‍💻👩‍💻…", "a joined emoji stays whole");
		assert.equal(clipText("e\u0301e\u0301e\u0301", 2), "e\u0301…", "a letter keeps its accent");
	});

	it("shows nothing for a record written before who was recorded", () => {
		assert.equal(transitionLine(record(undefined), "3f2a", { now, full: false }), "  #12 3f2a 14:03:09 model call_8xKzQ2… set tactics.a");
	});

	// Any names as a store may hold them: made storable the way `whoAmI` makes a configured user name.
	const storable = (text: string) => whoAmI(text).user;
	const text = (maxLength: number) =>
		fc.string({
			maxLength,
			unit: fc.oneof(fc.constantFrom("山", "ノ", "👩‍💻", "e\u0301"), fc.constant("a"), fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 })),
		});
	const anyWho = fc.tuple(text(60), text(60)).map(([user, host]) => ({ user: storable(user), host: storable(host) }));
	const anyBy: fc.Arbitrary<Provenance> = fc.oneof(
		fc.string({ maxLength: 80 }).map((command) => ({ kind: "command" as const, command })),
		fc.string({ maxLength: 80 }).map((source) => ({ kind: "import" as const, source })),
		fc.string({ maxLength: 80 }).map((reason) => ({ kind: "system" as const, reason })),
		fc.string({ maxLength: 80 }).map((extension) => ({ kind: "extension" as const, extension })),
		fc.string({ maxLength: 80 }).map((toolCallId) => ({ kind: "tool" as const, sessionId: "s", toolCallId })),
	);
	const anyKeys = fc.array(fc.string({ maxLength: 40 }), { maxLength: 6 });

	it("law: a listing line never passes the width, whatever the names", () => {
		assertProperty(
			fc.property(anyWho, anyBy, fc.integer({ min: 1, max: 10_000_000 }), anyKeys, (who, by, seq, keys) => {
				const line = transitionLine(record(who, by, seq, keys), "3f2a1b2c", { now, full: false });
				assert.ok(visibleWidth(line) <= TEXT_WIDTH, `${line} (${visibleWidth(line)} columns)`);
			}),
		);
	});

	it("law: a model's change shows who whole (as shortened) in the listing", () => {
		assertProperty(
			fc.property(anyWho, fc.string({ maxLength: 80 }), fc.integer({ min: 1, max: 9999 }), anyKeys, (who, toolCallId, seq, keys) => {
				const line = transitionLine(record(who, { kind: "tool", sessionId: "s", toolCallId }, seq, keys), "3f2a1b2c", { now, full: false });
				assert.ok(line.includes(` ${shortWho(who)} `), line);
			}),
		);
	});
});
