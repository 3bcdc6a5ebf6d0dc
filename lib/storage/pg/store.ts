/** The former home of the PostgreSQL adapter, kept while importers move to `database.ts` and `owner-store.ts`. */
export { PgDatabase } from "./database.js";
export type { PgDatabaseOptions } from "./database.js";
export { PgOwnerStore } from "./owner-store.js";
export { sameHistoryText } from "../format.js";
