/** The footer's words for owners a user must know about: shared, damaged, unavailable (issue 27). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { footerText } from "../../lib/host/session/footer.js";

const database = { url: "postgres://x", shownUrl: "postgres://x", source: "config", schema: "state_flow" } as const;

describe("footerText", () => {
	it("is the selection alone when nothing is wrong or shared", () => {
		assert.equal(footerText({ mode: "active", owners: ["cwd", "session"] }, {}, {}), "state: active cwd+session");
	});

	it("names a shared CWD (linked project) and a shared Global (shareGlobal), only when wanted", () => {
		const placement = { database, project: "acme/api", user: "alice" };
		assert.equal(
			footerText({ mode: "active", owners: ["global", "cwd", "session"] }, placement, {}),
			"state: active global+cwd+session · global shared · cwd shared",
		);
		assert.equal(footerText({ mode: "passive", owners: ["session"] }, placement, {}), "state: passive session");
	});

	it("adds damage and outages per owner", () => {
		const text = footerText({ mode: "active", owners: ["cwd", "session"] }, { database, project: "acme/api" }, { cwd: "unavailable", session: "damaged" });
		assert.equal(text, "state: active cwd+session · cwd shared, unavailable · session damaged");
	});
});
