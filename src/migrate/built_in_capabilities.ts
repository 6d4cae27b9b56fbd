import type { DriverCapabilities, MigrationMode } from "./driver.ts";

/**
 * What each built-in driver can do, known without loading it: a request is checked against it
 * (`--drift` on `-m sql`) before the driver of its mode is loaded. Each driver states its own as
 * these.
 */
export const BUILT_IN_CAPABILITIES: Readonly<Record<MigrationMode, DriverCapabilities>> = {
  sql: { drift: false, reindex: false, repeatable: true, code: true, callbacks: true, undo: true },
  search: {
    drift: true,
    reindex: true,
    repeatable: true,
    code: true,
    callbacks: true,
    undo: true,
  },
};
