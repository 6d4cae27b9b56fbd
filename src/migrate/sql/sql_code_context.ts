import { atCallSite } from "../code/call_site.ts";
import type { MigrationContext, SqlMigrationContext } from "../code/code_context.ts";
import type { DatabaseKind } from "./datasource.ts";
import type { SqlSession } from "./sql_database.ts";

/** The context of a SQL code file: `base`, and queries on the file's session. */
export function sqlContext(
  base: MigrationContext,
  kind: DatabaseKind,
  session: SqlSession,
): SqlMigrationContext {
  return {
    ...base,
    kind,
    query: <R>(text: string, params?: readonly unknown[]) =>
      atCallSite(() => {
        if (typeof text !== "string") {
          throw new TypeError("ctx.query takes the statement's text first");
        }
        if (params !== undefined && !Array.isArray(params)) {
          throw new TypeError("ctx.query takes its parameters as an array");
        }
        return session.query(text, params);
      }) as Promise<R[]>,
  };
}
