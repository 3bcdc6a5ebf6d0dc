/**
 * Example: a todo list that keeps its data in State Flow (docs/extension-api.md).
 *
 * The extension registers one root, `todos`, in the CWD and Session owners. The model reads
 * and writes it with `read_state` / `patch_state` like a plane; the user sees it in `/state`
 * and undoes changes with `/state undo`; the extension itself lists and adds todos with
 * `/todo` and hears every change, whoever made it. Outside this repository import the API
 * as `pi-state-flow/api`.
 */
import type { ExtensionAPI, ExtensionFactory } from "@mariozechner/pi-coding-agent";
import { type JsonObject, type RootChange, type RootOwner, type RootSpec, type RootStatus, registerRoot } from "../../lib/api.js";

/** The value of `todos`: id → `{ text, done }`. */
export const TODO_SPEC: RootSpec = {
	name: "todos",
	extension: "todo",
	description: "The user's todo list: id -> {text, done}; add, tick off (done: true) or delete (null) items when asked.",
	owners: ["cwd", "session"],
	schema: {
		type: "object",
		additionalProperties: {
			type: "object",
			properties: { text: { type: "string", minLength: 1 }, done: { type: "boolean" } },
			required: ["text"],
			additionalProperties: false,
		},
	},
};

export interface TodoOptions {
	/** Called for every change of the list (tests and UIs hook in here). */
	onChange?(change: RootChange): void;
	onStatus?(status: RootStatus): void;
}

/** One line per todo: `[x] id: text`. */
export function formatTodos(value: JsonObject): string {
	const lines = Object.entries(value).map(([id, item]) => {
		const t = item as { text?: string; done?: boolean };
		return `[${t.done ? "x" : " "}] ${id}: ${t.text ?? ""}`;
	});
	return lines.length === 0 ? "no todos" : lines.join("\n");
}

export function createTodoExtension(options: TodoOptions = {}): ExtensionFactory {
	return (pi: ExtensionAPI) => {
		const todos = registerRoot(pi, TODO_SPEC, {
			change: (c) => options.onChange?.(c),
			status: (s) => options.onStatus?.(s),
		});
		pi.registerCommand("todo", {
			description: "Todo list kept in State Flow: /todo [cwd|session] lists, /todo add <text> adds to cwd",
			handler: async (args, ctx) => {
				const [verb, ...rest] = args.trim().split(/\s+/);
				try {
					if (verb === "add" && rest.length > 0) {
						const id = `t${Date.now().toString(36)}`;
						await todos.write("cwd", { [id]: { text: rest.join(" "), done: false } });
						ctx.ui.notify(`todo ${id} added`, "info");
						return;
					}
					const owner: RootOwner = verb === "session" ? "session" : "cwd";
					ctx.ui.notify(formatTodos(await todos.read(owner)), "info");
				} catch (e) {
					ctx.ui.notify(`todo: ${e instanceof Error ? e.message : String(e)}`, "error");
				}
			},
		});
	};
}

/** The factory pi loads (`pi -e examples/todo/index.ts`, next to State Flow). */
const todo: ExtensionFactory = createTodoExtension();
export default todo;
