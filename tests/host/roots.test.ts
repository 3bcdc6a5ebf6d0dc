/**
 * Registered external roots (docs/spec.md §12) in a real pi session on the faux model: the
 * example todo extension (examples/todo) loaded next to State Flow in both load orders; the
 * model writes a todo, the extension hears it, `/state undo` reverts it; schema refusals,
 * name collisions, the extension's own writes, and dormant data in a session without it.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import type { ExtensionFactory } from "@mariozechner/pi-coding-agent";
import { type RootChange, type RootClient, type RootStatus, registerRoot } from "../../lib/api.js";
import { createTodoExtension, TODO_SPEC } from "../../examples/todo/index.js";
import { expectSoon } from "../helpers/soon.js";
import { type Flow, flowDirs, userTexts, withFlow } from "./fixture.js";

interface Probe {
	changes: RootChange[];
	statuses: RootStatus[];
	factory: ExtensionFactory;
}

function todoProbe(): Probe {
	const changes: RootChange[] = [];
	const statuses: RootStatus[] = [];
	return { changes, statuses, factory: createTodoExtension({ onChange: (c) => changes.push(c), onStatus: (s) => statuses.push(s) }) };
}

const patchTool = (flow: Flow, request = 0) => flow.seen[request]?.tools.find((t) => t.name === "patch_state");

async function modelWritesAndUserUndoes(order: "before" | "after"): Promise<void> {
	const probe = todoProbe();
	const place = order === "before" ? { factoriesBefore: [probe.factory] } : { extraFactories: [probe.factory] };
	await withFlow(place, async (flow) => {
		assert.deepEqual(probe.statuses.at(-1), { state: "active" });
		await flow.prompt("add a todo", [
			{ calls: [{ id: "w", name: "patch_state", args: { cwd: { todos: { milk: { text: "buy milk", done: false } } } } }] },
			{ calls: [{ id: "r", name: "read_state", args: { paths: ["cwd.todos.milk.text", "cwd.patches[0]", "effective.todos"] } }] },
			{ text: "added" },
		]);
		// The declaration named the root before the first prompt: its description and schema.
		const description = patchTool(flow)?.description ?? "";
		assert.ok(description.includes(`Root todos (cwd,session): ${TODO_SPEC.description} {`), description);
		assert.ok(description.includes(JSON.stringify(TODO_SPEC.schema)), description);
		const results = flow.results();
		assert.equal(results.w?.isError, false, results.w?.text);
		assert.match(results.w?.text ?? "", /cwd\/todos\/milk/);
		assert.equal(results.r?.isError, false, results.r?.text);
		assert.match(results.r?.text ?? "", /^\["buy milk",\{"id":"t-0001","at":"[^"]+","patch":\{"todos":\{"milk"/m);
		assert.ok((results.r?.text ?? "").endsWith(',{"milk":{"text":"buy milk","done":false}}]'), results.r?.text);
		assert.deepEqual(
			probe.changes.map((c) => [c.owner, c.value, c.by?.kind]),
			[["cwd", { milk: { text: "buy milk", done: false } }, "tool"]],
		);
		// The next prompt's head shows the root beside the planes.
		await flow.prompt("show", [{ text: "ok" }]);
		const head = userTexts(flow.seen.at(-1) as (typeof flow.seen)[number]).find((t) => t.startsWith("<state_flow_head>")) ?? "";
		assert.match(head, /^cwd\.todos: \{"milk":\{"text":"buy milk","done":false\}\}$/m);
		assert.match(head, /^# cwd seq 1$/m, "an owner with root data is not empty");
		const [undone] = await flow.command("/state undo");
		assert.match(undone ?? "", /Reverted t-0001/);
		assert.deepEqual(probe.changes.at(-1), {
			owner: "cwd",
			value: {},
			by: { kind: "command", command: "/state undo cwd", reverts: { op: "undo", target: "t-0001" } },
			transitionId: "t-0002",
		});
	});
}

describe("registered roots: the todo example next to State Flow", () => {
	it("loaded after State Flow: the model writes a todo, the extension hears it, /state undo reverts it", async () => {
		await modelWritesAndUserUndoes("after");
	});

	it("loaded before State Flow: the same", async () => {
		await modelWritesAndUserUndoes("before");
	});

	it("refuses a patch the root's schema rejects, naming the field; nothing is written", async () => {
		const probe = todoProbe();
		await withFlow({ extraFactories: [probe.factory] }, async (flow) => {
			await flow.prompt("bad", [
				{ calls: [{ id: "b", name: "patch_state", args: { cwd: { todos: { x: { text: "t", done: "yes" } }, tactics: { t: 1 } } } }] },
				{ calls: [{ id: "g", name: "patch_state", args: { global: { todos: { x: { text: "t" } } } } }] },
				{ text: "no" },
			]);
			const r = flow.results();
			assert.equal(r.b?.isError, true);
			assert.match(r.b?.text ?? "", /`cwd\.todos\.x\.done` must be boolean/);
			assert.equal(r.g?.isError, true);
			assert.match(r.g?.text ?? "", /global/);
			const [state] = await flow.command("/state show cwd");
			assert.match(state ?? "", /^cwd \(seq 0/);
			assert.deepEqual(probe.changes, []);
		});
	});

	it("refuses a colliding name with a message to the registering extension", async () => {
		const statuses: Record<string, RootStatus> = {};
		const clash =
			(name: string, key: string): ExtensionFactory =>
			(pi) => {
				registerRoot(pi, { ...TODO_SPEC, name, extension: key }, { status: (s) => (statuses[key] = s) });
			};
		await withFlow(
			{ extraFactories: [createTodoExtension(), clash("tactics", "p"), clash("cwd", "o"), clash("response", "r"), clash("todos", "d")] },
			async () => {
				assert.equal(statuses.p?.state, "refused");
				assert.match(statuses.p?.message ?? "", /`tactics` collides with State Flow's own/);
				assert.match(statuses.o?.message ?? "", /`cwd` collides/);
				assert.match(statuses.r?.message ?? "", /`response` collides/);
				assert.match(statuses.d?.message ?? "", /already registered by extension todo/);
			},
		);
	});

	it("writes by the extension go through the commit path with its provenance; data of a session without it stays dormant and untouched", async (t) => {
		const d = flowDirs(t, "state-flow-roots-");
		let client: RootClient | undefined;
		const probe: RootChange[] = [];
		const grab: ExtensionFactory = (pi) => {
			client = registerRoot(pi, TODO_SPEC, { change: (c) => probe.push(c) });
		};
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, extraFactories: [grab] }, async (flow) => {
			const out = await client?.write("cwd", { a: { text: "from the extension" } });
			assert.equal(out?.transitionId, "t-0001");
			assert.deepEqual(await client?.read("cwd"), { a: { text: "from the extension" } });
			assert.equal(probe.at(-1)?.by?.kind, "extension");
			const [history] = await flow.command("/state history cwd");
			assert.match(history ?? "", /extension todo/);
			await assert.rejects(client?.write("cwd", { b: { done: true } }) as Promise<unknown>, /`cwd\.todos\.b` must have required property 'text'/);
		});
		// A session without the extension: the root is dormant, hidden and not writable, listed by /state.
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir }, async (flow) => {
			const [status] = await flow.command("/state");
			assert.match(status ?? "", /^root todos: dormant in cwd, data kept: not registered/m);
			const [shown] = await flow.command("/state show cwd");
			assert.match(shown ?? "", /"from the extension"/);
			await flow.prompt("write", [
				{
					calls: [
						{ id: "w", name: "patch_state", args: { cwd: { todos: { z: { text: "no" } } } } },
						{ id: "r", name: "read_state", args: { path: "cwd" } },
					],
				},
				{ text: "ok" },
			]);
			assert.equal(flow.results().w?.isError, true);
			assert.doesNotMatch(flow.results().r?.text ?? "", /todos|roots/);
			assert.ok(!(patchTool(flow)?.description ?? "").includes("todos"));
			const head = userTexts(flow.seen[0] as (typeof flow.seen)[number]).join("\n");
			assert.doesNotMatch(head, /todos|from the extension/);
			await flow.prompt("add", [{ calls: [{ id: "p", name: "patch_state", args: { cwd: { tactics: { next: "x" } } } }] }, { text: "ok" }]);
			assert.equal(flow.results().p?.isError, false);
		});
		// The extension is back: its data is there as it left it.
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, extraFactories: [grab] }, async () => {
			assert.deepEqual(await client?.read("cwd"), { a: { text: "from the extension" } });
		});
	});

	it("flat form: the root beside the planes, temporal reads, keys and history projections, Session owner", async () => {
		const probe = todoProbe();
		await withFlow({ extraFactories: [probe.factory] }, async (flow) => {
			await flow.command("/state owners session");
			await flow.prompt("todos", [
				{ calls: [{ id: "w1", name: "patch_state", args: { todos: { a: { text: "one" } } } }] },
				{ calls: [{ id: "w2", name: "patch_state", args: { todos: { a: { done: true }, b: { text: "two" } } } }] },
				{ calls: [{ id: "r1", name: "read_state", args: { paths: ["effective[1].todos", "todos.a.done"] } }] },
				{ calls: [{ id: "r2", name: "read_state", args: { path: "todos", projection: "keys" } }] },
				{ calls: [{ id: "r3", name: "read_state", args: { path: "todos.a", projection: "history" } }] },
				{ calls: [{ id: "r4", name: "read_state", args: { path: "roots" } }] },
				{ text: "ok" },
			]);
			const r = flow.results();
			assert.equal(r.w2?.isError, false, r.w2?.text);
			assert.match(r.w2?.text ?? "", /todos\/a\/done/);
			assert.match(r.r1?.text ?? "", /^\[\{"a":\{"text":"one"\}\},true\]$/m);
			assert.match(r.r2?.text ?? "", /^\["a","b"\]$/m);
			assert.match(r.r3?.text ?? "", /"before":\{"text":"one"\},"after":\{"text":"one","done":true\}/);
			assert.equal(r.r4?.isError, true, "the namespace is not the model's to name");
			assert.deepEqual(
				probe.changes.map((c) => c.owner),
				["session", "session"],
			);
		});
	});

	it("hears a change another process committed, at the next prompt", async (t) => {
		const d = flowDirs(t, "state-flow-roots-");
		const probe = todoProbe();
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, extraFactories: [probe.factory] }, async (flow) => {
			// A real second process writes the root through its own stores (as another pi with the extension would).
			const stores = new URL("../../lib/storage/open.js", import.meta.url).href;
			const script = `import { openStoresAt } from ${JSON.stringify(stores)};
				const s = openStoresAt({ agentDir: process.argv[1], cwd: process.argv[2] });
				await s.commit({ cwd: { roots: { todos: { far: { text: "from elsewhere" } } } } }, { by: { kind: "extension", extension: "todo" }, id: "other-1", at: new Date().toISOString(), roots: () => undefined });`;
			execFileSync(process.execPath, ["--input-type=module", "-e", script, d.agentDir, d.cwd]);
			assert.deepEqual(probe.changes, []);
			await flow.prompt("next", [{ text: "ok" }]);
			assert.deepEqual(probe.changes, [
				{ owner: "cwd", value: { far: { text: "from elsewhere" } }, by: { kind: "extension", extension: "todo" }, transitionId: "other-1" },
			]);
		});
	});

	it("hears a change another process committed as it lands, without waiting for a prompt", async (t) => {
		const d = flowDirs(t, "state-flow-roots-");
		const heard: RootChange[] = [];
		let expected: ReturnType<typeof expectSoon> | undefined;
		const factory = createTodoExtension({
			onChange: (c) => {
				heard.push(c);
				expected?.arrive();
			},
		});
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, extraFactories: [factory] }, async (flow) => {
			const stores = new URL("../../lib/storage/open.js", import.meta.url).href;
			const commitElsewhere = (key: string, id: string) =>
				execFileSync(process.execPath, [
					"--input-type=module",
					"-e",
					`import { openStoresAt } from ${JSON.stringify(stores)};
					const s = openStoresAt({ agentDir: process.argv[1], cwd: process.argv[2] });
					await s.commit({ cwd: { roots: { todos: { [process.argv[3]]: { text: "from elsewhere" } } } } }, { by: { kind: "extension", extension: "todo" }, id: process.argv[4], at: new Date().toISOString(), roots: () => undefined });`,
					d.agentDir,
					d.cwd,
					key,
					id,
				]);
			// The project has no store folder yet: the first change is heard at the next prompt, which watches the folder from then on.
			commitElsewhere("first", "other-1");
			await flow.prompt("next", [{ text: "ok" }]);
			assert.deepEqual(
				heard.map((c) => c.transitionId),
				["other-1"],
			);
			// Without a watch the change would only come with the next prompt.
			expected = expectSoon("the change was not heard without a prompt");
			commitElsewhere("second", "other-2");
			await expected.arrived;
			assert.deepEqual(heard.at(-1), {
				owner: "cwd",
				value: { first: { text: "from elsewhere" }, second: { text: "from elsewhere" } },
				by: { kind: "extension", extension: "todo" },
				transitionId: "other-2",
			});
			assert.equal(flow.seen.length, 1, "no model request was made for it");
		});
	});

	it("a root registered mid-run joins from the next prompt (like the flat/scoped switch)", async () => {
		let api: Parameters<ExtensionFactory>[0] | undefined;
		const changes: RootChange[] = [];
		await withFlow({ extraFactories: [(pi) => void (api = pi)] }, async (flow) => {
			await flow.prompt("first", [
				{
					before: () => void registerRoot(api as Parameters<ExtensionFactory>[0], TODO_SPEC, { change: (c) => changes.push(c) }),
					calls: [{ id: "early", name: "patch_state", args: { cwd: { todos: { a: { text: "too early" } } } } }],
				},
				{ text: "ok" },
			]);
			assert.equal(flow.results().early?.isError, true);
			assert.match(flow.results().early?.text ?? "", /`cwd\.todos`: root `todos` was registered during this run; it can be written from the next prompt/);
			assert.ok(!(patchTool(flow, 1)?.description ?? "").includes("Root todos"), "the running prompt keeps its declaration");
			const before = flow.seen.length;
			await flow.prompt("second", [{ calls: [{ id: "now", name: "patch_state", args: { cwd: { todos: { a: { text: "joined" } } } } }] }, { text: "ok" }]);
			assert.ok((patchTool(flow, before)?.description ?? "").includes("Root todos"));
			assert.equal(flow.results().now?.isError, false, flow.results().now?.text);
			assert.deepEqual(changes.at(-1)?.value, { a: { text: "joined" } });
		});
	});

	it("a schema that rejects stored data makes the root dormant with a message; the data is kept", async (t) => {
		const d = flowDirs(t, "state-flow-roots-");
		let client: RootClient | undefined;
		await withFlow({ cwd: d.cwd, agentDir: d.agentDir, extraFactories: [(pi) => void (client = registerRoot(pi, TODO_SPEC))] }, async () => {
			await client?.write("cwd", { a: { text: "kept" } });
		});
		const strict = { ...TODO_SPEC, schema: { type: "object", additionalProperties: { type: "object", required: ["text", "due"] } } };
		const statuses: RootStatus[] = [];
		await withFlow(
			{ cwd: d.cwd, agentDir: d.agentDir, extraFactories: [(pi) => void registerRoot(pi, strict, { status: (s) => statuses.push(s) })] },
			async (flow) => {
				assert.equal(statuses.at(-1)?.state, "dormant");
				assert.match(statuses.at(-1)?.message ?? "", /`cwd\.todos\.a` must have required property 'due'/);
				assert.ok(
					flow.notes.some((n) => /root `todos` \(extension todo\) is dormant/.test(n)),
					flow.notes.join("\n"),
				);
				const [shown] = await flow.command("/state show cwd");
				assert.match(shown ?? "", /"kept"/);
				await flow.prompt("x", [{ calls: [{ id: "w", name: "patch_state", args: { cwd: { todos: { a: null } } } }] }, { text: "ok" }]);
				assert.equal(flow.results().w?.isError, true);
			},
		);
	});
});
