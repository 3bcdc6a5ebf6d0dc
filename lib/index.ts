/**
 * State Flow's pi entry point: durable, structured working memory read and written through
 * `read_state` and `patch_state`. The default export is the extension factory pi loads;
 * `createStateFlow` lets tests and scripts inject the agent folder, clock and id generator.
 */
import { randomUUID } from "node:crypto";
import { type ExtensionAPI, type ExtensionFactory, getAgentDir } from "@mariozechner/pi-coding-agent";
import { DISCOVER_CHANNEL, READY_CHANNEL } from "./api.js";
import { registerStateCommand } from "./host/commands/index.js";
import { registerEvents } from "./host/events.js";
import { CommandOutput, OUTPUT_TYPE, outputRenderer } from "./host/commands/output.js";
import { MODE_FLAG, OWNERS_FLAG, StateFlowHost, type StateFlowOptions } from "./host/runtime.js";
import { registerGlobalOffer } from "./host/session/global-offer.js";
import { resolveSelection, shapeOf } from "./host/session/selection.js";
import { registerPatchTool, registerReadTool } from "./host/tools/tools.js";

export type { StateFlowOptions } from "./host/runtime.js";
export * from "./api.js";

/** Build the extension factory; every option defaults to pi's real environment. */
export function createStateFlow(options: Partial<StateFlowOptions> = {}): ExtensionFactory {
	return (pi: ExtensionAPI) => {
		const host = new StateFlowHost(pi, {
			agentDir: options.agentDir ?? getAgentDir(),
			now: options.now ?? (() => new Date()),
			newId: options.newId ?? randomUUID,
			...(options.notify ? { notify: options.notify } : {}),
		});
		pi.registerFlag(MODE_FLAG, { description: "State Flow mode for this run: active, passive or off", type: "string" });
		pi.registerFlag(OWNERS_FLAG, { description: "State Flow owners for this run, e.g. cwd,session", type: "string" });
		// Flags are not parsed yet at load time; session_start corrects the shape if they change it.
		const shape = shapeOf(resolveSelection(host.loadConfig()).owners);
		registerReadTool(host, shape);
		registerPatchTool(host, shape);
		const output = new CommandOutput(pi, options.notify);
		pi.registerMessageRenderer(OUTPUT_TYPE, outputRenderer);
		registerStateCommand(host, output);
		registerEvents(host, output);
		registerGlobalOffer(host, output);
		// The public API (docs/extension-api.md): extensions loaded earlier hear `ready`, later ones ask with `discover`.
		pi.events.on(DISCOVER_CHANNEL, (reply) => {
			if (typeof reply === "function") reply(host.roots.bus);
		});
		pi.events.emit(READY_CHANNEL, host.roots.bus);
	};
}

/** The extension factory pi loads from the package manifest or `pi -e`. */
const stateFlow: ExtensionFactory = createStateFlow();
export default stateFlow;
