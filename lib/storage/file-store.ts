/** The former home of the file adapter, kept while importers move to `file/owner-store.ts`. */
export { CHECKPOINT_FILE, DEFAULT_LOCK_TIMEOUT_MS, FileOwnerStore, LOCK_FILE, LOG_FILE } from "./file/owner-store.js";
export type { FileStoreOptions } from "./file/owner-store.js";
