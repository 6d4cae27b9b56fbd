import { atCallSite } from "../code/call_site.ts";
import type { MigrationContext, SqlMigrationContext } from "../code/code_context.ts";
import type { DatabaseKind } from "../../sql/datasource.ts";
import type { SqlSession } from "./sql_database.ts";
import { statementStarts } from "./statement_locator.ts";
import { DIALECTS } from "../../sql/dialects.ts";

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
        const refused = refusedStatement(text, kind);
        if (refused !== undefined) throw new TypeError(refused);
        return session.query(text, params);
      }) as Promise<R[]>,
  };
}

// Ends or starts a transaction: BEGIN, START TRANSACTION, COMMIT, END, ROLLBACK (not ROLLBACK TO a
// savepoint, which keeps it), ABORT.
const TRANSACTION_CONTROL =
  /^(?:begin|start\s+transaction|commit|end|abort|rollback(?!\s+(?:transaction\s+|work\s+)?to\b))\b/i;

/**
 * Why `ctx.query` refuses `text`, or `undefined` when it takes it. One statement per call: SQLite
 * would run the first of several and drop the rest unseen, and the drivers answer several with
 * rows of another shape. No statement that ends or starts a transaction: the file's code and its
 * record commit or roll back together only if the code leaves the runner's transaction alone
 * (`SAVEPOINT`, `ROLLBACK TO` and `RELEASE` keep it); on MySQL and MariaDB, where the runner holds
 * none, the code may hold its own.
 */
export function refusedStatement(text: string, kind: DatabaseKind): string | undefined {
  const statements = statementStarts(text, kind);
  if (statements.length > 1) {
    return `ctx.query runs one statement, and this text holds ${statements.length}: call it once ` +
      "for each";
  }
  // Where DDL cannot run in a transaction (MySQL, MariaDB), a file runs in none: code may hold
  // its own there.
  if (
    DIALECTS[kind].transactionalDdl && statements.length === 1 &&
    TRANSACTION_CONTROL.test(statements[0].text)
  ) {
    return `ctx.query does not take \`${statements[0].excerpt}\`: the runner holds the file's ` +
      "transaction, so that the code and the file's record commit or roll back together (use " +
      "SAVEPOINT and ROLLBACK TO to undo part of it)";
  }
  return undefined;
}
