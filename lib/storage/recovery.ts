/** The former home of the local roll-forward, kept while importers move to `file/recovery.ts`. */
export { lockedParts } from "./file/recovery.js";
