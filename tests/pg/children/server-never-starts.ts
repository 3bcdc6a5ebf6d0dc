/**
 * A test file (run by `tests/pg/guard.test.ts` under `node --test`) whose server start-up ends
 * the process with code 0 before any test ran, as a broken PostgreSQL start-up once did.
 */
import { it } from "node:test";
import { serverForFile } from "../../helpers/pg-server.js";

const server = serverForFile(async (): Promise<{ stop(): Promise<void> }> => process.exit(0));

it("uses the server", () => {
	server.stop();
});
