/**
 * The `/state` output messages rendered with a real pi theme at 80 and 120 columns: a State
 * Flow label, every line of the text kept, and none of it in the model's next request. The
 * `/state browse` browser is in render-browser.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fauxAssistantMessage, fauxText } from "@mariozechner/pi-ai";
import { OUTPUT_TYPE, outputRenderer } from "../../lib/host/commands/output.js";
import { ME } from "../helpers/who.js";
import { draw, theme } from "../helpers/render-theme.js";
import { browsing, WIDTHS } from "./browser-fixture.js";

describe("/state output messages", () => {
	it("render with a State Flow label, keep every line, and fit 80 and 120 columns", async (t) => {
		const s = await browsing(t);
		await s.session.prompt("/state");
		await s.session.prompt("/state history");
		await s.session.prompt("/state owners nobody");
		const out = s.outputs();
		assert.deepEqual(
			out.map((o) => o.details.title),
			["status", "history", "usage"],
		);
		for (const o of out) {
			const component = outputRenderer(
				{ role: "custom", customType: OUTPUT_TYPE, content: o.text, display: true, details: o.details, timestamp: 0 },
				{ expanded: false },
				theme,
			);
			assert.ok(component);
			for (const width of WIDTHS) {
				const lines = draw(component, width);
				assert.equal(lines[0]?.trim(), `State Flow · ${o.details.title}`);
				// Every line of the text is there, unwrapped: each fits 80 columns by construction.
				for (const line of o.text.split("\n").filter((l) => !l.includes(s.session.sessionManager.getCwd()) && !l.includes("/state-flow"))) {
					assert.ok(
						lines.some((l) => l.trim() === line.trim()),
						`${width}: ${line}`,
					);
					assert.ok(line.length <= 78, `${line} (${line.length})`);
				}
			}
		}
		const history = out[1]?.text ?? "";
		assert.match(history, new RegExp(`^ {2}#2 02aa 09:00:01 model call_Yr0lA3… ${ME} set tactics\\.first$`, "m"));
		assert.match(history, /^full ids and times: \/state history --full$/m);
		// Output is for the user: the next request does not carry it.
		let seen: string[] = [];
		s.faux.setResponses([
			(context) => {
				seen = context.messages.map((m) => JSON.stringify(m.content));
				return fauxAssistantMessage([fauxText("ok")]);
			},
		]);
		await s.session.prompt("next");
		assert.ok(seen.length > 0);
		assert.ok(!seen.some((c) => c.includes("retained of") || c.includes("Usage:")), "no /state output in the model's context");
	});
});
