import type { MigrationDriver, MigrationMode } from "./driver.ts";

/**
 * The built-in driver of a mode, loaded when a run asks for it: a run of SQL migrations loads
 * nothing of the search driver, and the other way round.
 */
export async function builtInDriver(mode: MigrationMode): Promise<MigrationDriver> {
  switch (mode) {
    case "sql":
      return (await import("./sql/sql_driver.ts")).sqlDriver;
    case "search":
      return (await import("./search/search_driver.ts")).searchDriver();
  }
}
