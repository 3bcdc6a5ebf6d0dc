/**
 * `/state` output as pi draws it (issue 27): text laid out for 80 columns is drawn as it is at
 * 80 columns — no word pushed alone onto a line of its own — and a one-line confirmation is one
 * line led by `State Flow:`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderOutput } from "../../lib/host/commands/output.js";
import { draw, theme } from "../helpers/render-theme.js";

describe("renderOutput", () => {
	it("draws an 80-column line on one row of an 80-column terminal", () => {
		const line = `${"word ".repeat(15)}is damaged: nothing was written at all.`.slice(0, 80);
		assert.equal(line.length, 80);
		assert.deepEqual(draw(renderOutput(`${line}\n${line}`, { title: "status", level: "info" }, theme), 80), ["State Flow · status", line, line]);
	});

	it("draws a one-line confirmation as that line", () => {
		const text = "State Flow: off cwd (tools withdrawn; data untouched)";
		assert.deepEqual(draw(renderOutput(text, { title: "line", level: "info", line: true }, theme), 80), [text]);
	});
});
