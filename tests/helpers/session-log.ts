/**
 * The Session log over a real pi SessionManager, built exactly the way the host builds it
 * (`createSessionLog`: entries through `appendEntry`, persistence from the session file), for
 * storage tests that run without a whole pi session.
 */
import type { SessionManager } from "@mariozechner/pi-coding-agent";
import { createSessionLog } from "../../lib/host/session/session-log.js";
import type { SessionLog } from "../../lib/storage/session/store.js";

export function hostSessionLog(sm: SessionManager): SessionLog {
	// pi's `appendEntry` is `appendCustomEntry` on the session's manager.
	return createSessionLog({ appendEntry: (customType, data) => void sm.appendCustomEntry(customType, data) }, () => ({ sessionManager: sm }));
}
